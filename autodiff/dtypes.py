"""Data types: the ``ad.float32`` family, and how Python values get one.

TensorFlow's rules, which this module reproduces:

- a Python float becomes float32, a Python int int32 (int64 if it does not
  fit), a bool bool, a complex complex128; a NumPy array keeps its dtype;
- there is no implicit casting between tensors (``float32 + float64`` is an
  error), but a bare Python number takes the dtype of the tensor it meets.

    >>> ad.constant(1.0).dtype    # TensorFlow prints tf.float32
    ad.float32
    >>> (ad.constant(1.0) * 2).dtype      # the 2 becomes float32, not int32
    ad.float32
"""

import numpy as np

__all__ = [
    "DType", "as_dtype", "float16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "bool", "complex64", "complex128", "infer_dtype",
]

_builtin_bool = bool


class DType:
    """A tensor element type; wraps a NumPy dtype and names it as TensorFlow does."""

    __slots__ = ("name", "as_numpy_dtype", "_np")

    def __init__(self, name, np_dtype):
        self.name = name
        self._np = np.dtype(np_dtype)
        self.as_numpy_dtype = self._np.type

    @property
    def is_floating(self):
        return self._np.kind == "f"

    @property
    def is_complex(self):
        return self._np.kind == "c"

    @property
    def is_integer(self):
        return self._np.kind in "iu"

    @property
    def is_bool(self):
        return self._np.kind == "b"

    @property
    def is_differentiable(self):
        """Floating and complex tensors carry gradients; integers and bools do not."""
        return self._np.kind in "fc"

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def __repr__(self):
        return f"ad.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._np == other._np
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self._np)

    # Make DType usable where NumPy expects a dtype: np.zeros(3, ad.float32).
    @property
    def dtype(self):
        return self._np


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
bool = DType("bool", np.bool_)  # noqa: A001 - the public name is ad.bool, as tf.bool
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, complex128]
_BY_NUMPY = {d._np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, float=float32, double=float64)


def as_dtype(value):
    """Converts a DType, NumPy dtype, type or name ('float32') to a DType.

    >>> ad.as_dtype("float64") is ad.float64
    True
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        found = _BY_NUMPY.get(np.dtype(value))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"cannot convert {value!r} to an autodiff dtype")
    return found


def from_numpy(np_dtype):
    """The DType of a NumPy dtype (fast path used by Tensor.dtype)."""
    found = _BY_NUMPY.get(np_dtype)
    if found is None:
        raise TypeError(f"unsupported array dtype {np_dtype}")
    return found


def infer_dtype(value):
    """The dtype TensorFlow gives a Python value (nested lists included).

    >>> from autodiff.dtypes import infer_dtype
    >>> infer_dtype(1.0), infer_dtype(3), infer_dtype([1, 2.5]), infer_dtype(True)
    (ad.float32, ad.int32, ad.float32, ad.bool)
    """
    if isinstance(value, _builtin_bool):
        return bool
    if hasattr(value, "dtype"):  # NumPy arrays and scalars (np.float64 is also a float)
        return as_dtype(value.dtype)
    if isinstance(value, int):
        return int32 if -2**31 <= value < 2**31 else int64
    if isinstance(value, float):
        return float32
    if isinstance(value, complex):
        return complex128
    if isinstance(value, (list, tuple)):
        if not value:
            return float32
        kinds = [infer_dtype(v) for v in value]
        for wanted in (complex128, float32, int64, int32, bool):
            if wanted in kinds:
                return wanted
        return kinds[0]
    # ValueError, as TensorFlow raises for a value of a type it cannot convert.
    raise ValueError(f"cannot convert {type(value).__name__} {value!r} to a tensor (tensors hold "
                     f"numbers, booleans, nested lists of them, or arrays)")
