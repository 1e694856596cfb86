"""Shape ops: reshape, transpose, broadcast, expand/squeeze, tile, identity; size and shape.

These move elements around without changing them, so every VJP moves the
cotangent back the same way (reshape back, transpose by the inverse
permutation, sum over the copies). With leading batch axes on ``g``, each
rule keeps those axes in front and acts on the rest.

``size`` and ``shape`` read the static shape and are never recorded.
``shape`` is not in ``__all__``: star-importing it would hide this module
behind the function in ``autodiff.ops``; the package imports it by name.
Joining and cutting (concat, stack, split, pad) live in ``join.py`` and are
re-exported here until ``ops/__init__`` imports that module itself.
"""

from .. import backend, dtypes
from ..broadcast import unbroadcast
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor
from .creation import static_shape

__all__ = ["reshape", "transpose", "matrix_transpose", "broadcast_to", "identity", "expand_dims",
           "squeeze", "tile", "size"]

REALS = (-2.0, 2.0)


def _batch(g, ans):
    """The leading batch shape of cotangent ``g`` for an op whose output is ``ans``."""
    return g._value.shape[:g._value.ndim - ans._value.ndim]


def _reshape_grad(g, ans, x, shape):
    if g._value.ndim == ans._value.ndim and _open.open_sized(x):
        return _open.reshape_like(g, x)
    return reshape(g, _batch(g, ans) + x._value.shape)


RESHAPE = Primitive("Reshape", lambda xp, x, shape: xp.reshape(x, shape), (_reshape_grad,),
                    saves="shapes", domain=REALS, cases=[(((6,),), {"shape": (2, 3)}),
                                                         (((2, 3),), {"shape": (3, 2)})],
                    doc="reshape the cotangent back to the input's shape")


def reshape(tensor, shape, name=None):
    """Same elements, new shape; one dimension may be -1 (inferred).

    >>> ad.reshape(ad.range(6), [2, -1]).shape
    TensorShape([2, 3])
    """
    x = convert_to_tensor(tensor)
    if _dynamic.is_dynamic(shape):   # sizes computed in the trace stay an input
        return _dynamic.reshape_to(x, shape)
    shape = static_shape(shape, "Reshape", min_size=-1)
    return RESHAPE(x, shape=shape)


def _transpose_grad(g, ans, x, perm):
    n_batch = g._value.ndim - ans._value.ndim
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return transpose(g, list(range(n_batch)) + [n_batch + i for i in inverse])


TRANSPOSE = Primitive("Transpose", lambda xp, x, perm: xp.transpose(x, perm), (_transpose_grad,),
                      saves="shapes", domain=REALS,
                      cases=[(((2, 3),), {"perm": (1, 0)}), (((2, 3, 4),), {"perm": (2, 0, 1)})],
                      doc="transpose the cotangent by the inverse permutation")


def transpose(a, perm=None, conjugate=False, name="transpose"):
    """Permutes axes; by default reverses them (the matrix transpose for rank 2)."""
    x = convert_to_tensor(a)
    ndim = x._value.ndim
    perm = tuple(reversed(range(ndim))) if perm is None else \
        static_shape(perm, "Transpose", min_size=None)
    if sorted(p % ndim if ndim and -ndim <= p < ndim else p for p in perm) != list(range(ndim)):
        raise InvalidArgumentError(
            f"Transpose: perm {list(perm)} is not a permutation of the {ndim} axes of shape "
            f"{tuple(x._value.shape)}")
    return TRANSPOSE(x, perm=tuple(p % ndim for p in perm))


def matrix_transpose(a, name="matrix_transpose"):
    """Swaps the last two axes (batch-friendly transpose)."""
    x = convert_to_tensor(a)
    ndim = x._value.ndim
    if ndim < 2:
        raise InvalidArgumentError(f"matrix_transpose: needs rank >= 2, got shape {tuple(x.shape)}")
    return transpose(x, list(range(ndim - 2)) + [ndim - 1, ndim - 2])


BROADCAST_TO = Primitive("BroadcastTo", lambda xp, x, shape: xp.broadcast_to(x, shape),
                         (lambda g, ans, x, shape: unbroadcast(g, x, ans),),
                         saves="shapes", domain=REALS,
                         cases=[(((3,),), {"shape": (2, 3)}), (((2, 1),), {"shape": (2, 3)})],
                         doc="sum the cotangent over the broadcast copies")


def broadcast_to(input, shape, name=None):  # noqa: A002
    """Repeats ``input`` along new or size-1 axes to reach ``shape`` (NumPy broadcasting).

    Always a new tensor, even when ``shape`` is already ``input``'s (as in
    TensorFlow): a gradient with respect to the result counts only its own uses.
    """
    x = convert_to_tensor(input)
    if _dynamic.is_dynamic(shape):   # sizes computed in the trace stay an input
        return _dynamic.broadcast_to_shape(x, shape)
    return BROADCAST_TO(x, shape=static_shape(shape, "BroadcastTo"))


def broadcast_gradient_to(g, shape):
    """``g`` broadcast to ``shape`` for a gradient rule: ``g`` itself when it has that shape
    already (a rule may return its cotangent; only the public op must make a new tensor)."""
    return g if tuple(g._value.shape) == tuple(shape) else BROADCAST_TO(g, shape=tuple(shape))


IDENTITY = Primitive("Identity", lambda xp, x: x, (lambda g, ans, x: g,), saves="shapes",
                     domain=REALS, doc="d identity(x) = dx")


