"""Random tensors (``ad.random``): seeds, normal, uniform, truncated_normal, shuffle.

Seeds work as in TensorFlow 2:

- ``set_seed(s)`` restarts every random sequence: the same program after
  the same ``set_seed`` draws the same numbers, call after call;
- an op-level ``seed=`` names a stream of its own (one per op type and
  seed) that continues from call to call (two calls give different
  numbers) and restarts on ``set_seed``;
  without a global seed it is still reproducible from run to run;
- with neither, numbers differ from run to run.

The numbers come from NumPy's ``Generator`` (PCG64) on the CPU and are then
moved to the backend with the forward's ``xp.asarray``: the same seed gives the
same numbers on NumPy and CuPy. They are not TensorFlow's numbers (its
Philox streams are not reproduced). This module is the one op family that
uses NumPy directly, for the generator state.

The sampling ops are Primitives with no tensor inputs (so a traced function
draws fresh numbers on each call, as TensorFlow's graphs do), registered
as not differentiable, like ``RandomShuffle``: a gradient through them is
None. A tensor ``mean`` or ``stddev`` of ``normal`` still gets its gradient,
from the ``z * stddev + mean`` that follows the draw.
"""

import contextlib
import copy
import threading

import numpy as np

from .. import backend, dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor
from .creation import static_shape

__all__ = ["set_seed", "normal", "uniform", "truncated_normal", "shuffle"]

_DEFAULT_GLOBAL_SEED = 87654321   # TensorFlow's, used when only an op seed is given
_global_seed = None
_global_stream = np.random.default_rng()
_op_streams = {}                  # (op type, op seed) -> its Generator, until the next set_seed
_thread = threading.local()       # .copies: while tracing, id(stream) -> (stream, private copy)


def set_seed(seed):
    """Sets the global random seed: every sequence of draws after it repeats exactly.

    Args:
        seed: an int, or None to go back to unseeded (different every run).

    >>> ad.random.set_seed(1); a = ad.random.normal([2])
    >>> ad.random.set_seed(1); b = ad.random.normal([2])   # a == b
    """
    global _global_seed, _global_stream
    _global_seed = None if seed is None else int(seed)
    _global_stream = np.random.default_rng(None if seed is None else _nonnegative(seed))
    _op_streams.clear()


@contextlib.contextmanager
def draws_set_aside():
    """While tracing, this thread draws from private copies of the streams.

    Tracing runs the function's ops once to learn the graph. Its draws come
    from copies, taken at the first draw of each stream and dropped at the
    end, so the real streams do not move (in this thread or any other) and
    the traced function's first call draws the numbers the eager one would.
    A trace inside a trace shares the outer one's copies.
    """
    if getattr(_thread, "copies", None) is not None:
        yield
        return
    _thread.copies = {}
    try:
        yield
    finally:
        _thread.copies = None


def _set_aside(stream):
    """``stream`` itself, or while tracing this thread's private copy of it."""
    copies = getattr(_thread, "copies", None)
    if copies is None:
        return stream
    if id(stream) not in copies:
        copies[id(stream)] = (stream, copy.deepcopy(stream))  # holding stream keeps its id unique
    return copies[id(stream)][1]


def _nonnegative(seed):
    return int(seed) % (1 << 64)


def _generator(seed, op_type):
    """The stream an op draws from: the global one, or the one of its op type and seed."""
    if seed is None:
        return _set_aside(_global_stream)
    stream = _op_streams.get((op_type, seed))
    if stream is None:
        base = _DEFAULT_GLOBAL_SEED if _global_seed is None else _global_seed
        stream = np.random.default_rng([_nonnegative(base), _nonnegative(seed),
                                        sum(map(ord, op_type))])
        stream = _op_streams.setdefault((op_type, seed), stream)  # one stream, whichever thread wins
    return _set_aside(stream)


def _to_backend(xp, values, dtype):
    return xp.asarray(values.astype(dtype, copy=False))   # host -> device, once per draw


