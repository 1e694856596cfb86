"""``gather``, ``gather_nd``, ``boolean_mask`` and the ``tensor_scatter_nd`` family:
TensorFlow's arguments made into gathers.

Indices known when the op is built (a list, an array, a tensor made outside
``ad.function``) are checked here and become the key of one ``GatherV2`` op
(``slicing.py``): NumPy's advanced indexing, whose gradient adds the
cotangent back at the gathered places (repeats add up). A batch axis shared
by ``params`` and ``indices`` (``batch_dims``) is paired with an ``arange``
in the key, so a batched gather is still one index:

    gather_nd(p, idx, batch_dims=1)  ==  p[arange(B)[:, None], idx[..., 0], idx[..., 1]]
                                         (idx of shape (B, n, 2); out[b, i] = p[b, idx[b, i]])

    >>> p = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> ad.gather_nd(p, [[1], [0]], batch_dims=1).numpy()      # p[0, 1], p[1, 0]
    array([2., 3.], dtype=float32)

Indices computed inside ``ad.function`` from its arguments cannot be read
while tracing; ``gather`` keeps them an input of a ``GatherTake`` op
(``gather_dynamic.py``), so every call gathers at its own indices.

Writing at known places is a gather too (``replace_at``): the new tensor takes
each element from ``concat([x, part])``, from ``part`` where it was written.
Its gradient is TensorFlow's for ``tensor_scatter_nd_update``: the cotangent
with the written places zeroed for ``x``, gathered at them for ``part``.
"""

import numpy as np

from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..tensor import Tensor, convert_to_tensor
from .slicing import GATHER, GATHER_GRAD, _encode, _index_array

__all__ = ["gather", "gather_nd", "boolean_mask", "tensor_scatter_nd_update",
           "tensor_scatter_nd_add", "tensor_scatter_nd_sub"]


def _host_indices(indices, op):
    """``indices`` as a NumPy int64 array; TensorFlow's error for any other dtype (an empty
    list converts to float32 there, so ``[]`` is refused too)."""
    idx = np.asarray(_validate.host_value(indices, op, "indices")
                     if isinstance(indices, Tensor) else indices)
    if idx.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{op}: indices must be int32 or int64, got "
                                   f"{'float' if idx.dtype.kind == 'f' else idx.dtype.name} "
                                   f"values of shape {idx.shape}")
    return idx.astype(np.int64)


def _batch_key(batch_shape, rest):
    """Key items pairing each batch axis with an ``arange`` that broadcasts over ``rest`` axes."""
    b = len(batch_shape)
    return tuple(_index_array(np.arange(n).reshape((1,) * i + (n,) + (1,) * (b - 1 - i + rest)))
                 for i, n in enumerate(batch_shape))


