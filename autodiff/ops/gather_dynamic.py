"""Gather with indices that are a tensor input of the op: what ``ad.function`` records.

``ad.gather`` usually turns its indices into a constant key of a ``GatherV2``
op (``slicing.py``). Inside ``ad.function`` indices computed from the
function's arguments change from call to call, so they must stay an input:
``GatherTake(params, indices, axis)`` takes ``params`` along ``axis`` at
``indices``, and ``GatherTakeGrad(g, indices, shape, axis)`` adds ``g`` back
into zeros at the same places (repeated indices add up). Each is the other's
VJP, so every order of derivative works, and both accept cotangents with
leading batch axes (``n_batch``), as the vectorized ``jacobian`` sends.

With ``batch_dims`` = b the first b axes of ``params`` and ``indices`` are
shared (``tf.gather``'s batch_dims): row ``i`` of the batch gathers from
``params[i]`` at ``indices[i]``. The forward moves the gathered axis next to
the batch axes and indexes with one ``arange`` per batch axis beside the
indices; the result's axes are then put in TensorFlow's order.

The segment sums of ``tf.math`` are the same scatter-add: ``unsorted_segment_sum``
adds each slice of ``data`` into the row its id names (TensorFlow's gradient:
gather the cotangent back), and ``segment_sum`` is it for sorted ids.
"""

import numpy as np