def identity(input, name=None):  # noqa: A002
    """Returns a tensor with the same value (a new node on the tape)."""
    return IDENTITY(input)


def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts a size-1 axis at ``axis`` (a reshape)."""
    x = convert_to_tensor(input)
    ndim = x._value.ndim
    axis = _validate.as_int("ExpandDims", "axis", axis)
    if not -ndim - 1 <= axis <= ndim:
        raise InvalidArgumentError(f"ExpandDims: axis {axis} out of range for rank {ndim}")
    axis = axis % (ndim + 1)
    if _open.open_sized(x):
        return _open.expand_dims(x, axis)
    shape = x._value.shape
    return reshape(x, shape[:axis] + (1,) + shape[axis:])


STOP_GRADIENT = Primitive("StopGradient", lambda xp, x: x, NotDifferentiable, saves="shapes",
                          domain=REALS, label="stop_gradient({0})", watches_outputs=False,
                          doc="no gradient flows through (the gradient is None)")


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes size-1 axes: all of them, or those in ``axis`` (a reshape).

    >>> ad.squeeze(ad.zeros([1, 3, 1])).shape
    TensorShape([3])
    """
    x = convert_to_tensor(input)
    shape = x._value.shape
    if axis is None:
        if _open.open_sized(x):
            return _open.squeeze(x, {i for i, d in enumerate(shape) if d == 1})
        return reshape(x, tuple(d for d in shape if d != 1))
    axes = {a % len(shape) for a in _validate.normalize_axes("Squeeze", axis, len(shape))}
    for a in sorted(axes):
        if shape[a] != 1:
            raise InvalidArgumentError(f"Squeeze: Can not squeeze dim[{a}], expected a dimension "
                                       f"of 1, got {shape[a]} (shape {shape})")
    if _open.open_sized(x):
        return _open.squeeze(x, axes)
    return reshape(x, tuple(d for i, d in enumerate(shape) if i not in axes))


# ---- tile: copies, so the VJP sums them ---------------------------------------------
def _tile_grad(g, ans, x, multiples):
    # Output axis i holds m_i copies of x's axis i: seen as (m_i, d_i), sum over m_i.
    n = len(multiples)
    if not n:
        return g
    pairs = sum(((m, d) for m, d in zip(multiples, x._value.shape)), ())
    g = reshape(g, _batch(g, ans) + pairs)
    return reduce_sum(g, axis=[2 * i - 2 * n for i in range(n)])


def _tile_forward(xp, x, multiples):
    if len(multiples) != x.ndim:   # NumPy would add axes instead
        raise InvalidArgumentError(f"Tile: {len(multiples)} multiples for shape {x.shape}")
    return xp.tile(x, multiples)


TILE = Primitive("Tile", _tile_forward, (_tile_grad,),
                 saves="shapes", domain=REALS,
                 cases=[(((3,),), {"multiples": (2,)}), (((2, 3),), {"multiples": (2, 1)}),
                        (((2, 1, 2),), {"multiples": (1, 3, 2)})],
                 doc="d tile(x) = the sum of g over the copies")


def tile(input, multiples, name=None):  # noqa: A002
    """Repeats ``input`` ``multiples[i]`` times along each axis i.

    >>> ad.tile(ad.constant([1, 2]), [2]).numpy()
    array([1, 2, 1, 2], dtype=int32)
    """
    x = convert_to_tensor(input)
    if _dynamic.is_dynamic(multiples):   # multiples computed in the trace stay an input
        return _dynamic.tile_to(x, multiples)
    multiples = static_shape(multiples, "Tile")
    if len(multiples) != x._value.ndim:
        raise InvalidArgumentError(
            f"Tile: Expected multiples argument to be a vector of length {x._value.ndim} but got "
            f"length {len(multiples)} (input shape {tuple(x.shape)})")
    for i, m in enumerate(multiples):
        if m < 0:
            raise InvalidArgumentError(f"Tile: Expected multiples[{i}] >= 0, but got {m}")
    return TILE(x, multiples=multiples)


# ---- reading the shape (never recorded) -------------------------------------------
def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The number of elements, as a scalar tensor. ``ad.size(ad.ones([2, 3]))`` -> 6."""
    n = convert_to_tensor(input)._value.size
    return Tensor(backend.xp.asarray(n, dtype=dtypes.as_dtype(out_type)._np))


def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shape as an int32 vector tensor (``tf.shape``); ``x.shape`` is the static form.

    >>> ad.shape(ad.ones([2, 3])).numpy()
    array([2, 3], dtype=int32)

    Inside ``ad.function``, the shape of a traced tensor is a ``Shape`` node, so that
    a size a ``None`` in the signature leaves open is read on every call, and
    ``reshape``, ``zeros``, ``fill``, ``broadcast_to`` and ``range`` take it as an input
    (``dynamic_shape.py``).
    """
    x = convert_to_tensor(input)
    if _validate.traced(x):
        return _dynamic.traced_shape(x, out_type)
    dims = x._value.shape
    return Tensor(backend.xp.asarray(dims, dtype=dtypes.as_dtype(out_type)._np))


from .reduce import normalize_axis, reduce_sum  # noqa: E402
from . import dynamic_shape as _dynamic  # noqa: E402  (its ops take shape tensors)
from . import open_sizes as _open  # noqa: E402
