"""Control-flow nodes in the file format: their subgraphs and layout as plain data.

A node of ``ad.cond``, ``ad.while_loop``, ``ad.scan`` and the others
(``autodiff/control_flow``) is saved as its op type and inputs, as any node,
plus a ``"control_flow"`` object::

    {"op": "While", "inputs": [["arg", 0], ["const", 0]],
     "control_flow": {"subgraphs": [{"label": "cond", "graph": {...}},
                                    {"label": "body", "graph": {...}}],
                      "own": [0, 1], "captures": [[], [0]],
                      "params": {"maximum_iterations": null},
                      "info": {"maximum_iterations": false}}}

Each subgraph is a graph in the same format (a loop inside a branch nests).
``own`` and ``captures`` are positions among the node's inputs
(``StagedOp.layout``); ``info`` is what the loop needs (``StagedOp.info``).
The gradient of such a node, taken inside the saved trace, is saved as
``{"op": "WhileGrad", "inputs": [...], "gradient_of": {"op": "While",
"control_flow": {...}, "floats": [0], "n_gs": 2}}``: the node it differentiates
and which of its inputs get gradients.

Loading rebuilds the node from the op type (``control_flow/loaded.py``)
after checking every part against the op; nothing from the file is run as
code.
"""

from ..control_flow.loaded import OP_TYPES, check, loaded_subgraph, rebuild
from ..tracing.graph import Node
from .checked_json import FormatError, check_keys, field, list_of, short_repr

__all__ = ["encode", "decode"]


def encode(writer, node, here):
    """The keys a control-flow node's entry gets besides ``op`` and ``inputs``."""
    op = node.primitive
    if op.gradient_of is not None:
        forward, (n_inputs, floats, n_gs) = op.gradient_of
        return {"gradient_of": {"op": forward.name, "floats": list(floats), "n_gs": n_gs,
                                "control_flow": _body(writer, forward, here)}}
    return {"control_flow": _body(writer, op, here)}


def _body(writer, op, here):
    from .file_format import encode_param
    if op.layout is None or op.name not in OP_TYPES:
        raise ValueError(f"cannot save {here}: control-flow op {op.name!r} has no layout a "
                         f"loader could rebuild it from")
    own, captures = op.layout
    return {"subgraphs": [{"label": sub.label,
                           "graph": writer.graph(sub.graph, f"{here}.{sub.label}")}
                          for sub in op.subgraphs],
            "own": list(own), "captures": [list(where) for where in captures],
            "params": {k: encode_param(v, f"{here} param {k!r}") for k, v in op.params.items()},
            "info": {k: encode_param(v, f"{here} info {k!r}") for k, v in op.info.items()}}


def decode(reader, entry, op_type, inputs, here):
    """The Node a control-flow entry describes, checked (FormatError) before anything runs."""
    if "gradient_of" in entry:
        check_keys(entry, here, ("op", "inputs", "gradient_of"))
        where = f"{here}.gradient_of"
        spec = field(entry, "gradient_of", dict, here)
        check_keys(spec, where, ("op", "floats", "n_gs", "control_flow"))
        forward_type = field(spec, "op", str, where)
        floats = [_position(k, f"{where}.floats") for k in field(spec, "floats", list, where)]
        n_gs = _position(field(spec, "n_gs", int, where), f"{where}.n_gs")
        n_inputs = len(inputs) - n_gs
        if op_type != f"{forward_type}Grad" or n_inputs < 0 or \
                any(k >= n_inputs for k in floats) or len(set(floats)) != len(floats):
            raise FormatError(f"{where}: {op_type} with {len(inputs)} inputs cannot be the "
                              f"gradient of {short_repr(forward_type)} with {n_gs} cotangents "
                              f"and floats {short_repr(floats)}")
        forward = _rebuilt(reader, spec, forward_type, n_inputs, where)
        return Node(forward.gradient_op(n_inputs, floats, n_gs), inputs, {})
    check_keys(entry, here, ("op", "inputs", "control_flow"))
    return Node(_rebuilt(reader, entry, op_type, len(inputs), here), inputs, {})


def _rebuilt(reader, entry, op_type, n_inputs, here):
    from .file_format import decode_param
    if op_type not in OP_TYPES:
        raise FormatError(f"{here}.op: {short_repr(op_type)} is not a control-flow op "
                          f"({', '.join(OP_TYPES)})")
    where = f"{here}.control_flow"
    body = field(entry, "control_flow", dict, here)
    check_keys(body, where, ("subgraphs", "own", "captures", "params", "info"))
    subgraphs = []
    for k, sub in enumerate(field(body, "subgraphs", list, where)):
        at = f"{where}.subgraphs[{k}]"
        if not isinstance(sub, dict):
            raise FormatError(f"{at}: expected an object, got {short_repr(sub)}")
        check_keys(sub, at, ("label", "graph"))
        subgraphs.append(loaded_subgraph(reader.graph(field(sub, "graph", dict, at), f"{at}.graph"),
                                         field(sub, "label", str, at)))
    own = [_position(k, f"{where}.own") for k in field(body, "own", list, where)]
    captures = [[_position(k, f"{where}.captures") for k in list_of(c, f"{where}.captures")]
                for c in field(body, "captures", list, where)]
    params, info = ({k: decode_param(v, f"{where}.{part}.{k}")
                     for k, v in field(body, part, dict, where).items()} for part in ("params", "info"))
    reason = check(op_type, subgraphs, (own, captures), n_inputs, info)
    if reason is not None:
        raise FormatError(f"{where}: {reason}")
    return rebuild(op_type, subgraphs, (own, captures), params, info)


def _position(value, where):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise FormatError(f"{where}: {short_repr(value)} is not a count or a position")
    return value
