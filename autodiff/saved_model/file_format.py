"""The saved-model file format: graphs to JSON and back, checking everything read.

``save.py`` documents the format and does the file handling; this
module converts between in-memory Graphs (``tracing/graph.py``) and their JSON
form, and validates a loaded file *before* anything runs: every op type
must be registered in this process, every reference must point at
something that exists and came earlier, every array must be in the
``.npz`` with the shape and dtype the JSON promises. A bad file gives a
``FormatError`` (a ValueError, ``checked_json.py``) naming the file and the JSON path of the
problem, e.g. ``.../saved_model.json: $.functions.f.traces[0].graph.nodes[2].op:
op type 'Foo' is not registered``. Loading never evaluates code from the files:
op types are looked up in the registry, params are plain data.

Every key is checked, not only read: an object with a key the format does
not define (``"custom_gra`ient"``, one flipped bit away from
``"custom_gradient"``) or with one key twice is refused, as are params the
op's forward would not accept. Names read from a file appear in messages
and JSON paths cut short (a name may be a megabyte long).

Params become JSON with tuples written as lists; reading turns every list
back into a tuple (ops such as ``Sum`` expect tuple axes). A non-finite
float param is written ``{"float": "nan"}`` (JSON has no NaN).
"""

import inspect
import math
import uuid

from ..tracing.graph import ASSIGN, CustomGradient, Graph, Node, Ref, custom_gradient_primitive
from ..registry import REGISTRY, Primitive
from . import control_flow
from .checked_json import (FormatError, check_keys, decode_dtype, decode_shape, field, list_of,
                           short_repr, short_text)

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "OLDEST_VERSION", "JSON_FILE", "ARRAYS_FILE",
           "IDENTITY_N", "Writer", "Reader", "FormatError"]

FORMAT_NAME = "autodiff.saved_model"
FORMAT_VERSION = 2     # written by save; 2 since LSTMGates returns tanh(c) apart (upgrade.py)
OLDEST_VERSION = 1     # the oldest that load reads (upgrade.py lifts it)
JSON_FILE = "saved_model.json"
ARRAYS_FILE = "variables.npz"

# TensorFlow's IdentityN with no gradient registered: what a custom-gradient
# call becomes when saved without its gradient. Kept out of the registry
# (an op there must declare a gradient); the loader knows it by name.
IDENTITY_N = Primitive("IdentityN", lambda xp, *arrays: tuple(arrays), None, saves="shapes",
                       dtype_args=(), n_outputs=None, register=False,
                       doc="no gradient: a custom gradient saved without experimental_custom_gradients")


# ---- params and structures ------------------------------------------------------

def encode_param(value, where):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, (tuple, list)):
        return [encode_param(v, where) for v in value]
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a NumPy scalar
        return encode_param(value.item(), where)
    raise ValueError(f"cannot save {where}: a param of type {type(value).__name__} ({value!r}) "
                     f"is not plain data (None, bool, int, float, str, tuples of them)")


def decode_param(value, where):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return tuple(decode_param(v, where) for v in value)
    if isinstance(value, dict) and set(value) == {"float"} and value["float"] in ("nan", "inf", "-inf"):
        return float(value["float"])
    raise FormatError(f"{where}: {short_repr(value)} is not a valid param")


def encode_structure(structure, leaf, where):
    """Nested lists/tuples/dicts as ``{"list": [...]}`` etc.; ``leaf(x)`` for the rest."""
    if isinstance(structure, dict):
        if not all(isinstance(k, str) for k in structure):
            raise ValueError(f"cannot save {where}: dict keys must be strings")
        return {"dict": [[k, encode_structure(structure[k], leaf, where)] for k in sorted(structure)]}
    if isinstance(structure, (list, tuple)):
        kind = "list" if isinstance(structure, list) else "tuple"
        return {kind: [encode_structure(v, leaf, where) for v in structure]}
    return leaf(structure)


