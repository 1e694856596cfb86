"""Adam (with AMSGrad), AdamW and Lion: Keras 3's update rules, step for step.

Each class only writes ``update_step``; clipping, weight decay, the step
counter and the lock are the base class's (``base.py``).
"""

import numpy as np

from ...ops import elementwise
from ...ops.elementwise import _pow_forward
from .base import Optimizer
from .step_scalars import _scalar, _scalar_value, raw_scalars
from .sparse import squared

__all__ = ["Adam", "AdamW", "Lion"]


class Adam(Optimizer):
    """Adam, as ``keras.optimizers.Adam`` (Keras 3's form of the update).

    Per variable, running averages of the gradient and its square:
    ``m += (g - m) * (1 - beta_1)``, ``v += (g^2 - v) * (1 - beta_2)``; then
    ``w -= alpha * m / (sqrt(v) + epsilon)`` with the bias correction folded
    into ``alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)`` at step ``t``.
    With ``amsgrad=True`` the denominator uses the largest ``v`` seen so far.

    Args:
        learning_rate: float or schedule (default 0.001).
        beta_1, beta_2: decay rates of the two averages.
        epsilon: added to ``sqrt(v)`` (Keras' default 1e-7).
        amsgrad: keep ``v_hat = max(v_hat, v)`` and divide by its root.
        **kwargs: the base class's (``weight_decay``, ``clipnorm``,
            ``global_clipnorm``, ``clipvalue``).

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.Adam(0.1).apply_gradients([(ad.constant(2.0), w)])   # returns the step counter
    <ad.Variable 'adam/iteration:0' shape=() dtype=int64, numpy=1>
    >>> round(float(w.numpy()), 4)          # the first step is about lr * sign(g)
    0.9
    """

    _own_arguments = {"beta_1": float, "beta_2": float, "epsilon": float, "amsgrad": bool}

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name=None, **kwargs):
        super().__init__(learning_rate, name or "adam", **kwargs)
        self._keep_arguments(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad)

    def _slot_groups(self):
        groups = [(("momentum", 0.0), ("velocity", 0.0))]
        return groups + [(("velocity_hat", 0.0),)] if self.amsgrad else groups

    def _step_scalars(self, learning_rate, variable):
        # Read at every step (traced, never frozen): the bias correction of step t,
        # folded into alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t).
        if raw_scalars(variable):
            return {"alpha": self._raw_alpha(learning_rate, variable)}
        step = _scalar(self.iterations + 1, variable)
        one = _scalar(1.0, variable)
        beta_1_power = _scalar(self.beta_1, variable) ** step
        beta_2_power = _scalar(self.beta_2, variable) ** step
        alpha = _scalar(learning_rate, variable) * elementwise.sqrt(one - beta_2_power) / (
            one - beta_1_power)
        return {"alpha": alpha._value}

    def _raw_alpha(self, learning_rate, variable):
        """The lines above on host 0-d NumPy arrays, each the ufunc its op's forward calls
        (AddV2, Cast, Pow, Sub, Sqrt, Mul, RealDiv): the same floats, bit for bit."""
        dtype = variable._value.dtype

        def constant(value):   # convert_to_tensor(value, dtype)'s array (a conversion)
            return np.asarray(value, dtype) if type(value) is float else \
                _scalar(value, variable)._value
        step = (self.iterations._value + np.int64(1)).astype(dtype)
        one = constant(1.0)
        beta_1_power = _pow_forward(np, constant(self.beta_1), step)
        beta_2_power = _pow_forward(np, constant(self.beta_2), step)
        alpha = _scalar_value(learning_rate, variable) * np.sqrt(one - beta_2_power) / (
            one - beta_1_power)
        return np.asarray(alpha)

    def _update_arrays(self, xp, g, w, slots, scalars):
        m = xp.subtract(g, slots["momentum"])            # m + (g - m) * (1 - beta_1)
        xp.add(slots["momentum"], xp.multiply(m, 1 - self.beta_1, out=m), out=m)
        v = squared(xp, g, scalars)                       # v + (g^2 - v) * (1 - beta_2)
        xp.subtract(v, slots["velocity"], out=v)
        xp.add(slots["velocity"], xp.multiply(v, 1 - self.beta_2, out=v), out=v)
        new = {"momentum": m, "velocity": v}
        if self.amsgrad:
            v = new["velocity_hat"] = xp.maximum(slots["velocity_hat"], v)
        step = xp.add(xp.sqrt(v), self.epsilon)          # w - (m * alpha) / (sqrt(v) + epsilon)
        xp.true_divide(xp.multiply(m, scalars["alpha"]), step, out=step)
        new["variable"] = xp.subtract(w, step, out=step)
        return new


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``keras.optimizers.AdamW``.

    Before each Adam step every updated variable shrinks:
    ``w -= w * weight_decay * lr`` (Loshchilov and Hutter's decoupling: the
    decay does not pass through Adam's averages).

    Args:
        learning_rate: float or schedule (default 0.001).
        weight_decay: the decay per step, times the learning rate (default 0.004).
        beta_1, beta_2, epsilon, amsgrad: as ``Adam``.

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.AdamW(0.1, weight_decay=0.5).apply_gradients([(ad.constant(2.0), w)])   # returns the step counter
    <ad.Variable 'adamw/iteration:0' shape=() dtype=int64, numpy=1>
    >>> round(float(w.numpy()), 4)          # 1 - 1 * 0.5 * 0.1, then Adam's first step
    0.85
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, name=None, **kwargs):
        if not isinstance(weight_decay, (int, float)) or isinstance(weight_decay, bool):
            raise ValueError(f"AdamW: `weight_decay` must be a float; received "
                             f"weight_decay={weight_decay!r}")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name=name or "adamw",
                         weight_decay=weight_decay, **kwargs)


