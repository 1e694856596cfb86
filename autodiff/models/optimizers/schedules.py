"""``ad.optimizers.schedules``: learning rates that change with the step, as Keras 3's.

An optimizer calls its schedule with its ``iterations`` Variable at every
``apply_gradients``; the schedule computes the rate with the library's ops:

    >>> decay = ad.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    >>> print(decay(ad.constant(10)).numpy())      # 0.1 * 0.5 ** (10 / 10)
    0.05
    >>> opt = ad.optimizers.SGD(learning_rate=decay)

Because the step is read as a tensor, never as a Python number, a training
step inside ``ad.function`` (compiled or not) reads the counter each time it
runs, and the rate moves on exactly as in eager code. A schedule written by
hand should do the same: ``float(step)`` inside it would be frozen into the
trace (and ``ad.function`` warns when that happens).

The built-in curves are written once, against a small namespace of arithmetic
(``_OPS``: the library's ops). ``raw_rate`` runs the same lines on host 0-d
NumPy arrays (``_RAW``: each function the very ufunc the op's forward calls),
so it gives the same floats without an op's overhead; an optimizer step uses
it when nothing records or observes the thread (``base.py``).
"""

import math as _math

import numpy as _np

from ...ops import elementwise, predicates
from ...ops.elementwise import _pow_forward
from ...tensor import convert_to_tensor

__all__ = ["LearningRateSchedule", "ExponentialDecay", "InverseTimeDecay", "CosineDecay",
           "PiecewiseConstantDecay"]


def __dir__():
    return __all__


class LearningRateSchedule:
    """The base class: ``schedule(step) -> learning rate`` (a scalar tensor).

    Subclasses implement ``__call__(step)`` with the library's ops and
    ``get_config()`` (the arguments they were made with).
    """

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(step)")

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} must implement get_config()")

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "name")
        return f"{type(self).__name__}({args})"


def _as(value, dtype):
    """``value`` (a Python number or a tensor of any dtype) as a tensor of ``dtype``."""
    value = convert_to_tensor(value)
    return value if value.dtype == dtype else elementwise.cast(value, dtype)


def _host(value):
    """``convert_to_tensor(value)`` as a host NumPy array (a Python float is float32, an
    int int32 when it fits: what ``convert_to_tensor`` makes, without a Tensor)."""
    if type(value) is float:
        return _np.asarray(value, _np.float32)
    if type(value) is int and -2 ** 31 <= value < 2 ** 31:
        return _np.asarray(value, _np.int32)
    return _np.asarray(convert_to_tensor(value).numpy())   # on the host on any backend


def _raw_as(value, dtype):
    """``_as`` on host arrays: ``value`` as a 0-d NumPy array of ``dtype`` (Cast's forward)."""
    if not isinstance(value, (_np.ndarray, _np.generic)):
        value = _host(value)
    return value if value.dtype == dtype else value.astype(dtype)


class _OPS:
    """The schedules' arithmetic as the library's ops (recorded, traced)."""
    constant, as_ = staticmethod(convert_to_tensor), staticmethod(_as)
    pow, floor, cos = staticmethod(elementwise.pow), staticmethod(elementwise.floor), \
        staticmethod(elementwise.cos)
    minimum, less, where = staticmethod(elementwise.minimum), staticmethod(predicates.less), \
        staticmethod(predicates.where)


class _RAW:
    """The same arithmetic on host 0-d NumPy arrays: what each op's forward computes."""
    constant, as_ = staticmethod(_host), staticmethod(_raw_as)
    pow = staticmethod(lambda x, y: _pow_forward(_np, x, y))
    floor, cos, minimum, less, where = _np.floor, _np.cos, _np.minimum, _np.less, _np.where


