"""Gather with indices that are a tensor input of the op: what ``ad.function`` records.

``ad.gather`` usually turns its indices into a constant key of a ``GatherV2``
op (``slicing.py``). Inside ``ad.function`` indices computed from the
function's arguments change from call to call, so they must stay an input:
``GatherTake(params, indices, axis)`` takes ``params`` along ``axis`` at
``indices``, and ``GatherTakeGrad(g, indices, shape, axis)`` adds ``g`` back
into zeros at the same places (repeated indices add up). Each is the other's
VJP, so every order of derivative works, and both accept cotangents with
leading batch axes (``n_batch``), as the vectorized ``jacobian`` sends.

The segment sums of ``tf.math`` are the same scatter-add: ``unsorted_segment_sum``
adds each slice of ``data`` into the row its id names (TensorFlow's gradient:
gather the cotangent back), and ``segment_sum`` is it for sorted ids.
"""

import numpy as np

from ..errors import InvalidArgumentError
from ..registry import Primitive

__all__ = ["unsorted_segment_sum", "segment_sum"]


def _check_range(xp, indices, size, op):
    bad = (indices < 0) | (indices >= size)
    if xp.any(bad).item():
        first = int(xp.argmax(bad.reshape(-1)).item())
        raise InvalidArgumentError(f"{op}: indices[{first}] (flattened) = "
                                   f"{int(indices.reshape(-1)[first].item())} is not in [0, {size})")


def _in_range(xp, indices, size, op):
    """``(indices, valid)``. On the host an index out of ``[0, size)`` raises
    InvalidArgumentError (as TensorFlow does on its CPU: tested in ``tests/conformance``). On
    a device, checking would copy to the host, so such an index is gathered as 0 and not
    scattered at all (``valid`` marks the others)."""
    if xp is np:
        _check_range(xp, indices, size, op)
        return indices, None
    valid = (indices >= 0) & (indices < size)
    return xp.where(valid, indices, 0), valid


def _around(valid, before, after):
    """``valid`` reshaped to line up with an array of ``before`` + its axes + ``after`` axes."""
    return valid.reshape((1,) * before + valid.shape + (1,) * after)


def _take_forward(xp, x, indices, axis, n_batch=0):
    indices, valid = _in_range(xp, indices, x.shape[n_batch + axis], "GatherV2")
    out = xp.take(x, indices, axis=n_batch + axis)
    if valid is not None:
        out = xp.where(_around(valid, n_batch + axis, x.ndim - n_batch - axis - 1), out,
                       xp.zeros((), dtype=out.dtype))
    return out


def _put_forward(xp, g, indices, shape, axis, n_batch=0):
    indices, valid = _in_range(xp, indices, shape[axis], "GatherV2Grad")
    if valid is not None:
        g = xp.where(_around(valid, n_batch + axis, len(shape) - axis - 1), g,
                     xp.zeros((), dtype=g.dtype))
    out = xp.zeros(g.shape[:n_batch] + tuple(shape), dtype=g.dtype)
    key = (slice(None),) * (n_batch + axis) + (indices,)
    xp.add.at(out, key, g)
    return out


def _index_inputs(rng, shapes):
    """A float array, then indices into its axis 0 (repeats included), for the op table."""
    x = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [x, rng.integers(0, shapes[0][0], size=shapes[1]).astype(np.int64)]


def _put_inputs(rng, shapes):
    g = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [g, rng.integers(0, 4, size=shapes[1]).astype(np.int64)]


GATHER_TAKE = Primitive(
    "GatherTake", _take_forward,
    (lambda g, ans, x, indices, axis, n_batch=0: GATHER_TAKE_GRAD(
        g, indices, shape=x._value.shape[n_batch:], axis=axis, n_batch=_n_batch(g, ans, n_batch)),
     lambda g, ans, x, indices, axis, n_batch=0: None),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="gather({0}, {1})",
    cases=[(((4,), (3,)), {"axis": 0}), (((4, 3), (2, 2)), {"axis": 0})],
    doc="d x[indices] = dx[indices]: g is added back at the indices (repeats add up)")