def decode_structure(data, leaf, where):
    if not isinstance(data, dict) or len(data) != 1:
        raise FormatError(f"{where}: expected an object with one key, got {short_repr(data)}")
    ((kind, body),) = data.items()
    if kind in ("list", "tuple"):
        items = [decode_structure(v, leaf, f"{where}[{i}]")
                 for i, v in enumerate(list_of(body, where))]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        pairs = list_of(body, where)
        if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            raise FormatError(f"{where}: a dict must be a list of [key, value] pairs")
        if len({k for k, _ in pairs}) != len(pairs):
            raise FormatError(f"{where}: a dict holds one key twice")
        return {k: decode_structure(v, leaf, f"{where}.{short_text(k, 40)}") for k, v in pairs}
    return leaf(kind, body, where)


# ---- writing ------------------------------------------------------------------------

class Writer:
    """Turns Graphs into JSON, collecting the constants and variables they capture.

    ``constants`` and ``variables`` are shared by all graphs of one saved
    model (a graph refers to them by index).
    """

    def __init__(self, variables, custom_gradients):
        self.variables = list(variables)
        self._variable_index = {id(v): i for i, v in enumerate(self.variables)}
        self.constants = []
        self._constant_index = {}
        self.custom_gradients = custom_gradients

    def graph(self, graph, where):
        def ref(r):
            if r.kind == "const":
                return ["const", self._constant(graph.constants[r.index])]
            if r.kind == "var":
                return ["var", self._variable(graph.variables[r.index])]
            return r.as_list()

        nodes = []
        for i, node in enumerate(graph.nodes):
            here = f"{where}.nodes[{i}] ({node.op_type})"
            entry = {"op": node.op_type, "inputs": [ref(r) for r in node.inputs]}
            if node.custom is not None:
                custom = node.custom
                if self.custom_gradients:
                    if custom.graph is None:
                        raise ValueError(
                            f"cannot save {here}: its custom grad_fn could not be traced "
                            f"({type(custom.error).__name__}: {custom.error}); save with "
                            f"SaveOptions(experimental_custom_gradients=False) to save it "
                            f"without its gradient")
                    entry["custom_gradient"] = {"n_y": custom.n_y, "n_x": custom.n_x,
                                                "graph": self.graph(custom.graph, f"{here}.gradient")}
                else:  # no gradient graph; only a name that this process can still resolve
                    entry["custom_gradient"] = {"n_y": custom.n_y, "n_x": custom.n_x,
                                                "gradient_op_type": _in_process_name(custom)}
            elif node.primitive is IDENTITY_N:  # a loaded one, traced again
                pass
            elif node.subgraphs:   # cond, while_loop ...: subgraphs and layout (control_flow.py)
                entry.update(control_flow.encode(self, node, here))
            elif node.primitive is ASSIGN:
                entry["params"] = {"mode": node.params["mode"]}
            else:
                if node.op_type not in REGISTRY or REGISTRY[node.op_type] is not node.primitive:
                    raise ValueError(f"cannot save {here}: op type {node.op_type!r} is not a "
                                     f"registered op, so a loader could not rebuild it")
                entry["params"] = {k: encode_param(v, f"{here} param {k!r}")
                                   for k, v in node.params.items()}
            nodes.append(entry)
        outputs = encode_structure(graph.outputs, lambda leaf: self._output(leaf, ref, where),
                                   f"{where} outputs")
        return {"args": [{"shape": list(s), "dtype": d.name} for s, d in graph.arg_specs],
                "nodes": nodes, "outputs": outputs}

    def _output(self, leaf, ref, where):
        if isinstance(leaf, Ref):
            return {"ref": ref(leaf)}
        if leaf is None or isinstance(leaf, (bool, int, str)) or \
                (isinstance(leaf, float) and math.isfinite(leaf)):
            return {"python": leaf}
        raise ValueError(f"cannot save {where}: it returns {type(leaf).__name__} "
                         f"{short_repr(leaf)}, "
                         f"which is neither a tensor nor a plain Python value")

    def _constant(self, tensor):
        index = self._constant_index.get(id(tensor))
        if index is None:
            index = self._constant_index[id(tensor)] = len(self.constants)
            self.constants.append(tensor)
        return index

    def _variable(self, variable):
        index = self._variable_index.get(id(variable))
        if index is None:
            index = self._variable_index[id(variable)] = len(self.variables)
            self.variables.append(variable)
        return index


