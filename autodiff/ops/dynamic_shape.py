"""Shapes as tensors inside ``ad.function``: ``ad.shape(x)`` and the ops that take its result.

Eagerly ``ad.shape(x)`` is a constant and ``reshape``, ``zeros``, ``fill``,
``broadcast_to`` and ``range`` read their shape arguments as Python ints.
Inside ``ad.function`` a size can change from call to call (a ``None`` in an
``input_signature``): there ``ad.shape(x)`` of a traced tensor is a ``Shape``
node, and a shape argument holding such a tensor (``[ad.shape(x)[0], -1]``)
becomes an input of the op instead of a number frozen into the trace, as in
TensorFlow, whose ``Reshape``, ``Fill``, ``BroadcastTo`` and ``Range`` take
their shapes as tensors. One trace then serves every batch size::

    @ad.function(input_signature=[ad.TensorSpec([None, 2, 3])])
    def flat(x):
        return ad.reshape(x, [ad.shape(x)[0], -1])   # Shape, StridedSlice, Pack, ReshapeTo

The op types here are the static ones' with ``To`` or ``Of`` added
(``ReshapeTo``, ``FillTo``, ``BroadcastToShape``, ``RangeOf``, ``TileTo``):
their shape is their last input (never differentiable: it is integers),
everything else as in the static op, gradients included. Slicing with bounds
computed in the trace (``x[:ad.shape(x)[0] - 1]``, ``x[:, k]``) is
``StridedSliceOf``: the key keeps ``("input", k)`` where a bound is the op's
k-th integer input after ``x``, read when the op runs.
"""

import numpy as np

from .. import backend, dtypes
from .. import validate as _validate
from ..broadcast import unbroadcast
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["is_dynamic", "shape_tensor", "traced_shape", "reshape_to", "fill_to",
           "broadcast_to_shape", "range_of", "tile_to", "strided_slice_of"]


def is_dynamic(shape):
    """Whether a shape argument holds a tensor whose value changes between calls of the
    function being traced (so it must stay an input of the op)."""
    if isinstance(shape, Tensor):
        return _validate.traced(shape)
    return isinstance(shape, (list, tuple)) and any(
        isinstance(d, Tensor) and _validate.traced(d) for d in shape)


def shape_tensor(shape, op_type):
    """A shape argument (a vector tensor, or a list of ints and scalar int tensors) as one
    int32 vector tensor (``Pack`` of its sizes, as TensorFlow packs them)."""
    from .join import stack
    from .elementwise import cast
    if isinstance(shape, Tensor):
        if not shape.dtype.is_integer or shape._value.ndim > 1:
            raise TypeError(f"{op_type}: a shape tensor must be an integer vector, got "
                            f"{shape.dtype.name} of shape {tuple(shape.shape)}")
        return cast(shape, dtypes.int32) if shape.dtype != dtypes.int32 else shape
    sizes = []
    for d in shape:
        d = convert_to_tensor(d) if not isinstance(d, Tensor) else d
        if not d.dtype.is_integer or d._value.ndim != 0:
            raise TypeError(f"{op_type}: each size must be an int or a scalar int tensor, "
                            f"got {d.dtype.name} of shape {tuple(d.shape)}")
        sizes.append(cast(d, dtypes.int32) if d.dtype != dtypes.int32 else d)
    return stack(sizes)


def _dims(shape):
    """A shape tensor's value as a tuple of ints (the one value an op reads on the host)."""
    return tuple(int(d) for d in backend.to_numpy(shape).reshape(-1).tolist())


def _scalar(value):
    return backend.to_numpy(value).reshape(()).item()


def _no_grad(*args, **params):
    return None   # a shape: integers


SHAPE = Primitive("Shape", lambda xp, x, out_type: xp.asarray(x.shape, dtype=out_type),
                  NotDifferentiable, saves="shapes", dtype_args=(), domain=(-2.0, 2.0),
                  cases=[(((2, 3),), {"out_type": "int32"})],
                  doc="not differentiable: the sizes of x, as integers")


def traced_shape(x, out_type):
    """``ad.shape(x)`` of a traced tensor: a ``Shape`` node."""
    return SHAPE(x, out_type=dtypes.as_dtype(out_type).name)


def _int_inputs(float_inputs):
    """``make_inputs`` for an op whose last input is a shape: floats, then that shape."""
    def make(rng, shapes):
        *values, shape = shapes
        return [rng.uniform(-2.0, 2.0, size=s) for s in values[:float_inputs]] + \
            [np.asarray(shape, dtype=np.int32)]
    return make


def _reshape_grad(g, ans, x, shape):
    from .shape import reshape
    from .open_sizes import open_sized, reshape_like
    if g._value.ndim == ans._value.ndim and open_sized(x):
        return reshape_like(g, x)
    return reshape(g, g._value.shape[:g._value.ndim - ans._value.ndim] + x._value.shape)


