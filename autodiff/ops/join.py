"""Joining and cutting: concat, stack/unstack, split, pad.

Each VJP undoes the join: concat's cuts ``g`` back into the pieces, stack's
unstacks it (and unstack's stacks it), pad's slices the border off. Axes in
the rules are counted from the end (``axis - ndim``) so that leading batch
axes on ``g`` pass through untouched.
"""

from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["concat", "stack", "unstack", "split", "pad"]

REALS = (-2.0, 2.0)


def _tensors(values, op_type):
    """A list of tensors; bare Python numbers take the first tensor's dtype."""
    values = list(values)
    if not values:
        raise InvalidArgumentError(f"{op_type}: needs at least one tensor")
    hint = next((v.dtype for v in values if isinstance(v, Tensor)), None)
    return [convert_to_tensor(v, dtype_hint=hint) for v in values]


# ---- concat, stack, unstack, split ------------------------------------------------
def _concat_grad(g, ans, *values, axis):
    end = axis - ans._value.ndim   # the same axis counted from the end, batch or not
    grads, start = [], 0
    for x in values:
        stop = start + x._value.shape[axis]
        grads.append(slice_along(g, end, start, stop))
        start = stop
    return grads


CONCAT = Primitive("ConcatV2", lambda xp, *values, axis: xp.concatenate(values, axis=axis),
                   _concat_grad, saves="shapes", domain=REALS,
                   cases=[(((2,), (3,)), {"axis": 0}), (((2, 3), (2, 1), (2, 2)), {"axis": 1}),
                          (((1, 3), (2, 3)), {"axis": 0})],
                   doc="d concat(x, y) = concat(dx, dy): g is cut back into pieces")


def concat(values, axis, name="concat"):
    """Joins tensors along an existing axis.

    >>> ad.concat([ad.ones([2, 1]), ad.zeros([2, 2])], axis=1).shape
    TensorShape([2, 3])
    """
    tensors = _tensors(values, "ConcatV2")
    if len(tensors) == 1:
        return identity(tensors[0])
    first = tensors[0]._value.shape
    if not first:
        raise InvalidArgumentError("ConcatV2: cannot concatenate scalars (use ad.stack)")
    axis = normalize_axis(axis, len(first), "ConcatV2")
    for i, t in enumerate(tensors[1:], 1):
        other = t._value.shape
        if len(other) != len(first) or any(a != b for j, (a, b) in enumerate(zip(first, other))
                                           if j != axis):
            raise InvalidArgumentError(
                f"ConcatV2: Dimensions of inputs should match except on axis {axis}: "
                f"shape[0] = {list(first)} vs. shape[{i}] = {list(other)}")
    return CONCAT(*tensors, axis=axis)


def _pack_grad(g, ans, *values, axis):
    return list(UNPACK(g, axis=g._value.ndim - ans._value.ndim + axis, num=len(values)))


def _unpack_grad(g, ans, x, axis, num):
    gs = g if isinstance(g, tuple) else (g,)  # a single output arrives bare
    n_batch = gs[0]._value.ndim - (x._value.ndim - 1)
    return PACK(*gs, axis=n_batch + axis)


PACK = Primitive("Pack", lambda xp, *values, axis: xp.stack(values, axis=axis), _pack_grad,
                 saves="shapes", domain=REALS,
                 cases=[(((), ()), {"axis": 0}), (((3,), (3,)), {"axis": 1}),
                        (((2, 3),) * 3, {"axis": 0})],
                 doc="d stack(x, y) = stack(dx, dy): g is unstacked")
UNPACK = Primitive("Unpack", lambda xp, x, axis, num: tuple(xp.moveaxis(x, axis, 0)),
                   (_unpack_grad,), saves="shapes", domain=REALS, n_outputs=None,
                   cases=[(((3,),), {"axis": 0, "num": 3}), (((2, 3),), {"axis": 1, "num": 3})],
                   doc="one output per slice (n_outputs=None: as many as num); the VJP stacks g")


