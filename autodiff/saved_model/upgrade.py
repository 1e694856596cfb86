"""Lifting a saved model of an older format version to the current one, before it is checked.

Version 2 differs from version 1 in one pair of ops (commit a34adef, ``ops/recurrent.py``):
``LSTMGates`` had three outputs ``(h, c, act)``, ``act`` being ``[i, f, g, o, tanh(c)]``
(5 units wide), and now has four, ``(h, c, act, tc)`` (the 4 gates, and ``tanh(c)``);
``LSTMGatesGrad`` took five inputs ``(act, c_prev, dh, dc, d_act)`` and now takes seven,
``(act, tc, c_prev, dh, dc, d_act, d_tc)``. A version-1 graph that holds a gradient through
an LSTM (a training step, any function that calls ``tape.gradient`` through
``keras.layers.LSTM``) would no longer fit the ops. ``to_current`` rewrites such a graph's
nodes in the JSON, before ``file_format.Reader`` checks and rebuilds them, with exact ops
only (a concatenation and slices copy values), so the model computes the same bits as the
code that saved it::

    h, c, act5 = LSTMGates(z, c_prev)                             # version 1
    dz, dc_prev = LSTMGatesGrad(act5, c_prev, dh, dc, d_act5)

    h, c, act, tc = LSTMGates(z, c_prev)                          # version 2
    act5 = ConcatV2(act, tc, axis=-1)        # only where another op reads act5
    d_act = StridedSlice(d_act5, key=[..., :4 units])
    d_tc = StridedSlice(d_act5, key=[..., 4 units:])
    dz, dc_prev = LSTMGatesGrad(act, tc, c_prev, dh, dc, d_act, d_tc)

The slices need ``units`` and the concatenation the rank, which a graph's nodes do not
record: ``_Shapes`` reads them from the shapes the file does record (arguments, constants,
``BroadcastTo``/``Reshape`` params) and from how the LSTM ops pass them on. A version-1
LSTM gradient whose shapes cannot be read that way is refused with a FormatError.

Models saved between commit a34adef and the change to version 2 say version 1 but already
hold the new ops; a graph with a 7-input ``LSTMGatesGrad`` or a reference to an
``LSTMGates`` output 3 is therefore left as it is.

Only what is well formed is rewritten; everything else is left as it is for the Reader to
refuse, and no reference changes from valid to invalid or back (node indices move by the
nodes inserted before them, in order). Nothing here runs anything from the file.
"""

from .checked_json import FormatError, short_text

__all__ = ["to_current"]

GATES, GATES_GRAD = "LSTMGates", "LSTMGatesGrad"
V1_GATES_OUTPUTS, V1_GRAD_INPUTS = 3, 5


def to_current(document, version):
    """The parsed ``saved_model.json`` of format ``version`` (1 or 2), rewritten in place
    as the current version (2) reads it; returns it.

    >>> from autodiff.saved_model.upgrade import to_current
    >>> doc = {"functions": {}, "constants": []}
    >>> to_current(doc, 1) is doc
    True
    """
    if version == 1 and isinstance(document.get("functions"), dict):
        constants = document.get("constants")
        constants = constants if isinstance(constants, list) else []
        for name, entry in document["functions"].items():
            traces = entry.get("traces") if isinstance(entry, dict) else None
            for k, trace in enumerate(traces if isinstance(traces, list) else []):
                if isinstance(trace, dict):
                    _lift_graph(trace.get("graph"), constants,
                                f"$.functions.{short_text(name, 40)}.traces[{k}].graph")
    return document