# ---- reading ------------------------------------------------------------------------

class Reader:
    """Rebuilds Graphs from JSON, given the loaded constants and Variables."""

    def __init__(self, constants, variables):
        self.constants = constants
        self.variables = variables

    def graph(self, data, where):
        check_keys(data, where, ("args", "nodes", "outputs"))
        args = [self._arg(a, f"{where}.args[{k}]")
                for k, a in enumerate(field(data, "args", list, where))]
        graph = Graph(args)
        used_constants, used_variables = {}, {}

        def ref(r, n_nodes, here):
            if not (isinstance(r, list) and r and r[0] in ("arg", "node", "const", "var")
                    and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in r[1:])
                    and len(r) == (3 if r[0] == "node" else 2)):
                raise FormatError(f"{here}: {short_repr(r)} is not a valid reference")
            kind, index = r[0], r[1]
            limit = {"arg": len(args), "node": n_nodes, "const": len(self.constants),
                     "var": len(self.variables)}[kind]
            if index >= limit:
                raise FormatError(f"{here}: reference {r} points past the {limit} {kind}(s) "
                                  f"available there")
            if kind == "node":
                n_outputs = _n_outputs(graph.nodes[index])
                if n_outputs is not None and r[2] >= n_outputs:
                    raise FormatError(f"{here}: reference {r} asks for output {r[2]} of a node "
                                      f"with {n_outputs} output(s)")
            if kind == "const":
                index = _local(used_constants, graph.constants, index, self.constants)
            elif kind == "var":
                index = _local(used_variables, graph.variables, index, self.variables)
            return Ref(kind, index, r[2] if kind == "node" else 0)

        for i, entry in enumerate(field(data, "nodes", list, where)):
            here = f"{where}.nodes[{i}]"
            op_type = field(entry, "op", str, here)
            inputs = [ref(r, i, f"{here}.inputs[{k}]")
                      for k, r in enumerate(field(entry, "inputs", list, here))]
            if "custom_gradient" in entry:
                check_keys(entry, here, ("op", "inputs", "custom_gradient"))
                node = self._custom_node(entry, op_type, inputs, here)
            elif "control_flow" in entry or "gradient_of" in entry:
                node = control_flow.decode(self, entry, op_type, inputs, here)
            elif op_type == "IdentityN":
                check_keys(entry, here, ("op", "inputs"))
                node = Node(IDENTITY_N, inputs, {})
            elif op_type == ASSIGN.name:
                check_keys(entry, here, ("op", "inputs", "params"))
                check_keys(field(entry, "params", dict, here), f"{here}.params", ("mode",))
                mode = field(entry["params"], "mode", str, f"{here}.params")
                if mode not in ASSIGN.methods or len(inputs) != 2 or inputs[0].kind != "var":
                    raise FormatError(f"{here}: an {op_type} needs a variable, a value and a "
                                      f"mode in {sorted(ASSIGN.methods)}")
                node = Node(ASSIGN, inputs, {"mode": mode})
            else:
                check_keys(entry, here, ("op", "inputs", "params"))
                primitive = REGISTRY.get(op_type)
                if primitive is None:
                    raise FormatError(f"{here}.op: op type {short_repr(op_type)} is not "
                                      f"registered in this process (define it before loading); "
                                      f"refusing to load")
                params = {k: decode_param(v, f"{here}.params.{short_text(k, 40)}")
                          for k, v in field(entry, "params", dict, here).items()}
                _check_params(primitive, len(inputs), params, f"{here}.params")
                node = Node(primitive, inputs, params)
            graph.nodes.append(node)
        n_nodes = len(graph.nodes)
        graph.outputs = decode_structure(
            field(data, "outputs", dict, where),
            lambda kind, body, here: self._output(kind, body, here, n_nodes, ref), f"{where}.outputs")
        return graph

    @staticmethod
    def _arg(data, where):
        check_keys(data, where, ("shape", "dtype"))
        return (decode_shape(field(data, "shape", list, where), where),
                decode_dtype(field(data, "dtype", str, where), where))

    def _custom_node(self, entry, op_type, inputs, here):
        where = f"{here}.custom_gradient"
        spec = field(entry, "custom_gradient", dict, here)
        check_keys(spec, where, ("n_y", "n_x", "graph" if "graph" in spec else "gradient_op_type"))
        n_y, n_x = field(spec, "n_y", int, where), field(spec, "n_x", int, where)
        if n_y < 0 or n_x < 0 or op_type != "IdentityN" or n_y + n_x > len(inputs):
            raise FormatError(f"{where}: {n_y} y and {n_x} x do not fit an {op_type} node "
                              f"with {len(inputs)} inputs")
        if "graph" in spec:
            custom = CustomGradient(n_y, n_x, self.graph(field(spec, "graph", dict, where),
                                                         f"{where}.graph"))
            custom.check_shapes = True  # a file's gradient graph may return anything
        else:
            # Saved without its gradient: this process may still know it (TensorFlow's
            # gradient registry does too); a fresh process does not.
            custom = _IN_PROCESS.get(field(spec, "gradient_op_type", str, where))
            if custom is None:
                return Node(IDENTITY_N, inputs, {})
        if custom.graph is not None and len(custom.graph.arg_specs) != n_y + len(inputs):
            raise FormatError(f"{where}: the gradient graph takes {len(custom.graph.arg_specs)} "
                              f"arguments, but dy and the node's inputs are {n_y + len(inputs)}")
        return Node(custom_gradient_primitive(custom, len(inputs)), inputs, {}, custom)

    def _output(self, kind, body, here, n_nodes, ref):
        if kind == "ref":
            return ref(body, n_nodes, here)
        if kind == "python" and (body is None or isinstance(body, (bool, int, float, str))):
            return body
        raise FormatError(f"{here}: {short_repr({kind: body})} is not a valid output")