class Lion(Optimizer):
    """Lion (Chen et al. 2023), as ``keras.optimizers.Lion``: steps of the sign only.

    ``w -= lr * sign(beta_1 * m + (1 - beta_1) * g)``, then
    ``m = beta_2 * m + (1 - beta_2) * g``. Every weight moves by exactly
    ``lr`` each step (or not at all), so Lion wants a smaller rate than Adam.

    Args:
        learning_rate: float or schedule (default 0.001).
        beta_1: weight of the momentum in the step's sign (in (0, 1]).
        beta_2: decay of the momentum (default 0.99).
        **kwargs: the base class's (``weight_decay``, ``clipnorm``, ...).

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.Lion(0.1).apply_gradients([(ad.constant(2.0), w)])   # returns the step counter
    <ad.Variable 'lion/iteration:0' shape=() dtype=int64, numpy=1>
    >>> round(float(w.numpy()), 4)
    0.9
    """

    _own_arguments = {"beta_1": float, "beta_2": float}

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name=None, **kwargs):
        super().__init__(learning_rate, name or "lion", **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")
        self._keep_arguments(beta_1=beta_1, beta_2=beta_2)

    def _slot_groups(self):
        return [(("momentum", 0.0),)]

    def _step_scalars(self, learning_rate, variable):
        beta_1, beta_2 = _scalar(self.beta_1, variable), _scalar(self.beta_2, variable)
        return {"lr": _scalar_value(learning_rate, variable), "beta_1": beta_1._value,
                "beta_2": beta_2._value, "1-beta_1": (1.0 - beta_1)._value,
                "1-beta_2": (1.0 - beta_2)._value}

    def _update_arrays(self, xp, g, w, slots, scalars):
        m = slots["momentum"]
        step = xp.multiply(m, scalars["beta_1"])      # w - lr * sign(m beta_1 + g (1 - beta_1))
        xp.add(step, xp.multiply(g, scalars["1-beta_1"]), out=step)
        xp.multiply(scalars["lr"], xp.sign(step, out=step), out=step)
        m_new = xp.multiply(m, scalars["beta_2"])     # m beta_2 + g (1 - beta_2), after the step
        xp.add(m_new, xp.multiply(g, scalars["1-beta_2"]), out=m_new)
        return {"variable": xp.subtract(w, step, out=step), "momentum": m_new}