def _lift_graph(graph, constants, where):
    """Rewrites one graph's version-1 LSTM nodes (and those of the graphs nested in it)."""
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    if not isinstance(nodes, list):
        return
    for i, node in enumerate(nodes):
        for at, nested in _nested_graphs(node):
            _lift_graph(nested, constants, f"{where}.nodes[{i}].{at}")
    gates = {i for i, node in enumerate(nodes) if _is(node, GATES)}
    grads = {i for i, node in enumerate(nodes)
             if _is(node, GATES_GRAD) and len(node["inputs"]) == V1_GRAD_INPUTS}
    if not (gates or grads) or _has_version_2_ops(graph, nodes, gates):
        return
    n = len(nodes)

    def reads_act5(i, k, ref):   # a node ref to a version-1 act that is not a gradient's act
        return _node_ref(ref, n) is not None and ref[1] in gates and ref[2] == 2 \
            and not (i in grads and k == 0)

    concat = {ref[1] for i, node in enumerate(nodes) if isinstance(node, dict)
              for k, ref in enumerate(_inputs(node)) if reads_act5(i, k, ref)}
    concat |= {ref[1] for ref in _output_refs(graph.get("outputs")) if reads_act5(n, 0, ref)}
    before = [0] * n   # inserted nodes before node i: the slices of a gradient's inputs
    for i in grads:
        before[i] = 2 if _gates_act(nodes[i]["inputs"][0], i, gates) is not None else 4
    new_index, shift = [], 0
    for i in range(n):
        shift += before[i]
        new_index.append(i + shift)
        shift += i in concat
    total = shift

    def moved(ref):
        """A node reference in the new numbering (an invalid one stays invalid)."""
        if _node_ref(ref, None) is None:
            return ref
        j, out = ref[1], ref[2]
        if j >= n:
            return ["node", j + total, out]
        if j in concat and out == 2:
            return ["node", new_index[j] + 1, 0]   # the concatenation after it
        if j in gates and out >= V1_GATES_OUTPUTS:
            out += 1                                # past version 2's four outputs too
        return ["node", new_index[j], out]

    shapes = _Shapes(graph, constants, nodes, gates, grads)
    lifted = []
    for i, node in enumerate(nodes):
        if i in grads:
            lifted += _lift_grad(node, i, gates, shapes, new_index, moved, len(lifted),
                                 f"{where}.nodes[{i}]")
        elif isinstance(node, dict) and isinstance(node.get("inputs"), list):
            lifted.append(dict(node, inputs=[moved(r) for r in node["inputs"]]))
        else:
            lifted.append(node)
        if i in concat:
            rank = shapes.rank_of_gates(i)
            if rank is None:
                raise _unknown(f"{where}.nodes[{i}]", "the rank of its outputs",
                               "an LSTMGates node whose 5-unit act is read")
            lifted.append({"op": "ConcatV2", "params": {"axis": rank - 1},
                           "inputs": [["node", new_index[i], 2], ["node", new_index[i], 3]]})
    graph["nodes"] = lifted
    if "outputs" in graph:
        graph["outputs"] = _map_output_refs(graph["outputs"], moved)


def _has_version_2_ops(graph, nodes, gates):
    """Whether the graph already holds the version-2 LSTM ops: a 7-input gradient, or a
    reference to a gates node's ``tc`` (output 3). Models saved between a34adef and the
    change of version number say version 1 but were written with the new ops."""
    refs = [ref for node in nodes if isinstance(node, dict) for ref in _inputs(node)]
    return any(_is(node, GATES_GRAD) and len(node["inputs"]) == 7 for node in nodes) or \
        any(_node_ref(ref, None) is not None and ref[1] in gates and ref[2] == 3
            for ref in refs + _output_refs(graph.get("outputs")))


def _lift_grad(node, i, gates, shapes, new_index, moved, position, where):
    """The nodes replacing version-1 gradient node ``i``: slices, then the 7-input op."""
    act5, c_prev, dh, dc, d_act5 = node["inputs"]
    units = shapes.units_of_grad(i)
    if units is None:
        raise _unknown(where, "its units", "an LSTM gradient (LSTMGatesGrad of 5 inputs)")
    extra = []

    def cut(ref, start, stop):
        extra.append({"op": "StridedSlice", "inputs": [moved(ref)],
                      "params": {"key": ["...", ["slice", start, stop, None]]}})
        return ["node", position + len(extra) - 1, 0]

    j = _gates_act(act5, i, gates)
    if j is not None:
        act, tc = ["node", new_index[j], 2], ["node", new_index[j], 3]
    else:
        act, tc = cut(act5, 0, 4 * units), cut(act5, 4 * units, 5 * units)
    d_act, d_tc = cut(d_act5, 0, 4 * units), cut(d_act5, 4 * units, 5 * units)
    inputs = [act, tc, moved(c_prev), moved(dh), moved(dc), d_act, d_tc]
    return extra + [dict(node, inputs=inputs)]