def _gather_axes(x, indices_ndim, axis, batch_dims):
    """``(batch_dims, axis)`` made non-negative and checked against the ranks."""
    ndim = x._value.ndim
    b = _validate.as_int("GatherV2", "batch_dims", batch_dims)
    b = b + indices_ndim if b < 0 else b
    axis = b if axis is None else _validate.as_int("GatherV2", "axis", axis)
    axis = axis + ndim if axis < 0 else axis
    if not (0 <= b <= indices_ndim and b <= axis < ndim):
        raise InvalidArgumentError(
            f"GatherV2: axis {axis} must be in [batch_dims={b}, rank {ndim}) of params shape "
            f"{tuple(x.shape)}, and batch_dims at most the rank of indices ({indices_ndim})")
    return b, axis


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Picks slices of ``params`` along ``axis`` at ``indices`` (TensorFlow's ``tf.gather``).

    Args:
        params: the tensor to take from.
        indices: integer tensor or list; values in ``[0, params.shape[axis])``.
        axis: the axis to gather along (default: ``batch_dims``, usually 0).
        batch_dims: leading axes shared by ``params`` and ``indices``: batch row
            ``i`` gathers from ``params[i]`` at ``indices[i]`` (negative: counted
            from the rank of ``indices``).

    Returns:
        ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    >>> ad.gather(ad.constant([10.0, 20.0, 30.0]), [2, 0, 2]).numpy()
    array([30., 10., 30.], dtype=float32)
    >>> ad.gather(ad.constant([[1.0, 2.0], [3.0, 4.0]]), [[1], [0]], batch_dims=1).numpy()
    array([[2.],
           [3.]], dtype=float32)
    """
    x = convert_to_tensor(params)
    if isinstance(indices, Tensor) and _validate.traced(indices):
        # inside ad.function, indices computed from the arguments stay an input of the op
        b, axis = _gather_axes(x, indices._value.ndim, axis, batch_dims)
        return gather_traced(x, indices, axis, b)
    idx = _host_indices(indices, "GatherV2")
    b, axis = _gather_axes(x, idx.ndim, axis, batch_dims)
    size = x._value.shape[axis]
    bad = np.argwhere((idx < 0) | (idx >= size))
    if len(bad):
        where = [int(i) for i in bad[0]]
        raise InvalidArgumentError(
            f"GatherV2: indices{where} = {idx[tuple(where)]} is not in [0, {size}) "
            f"(params shape {tuple(x.shape)}, axis {axis})")
    if b == 0:
        return GATHER(x, key=(_encode(slice(None)),) * axis + (_index_array(idx),))
    return _batched_gather(x, idx, axis, b)


def _batched_gather(x, idx, axis, b):
    """Gather with ``b`` batch axes: pair each batch axis with an ``arange``."""
    if x._value.shape[:b] != idx.shape[:b]:
        raise InvalidArgumentError(
            f"GatherV2: params shape {tuple(x.shape)} and indices shape {idx.shape} must agree "
            f"on the first batch_dims={b} axes")
    if axis != b:   # bring the gathered axis next to the batch axes
        rest = [i for i in range(b, x._value.ndim) if i != axis]
        x = transpose(x, list(range(b)) + [axis] + rest)
    r = idx.ndim - b
    out = GATHER(x, key=_batch_key(idx.shape[:b], r) + (_index_array(idx),))
    if axis == b:
        return out
    # out: batch + indices' rest + params' axes b..axis-1 + the others; TF wants those before
    between = axis - b
    perm = (list(range(b)) + list(range(b + r, b + r + between)) + list(range(b, b + r))
            + list(range(b + r + between, out._value.ndim)))
    return transpose(out, perm)


def gather_nd(params, indices, batch_dims=0, name=None):
    """Picks the elements (or slices) of ``params`` whose index tuples are ``indices``' last axis.

    ``indices`` has shape ``batch + (..., K)``; each row of K indexes the K axes of
    ``params`` after its ``batch_dims`` leading (batch) axes, which ``params`` and
    ``indices`` share. The result has shape ``indices.shape[:-1] +
    params.shape[batch_dims + K:]``; the gradient adds the cotangent back at those
    positions (repeats add up). ``K = 0`` picks all of ``params[batch]`` for every row.

    Args:
        params: the tensor to take from.
        indices: an integer tensor or list of rank at least ``batch_dims + 1``.
        batch_dims: how many leading axes are batch axes (an int >= 0).

    >>> ad.gather_nd(ad.constant([[1.0, 2.0], [3.0, 4.0]]), [[1, 0], [0, 1]]).numpy()
    array([3., 2.], dtype=float32)
    >>> ad.gather_nd(ad.constant([[0.068]]), [[[0]]], batch_dims=1).numpy()
    array([[0.068]], dtype=float32)
    """
    x = convert_to_tensor(params)
    idx = _host_indices(indices, "GatherNd")
    b = _validate.as_int("GatherNd", "batch_dims", batch_dims)
    shape = tuple(x._value.shape)
    if b < 0 or b >= max(idx.ndim, 1) or (b and b >= len(shape)):
        raise InvalidArgumentError(
            f"GatherNd: batch_dims={b} must be >= 0 and less than the rank of indices "
            f"(shape {idx.shape}) and of params (shape {shape})")
    if idx.ndim == 0:
        raise InvalidArgumentError(f"GatherNd: indices must be at least a vector, got a scalar "
                                   f"(params shape {shape})")
    if shape[:b] != idx.shape[:b]:
        raise InvalidArgumentError(
            f"GatherNd: params shape {shape} and indices shape {idx.shape} must agree on the "
            f"first batch_dims={b} axes")
    k, rest = idx.shape[-1], idx.ndim - 1 - b
    if k > len(shape) - b:
        raise InvalidArgumentError(
            f"GatherNd: the last axis of indices (shape {idx.shape}) holds {k} indices, more "
            f"than the {len(shape) - b} axes of params (shape {shape}) after batch_dims={b}")
    for j in range(k):
        size = shape[b + j]
        bad = np.argwhere((idx[..., j] < 0) | (idx[..., j] >= size))
        if len(bad):
            where = [int(i) for i in bad[0]] + [j]
            raise InvalidArgumentError(
                f"GatherNd: indices{where} = {idx[tuple(where)]} does not index into "
                f"params of shape {shape} (axis {b + j} has size {size})")
    if k == 0:   # every row picks the whole of params[batch]
        spread = reshape(x, shape[:b] + (1,) * rest + shape[b:])
        return broadcast_gradient_to(spread, idx.shape[:-1] + shape[b:])
    key = _batch_key(shape[:b], rest) + tuple(_index_array(idx[..., j]) for j in range(k))
    return GATHER(x, key=key)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The elements (or slices, from ``axis`` on) of ``tensor`` where ``mask`` is true.

    >>> ad.boolean_mask(ad.constant([1.0, 2.0, 3.0]), [True, False, True]).numpy()
    array([1., 3.], dtype=float32)
    """
    x = convert_to_tensor(tensor)
    mask = np.asarray(_validate.host_value(mask, "boolean_mask", "mask")
                      if isinstance(mask, Tensor) else mask, dtype=bool)
    axis = 0 if axis is None else int(axis) % max(x._value.ndim, 1)
    return getitem(x, (slice(None),) * axis + (mask,))


def replace_at(x, positions, part):
    """``x`` with its flat ``positions`` (an int array, no repeats) replaced by ``part``
    (broadcast to ``positions``' shape): one gather from ``concat([x, part])``."""
    size = int(np.prod(x._value.shape, dtype=np.int64))
    source = np.arange(size, dtype=np.int64)
    source[positions.ravel()] = size + np.arange(positions.size, dtype=np.int64)
    both = concat([reshape(x, [-1]), reshape(broadcast_to(part, positions.shape), [-1])], 0)
    return reshape(GATHER(both, key=(_index_array(source),)), x._value.shape)


def _scatter_positions(x, indices, updates, op):
    """The flat positions of ``x`` that ``indices`` (last axis: K indices) name, shaped like
    ``updates`` must be (``indices.shape[:-1] + x.shape[K:]``), and ``updates`` in x's dtype."""
    idx = _host_indices(indices, op)
    shape = tuple(x._value.shape)
    u = convert_to_tensor(updates, dtype=x.dtype)
    k = idx.shape[-1] if idx.ndim else -1
    if k < 1 or k > len(shape):
        raise InvalidArgumentError(f"{op}: indices (shape {idx.shape}) must have a last axis of "
                                   f"1 to {len(shape)} indices into tensor of shape {shape}")
    for j in range(k):
        bad = np.argwhere((idx[..., j] < 0) | (idx[..., j] >= shape[j]))
        if len(bad):
            where = [int(i) for i in bad[0]] + [j]
            raise InvalidArgumentError(f"{op}: indices{where} = {idx[tuple(where)]} does not "
                                       f"index into tensor of shape {shape}")
    flat = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    positions = flat[tuple(idx[..., j] for j in range(k))]
    if not u._value.ndim:   # TensorFlow's rule, even where the shapes would fit
        raise InvalidArgumentError(f"{op}: updates must have rank at least one, got a scalar "
                                   f"(indices of shape {idx.shape})")
    if tuple(u.shape) != positions.shape:
        raise InvalidArgumentError(f"{op}: updates must have shape indices.shape[:-1] + "
                                   f"tensor.shape[{k}:] = {positions.shape}, got {tuple(u.shape)}")
    return positions, u


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the elements (or slices) that ``indices`` name replaced by ``updates``.

    ``indices`` has shape ``(..., K)``: each row of K indexes the first K axes of
    ``tensor``; ``updates`` has shape ``indices.shape[:-1] + tensor.shape[K:]``.
    Indices must be known when the op is built (not computed inside ``ad.function``).
    Gradients: the cotangent with the written places zeroed for ``tensor``, gathered at
    them for ``updates``. A place named twice keeps the last update (TensorFlow leaves
    the order open) and only that update gets a gradient.

    >>> ad.tensor_scatter_nd_update(ad.zeros([4]), [[1], [3]], [5.0, 6.0]).numpy()
    array([0., 5., 0., 6.], dtype=float32)
    """
    x = convert_to_tensor(tensor)
    positions, u = _scatter_positions(x, indices, updates, "TensorScatterUpdate")
    return replace_at(x, positions, u)


def _scatter_added(x, indices, updates, op):
    """The updates added into zeros shaped like ``x`` (repeats add up): the gather's own
    gradient op, whose VJP gathers the cotangent back."""
    positions, u = _scatter_positions(x, indices, updates, op)
    size = int(np.prod(x._value.shape, dtype=np.int64))
    added = GATHER_GRAD(reshape(u, [-1]), key=(_index_array(positions.ravel()),), shape=(size,))
    return reshape(added, x._value.shape)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added at the places ``indices`` name (repeats add up).

    >>> ad.tensor_scatter_nd_add(ad.ones([3]), [[0], [0]], [1.0, 2.0]).numpy()
    array([4., 1., 1.], dtype=float32)
    """
    x = convert_to_tensor(tensor)
    return x + _scatter_added(x, indices, updates, "TensorScatterAdd")


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` subtracted at the places ``indices`` name.

    >>> ad.tensor_scatter_nd_sub(ad.ones([3]), [[2]], [1.0]).numpy()
    array([1., 1., 0.], dtype=float32)
    """
    x = convert_to_tensor(tensor)
    return x - _scatter_added(x, indices, updates, "TensorScatterSub")


from .gather_dynamic import gather_traced  # noqa: E402
from .join import concat  # noqa: E402
from .shape import broadcast_gradient_to, broadcast_to, reshape, transpose  # noqa: E402
from .slicing import getitem  # noqa: E402
