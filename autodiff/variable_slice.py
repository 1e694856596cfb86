"""Assignment through a slice of a Variable: ``v[1:3].assign([7.0, 8.0])``.

``v[key]`` is an ordinary read (a Tensor that ops and tapes use as any
other, its gradient flowing to ``v``) that also remembers ``v`` and the key,
so that ``assign`` can write into that part of ``v``. It owns nothing else.

The write never touches ``v``'s array: it builds the whole new value from a
read of ``v`` and the new part with differentiable ops, then hands it to
``v.assign``. A traced function therefore records an ordinary assign, and
snapshots read earlier keep their values. The new value is one gather from
``concat([old, part])`` (``ops.gathering.replace_at``): each position takes
its old element, or, where the key selects it, the matching one of the part.

    >>> v = ad.Variable([1.0, 2.0, 3.0, 4.0])
    >>> v[1:3].assign([7.0, 8.0]).numpy()      # returns the variable, as TF does
    array([1., 7., 8., 4.], dtype=float32)

Like TensorFlow, a part of the wrong shape (one that does not broadcast to
the slice) raises InvalidArgumentError, and a tensor of another dtype a
ValueError. ``assign_add`` and ``assign_sub`` are extensions (TensorFlow's
slices have only ``assign``). A key holding tensors computed inside a traced
function is refused.
"""

import numpy as np

from .errors import InvalidArgumentError
from .tensor import Tensor, convert_to_tensor

__all__ = []


class VariableSlice(Tensor):
    """``variable[key]``: a Tensor read of part of a variable that can be assigned.

    >>> m = ad.Variable([[1.0, 2.0], [3.0, 4.0]])
    >>> _ = m[:, 1].assign(0.0)                 # a scalar fills the slice
    >>> _ = m[0, ...].assign_add([10.0, 10.0])  # an extension over TensorFlow
    >>> m.numpy()
    array([[11., 10.],
           [ 3.,  0.]], dtype=float32)
    """

    __slots__ = ("_variable", "_key")

    @classmethod
    def _of(cls, read, variable, key):
        part = object.__new__(cls)
        part._value, part._id = read._value, read._id   # the same tensor for tapes and traces
        part._variable, part._key = variable, key
        return part

    def assign(self, value, name=None, read_value=True):
        """Writes ``value`` (broadcast to this slice's shape) into the variable.

        Args:
            value: the new part, of the variable's dtype.
            name: ignored (TensorFlow's op name).
            read_value: return the variable (True) or None.

        Returns:
            The variable, holding its whole new value.
        """
        return self._write(value, None, read_value)

    def assign_add(self, delta, name=None, read_value=True):
        """``variable[key] += delta`` (an extension: TensorFlow's slices lack it)."""
        return self._write(delta, "add", read_value)

    def assign_sub(self, delta, name=None, read_value=True):
        """``variable[key] -= delta`` (an extension: TensorFlow's slices lack it)."""
        return self._write(delta, "sub", read_value)

    def _write(self, value, mode, read_value):
        variable = self._variable
        positions = _positions(variable, self._key)
        part = convert_to_tensor(value, dtype=variable.dtype) if isinstance(value, Tensor) \
            else Tensor(variable._array_here(value))
        shape = positions.shape
        if _broadcast_shape(tuple(part.shape), shape) != shape:
            raise InvalidArgumentError(
                f"Cannot broadcast input shape {list(part.shape)} into final shape {list(shape)} "
                f"(assigning to {variable.name!r}[{_key_text(self._key)}])")
        from .ops import gathering
        old = convert_to_tensor(variable)            # a read: differentiable, traced
        if mode is not None:
            flat = gathering.reshape(old, [-1])
            current = gathering.GATHER(flat, key=(gathering._index_array(positions),))
            part = current + part if mode == "add" else current - part
        new = gathering.replace_at(old, positions, part)
        return variable.assign(new, read_value=read_value)


def _positions(variable, key):
    """The flat positions ``variable[key]`` reads, shaped like the slice (NumPy on an arange)."""
    from .ops import slicing
    from . import validate
    items = key if isinstance(key, tuple) else (key,)
    for item in items:
        bounds = (item.start, item.stop, item.step) if isinstance(item, slice) else (item,)
        if any(isinstance(b, Tensor) and validate.traced(b) for b in bounds):
            raise TypeError(
                f"assigning to a slice of {variable.name!r} needs a key known when tracing: "
                f"ints, slices, '...', None (new axis), constant integer arrays or masks; "
                f"got tensors computed in the traced function in {key!r}")
    shape = tuple(variable.shape)
    flat = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    return np.asarray(flat[slicing._python_key(variable, key)])


def _broadcast_shape(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _key_text(key):
    items = key if isinstance(key, tuple) else (key,)
    def one(k):
        if isinstance(k, slice):
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step)).rstrip(":") or ":"
        return "..." if k is Ellipsis else "None" if k is None else str(k)
    return ", ".join(one(k) for k in items)
