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

The op types here are the static ones' with ``To`` added (``ReshapeTo``,
``FillTo``, ``BroadcastToShape``, ``RangeOf``): their shape is their last
input (never differentiable: it is integers), everything else as in the
static op, gradients included.
"""

import numpy as np

from .. import backend, dtypes
from .. import validate as _validate
from ..broadcast import unbroadcast
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["is_dynamic", "shape_tensor", "traced_shape", "reshape_to", "fill_to",
           "broadcast_to_shape", "range_of"]


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
    from ..errors import InvalidArgumentError
    tensors = [convert_to_tensor(a) for a in (start, limit, delta)]
    if dtype is None:
        dtype = dtypes.infer_dtype([_scalar(t._value) for t in tensors])
    if not _validate.traced(tensors[2]) and _scalar(tensors[2]._value) == 0:
        raise InvalidArgumentError(f"Range: delta must not be 0 (start={start}, limit={limit})")
    return RANGE_OF(*tensors, dtype=dtypes.as_dtype(dtype).name)
