"""Indexing (``x[1:, 0]``, ``x[[0, 2]]``, ``x[mask]``) and the gather op, with dense gradients.

Two forward ops, each paired with a gradient op that is its transpose:

- ``StridedSlice``: basic indexing (ints, slices, ``None``, ``...``). Its
  gradient ``StridedSliceGrad`` writes ``g`` into zeros shaped like the
  input: a basic index never picks an element twice.
- ``GatherV2``: indexing with integer arrays (boolean masks become integer
  arrays first, as in NumPy) and ``ad.gather`` (``gathering.py``). Its gradient
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

__all__ = []   # ad.gather, gather_nd, boolean_mask: gathering.py (built on GATHER here)

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


def _check_in_bounds(op_type, key, shape, n_batch):
    """Refuses an int or index-array item outside ``[-size, size)`` of its axis, on the host
    (the key is plain data), before the op runs: a GPU's gather would wrap it instead."""
    used = sum(k != "..." and k is not None for k in key)
    dim = n_batch
    for k in key:
        if k is None:
            continue
        if k == "...":
            dim += len(shape) - n_batch - used
            continue
        values = (k,) if isinstance(k, int) else k[2] if k[0] == "index" else ()   # a slice: ()
        if values and dim < len(shape):
            size = shape[dim]
            if len(values) > 16:   # NumPy's min and max beat a Python loop
                array = np.asarray(values)
                bad = array[(array < -size) | (array >= size)].tolist()
            else:
                bad = [v for v in values if not -size <= v < size]
            if bad:
                raise InvalidArgumentError(
                    f"{op_type}: index {bad[0]} is out of bounds for axis {dim - n_batch} "
                    f"with size {size} (input shape {tuple(shape[n_batch:])})")
        dim += 1


def _take(xp, x, key, n_batch, op_type):
    """``x[key]`` behind ``n_batch`` leading axes, which stay in front."""
    _check_in_bounds(op_type, key, x.shape, n_batch)
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
    if not n_batch and g._value.ndim == ans._value.ndim and _open.open_sized(x):
        # x's shape read in the graph (a trace serving any size, ops/open_sizes.py)
        from .dynamic_shape import STRIDED_SLICE_GRAD_OF, traced_shape
        return STRIDED_SLICE_GRAD_OF(g, traced_shape(x, "int32"), key=key, n_batch=0)
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
                (((3, 4),), {"key": (1, _idx([0, 2]))}),
                # gather_nd with batch_dims=1: an arange for the batch axis beside the indices
                (((2, 3, 4),), {"key": (_idx([[0], [1]]), _idx([[2, 0, 2], [1, 1, 0]]))})]

STRIDED_SLICE = Primitive(
    "StridedSlice", lambda xp, x, key, n_batch=0: _take(xp, x, key, n_batch, "StridedSlice"),
    (_slice_grad,),
    saves="shapes", domain=REALS, cases=SLICE_CASES,
    doc="d x[key] = dx[key]: g is written into zeros shaped like x")
STRIDED_SLICE_GRAD = Primitive(
    "StridedSliceGrad", _strided_slice_grad_forward, (_slice_grad_grad,), saves="shapes",
    domain=REALS, cases=[(((2,),), {"key": _key(slice(1, 3)), "shape": (4,)}),
                         (((2, 3),), {"key": _key(slice(None, None, -1), 1), "shape": (2, 4, 3)})],
    doc="linear in g (a scatter into zeros); its VJP slices the cotangent again")
GATHER = Primitive(
    "GatherV2", lambda xp, x, key, n_batch=0: _take(xp, x, key, n_batch, "GatherV2"),
    (_gather_grad,),
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
        # (negative i counts from the end, as x[i] does, of the size this call has)
        n = x._value.shape[0]
        if _validate.traced(x):   # a size a None in the signature leaves open: read per call
            from .shape import shape
            n = shape(x, out_type=key.dtype)[0]
        i = where(key < 0, key + n, key)
        return gather_traced(x, i, 0)
    if _dynamic.has_traced_bound(key):   # bounds computed in the trace: read per call
        return _dynamic.strided_slice_of(x, key)
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


from .gather_dynamic import gather_traced  # noqa: E402
from .gathering import boolean_mask, gather, gather_nd  # noqa: E402,F401  (their old home)
from .predicates import where  # noqa: E402
from . import dynamic_shape as _dynamic  # noqa: E402  (slices with traced bounds)

from . import open_sizes as _open  # noqa: E402