# Custom gradients saved without their graph, by name, for as long as this process lives:
# held strongly, as TensorFlow's gradient registry holds a registered function (a weak
# reference let a collected module take its gradient with it, so a load in the same
# process failed or not depending on when the garbage collector ran).
_IN_PROCESS = {}


def _in_process_name(custom):
    for name, known in _IN_PROCESS.items():
        if known is custom:
            return name
    name = f"CustomGradient-{uuid.uuid4().hex}"  # never the name of another process's gradient
    _IN_PROCESS[name] = custom
    return name


def _check_params(primitive, n_inputs, params, where):
    """Refuses params the op's forward would not take (a misspelt name, a missing one)."""
    try:
        signature = inspect.signature(primitive.forward)
    except (TypeError, ValueError):   # a builtin: no signature to compare with
        return
    try:
        signature.bind(None, *[None] * n_inputs, **params)
    except TypeError as err:
        raise FormatError(f"{where}: they do not fit op type {primitive.name} with {n_inputs} "
                          f"input(s): {short_text(err)}") from None


def _n_outputs(node):
    if node.custom is not None or node.primitive is IDENTITY_N:
        return len(node.inputs)
    return node.primitive.n_outputs


def _local(used, local_list, index, global_list):
    """The graph-local index for global constant/variable ``index`` (added on first use)."""
    if index not in used:
        used[index] = len(local_list)
        local_list.append(global_list[index])
    return used[index]
