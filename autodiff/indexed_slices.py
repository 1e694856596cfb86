"""``ad.IndexedSlices``: a gradient that names only the rows it touches (TensorFlow's).

A lookup ``table[ids]`` reads a few rows of a large table, so its gradient
is zero except at those rows. TensorFlow hands it back as
``tf.IndexedSlices``: ``values`` (one row per *occurrence* of an id, in the
order they were looked up), ``indices`` (the ids) and ``dense_shape`` (the
table's shape). The dense tensor it stands for adds the rows that share an
id: ``dense[i] = sum of values[k] where indices[k] == i``.

This library's gradients are dense by default. ``Embedding(...,
sparse_update=True)`` asks for the lookup's gradient as IndexedSlices, and the
optimizers then apply it as Keras 3 does on TensorFlow (``optimizers/sparse.py``):
a rule that squares the gradient squares each occurrence before the rows are
added up. Everything else densifies it: ``ad.convert_to_tensor``, adding a
dense tensor, or any op that takes a tensor.

    >>> g = ad.IndexedSlices(ad.constant([[1.0, 2.0], [3.0, 4.0]]), ad.constant([2, 2]),
    ...                      (3, 2))
    >>> ad.convert_to_tensor(g).numpy()      # the two occurrences of row 2 add up
    array([[0., 0.],
           [0., 0.],
           [4., 6.]], dtype=float32)

It must not import the ops at load time (``tensor.py`` asks it to densify).
"""

__all__ = ["IndexedSlices"]


class IndexedSlices:
    """A sparse stand-in for a dense tensor: rows ``values`` at ``indices`` of ``dense_shape``.

    Args:
        values: a tensor of shape ``[n] + dense_shape[1:]``, one row per occurrence.
        indices: an integer vector of length ``n``: the row each value belongs to
            (ids may repeat; their rows add up when made dense).
        dense_shape: the shape of the dense tensor (a tuple, or a tensor).

    As TensorFlow's: ``x * scalar``, ``x / scalar`` and ``-x`` keep the slices;
    ``x + y`` of two IndexedSlices concatenates them (as TensorFlow's tape
    aggregates them); adding or multiplying by anything else makes ``x`` dense.
    """

    def __init__(self, values, indices, dense_shape=None):
        from .tensor import convert_to_tensor
        self.values = convert_to_tensor(values)
        self.indices = convert_to_tensor(indices)
        if not self.indices.dtype.is_integer or len(self.indices.shape) != 1:
            raise TypeError(f"IndexedSlices: indices must be an integer vector, got dtype "
                            f"{self.indices.dtype.name} shape {tuple(self.indices.shape)}")
        if tuple(self.values.shape[:1]) != tuple(self.indices.shape):
            raise ValueError(f"IndexedSlices: values of shape {tuple(self.values.shape)} need "
                             f"one row per index ({tuple(self.indices.shape)[0]} indices)")
        if dense_shape is None:
            raise ValueError("IndexedSlices: dense_shape is required here (TensorFlow allows "
                             "None, but then it cannot be made dense)")
        if hasattr(dense_shape, "numpy"):
            dense_shape = dense_shape.numpy().tolist()
        self.dense_shape = tuple(int(d) for d in dense_shape)
        if self.dense_shape[1:] != tuple(self.values.shape[1:]):
            raise ValueError(f"IndexedSlices: values of shape {tuple(self.values.shape)} do "
                             f"not fit rows of dense_shape {self.dense_shape}")

    @property
    def dtype(self):
        """The values' dtype."""
        return self.values.dtype

    @property
    def shape(self):
        """The dense tensor's shape (``dense_shape``), as TensorFlow's ``.shape``."""
        from .tensor import TensorShape
        return TensorShape(self.dense_shape)

    def with_values(self, values):
        """The same rows with other ``values`` (TensorFlow's ``_with_values``)."""
        return IndexedSlices(values, self.indices, self.dense_shape)

    def _to_dense_tensor(self):
        """The dense tensor: rows sharing an id added up (``unsorted_segment_sum``)."""
        from .ops.gather_dynamic import unsorted_segment_sum
        return unsorted_segment_sum(self.values, self.indices, self.dense_shape[0])

    def numpy(self):
        """The dense tensor's values as a NumPy array."""
        return self._to_dense_tensor().numpy()

    def __add__(self, other):
        if isinstance(other, IndexedSlices):
            from .ops.join import concat
            return IndexedSlices(concat([self.values, other.values], 0),
                                 concat([self.indices, other.indices], 0), self.dense_shape)
        return self._to_dense_tensor() + other

    def __radd__(self, other):
        return other + self._to_dense_tensor()

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other - self._to_dense_tensor()

    def __neg__(self):
        return self.with_values(-self.values)

    def __mul__(self, other):
        if _is_scalar(other):
            return self.with_values(self.values * other)
        return self._to_dense_tensor() * other

    __rmul__ = __mul__

    def __truediv__(self, other):
        if _is_scalar(other):
            return self.with_values(self.values / other)
        return self._to_dense_tensor() / other

    def __repr__(self):
        return (f"IndexedSlices(indices={self.indices!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape})")


def _is_scalar(x):
    """A Python number or a 0-d tensor: multiplying by it keeps the slices."""
    shape = getattr(x, "shape", None)
    return len(tuple(shape)) == 0 if shape is not None else isinstance(x, (int, float))
