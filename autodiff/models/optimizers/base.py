"""``ad.optimizers``: SGD, Adam, AdamW and RMSprop with Keras 3's update rules.

An optimizer turns gradients into Variable updates, outside every tape:

    >>> opt = ad.optimizers.Adam(learning_rate=0.01)
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.reduce_sum((w * x - y) ** 2)
    >>> opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

Updates use ``Variable.assign`` / ``assign_add`` / ``assign_sub`` with this
library's ops, in the order Keras 3 computes them, so float32 results match
Keras to rounding. Per-variable state ("slots": momentum, Adam's ``m`` and
``v``) is created, zero, the first time a variable is updated.

As in Keras 3: a None gradient skips its variable with a warning ("Gradients
do not exist for variables [...]"); all None raises ValueError;
``iterations`` (an int64 Variable) counts ``apply_gradients`` calls.

Everything that changes from step to step lives in Variables and is read
with ops: the step counter (Adam's bias correction reads ``iterations``),
the learning rate (a float becomes the Variable ``learning_rate``; a
schedule is called with ``iterations``), the slots. So a training step
traced by ``ad.function``, compiled or not, updates the same state in the
same way on every call as the eager step does; nothing is read on the host
and frozen into the trace.
"""

import warnings

from .. import dtypes
from ..ops import creation, elementwise
from ..tensor import Tensor, convert_to_tensor
from ..variable import Variable
from . import schedules
from .schedules import LearningRateSchedule

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "schedules"]


def __dir__():   # dir(ad.optimizers) shows the optimizers, not this module's imports
    return __all__


class Optimizer:
    """The shared part: learning rate, ``iterations``, slots and ``apply_gradients``.

    Args:
        learning_rate: a float (kept in the float32 Variable ``learning_rate``),
            a ``schedules.LearningRateSchedule`` (called with ``iterations``),
            or a callable taking no arguments, as in Keras 3.
        name: the optimizer's name (``'sgd'``, ``'adam'``).

    Subclasses implement ``update_step(gradient, variable, learning_rate)``.
    """

    def __init__(self, learning_rate, name):
        self.name = name
        self.iterations = Variable(0, dtype=dtypes.int64, trainable=False,
                                   name=f"{name}/iteration")
        self._learning_rate = self._build_learning_rate(learning_rate)
        self._slots = {}   # (slot name, variable id) -> Variable

    def _build_learning_rate(self, learning_rate):
        if isinstance(learning_rate, LearningRateSchedule) or callable(learning_rate):
            return learning_rate
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float, Tensor)):
            raise ValueError(f"{type(self).__name__}: `learning_rate` must be a float, a "
                             f"LearningRateSchedule or a callable; received "
                             f"learning_rate={learning_rate!r}")
        return Variable(learning_rate, dtype=dtypes.float32, trainable=False,
                        name=f"{self.name}/learning_rate")

    @property
    def learning_rate(self):
        """The current learning rate: the ``learning_rate`` Variable, or the schedule's
        value at ``iterations`` (a tensor), as Keras 3's ``optimizer.learning_rate``."""
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return lr(self.iterations)
        return lr() if callable(lr) else lr

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its "
                "`learning_rate` constructor argument, hence its learning rate is not "
                "settable. If you need the learning rate to be settable, you should "
                "instantiate the optimizer with a float `learning_rate` argument.")
        if isinstance(self._learning_rate, Variable) and not callable(value):
            self._learning_rate.assign(value)   # a step traced earlier reads the new value
        else:
            self._learning_rate = self._build_learning_rate(value)

    @property
    def variables(self):
        """``iterations``, ``learning_rate`` (when it is a Variable) and every slot, in
        creation order, as Keras 3."""
        rate = [self._learning_rate] if isinstance(self._learning_rate, Variable) else []
        return [self.iterations] + rate + list(self._slots.values())

    def slot(self, variable, name):
        """The optimizer's ``name`` state for ``variable`` (zeros like it, made on first use)."""
        key = (name, variable._id)
        if key not in self._slots:
            base = variable.name.split(":")[0].replace("/", "_")
            self._slots[key] = Variable(creation.zeros(tuple(variable.shape), dtype=variable.dtype),
                                        trainable=False, name=f"{base}_{name}")
        return self._slots[key]

    def apply_gradients(self, grads_and_vars):
        """Applies one update to each variable that has a gradient.

        Args:
            grads_and_vars: pairs ``(gradient, variable)``, e.g. ``zip(grads, vars)``.

        Returns:
            ``iterations`` after the step (an int64 Variable), as Keras.

        Raises:
            ValueError: no variable has a gradient, or a gradient's shape
                differs from its variable's.
        """
        pairs = list(grads_and_vars)
        kept = [(g, v) for g, v in pairs if g is not None]
        if not kept:
            raise ValueError("apply_gradients: every gradient is None, so no variable can be "
                             "updated (does the loss depend on the variables, and was it "
                             "computed inside the tape?)")
        missing = [v.name for g, v in pairs if g is None]
        if missing:
            warnings.warn(f"apply_gradients: the gradients of the variables {missing} are "
                          f"None (the loss does not depend on them); they are left unchanged",
                          UserWarning, stacklevel=2)
        lr = self.learning_rate
        self._apply_weight_decay([v for _, v in kept], lr)
        for g, v in kept:
            if not isinstance(v, Variable):
                raise TypeError(f"{type(self).__name__}.apply_gradients: expected Variables, "
                                f"got {type(v).__name__}")
            g = convert_to_tensor(g)
            if tuple(g.shape) != tuple(v.shape):
                raise ValueError(f"{type(self).__name__}.apply_gradients: the gradient for "
                                 f"{v.name} has shape {tuple(g.shape)}, the variable "
                                 f"{tuple(v.shape)}")
            if g.dtype != v.dtype:
                g = elementwise.cast(g, v.dtype)
            self.update_step(g, v, lr)
        self.iterations.assign_add(1)
        return self.iterations

    def minimize(self, loss, var_list, tape=None):
        """``apply_gradients(zip(tape.gradient(loss, var_list), var_list))``.

        Args:
            loss: a Tensor computed under ``tape``, or a zero-argument callable
                (then it runs under a new tape).
            var_list: the variables to update.
            tape: the GradientTape that recorded ``loss`` (needed for a Tensor).
        """
        from ..tape import GradientTape
        if callable(loss):
            with GradientTape() as tape:
                value = loss()
            loss = value
        elif tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed.")
        var_list = list(var_list)
        return self.apply_gradients(zip(tape.gradient(loss, var_list), var_list))

    def update_step(self, gradient, variable, learning_rate):
        raise NotImplementedError

    def _apply_weight_decay(self, variables, learning_rate):
        """Decoupled weight decay (AdamW): ``w -= w * weight_decay * lr``, before the step."""
        decay = getattr(self, "weight_decay", None)
        if not decay:
            return
        for variable in variables:
            variable.assign(variable - variable * _scalar(decay, variable)
                            * _scalar(learning_rate, variable))

    def __repr__(self):
        return f"<{type(self).__name__} learning_rate={self._learning_rate!r}>"


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum, as ``keras.optimizers.SGD``.

    Without momentum: ``w -= lr * g``. With it, a velocity ``m`` per variable:
    ``m = momentum * m - lr * g``, then ``w += m`` (or, Nesterov,
    ``w += momentum * m - lr * g``).

    Args:
        learning_rate: float or schedule (default 0.01).
        momentum: in [0, 1].
        nesterov: use Nesterov momentum.

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.SGD(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> w.numpy()
    0.8
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name=None):
        super().__init__(learning_rate, name or "sgd")
        if not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

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


