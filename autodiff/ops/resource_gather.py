"""``ResourceGather``: a table lookup whose gradient is an ``ad.IndexedSlices``.

TensorFlow reads an Embedding's rows with ``ResourceGather`` and hands the
gradient back as ``IndexedSlices``: the cotangent's rows as they are (one per
occurrence of an id), the ids, and the table's shape. ``gather`` here gives
the dense gradient instead (the rows added into zeros). This op is the
opt-in: ``Embedding(..., sparse_update=True)`` looks its rows up with it, so
an optimizer sees which rows were used and how often (``optimizers/sparse.py``).

The forward is ``GatherTake``'s along axis 0 (the ids stay an input, so one
trace serves every batch of ids). Only the plain reverse pass gets slices: a
cotangent with leading batch axes (``jacobian``) gets ``GatherTake``'s dense
rule, and so does every higher order, since the slices' values are the
cotangent itself.

    >>> from autodiff.ops.resource_gather import lookup_rows
    >>> table = ad.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> with ad.GradientTape() as tape:
    ...     y = ad.reduce_sum(lookup_rows(table, ad.constant([2, 0, 2])))
    >>> g = tape.gradient(y, table)
    >>> g.indices.numpy(), g.values.shape, g.dense_shape
    (array([2, 0, 2], dtype=int32), TensorShape([3, 2]), (3, 2))
"""

from ..errors import InvalidArgumentError
from ..indexed_slices import IndexedSlices
from ..registry import Primitive
from ..tensor import convert_to_tensor
from .gather_dynamic import _index_inputs, _no_grad, _take_forward, _take_grad
from .shape import reshape
from .slicing import _n_batch

__all__ = []   # reached through Embedding(sparse_update=True); not a tf.* name


def _rows_grad(g, ans, x, indices, n_batch=0):
    """d table[ids] = the cotangent's rows at the ids, kept apart (IndexedSlices)."""
    if _n_batch(g, ans, n_batch):   # Jacobian rows: the dense rule
        return _take_grad(g, ans, x, indices, axis=0, n_batch=n_batch)
    rest = list(x._value.shape[1:])
    return IndexedSlices(reshape(g, [-1] + rest), reshape(indices, [-1]),
                         tuple(x._value.shape))


RESOURCE_GATHER = Primitive(
    "ResourceGather", lambda xp, x, indices, n_batch=0: _take_forward(xp, x, indices, 0, n_batch),
    (_rows_grad, _no_grad),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="lookup({0}, {1})",
    cases=[(((4,), (3,)), {}), (((4, 3), (2, 2)), {})],
    doc="d table[ids] = g's rows at ids, as IndexedSlices (values, indices, dense_shape)")
RESOURCE_GATHER.make_inputs = _index_inputs


def lookup_rows(table, ids):
    """``table[ids]`` along axis 0, with the gradient ``IndexedSlices`` (``ResourceGather``).

    Args:
        table: the table (a Variable or tensor), rows along axis 0.
        ids: integer tensor of any shape; values in ``[0, table.shape[0])``.

    Returns:
        ``ids.shape + table.shape[1:]``, the same values as ``ad.gather(table, ids)``.
    """
    x = convert_to_tensor(table)
    indices = convert_to_tensor(ids)
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(f"ResourceGather: ids must be integers, not "
                                   f"{indices.dtype.name} (shape {tuple(indices.shape)})")
    return RESOURCE_GATHER(x, indices)