RESHAPE_TO = Primitive("ReshapeTo", lambda xp, x, shape: xp.reshape(x, _dims(shape)),
                       (_reshape_grad, _no_grad), saves="shapes", dtype_args=(),
                       domain=(-2.0, 2.0), cases=[(((6,), (2, 3)), {}), (((2, 3), (3, -1)), {})],
                       doc="reshape the cotangent back to the input's shape")
RESHAPE_TO.make_inputs = _int_inputs(1)


def reshape_to(x, shape):
    """``ad.reshape`` with a shape computed in the trace."""
    return RESHAPE_TO(x, shape_tensor(shape, "Reshape"))


BROADCAST_TO_SHAPE = Primitive(
    "BroadcastToShape", lambda xp, x, shape: xp.broadcast_to(x, _dims(shape)),
    (lambda g, ans, x, shape: unbroadcast(g, x, ans), _no_grad), saves="shapes", dtype_args=(),
    domain=(-2.0, 2.0), cases=[(((3,), (2, 3)), {}), (((2, 1), (2, 3)), {})],
    doc="sum the cotangent over the broadcast copies")
BROADCAST_TO_SHAPE.make_inputs = _int_inputs(1)


def broadcast_to_shape(x, shape):
    """``ad.broadcast_to`` with a shape computed in the trace."""
    return BROADCAST_TO_SHAPE(convert_to_tensor(x), shape_tensor(shape, "BroadcastTo"))


def _fill_grad(g, ans, value, dims):
    from .reduce import reduce_sum
    n = ans._value.ndim
    return reduce_sum(g, axis=[-1 - i for i in range(n)]) if n else g


FILL_TO = Primitive("FillTo", lambda xp, value, dims: xp.full(_dims(dims), value, dtype=value.dtype),
                    (_fill_grad, _no_grad), saves="shapes", dtype_args=(), domain=(-2.0, 2.0),
                    cases=[(((), (3,)), {}), (((), (2, 3)), {})],
                    doc="d fill(dims, v) = fill(dims, dv): the VJP sums g")
FILL_TO.make_inputs = _int_inputs(1)


def fill_to(dims, value):
    """``ad.fill`` (and ``zeros``, ``ones``) with dims computed in the trace."""
    return FILL_TO(convert_to_tensor(value), shape_tensor(dims, "Fill"))


RANGE_OF = Primitive("RangeOf", lambda xp, start, limit, delta, dtype:
                     xp.arange(_scalar(start), _scalar(limit), _scalar(delta), dtype=dtype),
                     NotDifferentiable, saves="shapes", dtype_args=(),
                     cases=[(((), (), ()), {"dtype": "int32"})],
                     doc="not differentiable (as TensorFlow's Range)")
RANGE_OF.make_inputs = lambda rng, shapes: [np.asarray(0), np.asarray(5), np.asarray(2)]


def range_of(start, limit, delta, dtype):
    """``ad.range`` with bounds computed in the trace (``dtype`` from them, or given)."""
    tensors = [convert_to_tensor(a) for a in (start, limit, delta)]
    if dtype is None:
        dtype = dtypes.infer_dtype([_scalar(t._value) for t in tensors])
    if not _validate.traced(tensors[2]) and _scalar(tensors[2]._value) == 0:
        raise InvalidArgumentError(f"Range: delta must not be 0 (start={start}, limit={limit})")
    return RANGE_OF(*tensors, dtype=dtypes.as_dtype(dtype).name)


def _shape_of(x):
    """x's sizes as an int32 vector: a ``Shape`` node when x is traced (its sizes may vary
    from call to call), else a constant."""
    if _validate.traced(x):
        return traced_shape(x, "int32")
    return convert_to_tensor(np.asarray(x._value.shape, dtype=np.int32))


# ---- tile with multiples computed in the trace ----------------------------------------
def _tile_to_forward(xp, x, multiples):
    from .shape import _tile_forward
    return _tile_forward(xp, x, _dims(multiples))


def _tile_to_grad(g, ans, x, multiples):
    """Output axis i holds multiples[i] copies of x's axis i: seen as (m_i, d_i), sum over m_i."""
    from .join import unstack
    from .reduce import reduce_sum
    n = x._value.ndim
    if not n:
        return g
    sizes = unstack(_shape_of(x))
    pairs = [d for pair in zip(unstack(multiples), sizes) for d in pair]
    batch = list(g._value.shape[:g._value.ndim - n])
    g = reshape_to(g, batch + pairs)
    return reduce_sum(g, axis=[2 * i - 2 * n for i in range(n)])


TILE_TO = Primitive("TileTo", _tile_to_forward, (_tile_to_grad, _no_grad), saves="inputs",
                    dtype_args=(), domain=(-2.0, 2.0),
                    cases=[(((3,), (2,)), {}), (((2, 3), (2, 1)), {})],
                    doc="d tile(x) = the sum of g over the copies")
TILE_TO.make_inputs = _int_inputs(1)


