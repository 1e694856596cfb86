"""The strict backend: NumPy behind a wall, for testing (``ad.set_backend("strict")``).

A GPU array library such as CuPy keeps its arrays on the device: NumPy
cannot read them (``numpy.asarray(cupy_array)`` raises TypeError) and the
only way to the host is an explicit ``.get()``. Code that works on NumPy
can therefore still break on a GPU: a stray ``np.sin(x)`` inside an op, an
``np.asarray`` that silently copies, a NumPy array mixed into a device
computation. CI has no GPU, so this module imitates one:

    >>> import autodiff._strict as sx
    >>> a = sx.asarray([1.0, 2.0])       # "to the device": a StrictArray
    >>> sx.sin(a) * 2                     # the namespace and the operators work
    strict_array([1.68294197, 1.81859485], dtype=float64)
    >>> np.asarray(a)                     # as CuPy raises
    Traceback (most recent call last):
    TypeError: Implicit conversion to a NumPy array is not allowed. ...
    >>> np.sin(a)                         # a stray np. call
    Traceback (most recent call last):
    TypeError: ...
    >>> a + np.ones(2)                    # mixing host and device
    Traceback (most recent call last):
    TypeError: ...
    >>> a.get()                           # the explicit copy to the host
    array([1., 2.])

- ``StrictArray`` wraps a NumPy array and refuses every implicit path to
  NumPy (``__array__``, NumPy's functions and ufuncs, the buffer protocol)
  and to Python numbers (``float(a)``, ``bool(a)``: on a GPU each is a
  hidden device-to-host copy). ``.get()`` and ``.item()`` are the explicit
  exits, as in CuPy. Python and NumPy *scalars* are fine as operands.
- This module is also the array namespace (``xp``): it offers exactly the
  NumPy functions the engine's forwards use, each unwrapping its arguments,
  refusing NumPy arrays among them, and wrapping its results. A forward
  that calls a function missing here fails with AttributeError: add the
  function to the lists below only if CuPy has it too.
- Results are always arrays, never NumPy scalars (CuPy's reductions return
  0-d device arrays too).

This is a test double: it is NumPy underneath, with the same numbers and the
same speed class, plus a wrapper's overhead. It owns nothing else.
"""

import contextlib
import numbers
import types

import numpy

__all__ = ["StrictArray", "asarray", "array", "no_transfers"]

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")


class StrictArray:
    """A device-like array: NumPy data that never converts to NumPy implicitly."""

    __slots__ = ("_data",)
    __array_ufunc__ = None   # NumPy ufuncs and ndarray operators refuse it (TypeError)

    def __init__(self, data):
        self._data = data    # always a numpy.ndarray (0-d for scalars)

    # ---- the explicit ways out, as in CuPy --------------------------------
    def get(self):
        """A NumPy copy on the host: the only way to NumPy."""
        _count_transfer()
        return self._data.copy()

    def item(self):
        """The single element as a Python number (an explicit host transfer)."""
        _count_transfer()
        return self._data.item()

    # ---- the implicit ways out, all refused -------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(IMPLICIT)

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"numpy.{func.__name__} was called on a strict (device) array; "
                        f"use the backend's array module (autodiff.backend.xp) instead")

    def _refuse_scalar(self, *_):
        raise TypeError("a strict (device) array does not convert to a Python number "
                        "implicitly (on a GPU that is a hidden copy to the host); "
                        "use .item() explicitly")

    __bool__ = __float__ = __int__ = __index__ = __complex__ = _refuse_scalar
    __hash__ = None

    # ---- what an array is -------------------------------------------------
    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    nbytes = property(lambda self: self._data.nbytes)
    itemsize = property(lambda self: self._data.itemsize)
    T = property(lambda self: StrictArray(self._data.T))

    def astype(self, dtype, copy=True):
        return StrictArray(self._data.astype(dtype, copy=copy))

    def reshape(self, *shape):
        return StrictArray(self._data.reshape(*shape))

    def copy(self):
        return StrictArray(self._data.copy())

    def __len__(self):
        return len(self._data)

    def __iter__(self):
        return (_wrap(row) for row in self._data)

    def __repr__(self):
        return f"strict_array({numpy.array2string(self._data, separator=', ')}, dtype={self.dtype})"

    __str__ = __repr__

    # ---- indexing ---------------------------------------------------------
    def __getitem__(self, key):
        return _wrap(self._data[_unwrap_key(key)])

    def __setitem__(self, key, value):
        self._data[_unwrap_key(key)] = _unwrap(value)


def _binary(name, reflected=False):
    op = getattr(numpy.ndarray, name)

    def method(self, other):
        return _wrap(op(self._data, _operand(other)))

    def reflected_method(self, other):
        return _wrap(getattr(numpy, _REFLECTED[name])(_operand(other), self._data))

    method.__name__ = name
    return reflected_method if reflected else method


_REFLECTED = {"__add__": "add", "__sub__": "subtract", "__mul__": "multiply",
              "__truediv__": "true_divide", "__floordiv__": "floor_divide", "__mod__": "mod",
              "__pow__": "power", "__matmul__": "matmul", "__and__": "bitwise_and",
              "__or__": "bitwise_or", "__xor__": "bitwise_xor"}

for _name in _REFLECTED:
    setattr(StrictArray, _name, _binary(_name))
    setattr(StrictArray, "__r" + _name[2:], _binary(_name, reflected=True))
for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
    setattr(StrictArray, _name, _binary(_name))
for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(StrictArray, _name, (lambda op: lambda self: _wrap(op(self._data)))(
        getattr(numpy.ndarray, _name)))
for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
    def _inplace(self, other, _op=getattr(numpy.ndarray, _name)):
        _op(self._data, _operand(other))   # in place, as on NumPy and CuPy
        return self
    setattr(StrictArray, _name, _inplace)


