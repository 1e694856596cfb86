"""SGD (with momentum), RMSprop and Adagrad: Keras 3's update rules, step for step.

Each class only writes ``update_step``; clipping, weight decay, the step
counter and the lock are the base class's (``base.py``).
"""

from ...ops import elementwise
from .base import Optimizer, _scalar

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
    >>> ad.optimizers.SGD(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> w.numpy()
    0.8
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name=None, **kwargs):
        super().__init__(learning_rate, name or "sgd", **kwargs)
        if not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _slot_groups(self):
        return [(("momentum", 0.0),)] if self.momentum else []

    def update_step(self, gradient, variable, learning_rate):
        lr = _scalar(learning_rate, variable)
        if self.momentum == 0:
            variable.assign_sub(gradient * lr)
            return
        m = self.slot(variable, "momentum")
        momentum = _scalar(self.momentum, variable)
        m.assign(m * momentum - gradient * lr)
        if self.nesterov:
            variable.assign_add(m * momentum - gradient * lr)
        else:
            variable.assign_add(m)

    def _own_config(self):
        return {"momentum": self.momentum, "nesterov": self.nesterov}


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
    >>> ad.optimizers.RMSprop(0.01).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)          # 1 - 0.01 * 2 / sqrt(0.1 * 4)
    0.9684
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name=None, **kwargs):
        super().__init__(learning_rate, name or "rmsprop", **kwargs)
        self.rho = float(rho)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)

    def _slot_groups(self):
        return [(("velocity", 0.0),)] + ([(("momentum", 0.0),)] if self.momentum > 0 else []) \
            + ([(("average_gradient", 0.0),)] if self.centered else [])

    def update_step(self, gradient, variable, learning_rate):
        lr = _scalar(learning_rate, variable)
        rho = self.rho
        velocity = self.slot(variable, "velocity")
        velocity.assign(velocity * rho + elementwise.square(gradient) * (1 - rho))
        if self.centered:
            average = self.slot(variable, "average_gradient")
            average.assign(average * rho + gradient * (1 - rho))
            denominator = velocity - elementwise.square(average) + self.epsilon
        else:
            denominator = velocity + self.epsilon
        increment = gradient * lr / elementwise.sqrt(denominator)
        if self.momentum > 0:
            momentum = self.slot(variable, "momentum")
            momentum.assign(momentum * self.momentum + increment)
            variable.assign_sub(momentum)
        else:
            variable.assign_sub(increment)

    def _own_config(self):
        return {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}


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
    >>> ad.optimizers.Adagrad(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)          # 1 - 0.1 * 2 / sqrt(0.1 + 4)
    0.9012
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name=None, **kwargs):
        super().__init__(learning_rate, name or "adagrad", **kwargs)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def _slot_groups(self):
        return [(("accumulator", self.initial_accumulator_value),)]

    def update_step(self, gradient, variable, learning_rate):
        lr = _scalar(learning_rate, variable)
        accumulator = self.slot(variable, "accumulator", self.initial_accumulator_value)
        accumulator.assign_add(elementwise.square(gradient))
        variable.assign_sub(lr * gradient / elementwise.sqrt(accumulator + self.epsilon))

    def _own_config(self):
        return {"initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
