"""Indexing (``x[1:, 0]``, ``x[[0, 2]]``, ``x[mask]``) and ``gather``, with dense gradients.

Two forward ops, each paired with a gradient op that is its transpose:

- ``StridedSlice``: basic indexing (ints, slices, ``None``, ``...``). Its
  gradient ``StridedSliceGrad`` writes ``g`` into zeros shaped like the
  input: a basic index never picks an element twice.
- ``GatherV2``: indexing with integer arrays (boolean masks become integer
  arrays first, as in NumPy) and ``ad.gather``. Its gradient
  ``GatherV2Grad`` *adds* ``g`` into zeros, so an index that appears twice
  collects both cotangents:

      >>> x = ad.constant([1.0, 2.0, 3.0])
      >>> with ad.GradientTape() as tape:
      ...     tape.watch(x)
      ...     y = ad.reduce_sum(x[[0, 2, 2]])
      >>> tape.gradient(y, x).numpy()
      array([1., 0., 2.], dtype=float32)

Selecting and scattering are linear and transposes of each other, so each
gradient op's VJP is its forward op again: every order of derivative works.

Keys live in the ops' params as plain data, because params are saved as
JSON: ``("slice", start, stop, step)``, ``None``, ``"..."``, ints, and
integer arrays as ``("index", shape, flat_values)``.

Batch axes: every op here takes ``n_batch`` (default 0), that many leading
axes it leaves alone (the key gets as many ``:`` in front). NumPy moves the
result of non-adjacent array indices (``x[[0, 1], :, [2, 3]]``) in front of
all sliced axes, batch axes included; ``_take`` and ``_scatter_add`` move
the batch axes back to the front, so rules stay batch-ready.
"""

import operator

import numpy as np

from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["gather", "gather_nd", "boolean_mask"]

REALS = (-2.0, 2.0)


# ---- keys as plain data ---------------------------------------------------
def _index_array(values):
    array = np.asarray(values, dtype=np.int64)
    return ("index", tuple(array.shape), tuple(array.ravel().tolist()))


def _encode(item):
    if isinstance(item, slice):
        return ("slice", item.start, item.stop, item.step)
    if item is Ellipsis:
        return "..."
    if isinstance(item, np.ndarray):
        return _index_array(item)
    return item  # an int or None


def _decode(key, xp):
    items = []
    for k in key:
        if k is None or isinstance(k, int):
            items.append(k)
        elif k == "...":
            items.append(Ellipsis)
        elif k[0] == "slice":
            items.append(slice(k[1], k[2], k[3]))
        else:  # ("index", shape, flat)
            items.append(xp.asarray(k[2], dtype=xp.int64).reshape(tuple(k[1])))
    return tuple(items)


def _advanced_front(key):
    """How many axes the array indices give, if NumPy puts them first; else 0.

    NumPy keeps the result of array indices in place when they (and any
    ints among them) stand next to each other in the key, and moves it to
    the front when a slice, ``None`` or ``...`` separates them.
    """
    positions = [i for i, k in enumerate(key) if isinstance(k, int) or hasattr(k, "shape")]
    if not positions or positions[-1] - positions[0] + 1 == len(positions):
        return 0
    return len(np.broadcast_shapes(*[getattr(key[i], "shape", ()) for i in positions]))


def _take(xp, x, key, n_batch):
    """``x[key]`` behind ``n_batch`` leading axes, which stay in front."""
    key = _decode(key, xp)
    out = x[(slice(None),) * n_batch + key]
    k = _advanced_front(key) if n_batch else 0
    if k:
        out = xp.moveaxis(out, tuple(range(k, k + n_batch)), tuple(range(n_batch)))
    return xp.asarray(out)


def _scatter_add(xp, g, key, shape, n_batch):
    """Zeros of shape ``batch + shape`` with ``g`` added at ``[key]``."""
    key = _decode(key, xp)
    out = xp.zeros(g.shape[:n_batch] + tuple(shape), dtype=g.dtype)
    k = _advanced_front(key) if n_batch else 0
    if k:
        g = xp.moveaxis(g, tuple(range(n_batch)), tuple(range(k, k + n_batch)))
    key = (slice(None),) * n_batch + key
    _check_fits(g, out[key].shape, "GatherV2Grad")
    xp.add.at(out, key, g)
    return out