from ..errors import InvalidArgumentError
from ..registry import Primitive
from .checked_when_run import CheckedWhenRun, recording

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
    scattered at all (``valid`` marks the others); so it is while a trace records it
    (``checked_when_run.py``: a row of an empty ``x`` in ``for row in x``)."""
    if xp is np and not recording():
        _check_range(xp, indices, size, op)
        return indices, None
    valid = (indices >= 0) & (indices < size)
    return xp.where(valid, indices, 0), valid


def _around(valid, before, after):
    """``valid`` reshaped to line up with an array of ``before`` + its axes + ``after`` axes."""
    return valid.reshape((1,) * before + valid.shape + (1,) * after)


def _batch_aranges(xp, batch_shape, rest):
    """One ``arange`` per batch axis, shaped to broadcast against ``batch_shape + rest`` axes."""
    b = len(batch_shape)
    return tuple(xp.arange(n).reshape((1,) * i + (n,) + (1,) * (b - 1 - i + rest))
                 for i, n in enumerate(batch_shape))


def _r_block(lead, between, r):
    """Where the indices' own ``r`` axes sit: ``lead`` + (right after the batch axes,
    ``between`` axes later), as lists for ``moveaxis``."""
    return list(range(lead, lead + r)), list(range(lead + between, lead + between + r))


def _take_forward(xp, x, indices, axis, n_batch=0, batch_dims=0):
    if not x.shape[n_batch + axis] and not batch_dims and recording():
        return xp.zeros(x.shape[:n_batch + axis] + indices.shape + x.shape[n_batch + axis + 1:],
                        dtype=x.dtype)   # recorded from an empty x (checked_when_run.py)
    indices, valid = _in_range(xp, indices, x.shape[n_batch + axis], "GatherV2")
    if batch_dims == 0:
        out = xp.take(x, indices, axis=n_batch + axis)
        if valid is not None:
            out = xp.where(_around(valid, n_batch + axis, x.ndim - n_batch - axis - 1), out,
                           xp.zeros((), dtype=out.dtype))
        return out
    lead, r = n_batch + batch_dims, indices.ndim - batch_dims
    x = xp.moveaxis(x, n_batch + axis, lead)           # N + B + (axis) + the other axes
    key = (slice(None),) * n_batch + _batch_aranges(xp, x.shape[n_batch:lead], r) + (indices,)
    out = x[key]                                       # N + B + R + the other axes
    if valid is not None:
        out = xp.where(_around(valid, n_batch, out.ndim - n_batch - valid.ndim), out,
                       xp.zeros((), dtype=out.dtype))
    at_front, in_place = _r_block(lead, axis - batch_dims, r)
    return xp.moveaxis(out, at_front, in_place)        # TF's order: R where the axis was


def _put_forward(xp, g, indices, shape, axis, n_batch=0, batch_dims=0):
    indices, valid = _in_range(xp, indices, shape[axis], "GatherV2Grad")
    if batch_dims:   # bring g's R axes next to the batch axes, as _take_forward made them
        lead, r = n_batch + batch_dims, indices.ndim - batch_dims
        at_front, in_place = _r_block(lead, axis - batch_dims, r)
        g = xp.moveaxis(g, in_place, at_front)
        before = n_batch
    else:
        before = n_batch + axis
    if valid is not None:
        g = xp.where(_around(valid, before, g.ndim - before - valid.ndim), g,
                     xp.zeros((), dtype=g.dtype))
    if not batch_dims:
        out = xp.zeros(g.shape[:n_batch] + tuple(shape), dtype=g.dtype)
        key = (slice(None),) * (n_batch + axis) + (indices,)
        xp.add.at(out, key, g)
        return out
    shape = tuple(shape)
    moved = shape[:batch_dims] + (shape[axis],) + shape[batch_dims:axis] + shape[axis + 1:]
    out = xp.zeros(g.shape[:n_batch] + moved, dtype=g.dtype)
    key = (slice(None),) * n_batch + _batch_aranges(xp, shape[:batch_dims], r) + (indices,)
    xp.add.at(out, key, g)
    return xp.moveaxis(out, lead, n_batch + axis)


def _index_inputs(rng, shapes):
    """A float array, then indices valid along any of its axes (repeats included), for the
    op table."""
    x = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [x, rng.integers(0, min(shapes[0]), size=shapes[1]).astype(np.int64)]


def _put_inputs(rng, shapes):
    g = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [g, rng.integers(0, 4, size=shapes[1]).astype(np.int64)]


def _batch_param(batch_dims):
    """The params that carry ``batch_dims``: none when it is 0 (older traces stay valid)."""
    return {"batch_dims": batch_dims} if batch_dims else {}


def _take_grad(g, ans, x, indices, axis, n_batch=0, batch_dims=0):
    return GATHER_TAKE_GRAD(g, indices, shape=x._value.shape[n_batch:], axis=axis,
                            n_batch=_n_batch(g, ans, n_batch), **_batch_param(batch_dims))


def _put_grad(gg, ans, g, indices, shape, axis, n_batch=0, batch_dims=0):
    return GATHER_TAKE(gg, indices, axis=axis, n_batch=_n_batch(gg, ans, n_batch),
                       **_batch_param(batch_dims))


def _no_grad(*args, **params):
    return None   # integer indices


GATHER_TAKE = CheckedWhenRun(
    "GatherTake", _take_forward, (_take_grad, _no_grad),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="gather({0}, {1})",
    cases=[(((4,), (3,)), {"axis": 0}), (((4, 3), (2, 2)), {"axis": 0}),
           (((2, 4, 3), (2, 3)), {"axis": 1, "batch_dims": 1}),
           (((2, 3, 4, 2), (2, 3, 2)), {"axis": 3, "batch_dims": 2}),
           (((2, 3, 4), (2, 2, 2)), {"axis": 2, "batch_dims": 1})],
    doc="d x[indices] = dx[indices]: g is added back at the indices (repeats add up)")
GATHER_TAKE.make_inputs = _index_inputs
GATHER_TAKE_GRAD = CheckedWhenRun(
    "GatherTakeGrad", _put_forward, (_put_grad, _no_grad),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="scatter_add({0}, {1})",
    cases=[(((3,), (3,)), {"shape": (4,), "axis": 0}),
           (((2, 2, 3), (2, 2)), {"shape": (4, 3), "axis": 0}),
           (((2, 3, 3), (2, 3)), {"shape": (2, 4, 3), "axis": 1, "batch_dims": 1}),
           (((2, 3, 2, 2), (2, 2, 2)), {"shape": (2, 3, 4), "axis": 2, "batch_dims": 1})],
    doc="linear in g (added into zeros at the indices); its VJP gathers the cotangent")
GATHER_TAKE_GRAD.make_inputs = _put_inputs


def gather_traced(x, indices, axis, batch_dims=0):
    """``x`` gathered along ``axis`` at ``indices`` (an integer tensor), as a recorded input;
    the first ``batch_dims`` axes of both are shared (checked here: shapes are known)."""
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(f"GatherV2: indices must be integers, not "
                                   f"{indices.dtype.name} (shape {tuple(indices.shape)})")
    if tuple(x._value.shape[:batch_dims]) != tuple(indices._value.shape[:batch_dims]):
        raise InvalidArgumentError(
            f"GatherV2: params shape {tuple(x.shape)} and indices shape {tuple(indices.shape)} "
            f"must agree on the first batch_dims={batch_dims} axes")
    return GATHER_TAKE(x, indices, axis=axis, **_batch_param(batch_dims))


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
    safe = where(flat_ids < 0, fill(flat_ids._value.shape,
                                      convert_to_tensor(n, dtype=flat_ids.dtype)), flat_ids)
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
