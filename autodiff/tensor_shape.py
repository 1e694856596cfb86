"""``TensorShape`` (a shape as TensorFlow prints and compares it) and ``ArraySpec``.

    >>> ad.constant([[1.0, 2.0, 3.0]]).shape
    TensorShape([1, 3])
    >>> ad.constant([[1.0, 2.0, 3.0]]).shape == [1, 3]   # equal to a list or a tuple
    True
    >>> ad.TensorShape([None, 3]).as_list()             # None: a size not yet known
    [None, 3]
"""

import numpy as np

__all__ = ["TensorShape", "ArraySpec"]


def _dimension(d):
    """One size of a TensorShape: an int (a float such as 1.5 or a str is a TypeError)."""
    if isinstance(d, (str, bytes, float, bool)) or not hasattr(d, "__index__"):
        raise TypeError(d)
    return int(d)


class TensorShape(tuple):
    """A shape that compares equal to tuples and lists: ``shape == [7, 10]``."""

    __slots__ = ()

    def __new__(cls, dims=()):
        try:
            return tuple.__new__(cls, (None if d is None else _dimension(d) for d in dims))
        except TypeError:
            raise TypeError(f"TensorShape: cannot read {dims!r} as a shape: it must be a list "
                            f"of ints and None") from None

    def __eq__(self, other):
        if isinstance(other, list):
            other = tuple(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return tuple.__repr__(tuple(self))

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return TensorShape(item) if isinstance(key, slice) else item

    @property
    def rank(self):
        return len(self)

    def as_list(self):
        return list(self)

    def num_elements(self):
        return int(np.prod(self, dtype=np.int64))


class ArraySpec:
    """Shape and dtype without data: what a tape keeps of a value its VJPs never read."""

    __slots__ = ("shape", "dtype", "ndim")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))