def _strided_slice_grad_forward(xp, g, key, shape, n_batch=0):
    out = xp.zeros(g.shape[:n_batch] + tuple(shape), dtype=g.dtype)
    key = (slice(None),) * n_batch + _decode(key, xp)
    _check_fits(g, out[key].shape, "StridedSliceGrad")
    out[key] = g
    return out


def _check_fits(g, shape, op_type):
    if g.shape != shape:   # NumPy would broadcast g into the selection
        raise InvalidArgumentError(f"{op_type}: the cotangent has shape {g.shape}, but the "
                                   f"selection it fills has shape {shape}")


# ---- the ops: each gradient op's VJP is its forward op ------------------------
def _n_batch(g, ans, n_batch):
    """Leading axes the rule must leave alone: g's batch axes plus the op's own."""
    return g._value.ndim - ans._value.ndim + n_batch


def _slice_grad(g, ans, x, key, n_batch=0):
    return STRIDED_SLICE_GRAD(g, key=key, shape=x._value.shape[n_batch:],
                              n_batch=_n_batch(g, ans, n_batch))


def _slice_grad_grad(gg, ans, g, key, shape, n_batch=0):
    return STRIDED_SLICE(gg, key=key, n_batch=_n_batch(gg, ans, n_batch))


def _gather_grad(g, ans, x, key, n_batch=0):
    return GATHER_GRAD(g, key=key, shape=x._value.shape[n_batch:],
                       n_batch=_n_batch(g, ans, n_batch))


def _gather_grad_grad(gg, ans, g, key, shape, n_batch=0):
    return GATHER(gg, key=key, n_batch=_n_batch(gg, ans, n_batch))


def _key(*items):
    return tuple(_encode(i) for i in items)


_idx = _index_array  # short, for the case tables


SLICE_CASES = [(((4,),), {"key": _key(slice(1, 3))}),
               (((3, 4),), {"key": _key(1, slice(None, None, -2))}),
               (((2, 3),), {"key": _key(None, Ellipsis, 0)}),
               (((),), {"key": _key(None)})]
GATHER_CASES = [(((4,),), {"key": (_idx([0, 2, 2]),)}),
                (((3, 4),), {"key": _key(slice(None)) + (_idx([[1, 0], [3, 3]]),)}),
                (((2, 3, 4),), {"key": (_idx([0, 1, 1]), "...", _idx([1, 2, 1]))}),
                (((3, 4),), {"key": (1, _idx([0, 2]))})]

STRIDED_SLICE = Primitive(
    "StridedSlice", lambda xp, x, key, n_batch=0: _take(xp, x, key, n_batch), (_slice_grad,),
    saves="shapes", domain=REALS, cases=SLICE_CASES,
    doc="d x[key] = dx[key]: g is written into zeros shaped like x")
STRIDED_SLICE_GRAD = Primitive(
    "StridedSliceGrad", _strided_slice_grad_forward, (_slice_grad_grad,), saves="shapes",
    domain=REALS, cases=[(((2,),), {"key": _key(slice(1, 3)), "shape": (4,)}),
                         (((2, 3),), {"key": _key(slice(None, None, -1), 1), "shape": (2, 4, 3)})],
    doc="linear in g (a scatter into zeros); its VJP slices the cotangent again")
GATHER = Primitive(
    "GatherV2", lambda xp, x, key, n_batch=0: _take(xp, x, key, n_batch), (_gather_grad,),
    saves="shapes", domain=REALS, cases=GATHER_CASES,
    doc="d x[indices] = dx[indices]: g is added into zeros, repeated indices add up")
GATHER_GRAD = Primitive(
    "GatherV2Grad", lambda xp, g, key, shape, n_batch=0: _scatter_add(xp, g, key, shape, n_batch),
    (_gather_grad_grad,), saves="shapes", domain=REALS,
    cases=[(((3,),), {"key": (_idx([0, 2, 2]),), "shape": (4,)}),
           (((3, 3),), {"key": (_idx([0, 1, 1]), "...", _idx([1, 2, 1])), "shape": (2, 3, 4)})],
    doc="linear in g (a scatter-add into zeros); its VJP gathers the cotangent again")


