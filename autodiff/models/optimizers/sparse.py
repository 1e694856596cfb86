"""How the optimizers take an ``ad.IndexedSlices`` gradient: Keras 3's sparse update.

``Embedding(..., sparse_update=True)`` hands its table's gradient over as
IndexedSlices: one row per occurrence of an id. Keras 3 on TensorFlow keeps
the slices through its update rules (``keras/src/backend/tensorflow/sparse.py``):
multiplying by a number keeps them, adding a dense slot makes them dense (rows
that share an id add up), and squaring squares each occurrence *before* the
rows are added. So every rule comes out as on the dense gradient, except where
it squares the gradient: Adam's and RMSprop's second moment and Adagrad's
accumulator take ``sum_i g_i**2`` for a row looked up k times, where the dense
gradient gives ``(sum_i g_i)**2``.

The rules here run on dense arrays (``base.py``), so a slices gradient is
given to them as two dense arrays: the gradient (``dense``) and, under the
scalar name ``"g_squared"``, the per-occurrence squares added up; a rule
asks for the square with ``squared(xp, g, scalars)``. The variables are
written whole, as for a dense gradient (Keras writes only the rows with
``scatter_sub``; the numbers are the same).

    >>> from autodiff.models.optimizers.sparse import densify
    >>> g = ad.IndexedSlices(ad.constant([[1.0], [2.0]]), ad.constant([0, 0]), (2, 1))
    >>> dense, g_squared = densify(g, ad.float32)
    >>> dense.numpy().ravel().tolist(), g_squared.numpy().ravel().tolist()   # 3, not 9
    ([3.0, 0.0], [5.0, 0.0])

Clipping (``clipnorm``, ``global_clipnorm``, ``clipvalue``) makes the
gradient dense first: the sparse rule applies to unclipped gradients only.
"""

from ...indexed_slices import IndexedSlices
from ...ops import elementwise

__all__ = ["densify", "squared", "is_sparse", "with_squares"]


def is_sparse(gradient):
    """True for an ``ad.IndexedSlices`` gradient."""
    return isinstance(gradient, IndexedSlices)


def densify(gradient, dtype):
    """``(dense gradient, its per-occurrence squares added up)``, both of ``dtype``.

    Args:
        gradient: an ``ad.IndexedSlices``.
        dtype: the variable's dtype (the values are cast to it first, as Keras).
    """
    values = gradient.values
    if values.dtype != dtype:
        values = elementwise.cast(values, dtype)
    squares = gradient.with_values(elementwise.square(values))
    return gradient.with_values(values)._to_dense_tensor(), squares._to_dense_tensor()


def squared(xp, g, scalars):
    """The gradient's square as the rule should add it: ``g**2``, or for an IndexedSlices
    gradient the squares of its occurrences added up (``scalars["g_squared"]``). Either is
    a fresh array of this variable's step, which the rule may write into."""
    g_squared = scalars.get("g_squared")
    return xp.square(g) if g_squared is None else g_squared


def with_squares(scalars, g_squared):
    """The step's scalars for one variable whose gradient came as IndexedSlices."""
    return dict(scalars, g_squared=g_squared._value)
