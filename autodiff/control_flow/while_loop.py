"""``ad.while_loop``: repeat ``body`` while ``cond`` holds, on a structure of loop variables.

    >>> i, total = ad.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i),
    ...                          (ad.constant(0), ad.constant(0)))
    >>> int(i), int(total)
    (4, 6)

Eagerly it is Python's ``while``. Inside ``ad.function`` the condition and
the body are traced into subgraphs and the loop becomes one ``While`` node
that loops on every call as often as that call's values say
(``staged.py``). There, as in TensorFlow, every loop variable must keep its
dtype, and its shape too unless ``shape_invariants`` allows it to change
(``None`` for a size that varies).

Gradients: a tape outside the traced function sees every iteration's ops,
so the backward pass uses each iteration's values, kept on the tape (as
TensorFlow's accumulators keep them); a tape inside the traced function
differentiates a ``While`` node by running the loop again under a tape of
its own (it recomputes the forward pass).
"""

from .. import nest
from ..tensor import Tensor, TensorShape, convert_to_tensor
from .cond import _scalar_bool, _truth
from .staged import current_tracer, stage, tensor_leaves, trace_function
from .tensor_array import (flow_invariants, from_flows, has_tensor_arrays, settle_element_shapes,
                           to_flows)

__all__ = ["while_loop"]


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Runs ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (``tf.while_loop``).

    Args:
        cond: a function of the loop variables returning a scalar boolean tensor.
        body: a function of the loop variables returning new values in the same
            structure (a single loop variable may be returned bare).
        loop_vars: a list or tuple (nested structures allowed) of tensors, or one tensor.
        shape_invariants: the shapes the loop variables keep (same structure; a
            ``None`` size may change from iteration to iteration).
        parallel_iterations, back_prop, swap_memory: accepted, as in TensorFlow;
            they change nothing here (iterations run one after another).
        maximum_iterations: stop after this many iterations even if ``cond`` holds.

    Returns:
        The loop variables after the last iteration, in ``loop_vars``' structure.

    Raises:
        TypeError: ``cond`` or ``body`` is not callable; inside ``ad.function``, a loop
            variable changes dtype.
        ValueError: no loop variables, ``body`` returns another structure, a
            non-positive ``parallel_iterations``, or (inside ``ad.function``) a loop
            variable changes shape outside its ``shape_invariants``.
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if not isinstance(parallel_iterations, int) or parallel_iterations <= 0:
        raise ValueError("'parallel_iterations' must be a positive integer.")
    single = not isinstance(loop_vars, (list, tuple, dict))
    if loop_vars is None or (not single and not nest.flatten(loop_vars)):
        raise ValueError("'loop_vars' must be provided.")
    structure = [loop_vars] if single else loop_vars
    invariants = None
    if shape_invariants is not None:
        invariants = [shape_invariants] if single else shape_invariants
        invariants = _shapes(invariants, structure)

    def repack(new):
        if single or (not isinstance(new, (list, tuple, dict)) and len(nest.flatten(structure)) == 1):
            new = nest.pack_sequence_as(structure, [new]) if not isinstance(new, (list, tuple)) \
                else new
        _same_structure(structure, new)
        return nest.pack_sequence_as(structure, nest.flatten(new))

    def loop(values, cond_fn, body_fn, limit):
        return _run(values, cond_fn, body_fn, limit, repack, invariants, structure)

    if current_tracer() is None:
        limit = None if maximum_iterations is None else int(maximum_iterations)
        result = loop(structure, cond, body, limit)
        return result[0] if single else result
    if has_tensor_arrays(structure):
        result = _loop_over_flows(structure, cond, body, maximum_iterations, invariants, repack)
    else:
        result = _staged_loop(structure, cond, body, maximum_iterations, invariants, repack, loop)
    return result[0] if single else result


def _loop_over_flows(structure, cond, body, maximum_iterations, invariants, repack):
    """A staged loop whose variables include TensorArrays: the loop carries each array's
    buffer, free to grow along its first dimension (``tensor_array.py``), as TensorFlow's
    while_loop carries an array's flow."""
    template = settle_element_shapes(structure, lambda *vs: repack(body(*vs)))
    flows = list(nest.flatten(to_flows(template)))
    flow_shapes = flow_invariants(template, invariants)

    def flow_cond(*vs):
        return cond(*from_flows(template, vs))

    def flow_body(*vs):
        return nest.flatten(to_flows(repack(body(*from_flows(template, vs)))))

    def flow_repack(new):
        _same_structure(flows, new)
        return list(new)

    def flow_loop(values, cond_fn, body_fn, limit):
        return _run(values, cond_fn, body_fn, limit, flow_repack, flow_shapes, flows)

    result = _staged_loop(flows, flow_cond, flow_body, maximum_iterations, flow_shapes,
                          flow_repack, flow_loop)
    return from_flows(template, nest.pack_sequence_as(template, result))