# ---- from a Python key to a plain-data key ------------------------------------
def _item(item):
    """One key item as an int, slice, None, Ellipsis or NumPy array."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        return slice(*(None if v is None else operator.index(
            _validate.host_value(v, "StridedSlice", "a slice bound").item()
            if isinstance(v, Tensor) else v) for v in (item.start, item.stop, item.step)))
    if isinstance(item, (bool, np.bool_)):
        raise TypeError(f"a Python bool ({item}) is not a valid index; use a bool tensor as a mask")
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, Tensor) and item._value.ndim == 0 and item.dtype.is_integer:
        return int(_validate.host_value(item, "StridedSlice", "an index"))
    array = np.asarray(_validate.host_value(item, "StridedSlice", "an index")
                       if isinstance(item, Tensor) else item)
    if array.dtype.kind == "b" and array.ndim:
        return array
    if array.dtype.kind in "iu" or (array.size == 0 and array.dtype.kind != "b"):
        return array.astype(np.int64)
    raise TypeError(
        f"Only integers, slices (`:`), ellipsis (`...`), `None` (a new axis), integer or bool "
        f"arrays and tensors are valid indices, got {item!r}")


def _python_key(x, key):
    """The key as a tuple of ints, slices, None, Ellipsis and int arrays (masks expanded)."""
    items = [_item(k) for k in (key if isinstance(key, tuple) else (key,))]
    ndim = x._value.ndim
    used = sum(1 if not isinstance(k, np.ndarray) or k.dtype.kind != "b" else k.ndim
               for k in items if k is not None and k is not Ellipsis)
    if sum(k is Ellipsis for k in items) > 1:
        raise InvalidArgumentError(f"StridedSlice: an index can only have a single ellipsis "
                                   f"('...'), got {key!r} for shape {tuple(x.shape)}")
    if used > ndim:
        raise InvalidArgumentError(
            f"StridedSlice: too many indices for a tensor of shape {tuple(x.shape)}: "
            f"the index {key!r} needs {used} dimensions")
    out, dim = [], 0
    for k in items:
        if k is Ellipsis:
            out.append(k)
            dim += ndim - used
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            covered = x._value.shape[dim:dim + k.ndim]
            if k.shape != covered:
                raise InvalidArgumentError(
                    f"GatherV2: boolean mask of shape {k.shape} does not match dimensions "
                    f"{dim}..{dim + k.ndim - 1} of shape {tuple(x.shape)} (sizes {covered})")
            out.extend(np.nonzero(k))   # NumPy's own meaning of a mask
            dim += k.ndim
        else:
            out.append(k)
            dim += k is not None
    return tuple(out)


def getitem(tensor, key):
    """``tensor[key]``: NumPy's indexing; ``StridedSlice`` or, with arrays, ``GatherV2``.

    Args:
        tensor: the tensor to index.
        key: ints, slices (any step), ``None`` (new axis), ``...``, scalar
            int tensors; or integer arrays/tensors and bool masks (NumPy's
            advanced indexing, an extension over TensorFlow).

    Returns:
        The selected elements. Out-of-range indices raise InvalidArgumentError.

    >>> ad.constant([[1, 2, 3], [4, 5, 6]])[:, ::-1].numpy()
    array([[3, 2, 1],
           [6, 5, 4]], dtype=int32)
    """
    x = convert_to_tensor(tensor)
    if type(key) is int:   # the commonest key (iterating): nothing to parse
        return STRIDED_SLICE(x, key=(key,))
    if isinstance(key, Tensor) and key.dtype.is_integer and key._value.ndim == 0 \
            and x._value.ndim and _validate.traced(key):
        # x[i] inside ad.function, i from the arguments: a gather that reads i when it runs
        # (negative i counts from the end, as x[i] does)
        i = where(key < 0, key + x._value.shape[0], key)
        return gather_traced(x, i, 0)
    items = _python_key(x, key)
    encoded = tuple(_encode(k) for k in items)
    if any(isinstance(k, np.ndarray) for k in items):
        return GATHER(x, key=encoded)
    return STRIDED_SLICE(x, key=encoded)


def slice_along(x, axis, start=None, stop=None, step=None):
    """``x[..., start:stop:step, ...]`` on one axis (negative: counted from the end)."""
    x = convert_to_tensor(x)
    cut = slice(start, stop, step)
    if axis < 0:
        key = ("...", _encode(cut)) + (_encode(slice(None)),) * (-axis - 1)
    else:
        key = (_encode(slice(None)),) * axis + (_encode(cut),)
    return STRIDED_SLICE(x, key=key)


def window(x, starts, sizes):
    """``x[..., s0:s0 + n0, s1:s1 + n1]``: a box on the trailing axes (batch axes untouched)."""
    key = ("...",) + tuple(_encode(slice(s, s + n)) for s, n in zip(starts, sizes))
    return STRIDED_SLICE(convert_to_tensor(x), key=key)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Picks slices of ``params`` along ``axis`` at ``indices`` (TensorFlow's ``tf.gather``).

    Args:
        params: the tensor to take from.
        indices: integer tensor or list; values in ``[0, params.shape[axis])``.
        axis: the axis to gather along (default: ``batch_dims``, usually 0).
        batch_dims: leading axes shared by ``params`` and ``indices``.

    Returns:
        ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    >>> ad.gather(ad.constant([10.0, 20.0, 30.0]), [2, 0, 2]).numpy()
    array([30., 10., 30.], dtype=float32)
    """
    x = convert_to_tensor(params)
    if isinstance(indices, Tensor) and int(batch_dims) == 0 and _validate.traced(indices):
        # inside ad.function, indices computed from the arguments stay an input of the op
        axis = 0 if axis is None else int(axis) % max(x._value.ndim, 1)
        return gather_traced(x, indices, axis)
    idx = np.asarray(_validate.host_value(indices, "GatherV2", "indices")
                     if isinstance(indices, Tensor) else indices)
    if idx.dtype.kind not in "iu" and idx.size:
        raise TypeError(f"GatherV2: indices must be integers, not {idx.dtype}")
    idx = idx.astype(np.int64)
    ndim, b = x._value.ndim, int(batch_dims)
    b = b + idx.ndim if b < 0 else b
    axis = b if axis is None else int(axis)
    axis = axis + ndim if axis < 0 else axis
    if not b <= axis < ndim or b > idx.ndim:
        raise InvalidArgumentError(
            f"GatherV2: axis {axis} must be in [batch_dims={b}, rank {ndim}) of params shape "
            f"{tuple(x.shape)}, and batch_dims at most the rank of indices {idx.shape}")
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