def raw_rate(schedule, step):
    """``schedule(step)`` computed on host 0-d NumPy arrays for the built-in curves
    (``step``: the step counter's 0-d int64 array), with the floats the ops give; None
    for any other schedule (a subclass or one written by hand runs its own ops).

    >>> from autodiff.models.optimizers.schedules import raw_rate
    >>> decay = ad.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    >>> bool(raw_rate(decay, np.asarray(10)) == decay(ad.constant(10)).numpy())
    True
    """
    if type(schedule) not in (ExponentialDecay, InverseTimeDecay, CosineDecay):
        return None
    # Where NumPy and the ops would part, the ops decide: NumPy promotes an int rate
    # that the ops refuse to mix with a float, and keeps a NumPy float64 ``alpha`` in
    # float64 where the ops convert it to the rate's dtype.
    if _host(schedule.initial_learning_rate).dtype.kind != "f" or (
            type(schedule) is CosineDecay and type(schedule.alpha) not in (int, float)):
        return None
    return _np.asarray(schedule._rate(step, _RAW))


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``.

    Args:
        initial_learning_rate: the rate at step 0.
        decay_steps: steps over which the rate is multiplied by ``decay_rate`` (> 0).
        decay_rate: the factor per ``decay_steps``.
        staircase: floor ``step / decay_steps``, so the rate drops in steps.
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: "
                             f"decay_steps={decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _progress(self, step, m):
        """The initial rate and ``step / decay_steps`` (floored on a staircase), in ``m``."""
        initial = m.constant(self.initial_learning_rate)
        p = m.as_(step, initial.dtype) / m.as_(self.decay_steps, initial.dtype)
        return initial, m.floor(p) if self.staircase else p

    def __call__(self, step):
        return self._rate(step, _OPS)

    def _rate(self, step, m):
        initial, p = self._progress(step, m)
        return initial * m.pow(m.as_(self.decay_rate, initial.dtype), p)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class InverseTimeDecay(ExponentialDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``, as Keras 3.

    (``ExponentialDecay``'s arguments, with a different curve.)

    Args:
        initial_learning_rate: the rate at step 0.
        decay_steps: how often the decay is applied.
        decay_rate: the decay's strength.
        staircase: floor ``step / decay_steps``, so the rate drops in steps.

    >>> decay = ad.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=10, decay_rate=1.0)
    >>> print(decay(ad.constant(10)).numpy())      # 0.1 / (1 + 1.0 * 10 / 10)
    0.05
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _rate(self, step, m):
        initial, p = self._progress(step, m)
        return initial / (m.as_(1.0, initial.dtype) + m.as_(self.decay_rate, initial.dtype) * p)


class CosineDecay(LearningRateSchedule):
    """Half a cosine from the rate down to ``alpha`` times it over ``decay_steps``, then flat.

    With ``warmup_target``, the rate first climbs linearly from
    ``initial_learning_rate`` to ``warmup_target`` over ``warmup_steps``, and
    the cosine then decays from ``warmup_target``.

    Args:
        initial_learning_rate: the rate at step 0.
        decay_steps: length of the cosine.
        alpha: the final rate as a fraction of the decayed-from rate.
        warmup_target: the rate the warmup reaches (None: no warmup).
        warmup_steps: length of the warmup.
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, decay_steps, decay_from, dtype, m):
        fraction = step / decay_steps
        cosine = 0.5 * (1.0 + m.cos(m.as_(_math.pi, dtype) * fraction))
        return decay_from * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        return self._rate(step, _OPS)

    def _rate(self, step, m):
        initial = m.constant(self.initial_learning_rate)
        dtype = initial.dtype
        decay_steps = m.as_(self.decay_steps, dtype)
        step = m.as_(step, dtype)
        if self.warmup_target is None:
            return self._decay(m.minimum(step, decay_steps), decay_steps, initial, dtype, m)
        target = m.as_(self.warmup_target, dtype)
        warmup_steps = m.as_(self.warmup_steps, dtype)
        step = m.minimum(step, decay_steps + warmup_steps)
        warming = (target - initial) * (step / warmup_steps) + initial
        decaying = self._decay(step - warmup_steps, decay_steps, target, dtype, m)
        # Both sides are computed (a graph has no Python `if` on a tensor); where picks one.
        return m.where(m.less(step, warmup_steps), warming, decaying)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[1]`` up to ``boundaries[1]``, ...

    Args:
        boundaries: increasing step numbers.
        values: one more value than boundaries.
    """

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}.")
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step):
        step = convert_to_tensor(step)
        values = [convert_to_tensor(v) for v in self.values]
        dtype = values[0].dtype
        bounds = [_as(b, step.dtype) for b in self.boundaries]

        def indicator(condition):   # 1.0 where the condition holds, as the rate's dtype
            return elementwise.cast(condition, dtype)

        rate = indicator(predicates.less_equal(step, bounds[0])) * values[0]
        rate = rate + indicator(predicates.greater(step, bounds[-1])) * values[-1]
        for low, high, value in zip(bounds[:-1], bounds[1:], values[1:-1]):
            inside = predicates.logical_and(predicates.greater(step, low),
                                            predicates.less_equal(step, high))
            rate = rate + indicator(inside) * value
        return rate

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}