def stack(values, axis=0, name="stack"):
    """Joins same-shaped tensors along a new axis.

    >>> ad.stack([ad.ones([3]), ad.zeros([3])], axis=1).shape
    TensorShape([3, 2])
    """
    tensors = _tensors(values, "Pack")
    shape = tensors[0]._value.shape
    for i, t in enumerate(tensors):
        if t._value.shape != shape:
            raise InvalidArgumentError(f"Pack: Shapes of all inputs must match: values[0].shape = "
                                       f"{list(shape)} != values[{i}].shape = {list(t.shape)}")
    return PACK(*tensors, axis=normalize_axis(axis, len(shape) + 1, "Pack"))


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits a tensor into a list of tensors along ``axis``, removing it.

    >>> [t.numpy() for t in ad.unstack(ad.constant([[1, 2], [3, 4]]))]
    [array([1, 2], dtype=int32), array([3, 4], dtype=int32)]
    """
    x = convert_to_tensor(value)
    axis = normalize_axis(axis, x._value.ndim, "Unpack")
    n = x._value.shape[axis]
    if num is not None and int(num) != n:
        raise InvalidArgumentError(f"Unpack: num={num} does not match dimension {axis} of shape "
                                   f"{tuple(x.shape)}")
    return [] if n == 0 else list(UNPACK(x, axis=axis, num=n))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Cuts a tensor along ``axis`` into equal parts or parts of the given sizes (slices).

    >>> [t.shape for t in ad.split(ad.zeros([5, 2]), [2, -1])]
    [TensorShape([2, 2]), TensorShape([3, 2])]
    """
    x = convert_to_tensor(value)
    axis = normalize_axis(axis, x._value.ndim, "Split")
    dim = x._value.shape[axis]
    if isinstance(num_or_size_splits, Tensor) and num_or_size_splits._value.ndim == 0:
        num_or_size_splits = int(num_or_size_splits)
    if isinstance(num_or_size_splits, int):
        n = num_or_size_splits
        if n <= 0 or dim % n:
            raise InvalidArgumentError(
                f"Split: Number of ways to split should evenly divide the split dimension, but "
                f"got split_dim {axis} (size = {dim}) and num_split {n}")
        sizes = [dim // n] * n
    else:
        sizes = list(static_shape(num_or_size_splits, "SplitV", min_size=-1))
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
        if sum(sizes) != dim or any(s < 0 for s in sizes):
            raise InvalidArgumentError(
                f"SplitV: sizes {list(static_shape(num_or_size_splits, 'SplitV'))} do not add up "
                f"to the size {dim} of dimension {axis} (shape {tuple(x.shape)})")
    pieces, start = [], 0
    for s in sizes:
        pieces.append(slice_along(x, axis, start, start + s))
        start += s
    return pieces


# ---- pad: the VJP slices the border off ------------------------------------------
def _pad_grad(g, ans, x, paddings, constant_values=0):
    return window(g, [a for a, _ in paddings], x._value.shape)


def _pad_axis(t, end, before, after):
    widths = [(0, 0)] * t._value.ndim
    widths[end] = (before, after)
    return PAD(t, paddings=tuple(widths), constant_values=0)


def _mirror_pad_grad(g, ans, x, paddings, mode):
    # Fold each padded strip, reversed, back onto the elements it copies.
    skip = 1 if mode == "REFLECT" else 0   # REFLECT does not repeat the edge element
    for axis, ((a, b), n) in enumerate(zip(paddings, x._value.shape)):
        end = axis - x._value.ndim
        folded = slice_along(g, end, a, a + n)
        if a:
            strip = slice_along(g, end, a - 1, None, -1)
            folded = folded + _pad_axis(strip, end, skip, n - skip - a)
        if b:
            strip = slice_along(g, end, a + n + b - 1, a + n - 1, -1)
            folded = folded + _pad_axis(strip, end, n - skip - b, skip)
        g = folded
    return g


def _pad_forward(xp, x, paddings, constant_values=0, mode="CONSTANT"):
    if len(paddings) != x.ndim:   # NumPy would reuse one pair for every axis
        raise InvalidArgumentError(f"PadV2: {len(paddings)} [before, after] pairs for a tensor "
                                   f"of shape {x.shape}")
    if mode != "CONSTANT":
        _check_mirror(paddings, x.shape, mode)
    if not paddings:   # a scalar: NumPy's pad refuses an empty width list
        return x
    if mode == "CONSTANT":
        return xp.pad(x, paddings, constant_values=constant_values)
    return xp.pad(x, paddings, mode=mode.lower())


PAD = Primitive("PadV2", _pad_forward, (_pad_grad,), saves="shapes", domain=REALS,
                cases=[(((3,),), {"paddings": ((1, 2),)}),
                       (((2, 3),), {"paddings": ((0, 1), (2, 1)), "constant_values": 1.5})],
                doc="d pad(x) = dx padded with zeros: g with the padding sliced off")
MIRROR_PAD = Primitive("MirrorPad", _pad_forward, (_mirror_pad_grad,),
                       saves="shapes", domain=REALS,
                       cases=[(((4,),), {"paddings": ((2, 3),), "mode": "SYMMETRIC"}),
                              (((3, 4),), {"paddings": ((1, 2), (3, 2)), "mode": "REFLECT"})],
                       doc="the mirrored strips' cotangents are added onto the elements they copy")


def _paddings(paddings, x):
    if isinstance(paddings, Tensor):
        paddings = _validate.host_value(paddings, "Pad", "paddings").tolist()
    try:
        widths = tuple((int(a), int(b)) for a, b in paddings)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"PadV2: paddings must be [before, after] pairs, "
                                   f"got {paddings!r}") from None
    if len(widths) != x._value.ndim:
        raise InvalidArgumentError(f"PadV2: The first dimension of paddings must be the rank of "
                                   f"inputs [{len(widths)},2] {list(x.shape)}")
    for a, b in widths:
        if a < 0 or b < 0:
            raise InvalidArgumentError(f"PadV2: Paddings must be non-negative: {a} {b}")
    return widths


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads each axis i with ``paddings[i] = [before, after]`` elements.

    Args:
        mode: ``"CONSTANT"`` (fill with ``constant_values``), ``"REFLECT"``
            (mirror without the edge) or ``"SYMMETRIC"`` (mirror with it).

    >>> ad.pad(ad.constant([1, 2]), [[1, 2]], constant_values=9).numpy()
    array([9, 1, 2, 9, 9], dtype=int32)
    """
    x = convert_to_tensor(tensor)
    widths = _paddings(paddings, x)
    mode = str(mode).upper()
    if mode == "CONSTANT":
        value = (_validate.host_value(constant_values, "PadV2", "constant_values")
                 if isinstance(constant_values, Tensor) else constant_values)
        value = value.item() if hasattr(value, "item") else value
        if isinstance(value, float) and not x.dtype.is_differentiable and value != int(value):
            raise TypeError(f"PadV2: constant_values {value} does not fit dtype {x.dtype.name}")
        return PAD(x, paddings=widths, constant_values=value)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", '
                         f'or "SYMMETRIC". Received `mode` = {mode}')
    return MIRROR_PAD(x, paddings=widths, mode=mode)


def _check_mirror(paddings, shape, mode):
    limit = 1 if mode == "REFLECT" else 0   # REFLECT needs padding < size, SYMMETRIC <= size
    for (a, b), n in zip(paddings, shape):
        if min(a, b) < 0 or max(a, b) > n - limit:
            raise InvalidArgumentError(f"MirrorPad: paddings {a, b} do not fit a dimension of "
                                       f"size {n} in mode {mode} (shape {tuple(shape)})")


from .reduce import normalize_axis  # noqa: E402
from .creation import static_shape  # noqa: E402
from .shape import identity  # noqa: E402
from .slicing import slice_along, window  # noqa: E402