GATHER_TAKE.make_inputs = _index_inputs
GATHER_TAKE_GRAD = Primitive(
    "GatherTakeGrad", _put_forward,
    (lambda gg, ans, g, indices, shape, axis, n_batch=0: GATHER_TAKE(
        gg, indices, axis=axis, n_batch=_n_batch(gg, ans, n_batch)),
     lambda gg, ans, g, indices, shape, axis, n_batch=0: None),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="scatter_add({0}, {1})",
    cases=[(((3,), (3,)), {"shape": (4,), "axis": 0}),
           (((2, 2, 3), (2, 2)), {"shape": (4, 3), "axis": 0})],
    doc="linear in g (added into zeros at the indices); its VJP gathers the cotangent")
GATHER_TAKE_GRAD.make_inputs = _put_inputs


def gather_traced(x, indices, axis):
    """``x`` gathered along ``axis`` at ``indices`` (an integer tensor), as a recorded input."""
    if not indices.dtype.is_integer:
        raise TypeError(f"GatherV2: indices must be integers, not {indices.dtype.name}")
    return GATHER_TAKE(x, indices, axis=axis)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the slices of ``data`` that share a segment id: ``out[s] = sum of data[i]``
    over ``segment_ids[i] == s``, for ``s`` in ``[0, num_segments)``.

    ``segment_ids`` has the shape of ``data``'s leading axes; a negative id drops its
    slice (as in TensorFlow). The gradient gathers the cotangent back (0 for dropped
    slices), and the ids stay an input of the op, so a traced function uses each call's.

    >>> ad.math.unsorted_segment_sum(ad.constant([1.0, 2.0, 3.0]), [1, 0, 1], 2).numpy()
    array([2., 4.], dtype=float32)
    """
    x = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    if not ids.dtype.is_integer:
        raise TypeError(f"UnsortedSegmentSum: segment_ids must be integers, not {ids.dtype.name}")
    n = _validate.as_int("UnsortedSegmentSum", "num_segments", num_segments
                         if not isinstance(num_segments, Tensor) else
                         _validate.host_value(num_segments, "UnsortedSegmentSum",
                                              "num_segments").item())
    k = ids._value.ndim
    if tuple(x._value.shape[:k]) != tuple(ids._value.shape) or n < 0:
        raise InvalidArgumentError(
            f"UnsortedSegmentSum: segment_ids of shape {tuple(ids.shape)} must match the leading "
            f"axes of data {tuple(x.shape)}, and num_segments ({n}) must be >= 0")
    flat_ids = reshape(ids, [-1])
    rows = reshape(x, [-1] + list(x._value.shape[k:]))
    # negative ids go to one extra segment, cut off at the end (their gradient is 0)
    safe = where(flat_ids < 0, fill(flat_ids._value.shape, n, flat_ids.dtype), flat_ids)
    summed = GATHER_TAKE_GRAD(rows, safe, shape=(n + 1,) + tuple(x._value.shape[k:]), axis=0)
    return summed[:n]


def segment_sum(data, segment_ids, name=None):
    """``unsorted_segment_sum`` for sorted ids, with ``max(segment_ids) + 1`` segments.

    Raises:
        InvalidArgumentError: the ids are not sorted (non-decreasing) or are negative.
    """
    ids = convert_to_tensor(segment_ids)
    host = np.asarray(_validate.host_value(ids, "SegmentSum", "segment_ids"))
    if host.ndim != 1 or (host.size and (host.min() < 0 or np.any(np.diff(host) < 0))):
        raise InvalidArgumentError(f"SegmentSum: segment_ids must be a sorted vector of ids >= 0, "
                                   f"got {host.tolist()[:10]}")
    return unsorted_segment_sum(data, ids, int(host.max()) + 1 if host.size else 0)


from .. import validate as _validate  # noqa: E402
from ..tensor import Tensor, convert_to_tensor  # noqa: E402
from .creation import fill  # noqa: E402
from .slicing import _n_batch  # noqa: E402  (the static gather's rule for batch axes)
from .predicates import where  # noqa: E402
from .shape import reshape  # noqa: E402