def _run(values, cond_fn, body_fn, limit, repack, invariants, structure):
    i = 0
    while (limit is None or i < limit) and _truth(cond_fn(*values), "while_loop cond"):
        values = repack(body_fn(*values))
        if invariants is not None:
            _check_shapes(structure, values, invariants)
        i += 1
    return values


def _staged_loop(structure, cond, body, maximum_iterations, invariants, repack, loop):
    """The loop as one ``While`` node (inside ``ad.function``)."""
    values = nest.map_structure(convert_to_tensor, structure)
    cond_graph = trace_function(cond, values, "cond")
    if not isinstance(cond_graph.outputs, Tensor):
        raise TypeError(f"while_loop: cond must return a scalar boolean tensor, got "
                        f"{cond_graph.outputs!r}")
    _scalar_bool(cond_graph.outputs, "while_loop", "the value cond returns")
    body_graph = trace_function(lambda *vs: repack(body(*vs)), values, "body")
    _check_first_iteration(values, body_graph.outputs, invariants)
    limit = [] if maximum_iterations is None else [convert_to_tensor(maximum_iterations)]

    def run(tensors, fns):
        start = nest.pack_sequence_as(values, tensors[:len(tensors) - len(limit)])
        bound = None if not limit else int(tensors[-1])
        return loop(start, fns[0], fns[1], bound)

    return stage("While", run, tensor_leaves(values) + limit, [cond_graph, body_graph], values,
                 {"maximum_iterations": None if not limit else "input"},
                 info={"maximum_iterations": bool(limit)})


def _shapes(invariants, structure):
    flat = nest.flatten(invariants)
    if len(flat) != len(nest.flatten(structure)):
        raise ValueError(f"while_loop: shape_invariants {invariants!r} do not match the "
                         f"structure of loop_vars {structure!r}")
    return [None if s is None else TensorShape(s) for s in flat]


def _check_shapes(structure, values, invariants):
    for k, (value, shape) in enumerate(zip(nest.flatten(values), invariants)):
        if shape is not None and isinstance(value, Tensor) and not _fits(shape, value.shape):
            raise ValueError(f"while_loop: loop variable {k} has shape {tuple(value.shape)}, "
                             f"which is not compatible with its shape invariant {shape}")


def _check_first_iteration(before, after, invariants):
    """TensorFlow's checks on a staged loop: same dtypes and (invariants aside) shapes."""
    for k, (a, b) in enumerate(zip(nest.flatten(before), nest.flatten(after))):
        if b is None or a.dtype != b.dtype:
            raise TypeError(f"while_loop: loop var {k} enters the loop with type {a.dtype!r} "
                            f"but has type {getattr(b, 'dtype', None)!r} after 1 iteration. "
                            f"Loop var {k} type should remain constant.")
        invariant = None if invariants is None else invariants[k]
        if invariant is None:
            if tuple(a.shape) != tuple(b.shape):
                raise ValueError(
                    f"while_loop: input tensor {k} enters the loop with shape {tuple(a.shape)}, "
                    f"but has shape {tuple(b.shape)} after one iteration. To allow the shape to "
                    f"vary across iterations, use the `shape_invariants` argument of "
                    f"ad.while_loop to specify a less-specific shape.")
        elif not _fits(invariant, a.shape) or not _fits(invariant, b.shape):
            raise ValueError(f"while_loop: loop variable {k} has shape {tuple(b.shape)} after "
                             f"one iteration, not compatible with its shape invariant {invariant}")


def _fits(invariant, shape):
    """Whether ``shape`` fits a shape invariant (a None size fits any size)."""
    return len(invariant) == len(shape) and all(d is None or d == s for d, s in zip(invariant, shape))


def _same_structure(expected, got):
    def blank(s):
        return nest.pack_sequence_as(s, [0] * len(nest.flatten(s)))
    try:
        same = _normalized(blank(expected)) == _normalized(blank(got))
    except (TypeError, ValueError):
        same = False
    if not same:
        raise ValueError(f"while_loop: body must return the same nested structure as loop_vars."
                         f"\n\nFirst structure: {expected!r}\n\nSecond structure: {got!r}")


def _normalized(structure):
    """Lists and tuples compared alike at any depth (TensorFlow compares the top level so)."""
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "_fields"):
        return ("seq", [_normalized(s) for s in structure])
    if isinstance(structure, dict):
        return ("dict", sorted((k, _normalized(v)) for k, v in structure.items()))
    return structure