class Adam(Optimizer):
    """Adam, as ``keras.optimizers.Adam`` (Keras 3's form of the update).

    Per variable, running averages of the gradient and its square:
    ``m += (g - m) * (1 - beta_1)``, ``v += (g^2 - v) * (1 - beta_2)``; then
    ``w -= alpha * m / (sqrt(v) + epsilon)`` with the bias correction folded
    into ``alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)`` at step ``t``.

    Args:
        learning_rate: float or schedule (default 0.001).
        beta_1, beta_2: decay rates of the two averages.
        epsilon: added to ``sqrt(v)`` (Keras' default 1e-7).

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.Adam(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)          # the first step is about lr * sign(g)
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None):
        super().__init__(learning_rate, name or "adam")
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)

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
        variable.assign_sub((m * alpha) / (elementwise.sqrt(v) + self.epsilon))


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``keras.optimizers.AdamW``.

    Before each Adam step every updated variable shrinks:
    ``w -= w * weight_decay * lr`` (Loshchilov and Hutter's decoupling: the
    decay does not pass through Adam's averages).

    Args:
        learning_rate: float or schedule (default 0.001).
        weight_decay: the decay per step, times the learning rate (default 0.004).
        beta_1, beta_2, epsilon: as ``Adam``.

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.AdamW(0.1, weight_decay=0.5).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)          # 1 - 1 * 0.5 * 0.1, then Adam's first step
    0.85
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, name=None):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name=name or "adamw")
        if not isinstance(weight_decay, (int, float)) or isinstance(weight_decay, bool):
            raise ValueError(f"AdamW: `weight_decay` must be a float; received "
                             f"weight_decay={weight_decay!r}")
        self.weight_decay = float(weight_decay)


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

    >>> w = ad.Variable(1.0)
    >>> ad.optimizers.RMSprop(0.01).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w.numpy()), 4)          # 1 - 0.01 * 2 / sqrt(0.1 * 4)
    0.9684
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name=None):
        super().__init__(learning_rate, name or "rmsprop")
        self.rho = float(rho)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)

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


def _scalar(value, variable):
    """A 0-d tensor of the variable's dtype (Keras casts its hyperparameters so)."""
    if isinstance(value, Tensor):
        return elementwise.cast(value, variable.dtype) if value.dtype != variable.dtype else value
    return convert_to_tensor(value, dtype=variable.dtype)