def gather_nd(params, indices, batch_dims=0, name=None):
    """Picks the elements (or slices) of ``params`` whose index tuples are ``indices``' last axis.

    ``indices`` has shape ``(..., K)``; each row is an index into the first K
    axes of ``params``. The result has shape ``indices.shape[:-1] + params.shape[K:]``;
    the gradient adds the cotangent back at those positions (repeats add up).

    >>> ad.gather_nd(ad.constant([[1.0, 2.0], [3.0, 4.0]]), [[1, 0], [0, 1]]).numpy()
    array([3., 2.], dtype=float32)
    """
    x = convert_to_tensor(params)
    idx = np.asarray(_validate.host_value(indices, "GatherNd", "indices")
                     if isinstance(indices, Tensor) else indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"GatherNd: indices must be integers, not {idx.dtype}")
    if int(batch_dims) != 0:
        raise ValueError("GatherNd: batch_dims other than 0 is not supported; "
                         "use ad.gather with batch_dims, or index each batch")
    if idx.ndim == 0 or not 0 < idx.shape[-1] <= x._value.ndim:
        raise InvalidArgumentError(
            f"GatherNd: the last axis of indices (shape {idx.shape}) must hold between 1 and "
            f"rank(params) = {x._value.ndim} indices (params shape {tuple(x.shape)})")
    idx = idx.astype(np.int64)
    for k in range(idx.shape[-1]):
        size = x._value.shape[k]
        bad = np.argwhere((idx[..., k] < 0) | (idx[..., k] >= size))
        if len(bad):
            where = [int(i) for i in bad[0]] + [k]
            raise InvalidArgumentError(
                f"GatherNd: indices{where} = {idx[tuple(where)]} does not index into "
                f"params of shape {tuple(x.shape)} (axis {k} has size {size})")
    return GATHER(x, key=tuple(_index_array(idx[..., k]) for k in range(idx.shape[-1])))


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
    aranges = tuple(_index_array(np.arange(n).reshape((1,) * i + (n,) + (1,) * (b - 1 - i + r)))
                    for i, n in enumerate(idx.shape[:b]))
    out = GATHER(x, key=aranges + (_index_array(idx),))
    if axis == b:
        return out
    # out: batch + indices' rest + params' axes b..axis-1 + the others; TF wants those before
    between = axis - b
    perm = (list(range(b)) + list(range(b + r, b + r + between)) + list(range(b, b + r))
            + list(range(b + r + between, out._value.ndim)))
    return transpose(out, perm)


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


from .shape import transpose  # noqa: E402
from .gather_dynamic import gather_traced  # noqa: E402
from .predicates import where  # noqa: E402