# ---- crossing the wall ------------------------------------------------------
_forbidden = 0   # > 0 inside no_transfers()


def _count_transfer():
    if _forbidden:
        raise TypeError("a copy from the strict device to the host (.get() or .item()) ran "
                        "inside no_transfers(): this computation does not stay on the device")


@contextlib.contextmanager
def no_transfers():
    """Within the block even the explicit exits (``.get()``, ``.item()``) raise.

    The tests run ops, VJPs and whole backward passes inside it: on a GPU,
    they must not copy anything to the host.
    """
    global _forbidden
    _forbidden += 1
    try:
        yield
    finally:
        _forbidden -= 1


def _operand(value):
    """An operator's other operand: strict arrays and scalars, never a NumPy array."""
    if type(value) is StrictArray:
        return value._data
    if isinstance(value, (numbers.Number, numpy.generic)):
        return value
    if isinstance(value, numpy.ndarray):
        raise TypeError(_MIXED)
    raise TypeError(f"unsupported operand type for a strict array: {type(value).__name__}")


_MIXED = ("Unsupported type <class 'numpy.ndarray'>: a NumPy (host) array cannot be mixed "
          "with a strict (device) array; move it explicitly with xp.asarray(...) or .get()")


def _unwrap(value):
    """A function argument as NumPy sees it; NumPy arrays refused (as CuPy does)."""
    kind = type(value)
    if kind is StrictArray:
        return value._data
    if kind is tuple or kind is list:
        return kind(_unwrap(v) for v in value)
    if isinstance(value, numpy.ndarray):
        raise TypeError(_MIXED)
    return value


def _unwrap_key(key):
    if type(key) is tuple:
        return tuple(_unwrap(k) for k in key)
    return _unwrap(key)


def _wrap(result):
    """NumPy's result as strict arrays (scalars become 0-d arrays, as in CuPy)."""
    if isinstance(result, numpy.ndarray):
        return StrictArray(result)
    if isinstance(result, numpy.generic):
        return StrictArray(numpy.asarray(result))
    if isinstance(result, tuple):   # slogdet's (sign, logabsdet), ...
        return tuple(_wrap(r) for r in result)
    return result


def _function(numpy_function, name):
    def strict_function(*args, **kwargs):
        return _wrap(numpy_function(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

    strict_function.__name__ = strict_function.__qualname__ = name
    strict_function.__doc__ = f"numpy.{name} on strict arrays."
    return strict_function


# ---- the namespace ---------------------------------------------------------
def asarray(value, dtype=None):
    """To the device: copies a NumPy array or Python value (a strict array passes)."""
    if type(value) is StrictArray:
        return value if dtype is None else value.astype(dtype, copy=False)
    return StrictArray(numpy.array(_unwrap_nested(value), dtype=dtype, copy=True))


def array(value, dtype=None, copy=True):
    """Like ``asarray``, copying a strict array too unless ``copy=False``."""
    if type(value) is StrictArray:
        return StrictArray(numpy.array(value._data, dtype=dtype, copy=copy))
    return asarray(value, dtype)


def _unwrap_nested(value):
    """Host values pass; a strict array inside a list would be a hidden transfer."""
    if type(value) is StrictArray:
        raise TypeError("a list holding strict arrays cannot become an array implicitly; "
                        "use xp.stack")
    if type(value) in (list, tuple):
        for v in value:
            _unwrap_nested(v)
    return value


_FUNCTIONS = (
    # elementwise
    "subtract", "multiply", "true_divide", "negative", "positive", "square", "reciprocal",
    "copysign", "isfinite", "isnan", "isinf", "ascontiguousarray", "arcsin", "arccos", "arctan",
    "arctan2", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "roll", "abs", "sign", "sqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh",
    "round", "floor", "ceil", "conj", "real", "imag", "power", "maximum", "minimum", "floor_divide", "mod", "fmod",
    "logaddexp", "clip", "where",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not",
    # reductions and scans
    "sum", "mean", "max", "min", "prod", "any", "all", "argsort", "take", "take_along_axis",
    "put_along_axis", "cumsum", "argmax", "argmin", "argwhere",
    # shapes and layout
    "reshape", "transpose", "swapaxes", "moveaxis", "broadcast_to", "flip", "tile", "pad",
    "concatenate", "stack", "diagonal",
    # products
    "matmul", "einsum", "dot",
    # creation
    "empty", "zeros", "ones", "full", "zeros_like", "ones_like", "eye", "arange", "linspace",
)
for _name in _FUNCTIONS:
    globals()[_name] = _function(getattr(numpy, _name), _name)

linalg = types.SimpleNamespace(**{
    _name: _function(getattr(numpy.linalg, _name), f"linalg.{_name}")
    for _name in ("solve", "inv", "det", "slogdet", "cholesky")})


class _Ufunc:
    """``xp.add`` with its ``.at`` (the scatter-add that gather's gradient needs)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self._call = _function(ufunc, ufunc.__name__)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def at(self, out, key, values):
        if type(out) is not StrictArray:
            raise TypeError(_MIXED)
        self._ufunc.at(out._data, _unwrap_key(key), _unwrap(values))


add = _Ufunc(numpy.add)


def erf(x):
    """The error function (what ``cupyx.scipy.special.erf`` is for CuPy)."""
    from .backend import numpy_erf
    return _wrap(numpy_erf(_unwrap(x)))


# NumPy's dtypes and constants are plain host objects, as in CuPy.
for _name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
              "float64", "complex64", "complex128", "newaxis", "inf", "nan", "pi"):
    globals()[_name] = getattr(numpy, _name)
ndarray = StrictArray
