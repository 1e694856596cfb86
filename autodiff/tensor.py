"""Tensor and Variable: values, their printing, and the Python operators.

A ``Tensor`` is an immutable array plus an integer **id**. Ids come from one
counter and are never reused, so a tape can key gradients by id without the
danger of Python's ``id()`` (which is recycled after garbage collection):

    >>> a = ad.constant(1.0); b = ad.constant(1.0)
    >>> a._id != b._id        # equal values, different tensors
    True

A ``Variable`` is mutable: ``assign`` swaps in a new array. Each time an op
reads a variable it gets a *snapshot*: a Tensor holding the current array
but carrying the variable's own id. Gradients of every read therefore add up
on the variable, and a later ``assign`` cannot change what an earlier
record saw.

The operators (``x * y``, ``x[1:]``, ``x @ w``) only forward to the ops in
``autodiff.ops``; this module computes nothing itself. Shapes are ``tensor_shape.py``'s;
what a tensor refuses while ``ad.function`` traces is ``traced_reads.py``'s.
"""

import itertools

import numpy as np

from . import backend, dtypes
from .errors import InvalidArgumentError
from .tensor_shape import ArraySpec, TensorShape
from .traced_reads import refuse_if_traced as _refuse_if_traced
from .traced_reads import refuse_value_if_traced as _refuse_value_if_traced

__all__ = ["Tensor", "Variable", "TensorShape", "ArraySpec", "constant", "convert_to_tensor"]
# Variable lives in variable.py and is re-exported here (imported at the bottom).

_next_id = itertools.count(1).__next__


