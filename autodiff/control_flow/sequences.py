"""``ad.scan``, ``ad.map_fn``, ``ad.foldl``, ``ad.foldr``: a function applied along axis 0.

    >>> ad.scan(lambda total, x: total + x, ad.constant([1.0, 2.0, 3.0])).numpy()
    array([1., 3., 6.], dtype=float32)
    >>> ad.map_fn(lambda row: ad.reduce_sum(row), ad.ones([2, 3])).numpy()
    array([3., 3.], dtype=float32)
    >>> float(ad.foldl(lambda acc, x: acc * x, ad.constant([1.0, 2.0, 3.0, 4.0])))
    24.0

``elems`` may be a nested structure of tensors sharing their first
dimension; the function gets one slice of each (``elems[i]``, same
structure). Eagerly each op is a Python loop over the slices, stacking what
it collects; inside ``ad.function`` the function is traced once into a
subgraph and the op becomes one node (``Scan``, ``MapFn``, ``Foldl``,
``Foldr``) that loops over however many slices each call brings
(``staged.py``). Gradients flow through every step, in every mode.
"""

from .. import dtypes, nest
from ..errors import InvalidArgumentError, OutOfRangeError
from ..ops import stack, zeros
from ..tensor import Tensor, convert_to_tensor
from .staged import current_tracer, stage, tensor_leaves, trace_function
from .while_loop import _same_structure