def _uniform01(gen, shape, dtype):
    # [0, 1) in the target precision: a float64 draw could round up to 1.0
    u = gen.random(shape, dtype=np.float32 if dtype == "float32" else np.float64).astype(dtype)
    return np.minimum(u, np.nextafter(np.array(1, dtype), np.array(0, dtype)))


def _truncated(gen, shape):
    # redraw, as TensorFlow does, every value more than two standard deviations out
    z = gen.standard_normal(shape)
    bad = np.abs(z) > 2
    while bad.any():
        z[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(z) > 2
    return z


def _draw_cases(**params):
    return [((), {"shape": (2, 3), "dtype": "float64", "seed": 7, **params})]


RANDOM_STANDARD_NORMAL = Primitive(
    "RandomStandardNormal",
    lambda xp, shape, dtype, seed=None: _to_backend(xp,
        _generator(seed, "RandomStandardNormal").standard_normal(shape), dtype),
    NotDifferentiable, saves="shapes", domain=(), cases=_draw_cases(),
    doc="a random draw: not differentiable (gradient None)")
TRUNCATED_NORMAL = Primitive(
    "TruncatedNormal",
    lambda xp, shape, dtype, seed=None: _to_backend(xp,
        _truncated(_generator(seed, "TruncatedNormal"), shape), dtype),
    NotDifferentiable, saves="shapes", domain=(), cases=_draw_cases(),
    doc="a random draw: not differentiable (gradient None)")
RANDOM_UNIFORM = Primitive(
    "RandomUniform",
    lambda xp, shape, dtype, seed=None: _to_backend(xp,
        _uniform01(_generator(seed, "RandomUniform"), shape, dtype), dtype),
    NotDifferentiable, saves="shapes", domain=(), cases=_draw_cases(),
    doc="a random draw: not differentiable (gradient None)")
RANDOM_UNIFORM_INT = Primitive(
    "RandomUniformInt",
    lambda xp, shape, dtype, minval, maxval, seed=None: _to_backend(xp,
        _generator(seed, "RandomUniformInt").integers(minval, maxval, size=shape), dtype),
    NotDifferentiable, saves="shapes", domain=(),
    cases=[((), {"shape": (2, 3), "dtype": "int32", "minval": 0, "maxval": 5, "seed": 7})],
    doc="a random integer draw: not differentiable (gradient None)")


RANDOM_UNIFORM_OF = Primitive(
    "RandomUniformOf",
    lambda xp, shape, dtype, seed=None: _to_backend(xp, _uniform01(
        _generator(seed, "RandomUniform"), tuple(int(d) for d in np.asarray(
            backend.to_numpy(shape)).reshape(-1)), dtype), dtype),
    NotDifferentiable, saves="shapes", dtype_args=(), domain=(),
    cases=[(((2,),), {"dtype": "float64", "seed": 7})],
    doc="a random draw whose shape is read in the graph: not differentiable")
RANDOM_UNIFORM_OF.make_inputs = lambda rng, shapes: [np.asarray([2, 3], dtype=np.int32)]


def uniform_like(x, dtype, seed=None):
    """``uniform(shape(x))`` with ``x``'s shape read when the graph runs (``dropout``'s
    mask in a trace serving any batch size: ``ops/open_sizes.py``). It draws the numbers
    ``uniform`` draws, from the same stream."""
    from .dynamic_shape import traced_shape
    return RANDOM_UNIFORM_OF(traced_shape(x, "int32"), dtype=_float_dtype(dtype, "RandomUniform")
                             .name, seed=_seed(seed))


def _seed(seed):
    return None if seed is None else int(seed)


def _float_dtype(dtype, op):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise InvalidArgumentError(f"{op}: dtype must be a floating type, not {dtype.name}")
    return dtype


def _scale_and_shift(z, scale, shift):
    """``z * scale + shift``, skipping the ops for the defaults (so nothing is recorded)."""
    if not (isinstance(scale, (int, float)) and scale == 1):
        z = z * convert_to_tensor(scale, dtype_hint=z.dtype)
    if not (isinstance(shift, (int, float)) and shift == 0):
        z = z + convert_to_tensor(shift, dtype_hint=z.dtype)
    return z


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from a normal distribution.

    Args:
        shape: the output shape (list of ints or a 1-D integer tensor).
        mean, stddev: numbers or tensors broadcastable to ``shape``.
        dtype: a floating dtype.
        seed: an int op seed (see the module docstring) or None.

    Returns:
        A tensor of ``shape`` and ``dtype``.

    >>> ad.random.set_seed(0)
    >>> ad.random.normal([2, 3]).shape
    TensorShape([2, 3])
    """
    dtype = _float_dtype(dtype, "RandomStandardNormal")
    z = RANDOM_STANDARD_NORMAL(shape=static_shape(shape, "RandomStandardNormal"), dtype=dtype.name,
                              seed=_seed(seed))
    return _scale_and_shift(z, stddev, mean)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Like ``normal``, but values more than two stddevs from the mean are drawn again.

    >>> bool(ad.reduce_max(ad.abs(ad.random.truncated_normal([100]))) <= 2.0)
    True
    """
    dtype = _float_dtype(dtype, "TruncatedNormal")
    z = TRUNCATED_NORMAL(shape=static_shape(shape, "TruncatedNormal"), dtype=dtype.name,
                        seed=_seed(seed))
    return _scale_and_shift(z, stddev, mean)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples uniformly from ``[minval, maxval)``.

    Args:
        shape: the output shape.
        minval, maxval: the range; ``maxval`` defaults to 1 for floats and is
            required for integer dtypes (a ValueError otherwise, as in TensorFlow).
        dtype: float16/32/64, int32 or int64.
        seed: an int op seed or None.

    >>> ad.random.uniform([3], maxval=10, dtype=ad.int32).dtype == ad.int32
    True
    """
    dtype = dtypes.as_dtype(dtype)
    shape = static_shape(shape, "RandomUniform")
    if dtype.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        lo, hi = int(_number(minval)), int(_number(maxval))
        if lo >= hi:
            raise InvalidArgumentError(f"RandomUniformInt: Need minval < maxval: {lo} >= {hi}")
        return RANDOM_UNIFORM_INT(shape=shape, dtype=dtype.name, minval=lo, maxval=hi,
                                  seed=_seed(seed))
    dtype = _float_dtype(dtype, "RandomUniform")
    u = RANDOM_UNIFORM(shape=shape, dtype=dtype.name, seed=_seed(seed))
    maxval = 1 if maxval is None else maxval
    if all(isinstance(v, (int, float)) for v in (minval, maxval)):
        return _scale_and_shift(u, maxval - minval, minval)
    lo = convert_to_tensor(minval, dtype_hint=u.dtype)
    return u * (convert_to_tensor(maxval, dtype_hint=u.dtype) - lo) + lo


def _number(value):
    return _validate.host_value(value, "random", "a parameter").item() \
        if isinstance(value, Tensor) else value


def _shuffle_forward(xp, x, seed=None):
    if x.ndim == 0:
        return x
    order = _generator(seed, "RandomShuffle").permutation(x.shape[0])
    return x[xp.asarray(order)]


RANDOM_SHUFFLE = Primitive("RandomShuffle", _shuffle_forward, NotDifferentiable, saves="shapes",
                           domain=(-2.0, 2.0), label="shuffle({0})",
                           cases=[(((4,),), {"seed": 7}), (((4, 3),), {"seed": 7})],
                           doc="not differentiable, as in TensorFlow 2: the gradient is None")


def shuffle(value, seed=None, name=None):
    """Randomly reorders ``value`` along its first axis.

    The gradient through a shuffle is None (TensorFlow 2 registers it as not
    differentiable): wrap it in ``ad.stop_gradient`` to make that explicit.

    >>> ad.random.set_seed(0)
    >>> sorted(ad.random.shuffle(ad.constant([1, 2, 3])).numpy().tolist())
    [1, 2, 3]
    """
    return RANDOM_SHUFFLE(convert_to_tensor(value), seed=_seed(seed))