class Tensor:
    """An immutable n-dimensional array that tapes can record.

    Create one with ``ad.constant``; ops return new Tensors.

    >>> x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> x.shape, x.dtype
    (TensorShape([2, 2]), ad.float32)
    >>> print(x[0, 1] * 3)
    ad.Tensor(6.0, shape=(), dtype=float32)
    """

    __slots__ = ("_value", "_id", "__weakref__")
    __array_priority__ = 100  # so `ndarray * tensor` calls Tensor.__rmul__

    def __init__(self, value):
        self._value = value
        self._id = _next_id()

    @classmethod
    def _with_id(cls, value, tensor_id):
        tensor = object.__new__(Tensor)
        tensor._value = value
        tensor._id = tensor_id
        return tensor

    # ---- what a tensor is -------------------------------------------------
    @property
    def shape(self):
        return TensorShape(self._value.shape)

    @property
    def dtype(self):
        return dtypes.from_numpy(self._value.dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def backend(self):
        """The backend holding the value: ``'numpy'``, ``'cupy'`` or ``'strict'``.

        Ops never move a tensor; ``ad.to_backend(t, name)`` makes a copy elsewhere.
        """
        return backend.backend_of(self._value)

    @property
    def id(self):
        """The tensor's id on tapes (``v<id>`` in a tape printout)."""
        return self._id

    def numpy(self):
        """Copies the value out as a NumPy array (a NumPy scalar for 0-d tensors).

        The copy has left the library: math on it is not recorded by any tape.

        Raises:
            AttributeError: while ``ad.function`` traces, for a tensor computed from the
                function's arguments or variables (TensorFlow's symbolic tensors have no
                ``numpy``): its value changes from call to call. NotImplementedError for
                a Variable, as in TensorFlow.
        """
        if _tape.thread_state.observers:
            _tape.notify("left_library", self, "numpy")
        if _tape.thread_state.active:
            _refuse_value_if_traced(self, ".numpy()")
        return self._host_copy()

    def _host_copy(self):
        """The value copied to a NumPy array (a scalar for 0-d), without telling anyone."""
        value = self._value
        if isinstance(value, ArraySpec):
            raise ValueError("this tensor is a placeholder (shape and dtype only); it holds no value")
        out = backend.to_numpy(value, copy=True)
        return out[()] if out.ndim == 0 else out

    def __array__(self, dtype=None, copy=None):
        # NumPy may read a tensor (np.asarray(t)), as TensorFlow allows, on NumPy
        # and CuPy alike. The strict test backend refuses: inside the engine such
        # an implicit conversion would be a hidden copy to the host.
        if _tape.thread_state.observers:
            _tape.notify("left_library", self, "numpy")
        if _tape.thread_state.active:
            _refuse_value_if_traced(self, "np.asarray()")
        out = backend.to_numpy(self._value, implicit=True)
        return out.astype(dtype) if dtype is not None else out

    def get_shape(self):
        return self.shape

    def ref(self):
        """A hashable reference to this tensor (tensors themselves are unhashable)."""
        return _Ref(self)

    # ---- printing ---------------------------------------------------------
    def _numpy_text(self, is_repr):
        value = self._host_copy()  # printing is not the value leaving the library
        text = repr(value) if is_repr and np.ndim(value) else str(value)
        return "\n" + text if "\n" in text else text

    def __str__(self):
        return f"ad.Tensor({self._numpy_text(False)}, shape={tuple(self.shape)}, dtype={self.dtype.name})"

    def __repr__(self):
        return f"<ad.Tensor: shape={tuple(self.shape)}, dtype={self.dtype.name}, numpy={self._numpy_text(True)}>"

    # ---- Python protocols -------------------------------------------------
    def __bool__(self):
        if _tape.thread_state.active:
            _refuse_if_traced(self)
        if self._value.size != 1:   # TensorFlow passes NumPy's ValueError on
            raise ValueError(f"The truth value of a tensor of shape {tuple(self.shape)} is "
                             "ambiguous: reduce it first (ad.reduce_any or ad.reduce_all)")
        return bool(self._scalar("bool"))

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"only integer scalar tensors can be used as an index, not {self.dtype.name}")
        return int(self._scalar("index"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def _scalar(self, what):
        if _tape.thread_state.observers:
            _tape.notify("left_library", self, what)
        if _tape.thread_state.active:
            _refuse_value_if_traced(self, f"{what}()")
        if self._value.ndim != 0 and self._value.size != 1:
            raise TypeError(f"{what}() needs a tensor with one element, not shape {tuple(self.shape)}")
        return backend.host_scalar(self._value)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    __hash__ = None  # elementwise == makes tensors unhashable, as in TensorFlow; use .ref()

    def __format__(self, spec):
        # As TensorFlow's EagerTensor: an f-string formats the value, f"{t}" -> "2.0" and
        # f"{t:>8.3f}" -> "   2.000" (print(t) and str(t) still show ad.Tensor(...)).
        return format(self._host_copy(), spec)

    def __reduce__(self):
        raise TypeError("autodiff tensors are not picklable; save arrays with .numpy() instead")

    # ---- operators: each is one op in autodiff.ops ------------------------
    def __add__(self, other): return _ew.ADD(self, other)
    def __radd__(self, other): return _ew.ADD(other, self)
    def __sub__(self, other): return _ew.SUB(self, other)
    def __rsub__(self, other): return _ew.SUB(other, self)
    def __mul__(self, other): return _ew.MUL(self, other)
    def __rmul__(self, other): return _ew.MUL(other, self)
    def __truediv__(self, other): return _ops.divide(self, other)
    def __rtruediv__(self, other): return _ops.divide(other, self)
    def __floordiv__(self, other): return _ops.floordiv(self, other)
    def __rfloordiv__(self, other): return _ops.floordiv(other, self)
    def __mod__(self, other): return _ops.floormod(self, other)
    def __rmod__(self, other): return _ops.floormod(other, self)
    def __pow__(self, other): return _ops.pow(self, other)
    def __rpow__(self, other): return _ops.pow(other, self)
    def __matmul__(self, other): return _ops.matmul(self, other)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __neg__(self): return _ew.NEG(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __invert__(self): return _ops.logical_not(self)
    def __and__(self, other): return _ops.logical_and(self, other)
    def __rand__(self, other): return _ops.logical_and(other, self)
    def __or__(self, other): return _ops.logical_or(self, other)
    def __ror__(self, other): return _ops.logical_or(other, self)
    def __lt__(self, other): return _ops.less(self, other)
    def __le__(self, other): return _ops.less_equal(self, other)
    def __gt__(self, other): return _ops.greater(self, other)
    def __ge__(self, other): return _ops.greater_equal(self, other)

    def __eq__(self, other):
        try:
            return _ops.equal(self, other)
        except (TypeError, ValueError):
            return False

    def __ne__(self, other):
        try:
            return _ops.not_equal(self, other)
        except (TypeError, ValueError):
            return True

    def __getitem__(self, key):
        return _ops.slicing.getitem(self, key)


class _Ref:
    """Hashable handle on a tensor, compared by identity (``tensor.ref()``)."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __hash__(self):
        return self._tensor._id

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._tensor is self._tensor


# ---- making tensors ------------------------------------------------------

def _on_active_backend(array, what):
    """``array`` if it lives on the active backend; new tensors are made there."""
    where = backend.backend_of(array)
    if where != backend.get_backend():
        raise ValueError(f"{what}: the initial value is on backend {where!r} but the active "
                         f"backend is {backend.get_backend()!r}; move it first with "
                         f"ad.to_backend(value, {backend.get_backend()!r})")
    return array


def _convert_python(value, dtype):
    """Array for a Python or NumPy value, following TensorFlow's conversion rules."""
    try:
        return _convert_python_unchecked(value, dtype)
    except OverflowError:
        raise InvalidArgumentError(  # TensorFlow: a ValueError, "out-of-range integer"
            f"convert_to_tensor: {value!r} is out of range for "
            f"{'any integer dtype' if dtype is None else dtypes.as_dtype(dtype).name}") from None
    except ValueError as err:
        if isinstance(err, InvalidArgumentError):
            raise
        raise InvalidArgumentError(  # NumPy's words for a ragged list ("inhomogeneous shape")
            f"convert_to_tensor: cannot make a tensor of {value!r:.80}: nested lists must be "
            f"rectangular, with one element type ({err})") from None


def _empty_literal(value):
    """Whether ``value`` is a (nested) Python list or tuple with no elements (``[[], []]``)."""
    if not isinstance(value, (list, tuple)):
        return False
    try:
        return np.asarray(value).size == 0
    except ValueError:   # ragged
        return False


def _convert_python_unchecked(value, dtype):
    if dtype is None:
        dtype = dtypes.infer_dtype(value)
    else:
        dtype = dtypes.as_dtype(dtype)
        source = dtypes.infer_dtype(value)
        kind, wanted = source._np.kind, dtype._np.kind
        lossy = (kind in "fc" and wanted in "iub") or (kind == "c" and wanted == "f") \
            or (kind in "iufc" and wanted == "b")
        if lossy and not _empty_literal(value):   # [] has no element to lose: any dtype
            raise TypeError(f"cannot convert {value!r} to a tensor of dtype {dtype.name} without "
                            f"losing information (autodiff never casts implicitly)")
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        # A copy: writing to the user's array later changes neither this tensor, nor a
        # tape that saved it, nor a trace that captured it. (TensorFlow copies too, except
        # an op argument that NumPy placed at a 64-byte boundary, which it shares with the
        # tensor its tape saves: tests/conformance/test_conf_array_copies.py.)
        return backend.xp.array(value, dtype=dtype._np, copy=True)
    return backend.xp.asarray(value, dtype=dtype._np)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Returns ``value`` as a Tensor; a Variable gives a snapshot (a *read*).

    Args:
        value: a Tensor, Variable, Python number or (nested) list, or array.
        dtype: the required dtype; a Tensor of another dtype is an error.
        dtype_hint: the dtype a bare Python number should take.

    >>> ad.convert_to_tensor(2, dtype_hint=ad.float32).dtype
    ad.float32

    An ``ad.IndexedSlices`` becomes its dense tensor (rows that share an id add up).
    """
    if hasattr(value, "_to_dense_tensor"):   # IndexedSlices (indexed_slices.py)
        value = value._to_dense_tensor()
    if isinstance(value, Tensor):
        if isinstance(value, Variable):
            value = _tape.read_variable(value)
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(
                f"convert_to_tensor: dtype {dtypes.as_dtype(dtype).name} was asked for, but "
                f"the tensor has dtype {value.dtype.name} (use ad.cast to convert): {value!r}")
        return value
    if dtype is None and dtype_hint is not None and not hasattr(value, "dtype"):
        try:
            return Tensor(_convert_python(value, dtype_hint))
        except TypeError:
            pass  # the hint does not fit (2.5 for an int32 hint): use the value's own dtype
    return Tensor(_convert_python(value, dtype))


def constant(value, dtype=None, shape=None, name=None):
    """Creates a constant tensor from a Python value or array.

    Args:
        value: number, (nested) list, NumPy array or Tensor.
        dtype: element type; by default inferred (Python float -> float32,
            int -> int32, NumPy arrays keep theirs).
        shape: optional shape; a single value is broadcast to fill it.
        name: ignored (kept for TensorFlow compatibility).

    >>> print(ad.constant(3.0))
    ad.Tensor(3.0, shape=(), dtype=float32)
    >>> ad.constant(0, shape=[2, 3]).numpy()
    array([[0, 0, 0],
           [0, 0, 0]], dtype=int32)
    """
    if isinstance(value, Tensor):
        array = value._value if dtype is None else value._value.astype(dtypes.as_dtype(dtype)._np)
    else:
        array = _convert_python(value, dtype)
    if shape is not None:
        shape = tuple(TensorShape(shape))
        if any(d is None or d < 0 for d in shape):
            raise InvalidArgumentError(f"Const: shape {list(shape)} must be a list of sizes >= 0")
        size = int(np.prod(shape, dtype=np.int64))
        if array.size == 1:
            array = backend.xp.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == size:
            array = array.reshape(shape)
        else:
            raise TypeError(
                f"Eager execution of ad.constant with unsupported shape: value has "
                f"{array.size} elements, but shape {list(shape)} has {size} elements")
    return Tensor(array)


# Imported last: these modules need the classes above.
from .variable import Variable  # noqa: E402  (a Tensor subclass; ad.Variable)
from . import ops as _ops  # noqa: E402
from .ops import elementwise as _ew  # noqa: E402  (the hottest operators skip a wrapper)
from . import tape as _tape  # noqa: E402