def tile_to(x, multiples):
    """``ad.tile`` with multiples computed in the trace."""
    x, multiples = convert_to_tensor(x), shape_tensor(multiples, "Tile")
    if multiples._value.shape != (x._value.ndim,):
        raise InvalidArgumentError(
            f"Tile: Expected multiples argument to be a vector of length {x._value.ndim} but got "
            f"shape {tuple(multiples.shape)} (input shape {tuple(x.shape)})")
    return TILE_TO(x, multiples)


# ---- slicing with bounds computed in the trace ------------------------------------------
def _is_input(v):
    return isinstance(v, (list, tuple)) and len(v) == 2 and v[0] == "input"


def _resolve(key, bounds):
    """The key with each ``("input", k)`` replaced by the k-th bound's value."""
    def value(v):
        return int(_scalar(bounds[v[1]])) if _is_input(v) else v
    out = []
    for k in key:
        if isinstance(k, (list, tuple)) and k and k[0] == "slice":
            out.append(("slice",) + tuple(value(v) for v in k[1:]))
        else:
            out.append(value(k))
    return tuple(out)


def _slice_of_forward(xp, x, *bounds, key, n_batch=0):
    from .slicing import _take
    return _take(xp, x, _resolve(key, bounds), n_batch, "StridedSlice")


def _slice_of_grad(g, ans, x, *bounds, key, n_batch=0):
    shape = _shape_of(x)[n_batch:] if n_batch else _shape_of(x)
    batch = g._value.ndim - ans._value.ndim + n_batch
    return [STRIDED_SLICE_GRAD_OF(g, shape, *bounds, key=key, n_batch=batch)] + \
        [None] * len(bounds)


def _slice_grad_of_forward(xp, g, shape, *bounds, key, n_batch=0):
    from .slicing import _strided_slice_grad_forward
    return _strided_slice_grad_forward(xp, g, _resolve(key, bounds), _dims(shape), n_batch)


def _slice_grad_of_grad(gg, ans, g, shape, *bounds, key, n_batch=0):
    batch = gg._value.ndim - ans._value.ndim + n_batch
    return [STRIDED_SLICE_OF(gg, *bounds, key=key, n_batch=batch), None] + [None] * len(bounds)


def _bound_inputs(rng, shapes):
    x, *bounds = shapes
    return [rng.uniform(-2.0, 2.0, size=x)] + [np.asarray(1, dtype=np.int32) for _ in bounds]


_CUT = ("slice", ("input", 0), None, None)
STRIDED_SLICE_OF = Primitive(
    "StridedSliceOf", _slice_of_forward, _slice_of_grad, saves="inputs", dtype_args=(),
    domain=(-2.0, 2.0), cases=[(((4,), ()), {"key": (_CUT,)}),
                               (((3, 4), ()), {"key": (("slice", None, None, None), ("input", 0))})],
    doc="d x[key] = dx[key]: g is written into zeros shaped like x")
STRIDED_SLICE_OF.make_inputs = _bound_inputs
STRIDED_SLICE_GRAD_OF = Primitive(
    "StridedSliceGradOf", _slice_grad_of_forward, _slice_grad_of_grad, saves="inputs",
    dtype_args=(), domain=(-2.0, 2.0), cases=[(((3,), (1,), ()), {"key": (_CUT,)})],
    doc="linear in g (a scatter into zeros); its VJP slices the cotangent again")
STRIDED_SLICE_GRAD_OF.make_inputs = lambda rng, shapes: [
    rng.uniform(-2.0, 2.0, size=(3,)), np.asarray([4], dtype=np.int32), np.asarray(1, np.int32)]


def _traced_scalar(v):
    return isinstance(v, Tensor) and _validate.traced(v) and v._value.ndim == 0 \
        and v.dtype.is_integer


def has_traced_bound(key):
    """Whether a basic index (ints, slices, None, ...) has a bound or int computed in the trace."""
    items = key if isinstance(key, tuple) else (key,)
    found = False
    for k in items:
        if isinstance(k, slice):
            found |= any(_traced_scalar(v) for v in (k.start, k.stop, k.step))
        elif _traced_scalar(k):
            found = True
        elif not (k is None or k is Ellipsis or isinstance(k, (int, np.integer))
                  and not isinstance(k, (bool, np.bool_))):
            return False   # an array or mask: advanced indexing, not a strided slice
    return found


def strided_slice_of(x, key):
    """``x[key]`` where some bounds or int indices are tensors computed in the trace."""
    bounds, encoded = [], []

    def ref(v):
        if isinstance(v, Tensor) and _validate.traced(v):
            if not v.dtype.is_integer or v._value.ndim != 0:
                raise TypeError(f"StridedSlice: a slice bound must be a scalar int tensor, got "
                                f"{v.dtype.name} of shape {tuple(v.shape)}")
            bounds.append(v)
            return ("input", len(bounds) - 1)
        return None if v is None else int(v)

    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, slice):
            encoded.append(("slice", ref(k.start), ref(k.stop), ref(k.step)))
        elif k is Ellipsis:
            encoded.append("...")
        else:
            encoded.append(k if k is None else ref(k))
    return STRIDED_SLICE_OF(convert_to_tensor(x), *bounds, key=tuple(encoded))
