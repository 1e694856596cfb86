"""``ad.vectorized_map``: a function applied to each example of a batch, results stacked.

TensorFlow's ``tf.vectorized_map(fn, elems)`` calls ``fn`` on ``elems[0]``,
``elems[1]``, ... (the slices along the leading axis; ``elems`` may be a
nested structure, sliced together) and stacks what ``fn`` returns along a
new leading axis. TensorFlow gets there by *vectorizing* ``fn`` (its
``pfor`` converter rewrites every op of ``fn`` into one op on the whole
batch). Here it is a plain loop: ``unstack``, call ``fn`` once per example,
``stack``. The results, and the gradients that flow back through them, are
the same; the cost is one Python call of ``fn`` per example, which is what
a lesson on per-example gradients wants to show anyway:

    >>> w = ad.Variable([0.5, -1.0])
    >>> def grad_of_one(x):                  # one example's gradient
    ...     with ad.GradientTape() as tape:
    ...         loss = ad.reduce_sum(ad.sin(x * w))
    ...     return tape.gradient(loss, w)
    >>> ad.vectorized_map(grad_of_one, ad.constant([[1.0, 2.0], [3.0, 4.0]])).shape
    TensorShape([2, 2])

A tape recording around the call records the ``Unpack``, every op of every
call of ``fn``, and the ``Pack``: the batch's gradient through it is the
sum over examples, as in TensorFlow.

This module owns the map only; what ``fn`` does is ``fn``'s business.
"""

from . import nest
from . import tape as _tape
from .errors import InvalidArgumentError
from .tensor import Tensor, convert_to_tensor

__all__ = ["vectorized_map"]


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each slice of ``elems`` along its leading axis; results stacked.

    Args:
        fn: a function of one example (a structure like ``elems``, each
            tensor without its leading axis) returning a tensor or a nested
            structure of them (Python numbers become tensors; None stays None).
        elems: a tensor (or Variable, array) or a nested structure of them,
            all with the same leading dimension.
        fallback_to_while_loop, warn: accepted for TensorFlow's signature;
            there is no vectorizer here to fall back from, so they change
            nothing.

    Returns:
        ``fn``'s structure, each tensor with a new leading axis of the
        batch size.

    Raises:
        TypeError: ``fn`` is not callable.
        IndexError: a tensor in ``elems`` is a scalar (no axis to map over),
            as in TensorFlow.
        InvalidArgumentError: the tensors of ``elems`` have different
            leading dimensions, or ``fn`` returns different shapes.

    >>> ad.vectorized_map(lambda row: ad.reduce_sum(row), ad.constant([[1.0, 2.0], [3.0, 4.0]]))
    <ad.Tensor: shape=(2,), dtype=float32, numpy=array([3., 7.], dtype=float32)>
    """
    if not callable(fn):
        raise TypeError(f"vectorized_map: fn must be callable, got {type(fn).__name__} {fn!r}")
    elems = nest.map_structure(convert_to_tensor, elems)
    flat = nest.flatten(elems)
    n = _batch_size(flat)
    if n == 0:
        return _empty_result(fn, elems, flat)
    columns = [ops.unstack(t) for t in flat]
    results = [fn(nest.pack_sequence_as(elems, [column[i] for column in columns]))
               for i in range(n)]
    return _stacked(results)


def _batch_size(flat):
    """The leading dimension shared by every tensor of ``elems``."""
    if not flat:
        raise ValueError("vectorized_map: elems holds no tensor to map over")
    for t in flat:
        if t._value.ndim == 0:
            raise IndexError(f"vectorized_map: elems must have a leading axis to map over, but "
                             f"one of its tensors is a scalar ({t!r}); a Python list of numbers "
                             f"is a structure of scalars: pass ad.constant([...]) instead")
    sizes = [t._value.shape[0] for t in flat]
    if len(set(sizes)) > 1:
        raise InvalidArgumentError(f"vectorized_map: the tensors of elems have different leading "
                                   f"dimensions {sizes} (shapes "
                                   f"{[tuple(t.shape) for t in flat]}); each example takes one "
                                   f"slice of every tensor, so they must all match")
    return sizes[0]


def _stacked(results):
    """One structure from ``n`` results of ``fn``: each tensor stacked along a new axis 0."""
    structure = results[0]
    flats = [nest.flatten(r) for r in results]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError("vectorized_map: fn returned structures with different numbers of "
                         "tensors for different examples")
    stacked = []
    for leaves in zip(*flats):
        if all(leaf is None for leaf in leaves):
            stacked.append(None)
        else:
            stacked.append(ops.stack([_as_tensor(leaf) for leaf in leaves]))
    return nest.pack_sequence_as(structure, stacked)


def _as_tensor(leaf):
    if leaf is None:
        raise ValueError("vectorized_map: fn returned None for some examples only")
    return leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf)


def _empty_result(fn, elems, flat):
    """A batch of zero examples: ``fn`` runs once on one example of zeros, unrecorded, to
    learn its results' structure, shapes and dtypes (TensorFlow learns them by tracing
    ``fn``); each result is then an empty stack of that shape."""
    example = nest.pack_sequence_as(
        elems, [ops.zeros(t._value.shape[1:], dtype=t.dtype) for t in flat])
    state = _tape.thread_state
    active, observers = list(state.active), list(state.observers)
    state.active[:], state.observers[:] = [], []
    try:
        probe = fn(example)
    finally:
        state.active[:], state.observers[:] = active, observers
    return nest.map_structure(
        lambda leaf: None if leaf is None else
        ops.zeros((0,) + tuple(_as_tensor(leaf).shape), dtype=_as_tensor(leaf).dtype), probe)


from . import ops  # noqa: E402  (ops import the tape, which imports this module's users)
