"""SGD (with momentum), RMSprop and Adagrad: Keras 3's update rules, step for step.

Each class only writes ``update_step``; clipping, weight decay, the step
counter and the lock are the base class's (``base.py``).
"""

from ...ops import elementwise
from .base import Optimizer
from .step_scalars import _scalar, _scalar_value
from .sparse import squared

__all__ = ["SGD", "RMSprop", "Adagrad"]


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum, as ``keras.optimizers.SGD``.

    Without momentum: ``w -= lr * g``. With it, a velocity ``m`` per variable:
    ``m = momentum * m - lr * g``, then ``w += m`` (or, Nesterov,
    ``w += momentum * m - lr * g``).

    Args:
        learning_rate: float or schedule (default 0.01).
        momentum: in [0, 1].
        nesterov: use Nesterov momentum.
        **kwargs: the base class's (``weight_decay``, ``clipnorm``, ...).

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.SGD(0.1).apply_gradients([(ad.constant(2.0), w)])   # returns the step counter
    <ad.Variable 'sgd/iteration:0' shape=() dtype=int64, numpy=1>
    >>> print(w.numpy())                    # 1 - 0.1 * 2
    0.8
    """

    _own_arguments = {"momentum": float, "nesterov": bool}

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name=None, **kwargs):
        super().__init__(learning_rate, name or "sgd", **kwargs)
        if not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self._keep_arguments(momentum=momentum, nesterov=nesterov)

    def _slot_groups(self):
        return [(("momentum", 0.0),)] if self.momentum else []

    def _step_scalars(self, learning_rate, variable):
        return {"lr": _scalar_value(learning_rate, variable),
                "momentum": _scalar(self.momentum, variable)._value}

    def _update_arrays(self, xp, g, w, slots, scalars):
        step = xp.multiply(g, scalars["lr"])               # g * lr
        if self.momentum == 0:
            return {"variable": xp.subtract(w, step, out=step)}
        m = xp.multiply(slots["momentum"], scalars["momentum"])   # m momentum - g lr
        xp.subtract(m, step, out=m)
        if self.nesterov:                                  # w + (m momentum - g lr)
            xp.subtract(xp.multiply(m, scalars["momentum"]), step, out=step)
            return {"momentum": m, "variable": xp.add(w, step, out=step)}
        return {"momentum": m, "variable": xp.add(w, m, out=step)}


class RMSprop(Optimizer):
    """RMSprop, as ``keras.optimizers.RMSprop``.

    A running average of the squared gradient, ``v = rho * v + (1 - rho) * g^2``;
    the step is ``lr * g / sqrt(v + epsilon)`` (centered: ``v - mean(g)^2``
    inside the root), with optional momentum on the steps.

    Args:
        learning_rate: float or schedule (default 0.001).
        rho: decay of the average.
        momentum: momentum on the steps (0: none).
        epsilon: added inside the square root (Keras' default 1e-7).
        centered: subtract the running mean gradient's square.
        **kwargs: the base class's (``weight_decay``, ``clipnorm``, ...).

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.RMSprop(0.01).apply_gradients([(ad.constant(2.0), w)])   # returns the step counter
    <ad.Variable 'rmsprop/iteration:0' shape=() dtype=int64, numpy=1>
    >>> round(float(w.numpy()), 4)          # 1 - 0.01 * 2 / sqrt(0.1 * 4)
    0.9684
    """

    _own_arguments = {"rho": float, "momentum": float, "epsilon": float, "centered": bool}

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name=None, **kwargs):
        super().__init__(learning_rate, name or "rmsprop", **kwargs)
        self._keep_arguments(rho=rho, momentum=momentum, epsilon=epsilon, centered=centered)

    def _slot_groups(self):
        return [(("velocity", 0.0),)] + ([(("momentum", 0.0),)] if self.momentum > 0 else []) \
            + ([(("average_gradient", 0.0),)] if self.centered else [])

    def _update_arrays(self, xp, g, w, slots, scalars):
        rho = self.rho
        velocity = xp.multiply(slots["velocity"], rho)    # v rho + g^2 (1 - rho)
        xp.add(velocity, xp.multiply(squared(xp, g, scalars), 1 - rho), out=velocity)
        new = {"velocity": velocity}
        if self.centered:                                  # v - average^2 + epsilon
            average = new["average_gradient"] = xp.multiply(slots["average_gradient"], rho)
            xp.add(average, xp.multiply(g, 1 - rho), out=average)
            denominator = xp.subtract(velocity, xp.square(average))
            xp.add(denominator, self.epsilon, out=denominator)
        else:
            denominator = xp.add(velocity, self.epsilon)
        increment = xp.multiply(g, scalars["lr"])          # g lr / sqrt(denominator)
        xp.true_divide(increment, xp.sqrt(denominator, out=denominator), out=increment)
        if self.momentum > 0:                              # w - (momentum m + increment)
            momentum = new["momentum"] = xp.multiply(slots["momentum"], self.momentum)
            xp.add(momentum, increment, out=momentum)
            increment = momentum
        new["variable"] = xp.subtract(w, increment)
        return new


class Adagrad(Optimizer):
    """Adagrad, as ``keras.optimizers.Adagrad``: each weight's rate shrinks with its history.

    An accumulator per variable, starting at ``initial_accumulator_value``:
    ``a += g^2``, then ``w -= lr * g / sqrt(a + epsilon)``.

    Args:
        learning_rate: float or schedule (default 0.001).
        initial_accumulator_value: the accumulators' starting value (default 0.1).
        epsilon: added inside the square root (default 1e-7).
        **kwargs: the base class's (``weight_decay``, ``clipnorm``, ...).

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.Adagrad(0.1).apply_gradients([(ad.constant(2.0), w)])   # returns the step counter
    <ad.Variable 'adagrad/iteration:0' shape=() dtype=int64, numpy=1>
    >>> round(float(w.numpy()), 4)          # 1 - 0.1 * 2 / sqrt(0.1 + 4)
    0.9012
    """

    _own_arguments = {"initial_accumulator_value": float, "epsilon": float}

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name=None, **kwargs):
        super().__init__(learning_rate, name or "adagrad", **kwargs)
        self._keep_arguments(initial_accumulator_value=initial_accumulator_value,
                             epsilon=epsilon)

    def _slot_groups(self):
        return [(("accumulator", self.initial_accumulator_value),)]

    def _update_arrays(self, xp, g, w, slots, scalars):
        accumulator = xp.add(slots["accumulator"], squared(xp, g, scalars))    # a + g^2
        step = xp.multiply(scalars["lr"], g)               # w - lr g / sqrt(a + epsilon)
        xp.true_divide(step, xp.sqrt(xp.add(accumulator, self.epsilon)), out=step)
        return {"accumulator": accumulator, "variable": xp.subtract(w, step, out=step)}

