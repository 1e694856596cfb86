"""Adam (with AMSGrad), AdamW and Lion: Keras 3's update rules, step for step.

Each class only writes ``update_step``; clipping, weight decay, the step
counter and the lock are the base class's (``base.py``).
"""

from ...ops import elementwise
from .base import Optimizer, _scalar

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
    >>> ad.optimizers.Adam(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)          # the first step is about lr * sign(g)
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name=None, **kwargs):
        super().__init__(learning_rate, name or "adam", **kwargs)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _slot_groups(self):
        groups = [(("momentum", 0.0), ("velocity", 0.0))]
        return groups + [(("velocity_hat", 0.0),)] if self.amsgrad else groups

    def update_step(self, gradient, variable, learning_rate):
        step = _scalar(self.iterations + 1, variable)   # read with ops: traced, never frozen
        one = _scalar(1.0, variable)
        beta_1_power = _scalar(self.beta_1, variable) ** step
        beta_2_power = _scalar(self.beta_2, variable) ** step
        alpha = _scalar(learning_rate, variable) * elementwise.sqrt(one - beta_2_power) / (
            one - beta_1_power)
        m = self.slot(variable, "momentum")
        v = self.slot(variable, "velocity")
        m.assign_add((gradient - m) * (1 - self.beta_1))
        v.assign_add((elementwise.square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self.slot(variable, "velocity_hat")
            v_hat.assign(elementwise.maximum(v_hat, v))
            v = v_hat
        variable.assign_sub((m * alpha) / (elementwise.sqrt(v) + self.epsilon))

    def _own_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}


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
    >>> ad.optimizers.AdamW(0.1, weight_decay=0.5).apply_gradients([(ad.constant(2.0), w)])
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
    >>> ad.optimizers.Lion(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name=None, **kwargs):
        super().__init__(learning_rate, name or "lion", **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)

    def _slot_groups(self):
        return [(("momentum", 0.0),)]

    def update_step(self, gradient, variable, learning_rate):
        lr = _scalar(learning_rate, variable)
        beta_1, beta_2 = _scalar(self.beta_1, variable), _scalar(self.beta_2, variable)
        m = self.slot(variable, "momentum")
        variable.assign_sub(lr * elementwise.sign(m * beta_1 + gradient * (1.0 - beta_1)))
        m.assign(m * beta_2 + gradient * (1.0 - beta_2))

    def _own_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2}
