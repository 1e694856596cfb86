"""Variable: a mutable tensor, read by ops as a snapshot.

``assign`` swaps in a new array (never an in-place write). Each time an op
reads a variable it gets a *snapshot*: a Tensor holding the current array but
carrying the variable's own id (``tape.read_variable``). Gradients of every
read therefore add up on the variable, and a later ``assign`` cannot change
what an earlier record saw.

    >>> v = ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     y = v * v          # two reads of v, one id: dy/dv = 2v
    >>> _ = v.assign(10.0)     # after the fact: the records keep 2.0
    >>> print(tape.gradient(y, v))
    ad.Tensor(4.0, shape=(), dtype=float32)
"""

from . import backend
from .tensor import Tensor, _on_active_backend, convert_to_tensor


def _tape():
    """The tape module (imported on use: it imports this module itself)."""
    from . import tape
    return tape

__all__ = ["Variable"]


class Variable(Tensor):
    """A mutable tensor, typically a model parameter.

    Args:
        initial_value: anything ``ad.constant`` accepts.
        trainable: whether tapes watch it automatically when it is read.
        name: its name; ``.name`` adds TensorFlow's ``':0'`` suffix.
        dtype: convert the initial value to this dtype.

    >>> w = ad.Variable(3.0, name="w")
    >>> w.name
    'w:0'
    >>> with ad.GradientTape() as tape:
    ...     y = w * w                    # reading w watches it
    >>> print(tape.gradient(y, w))
    ad.Tensor(6.0, shape=(), dtype=float32)
    """

    __slots__ = ("_trainable", "_name")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if isinstance(initial_value, Variable):
            initial_value = initial_value._value
        elif callable(initial_value):
            initial_value = initial_value()
        value = _on_active_backend(convert_to_tensor(initial_value, dtype=dtype)._value, "Variable")
        super().__init__(backend.xp.array(value, copy=True))
        self._trainable = bool(trainable)
        self._name = "Variable" if name is None else str(name)

    @property
    def trainable(self):
        return self._trainable

    @property
    def name(self):
        return f"{self._name}:0"

    def read_value(self):
        """A snapshot Tensor of the current value (tapes see this as a read)."""
        return _tape().read_variable(self)

    value = read_value

    def __getitem__(self, key):
        """``v[key]``: a read of part of ``v`` (a Tensor) that can also be assigned.

        >>> v = ad.Variable([1.0, 2.0, 3.0])
        >>> v[0].assign(5.0).numpy()
        array([5., 2., 3.], dtype=float32)
        """
        from .variable_slice import VariableSlice
        return VariableSlice._of(super().__getitem__(key), self, key)

    def assign(self, value, read_value=True):
        """Replaces the value (same shape and dtype). Not differentiable."""
        if _tape().thread_state.observers:
            _tape().notify("assign", self, value, "assign")
        return self._replace(self._array_here(value), read_value)

    def assign_add(self, delta, read_value=True):
        """``self = self + delta``, outside every tape."""
        if _tape().thread_state.observers:
            _tape().notify("assign", self, delta, "add")
        return self._replace(self._value + self._array_here(delta), read_value)

    def assign_sub(self, delta, read_value=True):
        """``self = self - delta``, outside every tape."""
        if _tape().thread_state.observers:
            _tape().notify("assign", self, delta, "sub")
        return self._replace(self._value - self._array_here(delta), read_value)

    def _replace(self, new, read_value):
        if new.shape != self._value.shape:
            raise ValueError(
                f"Cannot assign value of shape {tuple(new.shape)} to variable "
                f"{self.name!r} of shape {tuple(self._value.shape)}")
        # A fresh array, never an in-place write: earlier snapshots keep their values.
        self._value = backend.namespace(backend.backend_of(new)).array(new, copy=True)
        return self if read_value else None

    def _array_here(self, value):
        """``value`` as an array of this variable's dtype, on this variable's backend.

        A Python or NumPy value is made there; a tensor must already be there
        (a variable never moves anything implicitly).
        """
        where = backend.backend_of(self._value)
        if isinstance(value, Tensor):
            new = convert_to_tensor(value, dtype=self.dtype)._value
            if backend.backend_of(new) != where:
                raise ValueError(
                    f"Cannot assign a tensor on backend {backend.backend_of(new)!r} to variable "
                    f"{self.name!r} on backend {where!r}; move it first with "
                    f"ad.to_backend(value, {where!r})")
            return new
        if where == backend.get_backend():
            return convert_to_tensor(value, dtype=self.dtype)._value
        with backend.use_backend(where):
            return convert_to_tensor(value, dtype=self.dtype)._value

    def __repr__(self):
        return (f"<ad.Variable '{self.name}' shape={tuple(self.shape)} "
                f"dtype={self.dtype.name}, numpy={self._numpy_text(True)}>")

    __str__ = __repr__

    def __format__(self, spec):
        # f"{v}" shows the variable, as TensorFlow's; a format spec formats its value (an
        # extension: TensorFlow refuses f"{v:.3f}").
        return str(self) if not spec else format(self._host_copy(), spec)

