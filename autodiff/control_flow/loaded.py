"""Control-flow nodes rebuilt from plain data: how a loaded saved model runs them.

A saved model (``autodiff/saved_model``) stores a control-flow node as its
op type, its subgraphs, where its inputs go (``StagedOp.layout``) and the
few facts its loop needs (``StagedOp.info``); no code. ``rebuild`` makes
the node again from those, with the eager code of the op it came from
running on flat lists of tensors (the subgraphs take and return their
tensors in order; the Python structures around them are not needed)::

    If       run the first subgraph if the predicate holds, else the second
    Case     run subgraph ``index`` (the last one for an index out of range)
    While    loop variables, then (with maximum_iterations) the limit
    Scan, Foldl, Foldr   the elements, then the initializer's tensors
    MapFn    the elements

``check`` refuses, before anything runs, a layout or info that does not
fit the op (a file is not trusted). Gradients and retracing work as for a
node staged in this process: a rebuilt node is a StagedOp.
"""

import itertools

from .. import dtypes
from .cond import _chosen, _truth
from .sequences import _checked_output, _fold, _stacked
from .staged import Subgraph, staged_op, tensor_leaves

__all__ = ["OP_TYPES", "rebuild", "check", "loaded_subgraph"]

# op type -> (number of subgraphs, or None for "one or more"; the info keys it takes)
OP_TYPES = {"If": (2, ()), "Case": (None, ()), "While": (2, ("maximum_iterations",)),
            "MapFn": (1, ("empty",)),
            **{name: (1, ("elements", "initializer", "reverse", "collect", "empty"))
               for name in ("Scan", "Foldl", "Foldr")}}


def loaded_subgraph(graph, label):
    """A Subgraph read from a file (its captures are the node's inputs, laid out)."""
    return Subgraph(graph, [], None, label)


def check(op_type, subgraphs, layout, n_inputs, info):
    """The reason a rebuilt node could not run, or None when it fits (see the module docstring).

    Args:
        op_type: one of ``OP_TYPES``.
        subgraphs: the Subgraphs read.
        layout: ``(own, captures)`` positions, as ``StagedOp.layout``.
        n_inputs: how many inputs the node has.
        info: the info read.
    """
    count, keys = OP_TYPES[op_type]
    if (count is None and not subgraphs) or (count is not None and len(subgraphs) != count):
        return f"{op_type} takes {count or 'one or more'} subgraphs, got {len(subgraphs)}"
    if set(info) != set(keys):
        return f"{op_type} takes info {sorted(keys)}, got {sorted(info)}"
    own, captures = layout
    if len(captures) != len(subgraphs):
        return f"{len(captures)} capture lists for {len(subgraphs)} subgraphs"
    for k in list(own) + [k for where in captures for k in where]:
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < n_inputs:
            return f"position {k!r} is not one of the node's {n_inputs} inputs"
    arguments = _arguments(op_type, len(own), info)
    if isinstance(arguments, str):
        return arguments
    for sub, where, n in zip(subgraphs, captures, arguments):
        if len(sub.graph.arg_specs) != n + len(where):
            return (f"subgraph {sub.label!r} takes {len(sub.graph.arg_specs)} arguments, but "
                    f"the node gives it {n} and {len(where)} captured")
    return None


def _arguments(op_type, n_own, info):
    """How many arguments (before its captures) each subgraph takes, or why the info is wrong."""
    if op_type in ("If", "Case"):
        return itertools.repeat(0)   # branches take no arguments, only captures
    if op_type == "While":
        if not isinstance(info["maximum_iterations"], bool):
            return "maximum_iterations must be true or false"
        n = n_own - info["maximum_iterations"]
        return [n, n]
    if not all(isinstance(e, tuple) and len(e) == 2 and isinstance(e[1], str)
               and isinstance(e[0], tuple) and all(isinstance(d, int) and d >= 0 for d in e[0])
               for e in info["empty"]):
        return "empty must be a list of [shape, dtype] pairs"
    for _, name in info["empty"]:
        try:
            dtypes.as_dtype(name)
        except (TypeError, ValueError):
            return f"{name!r} is not a dtype"
    if op_type == "MapFn":
        return [n_own]
    elements = info["elements"]
    if not isinstance(elements, int) or not 0 < elements <= n_own or \
            not all(isinstance(info[k], bool) for k in ("initializer", "reverse", "collect")):
        return "elements must count some of the inputs; initializer, reverse, collect are bools"
    acc = n_own - elements if info["initializer"] else elements
    if not info["initializer"] and n_own != elements:
        return "an initializer's tensors are given, but initializer is false"
    return [acc + elements]


def rebuild(op_type, subgraphs, layout, params, info):
    """The StagedOp a saved node describes (``check`` it first)."""
    return staged_op(op_type, _RUNS[op_type](info), subgraphs, layout, params, info)


def _if(info):
    return lambda tensors, fns: tensor_leaves(fns[0]() if _truth(tensors[0], "If") else fns[1]())


def _case(info):
    return lambda tensors, fns: tensor_leaves(fns[_chosen(tensors[0], len(fns))]())


def _while(info):
    limited = info["maximum_iterations"]

    def run(tensors, fns):
        values = list(tensors[:len(tensors) - limited])
        limit = int(tensors[-1]) if limited else None
        i = 0
        while (limit is None or i < limit) and _truth(tensor_leaves(fns[0](*values))[0],
                                                              "while_loop cond"):
            values = tensor_leaves(fns[1](*values))
            i += 1
        return values
    return run


def _sequence(name):
    def make(info):
        n = info["elements"]

        def run(tensors, fns):
            elems, start = list(tensors[:n]), list(tensors[n:])
            return _fold(lambda acc, x: tensor_leaves(fns[0](acc, x)), elems, elems,
                         start if info["initializer"] else None, info["reverse"],
                         info["collect"], name)
        return run
    return make


def _map_fn(info):
    expected = [dtypes.as_dtype(dtype) for _, dtype in info["empty"]]

    def run(tensors, fns):
        rows = [_checked_output(tensor_leaves(fns[0]([t[i] for t in tensors])), expected)
                for i in range(tensors[0]._value.shape[0])]
        return _stacked(rows, expected, dtypes_of=expected)
    return run


_RUNS = {"If": _if, "Case": _case, "While": _while, "MapFn": _map_fn,
         **{name: _sequence(name) for name in ("Scan", "Foldl", "Foldr")}}