class _Shapes:
    """The static shapes a version-1 graph's LSTM nodes need, read from what the file records.

    Shapes are known for arguments and constants (the file records them), ``BroadcastTo``
    and ``Reshape`` (their ``shape`` param), and the LSTM ops' outputs from their inputs:
    ``h``, ``c`` and ``dc_prev`` are shaped like ``c_prev``, ``act`` 5 units wide, ``dz`` 4.
    One pass in node order, so a long sequence costs one step a node.
    """

    def __init__(self, graph, constants, nodes, gates, grads):
        self.args = graph.get("args") if isinstance(graph.get("args"), list) else []
        self.constants, self.nodes, self.known = constants, nodes, {}
        for i, node in enumerate(nodes):
            if i in gates:
                state = self._state(i, ((1, 1), (0, 4)))
                if state is not None:
                    self.known.update({(i, 0): state, (i, 1): state, (i, 2): _wide(state, 5)})
            elif i in grads:
                state = self._state(i, ((1, 1), (2, 1), (3, 1), (0, 5), (4, 5)))
                if state is not None:
                    self.known.update({(i, 0): _wide(state, 4), (i, 1): state})
            elif _is(node, "BroadcastTo") or _is(node, "Reshape"):
                params = node.get("params")
                shape = _shape(params.get("shape") if isinstance(params, dict) else None)
                if shape is not None:
                    self.known[(i, 0)] = shape

    def rank_of_gates(self, i):
        state = self.known.get((i, 0))
        return None if state is None else len(state)

    def units_of_grad(self, i):
        state = self.known.get((i, 1))
        return None if state is None else state[-1]

    def _state(self, i, candidates):
        """The shape of node ``i``'s state (``c_prev``): from the first of its inputs whose
        shape is known, as ``(input position, how many units wide it is)``."""
        inputs = self.nodes[i]["inputs"]
        for position, width in candidates:
            shape = self.of(inputs[position], i) if position < len(inputs) else None
            if shape and shape[-1] % width == 0:
                return shape[:-1] + (shape[-1] // width,)
        return None

    def of(self, ref, i):
        """The shape ``ref`` (an input of node ``i``) points at, when known; else None."""
        if not (isinstance(ref, list) and len(ref) in (2, 3) and _index(ref[1])):
            return None
        kind, index = ref[0], ref[1]
        if kind == "node":
            return self.known.get((index, ref[2])) if _node_ref(ref, i) is not None else None
        table = {"arg": self.args, "const": self.constants}.get(kind) \
            if isinstance(kind, str) else None   # (a list there is the Reader's to refuse)
        if len(ref) != 2 or table is None or index >= len(table) or \
                not isinstance(table[index], dict):
            return None
        return _shape(table[index].get("shape"))


def _is(node, op):
    return isinstance(node, dict) and node.get("op") == op and \
        isinstance(node.get("inputs"), list) and set(node) <= {"op", "inputs", "params"}


def _inputs(node):
    return node["inputs"] if isinstance(node.get("inputs"), list) else []


def _index(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _node_ref(ref, before):
    """``ref`` if it is a well-formed node reference (to a node before ``before``)."""
    if isinstance(ref, list) and len(ref) == 3 and ref[0] == "node" and _index(ref[1]) \
            and _index(ref[2]) and (before is None or ref[1] < before):
        return ref
    return None


def _gates_act(ref, i, gates):
    """The version-1 gates node whose ``act`` ``ref`` reads (from node ``i``), or None."""
    ref = _node_ref(ref, i)
    return ref[1] if ref is not None and ref[1] in gates and ref[2] == 2 else None


def _shape(value):
    if isinstance(value, list) and value and all(_index(d) for d in value):
        return tuple(value)
    return None


def _wide(state, n):
    return state[:-1] + (n * state[-1],)


def _unknown(where, what, subject):
    return FormatError(f"{where}: {subject}, saved in version 1 (before LSTMGates returned "
                       f"tanh(c) apart), cannot be upgraded to version 2: {what} cannot be "
                       f"read from the shapes the file records")


def _nested_graphs(node):
    """``(JSON path, graph)`` for each graph a node holds: control-flow bodies, a custom
    gradient's graph, the bodies of the control-flow op a gradient node differentiates."""
    if not isinstance(node, dict):
        return
    custom = node.get("custom_gradient")
    if isinstance(custom, dict) and "graph" in custom:
        yield "custom_gradient.graph", custom["graph"]
    for key, at in (("control_flow", "control_flow"), ("gradient_of", "gradient_of.control_flow")):
        body = node.get(key)
        if key == "gradient_of" and isinstance(body, dict):
            body = body.get("control_flow")
        subgraphs = body.get("subgraphs") if isinstance(body, dict) else None
        for k, sub in enumerate(subgraphs if isinstance(subgraphs, list) else []):
            if isinstance(sub, dict) and "graph" in sub:
                yield f"{at}.subgraphs[{k}].graph", sub["graph"]


def _output_refs(data):
    refs = []
    _map_output_refs(data, lambda ref: refs.append(ref) or ref)
    return refs


def _map_output_refs(data, change):
    """A graph's ``outputs`` structure (``{"list": [...]}``, ``{"ref": ...}``, ...) with
    ``change`` applied to each reference."""
    if not (isinstance(data, dict) and len(data) == 1):
        return data
    ((kind, body),) = data.items()
    if kind == "ref":
        return {"ref": change(body)}
    if kind in ("list", "tuple") and isinstance(body, list):
        return {kind: [_map_output_refs(item, change) for item in body]}
    if kind == "dict" and isinstance(body, list):
        return {kind: [[pair[0], _map_output_refs(pair[1], change)]
                       if isinstance(pair, list) and len(pair) == 2 else pair for pair in body]}
    return data
