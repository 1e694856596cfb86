"""``ad.slice`` with begin or size computed inside ``ad.function``: the box is checked when it runs.

``ad.slice(x, begin, size)`` cuts the box of ``x`` that starts at ``begin`` and
holds ``size`` elements per axis (-1: to the end of the axis). Eagerly, and
in a trace whose bounds are Python ints, the box is checked once and cut as
``x[b:b + s]`` (``compositions.py``). When begin or size is computed in the
trace (``ad.slice(x, [0, i], [-1, 1])`` with ``i`` a loop counter, or a size
``ad.shape(x)[1] - 2``), or ``x`` has a ``None`` size in the signature, the
numbers change from call to call, so the check must run on every call. It
is one op, ``SliceBounds(shape, begin, size)``: it reads the three int
vectors, raises TensorFlow's InvalidArgumentError when the box does not fit
(NumPy slicing would cut it short, silently), and returns the box as a
``[2, rank]`` int32 tensor, its begins over its stops. The cut itself is
``StridedSliceOf`` (``dynamic_shape.py``) with those stops as its bounds,
so the check is on the data path: no graph, compiled program or saved
model can drop it, and gradients of every order and forward mode are
StridedSliceOf's::

    @ad.function(input_signature=[ad.TensorSpec([None, 4]), ad.TensorSpec([], ad.int32)])
    def column(x, i):
        return ad.slice(x, [0, i], [-1, 1])   # Shape, Pack, SliceBounds, StridedSliceOf

This module must not slice anything itself; it owns the check and its words.
"""

import builtins

import numpy as np

from .. import backend
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable
from .checked_when_run import CheckedWhenRun, recording

__all__ = ["box_stops", "traced_slice"]


def box_stops(begin, size, shape):
    """The stop of each axis of the box ``begin``/``size`` in an input of ``shape`` (all ints).

    Raises:
        InvalidArgumentError: the box does not fit, in TensorFlow's words (``Slice: Expected
            begin[i] in [0, d]`` or ``Expected size[i] in [0, d - b]``).

    >>> from autodiff.ops.traced_slice import box_stops
    >>> box_stops([1, 0], [-1, 2], (3, 4))
    [3, 2]
    """
    stops = []
    for i, (b, s, d) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= d:
            raise InvalidArgumentError(
                f"Slice: Expected begin[{i}] in [0, {d}], but got {b} (input shape {tuple(shape)})")
        stop = d if s == -1 else b + s
        if s < -1 or stop > d:
            raise InvalidArgumentError(
                f"Slice: Expected size[{i}] in [0, {d - b}], but got {s} (begin[{i}] = {b}, "
                f"input shape {tuple(shape)})")
        stops.append(stop)
    return stops


# While an ``ad.function`` traces the op, a box computed from the traced arguments that
# does not fit is clamped into the input (checked_when_run.py); the graph checks it when it
# runs. A box of numbers known while tracing (not computed from the arguments) is checked
# at once: nothing would check it later.


def _clamped(begin, size, shape):
    begin = [min(max(b, 0), d) for b, d in zip(begin, shape)]
    return begin, [d if s == -1 else min(max(b + s, b), d) for b, s, d in zip(begin, size, shape)]


def _bounds_forward(xp, shape, begin, size):
    shape, begin, size = (backend.to_numpy(v).reshape(-1).tolist() for v in (shape, begin, size))
    try:
        stops = box_stops(begin, size, shape)   # a few ints on the host, as TensorFlow's Slice
    except InvalidArgumentError:
        if not recording():
            raise
        begin, stops = _clamped(begin, size, shape)
    return xp.asarray(np.asarray([begin, stops], dtype=np.int32))


SLICE_BOUNDS = CheckedWhenRun(
    "SliceBounds", _bounds_forward, NotDifferentiable, saves="shapes", dtype_args=(),
    cases=[(((2,), (2,), (2,)), {})], label="SliceBounds({0}, {1}, {2})",
    doc="not differentiable: integers (checks the box, returns its begins and stops)")
SLICE_BOUNDS.make_inputs = lambda rng, shapes: [np.asarray([3, 4], np.int32),
                                                 np.asarray([1, 0], np.int32),
                                                 np.asarray([-1, 2], np.int32)]


def traced_slice(x, begin, size):
    """``ad.slice(x, begin, size)`` with begin or size (or x's sizes) read when it runs.

    Args:
        x: a tensor.
        begin, size: int vectors as long as x's rank: tensors, or lists of ints and scalar
            int tensors.

    Returns:
        ``StridedSliceOf(x, ...)`` whose bounds are ``SliceBounds``' checked begins and stops.
    """
    from .dynamic_shape import _shape_of, shape_tensor
    rank = x._value.ndim
    vectors = []
    for what, value in (("begin", begin), ("size", size)):
        vector = shape_tensor(value, "Slice")
        if tuple(vector._value.shape) != (rank,):
            raise InvalidArgumentError(
                f"Slice: Expected begin and size arguments to be 1-D tensors of size {rank}, "
                f"but got {what} of shape {tuple(vector.shape)} (input shape {tuple(x.shape)})")
        vectors.append(vector)
    bounds = SLICE_BOUNDS(_shape_of(x), *vectors)
    return strided_slice_of(x, tuple(builtins.slice(bounds[0, i], bounds[1, i])
                                     for i in range(rank)))


from .dynamic_shape import strided_slice_of  # noqa: E402