__all__ = ["scan", "map_fn", "foldl", "foldr"]


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Every partial result of ``a = fn(a, x)`` over ``elems``, stacked (``tf.scan``).

    Without ``initializer`` the first slice of ``elems`` is the first result
    (``fn`` must then return ``elems``' structure). ``reverse=True`` scans from
    the last slice; results stay at their slices' positions.

    >>> ad.scan(lambda a, x: a + x, ad.constant([1.0, 2.0, 3.0]), reverse=True).numpy()
    array([6., 5., 3.], dtype=float32)
    """
    return _sequence_op("Scan", fn, elems, initializer, reverse, collect=True)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``a = fn(a, x)`` over ``elems`` from the first slice; the last ``a`` (``tf.foldl``)."""
    return _sequence_op("Foldl", fn, elems, initializer, reverse=False, collect=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``a = fn(a, x)`` over ``elems`` from the last slice; the last ``a`` (``tf.foldr``).

    >>> float(ad.foldr(lambda a, x: a - x, ad.constant([1.0, 2.0, 3.0]), initializer=10.0))
    4.0
    """
    return _sequence_op("Foldr", fn, elems, initializer, reverse=True, collect=False)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``fn`` applied to each slice of ``elems``, the results stacked (``tf.map_fn``).

    Args:
        fn: a function of one slice (``elems``' structure).
        elems: a tensor, or a nested structure of tensors of one length.
        fn_output_signature: what ``fn`` returns when it is not ``elems``' structure and
            dtypes: a dtype, an ``ad.TensorSpec``, or a nested structure of them.
            (``dtype`` is its older name.)

    Raises:
        ValueError: scalar elems, lengths that differ, or ``fn`` returning another structure.
        InvalidArgumentError: ``fn`` returning another dtype than the signature says.

    >>> ad.map_fn(lambda x: ad.cast(x, ad.int32), ad.constant([1.5, 2.5]),
    ...           fn_output_signature=ad.int32).numpy()
    array([1, 2], dtype=int32)
    """
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat, n = _elements(elems, "map_fn")
    expected = _expected_outputs(signature, elems, flat)

    def run(flat_elems, call):
        results = [_checked_output(call(_slice(elems, flat_elems, i)), expected)
                   for i in range(_length(flat_elems))]
        return _stacked(results, expected, dtypes_of=expected)

    if current_tracer() is None:
        return run(flat, fn)
    example = _slice(elems, flat, 0) if n else _zero_slice(elems, flat)
    body = trace_function(lambda e: _checked_output(fn(e), expected), (example,), "fn")
    template = nest.pack_sequence_as(expected, tensor_leaves(body.outputs)) \
        if len(nest.flatten(expected)) == len(tensor_leaves(body.outputs)) else body.outputs
    empty = [((0,), _as_dtype(leaf).name) for leaf in nest.flatten(expected)]
    return stage("MapFn", lambda tensors, fns: run(tensors, fns[0]), flat, [body], template,
                 info={"empty": empty})


# ---- scan and the folds --------------------------------------------------------------
def _sequence_op(name, fn, elems, initializer, reverse, collect):
    flat, n = _elements(elems, name.lower())
    has_init = initializer is not None
    init = nest.map_structure(convert_to_tensor, initializer) if has_init else None
    init_flat = tensor_leaves(init) if has_init else []

    def run(tensors, call):
        elems_flat, start = tensors[:len(flat)], tensors[len(flat):]
        first = nest.pack_sequence_as(init, start) if has_init else None
        return _fold(call, elems, elems_flat, first, reverse, collect, name)

    if current_tracer() is None:
        return run(flat + init_flat, fn)
    if not has_init and n == 0:
        _fold(fn, elems, flat, None, reverse, collect, name)   # raises, as eagerly
    order = list(range(n))[::-1] if reverse else list(range(n))
    acc = init if has_init else _slice(elems, flat, order[0])
    x = _slice(elems, flat, order[0 if has_init else min(1, n - 1)]) if n else \
        _zero_slice(elems, flat)
    body = trace_function(fn, (acc, x), "fn")
    _same_structure(acc, body.outputs)
    # the node's outputs replace the template's tensors; made without ops, since the
    # body's tensors may not be op inputs outside it (tracing/body_scope.py)
    template = nest.map_structure(lambda t: Tensor(t._value[None]), body.outputs) \
        if collect else body.outputs
    empty = [((0,) + tuple(t.shape), t.dtype.name) for t in init_flat]
    return stage(name, lambda tensors, fns: run(tensors, fns[0]), flat + init_flat, [body],
                 template, {"reverse": reverse},
                 info={"elements": len(flat), "initializer": has_init, "reverse": reverse,
                       "collect": collect, "empty": empty})


def _fold(fn, elems, flat, acc, reverse, collect, name):
    n = _length(flat)
    order = list(range(n))[::-1] if reverse else list(range(n))
    results = []
    if acc is None:
        if n == 0:
            raise OutOfRangeError(f"{name}: elems is empty and there is no initializer: "
                                  f"tried to read from index 0 but array size is: 0")
        acc = _slice(elems, flat, order[0])
        order = order[1:]
        results.append(acc)
    template = acc
    for i in order:
        acc = fn(acc, _slice(elems, flat, i))
        _same_structure(template, acc)
        acc = nest.map_structure(convert_to_tensor, acc)
        results.append(acc)
    if not collect:
        return acc
    if reverse:
        results.reverse()
    return _stacked(results, template)


# ---- slices and stacking ---------------------------------------------------------------
def _elements(elems, op):
    flat = [convert_to_tensor(t) for t in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{op}: elems must hold at least one tensor")
    for t in flat:
        if t._value.ndim == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    lengths = {t._value.shape[0] for t in flat}
    if len(lengths) > 1:
        raise ValueError(f"{op}: the tensors in elems must share their first dimension; "
                         f"Dimensions {' and '.join(map(str, sorted(lengths)))} are not compatible")
    return flat, lengths.pop()


def _length(flat):
    return flat[0]._value.shape[0]


def _slice(elems, flat, i):
    return nest.pack_sequence_as(elems, [t[i] for t in flat])


def _zero_slice(elems, flat):
    return nest.pack_sequence_as(elems, [zeros(t._value.shape[1:], dtype=t.dtype) for t in flat])


def _stacked(results, template, dtypes_of=None):
    """The results stacked leaf by leaf; with no results, empty tensors of the template's
    shapes (or shape ``[0]`` where only a dtype is known, as TensorFlow gives)."""
    leaves = nest.flatten(template)
    if results:
        columns = zip(*[nest.flatten(r) for r in results])
        return nest.pack_sequence_as(template, [stack(list(c)) for c in columns])
    empty = []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            empty.append(zeros((0,) + tuple(leaf.shape), dtype=leaf.dtype))
        else:
            empty.append(zeros((0,), dtype=_as_dtype(leaf)))
    return nest.pack_sequence_as(template, empty)


# ---- map_fn's signature -----------------------------------------------------------------
def _as_dtype(leaf):
    return getattr(leaf, "dtype", None) or dtypes.as_dtype(leaf)


def _expected_outputs(signature, elems, flat):
    """A structure of dtypes (or TensorSpecs) fn's results must have."""
    if signature is None:
        return nest.pack_sequence_as(elems, [t.dtype for t in flat])
    return nest.map_structure(lambda s: s if hasattr(s, "shape") else dtypes.as_dtype(s),
                              signature)


def _checked_output(output, expected):
    _same_structure(expected, output)
    output = nest.map_structure(convert_to_tensor, output)
    for got, want in zip(nest.flatten(output), nest.flatten(expected)):
        if got.dtype != _as_dtype(want):
            raise InvalidArgumentError(
                f"map_fn: fn returned {got.dtype.name}, but the output signature says "
                f"{_as_dtype(want).name} (give fn_output_signature when fn's results differ "
                f"from elems in structure or dtype)")
    return nest.pack_sequence_as(expected, nest.flatten(output))
