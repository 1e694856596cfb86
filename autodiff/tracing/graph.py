"""Graphs: a traced function's ops kept as data, and run again through the registry.

A graph is a tape with placeholders. ``ad.function`` runs the Python
function once while a ``Tracer`` sits alone on the recorder stack
(``autodiff.tape.active``): unlike a GradientTape it records *every* op,
watched or not. Each op becomes a ``Node``: its Primitive, its params, and
where each input comes from (a ``Ref``):

    ``Ref("arg", k)``       the k-th tensor argument (a placeholder)
    ``Ref("node", i, j)``   output j of node i
    ``Ref("const", c)``     a tensor made outside the graph (or by ``ad.constant``
                            inside it): kept as it is, a captured constant
    ``Ref("var", v)``       a Variable, captured by reference: read when the graph runs

    >>> w = ad.Variable(2.0, name="w")
    >>> f = ad.function(lambda x: ad.sin(x) * w)
    >>> print(f.get_concrete_function(ad.constant(1.0)).graph)
    graph(a0: float32[]) captures w=<Variable w:0>
      n0 = Sin(a0)
      n1 = Mul(n0, w)
      return n1

Running a graph replays its nodes, calling ``primitive(*inputs, **params)``
for each, just as eager code would. So a GradientTape recording outside
sees the replayed ops and differentiates a traced function exactly like
the eager one; nothing about gradients is stored in a graph. Ops whose
results the outputs do not need are pruned when tracing ends.

Custom gradients (``ad.custom_gradient``) become an ``IdentityN`` node with
a traced gradient graph: see ``graph_custom_gradient.py``.

Graphs are specialized to the shapes they were traced with: params such
as reduction axes and reshape targets are concrete numbers. Python code
runs only while tracing, so Python side effects (``print``, appending to a
list, ``Variable.assign``) happen once per trace, and Python control flow
on tensor values (``if x > 0``) is decided once, at trace time, as is
anything computed outside the library's ops (``x.numpy()``). TensorFlow's
AutoGraph would turn such control flow into graph ops; here it is frozen into
the graph. The library's own ops never freeze a value silently: ``gather``
keeps tensor indices that come from the arguments as an input of its op
(``ops/gather_dynamic.py``), and the ops that need a value on the host (a
shape, a mask, a scalar index, a range's bounds) refuse such a tensor with a
TypeError (``validate.host_value``).
"""

from .. import backend, nest
from .. import tape as _tape
from ..ops import random as random_ops
from ..registry import REGISTRY
from ..tensor import Tensor, Variable
from .body_scope import mark, refuse_if_made_in_body, table_for
from .graph_custom_gradient import CustomGradient, custom_gradient_primitive

__all__ = ["Ref", "Node", "Graph", "Tracer", "trace", "prune", "CustomGradient",
           "custom_gradient_primitive"]


class Ref:
    """Where a node input (or a graph output) comes from; see the module docstring."""

    __slots__ = ("kind", "index", "output")

    def __init__(self, kind, index, output=0):
        self.kind, self.index, self.output = kind, index, output

    def as_list(self):
        return [self.kind, self.index, self.output] if self.kind == "node" else [self.kind, self.index]

    def __eq__(self, other):
        return isinstance(other, Ref) and self.as_list() == other.as_list()

    def __hash__(self):
        return hash(tuple(self.as_list()))

    def __repr__(self):
        return f"Ref{tuple(self.as_list())}"


class Node:
    """One op of a graph: ``primitive(*inputs, **params)``.

    ``custom`` is set for a custom-gradient ``IdentityN``: a CustomGradient
    telling how many inputs are ``y`` and which get gradients.
    """

    __slots__ = ("primitive", "inputs", "params", "custom", "specs")

    def __init__(self, primitive, inputs, params, custom=None, specs=None):
        self.primitive, self.inputs, self.params, self.custom = primitive, inputs, params, custom
        self.specs = specs  # (shape, NumPy dtype) per output, when traced (None when loaded)

    @property
    def op_type(self):
        return self.primitive.name

    @property
    def subgraphs(self):
        """The branches or loop bodies of a control-flow node (``autodiff/control_flow``)."""
        return getattr(self.primitive, "subgraphs", ())

    def runs_builtin(self, op_types):
        """True when this node runs the library's own op of one of ``op_types`` (a name or a
        collection of names), not a custom gradient or another op of the same name."""
        name = self.primitive.name
        return self.custom is None and (name == op_types if isinstance(op_types, str)
                                        else name in op_types) \
            and self.primitive is REGISTRY.get(name)


class _Assign:
    """Stands in a Node's primitive for ``variable.assign*(value)`` (op type AssignVariableOp).

    Not an op of the registry: it changes a Variable instead of computing a
    tensor. Its node's inputs are ``[Ref("var", v), value]``, its params
    ``{"mode": "assign" | "add" | "sub"}``.
    """

    name = "AssignVariableOp"
    stateful = True   # runs on every call, whatever the outputs need
    methods = {"assign": "assign", "add": "assign_add", "sub": "assign_sub"}

    def __repr__(self):
        return "<AssignVariableOp>"


ASSIGN = _Assign()


class Graph:
    """Nodes, the specs of the placeholders, the captures, and the outputs.

    Attributes:
        arg_specs: ``(shape, dtype)`` of each placeholder, in order.
        nodes: the Nodes, in the order they ran (a topological order).
        constants: captured Tensors (``Ref("const", c)`` is ``constants[c]``).
        variables: captured Variables (``Ref("var", v)``).
        outputs: the returned structure, with a Ref for each tensor and
            Python values as they were.
    """

    def __init__(self, arg_specs):
        self.arg_specs = list(arg_specs)
        self.nodes = []
        self.constants = []
        self.variables = []
        self.outputs = None
        self.backward_starts = []  # node indices where a traced tape.gradient began

    def run(self, args):
        """Replays the nodes on ``args`` (Tensors, one per placeholder); returns the outputs."""
        results = []
        reads = {}

        def value(ref):
            kind = ref.kind
            if kind == "node":
                return results[ref.index][ref.output]
            if kind == "arg":
                return args[ref.index]
            if kind == "const":
                return self.constants[ref.index]
            read = reads.get(ref.index)
            if read is None:  # read once per run, when first needed (watching it on tapes)
                read = reads[ref.index] = _tape.read_variable(self.variables[ref.index])
            return read

        for node in self.nodes:
            if node.primitive is ASSIGN:  # a side effect, in the order the function ran it
                var_ref, value_ref = node.inputs
                variable = self.variables[var_ref.index]
                getattr(variable, ASSIGN.methods[node.params["mode"]])(value(value_ref))
                reads.pop(var_ref.index, None)  # later reads see the new value
                results.append(())
                continue
            out = node.primitive(*[value(r) for r in node.inputs], **node.params)
            results.append(out if isinstance(out, tuple) else (out,))
            if node.primitive.stateful and node.subgraphs:
                reads.clear()   # a branch or loop body may have assigned a Variable
        return nest.map_structure(lambda leaf: value(leaf) if isinstance(leaf, Ref) else leaf,
                                  self.outputs)

    def __str__(self):
        names = {}
        for k, (shape, dtype) in enumerate(self.arg_specs):
            names[("arg", k)] = f"a{k}"
        captures = []
        for c, t in enumerate(self.constants):
            names[("const", c)] = f"c{c}"
            captures.append(f"c{c}={_short(t)}")
        for v, var in enumerate(self.variables):
            names[("var", v)] = var._name
            captures.append(f"{var._name}=<Variable {var.name}>")
        args = ", ".join(f"a{k}: {dtype.name}{list(shape)}" for k, (shape, dtype)
                         in enumerate(self.arg_specs))
        lines = [f"graph({args})" + (f" captures {', '.join(captures)}" if captures else "")]

        def name(ref):
            if ref.kind != "node":
                return names[(ref.kind, ref.index)]
            node = self.nodes[ref.index]
            single = node.custom is None and node.primitive.n_outputs == 1
            return f"n{ref.index}" if single else f"n{ref.index}.{ref.output}"

        for i, node in enumerate(self.nodes):
            params = "".join(f", {k}={v!r}" for k, v in node.params.items())
            note = "  # custom gradient" if node.custom else ""
            lines.append(f"  n{i} = {node.op_type}({', '.join(map(name, node.inputs))}{params}){note}")
            for sub in node.subgraphs:   # a control-flow node's branches, indented under it
                lines.append(f"    {sub.label}: " + str(sub.graph).replace("\n", "\n    "))
        outs = [name(r) if isinstance(r, Ref) else repr(r) for r in nest.flatten(self.outputs)]
        lines.append(f"  return {', '.join(outs)}")
        return "\n".join(lines)


def _short(t):
    return repr(t.numpy().item()) if t._value.size == 1 else f"{t.dtype.name}{list(t.shape)}"


class Tracer:
    """A recorder that records every op into a Graph (see the module docstring).

    Args:
        placeholders: the Tensors standing for the graph's arguments.
        parent: the enclosing Tracer while a ``grad_fn`` is traced: a tensor
            it knows becomes a capture (a new argument) of this graph.
        body: set (a label, ``body``, ``true_fn`` ...) when this tracer traces a
            control-flow body: the tensors it makes may not leave it other than
            as its outputs (``body_scope.py``).
    """

    builds_graph = True   # side-effect ops (ad.print) stay quiet: the graph runs them later

    def __init__(self, placeholders, parent=None, open_sizes=False, body=None):
        self.graph = Graph([(tuple(t._value.shape), t.dtype) for t in placeholders])
        # open_sizes: the function's input_signature leaves a size open (None), so the
        # gradient rules and shape ops write sizes as Shape nodes, not numbers
        # (ops/dynamic_shape.py), and one trace can serve every size (polymorphic.py)
        self.open_sizes = open_sizes or (parent is not None and parent.open_sizes)
        self._where = {}   # tensor id -> Ref
        for k, t in enumerate(placeholders):
            self._where.setdefault(t._id, Ref("arg", k))
        self._parent = parent
        self.captures = []   # parent tensors used here (they became arguments)
        self._pending = []   # (node, primitive, inputs): custom gradients traced at the end
        self._assigned = {}  # variable id -> (Variable, its value before tracing assigned it)
        self.body = body
        self._body_made = table_for(parent, _tape.thread_state.active)
        if body is not None:
            mark(self._body_made, placeholders, "Placeholder", body)

    # ---- the recorder protocol ---------------------------------------------
    def _variable_read(self, variable):
        if variable._id not in self._where:
            self._where[variable._id] = Ref("var", len(self.graph.variables))
            self.graph.variables.append(variable)

    def _wants(self, inputs):
        return True  # a tracer records every op

    def _record(self, primitive, inputs, outputs, params):
        refs = [self.ref(t) for t in inputs]
        custom = None
        if getattr(primitive, "custom_grad_fn", None) is not None:   # ad.custom_gradient
            # The eager op maps x to y; the node takes (y..., x...) and copies them all.
            y_refs = [self.ref(t) for t in primitive.custom_results]
            custom = CustomGradient(len(y_refs), len(refs))
            refs = y_refs + refs
        elif getattr(primitive, "custom_gradient", None) is not None:  # a replayed one
            known = primitive.custom_gradient
            custom = CustomGradient(known.n_y, known.n_x, known.graph, known.error)
        node = Node(primitive, refs, dict(params), custom,
                    tuple((o._value.shape, o._value.dtype) for o in outputs))
        index = len(self.graph.nodes)
        self.graph.nodes.append(node)
        if custom is not None:
            self._pending.append((node, primitive, inputs))
        for j, out in enumerate(outputs):
            self._where[out._id] = Ref("node", index, j)
        if self.body is not None:
            mark(self._body_made, outputs, primitive.name, self.body)

    def _observe(self, event, *details):
        """An assign while tracing becomes a node; the variable gets its old value back
        when tracing ends, so only running the graph changes it (as in TensorFlow).
        A backward pass starting is marked, so compiled code can say where it begins."""
        if event == "backward":
            self.graph.backward_starts.append(len(self.graph.nodes))
            return
        if event != "assign":
            return
        variable, value, mode = details
        self._assigned.setdefault(variable._id, (variable, variable._value))
        if not isinstance(value, Tensor):
            value = Tensor(variable._array_here(value))
        refs = [self.ref(variable), self.ref(value)]
        self.graph.nodes.append(Node(ASSIGN, refs, {"mode": mode}))

    # ---- refs ---------------------------------------------------------------
    def ref(self, tensor):
        """The Ref for ``tensor``, capturing it when the graph does not know it yet."""
        if isinstance(tensor, Variable):
            self._variable_read(tensor)
        where = self._where.get(tensor._id)
        if where is not None:
            return where
        if self._parent is not None and self._parent.knows(tensor):
            where = Ref("arg", len(self.graph.arg_specs))
            self.graph.arg_specs.append((tuple(tensor._value.shape), tensor.dtype))
            self.captures.append(tensor)
        else:
            refuse_if_made_in_body(self._body_made, tensor)   # it would keep one trace's value
            where = Ref("const", len(self.graph.constants))
            self.graph.constants.append(tensor if type(tensor) is Tensor else Tensor(tensor._value))
        self._where[tensor._id] = where
        return where

    def knows(self, tensor):
        return tensor._id in self._where or (self._parent is not None and self._parent.knows(tensor))

    def follows(self, tensor):
        """Whether ``tensor``'s value can change from call to call: it comes from the graph's
        arguments (an argument or a node's output, here or in an enclosing trace), or it is a
        Variable or a read of one (the graph reads the variable each time it runs, and an
        optimizer's step counter or a layer's moving mean changes between calls)."""
        if isinstance(tensor, Variable):
            return True
        where = self._where.get(tensor._id)
        if where is not None and where.kind in ("arg", "node", "var"):
            return True
        return self._parent is not None and self._parent.follows(tensor)

    # ---- finishing ------------------------------------------------------------
    def finish(self, result):
        """Sets the graph's outputs from the function's ``result``; traces pending grad_fns."""
        self.graph.outputs = nest.map_structure(
            lambda leaf: self.ref(leaf) if isinstance(leaf, Tensor) else leaf, result)
        for node, primitive, inputs in self._pending:
            self._finish_custom(node, primitive, inputs)
        prune(self.graph)
        return self.graph

    def _finish_custom(self, node, primitive, inputs):
        custom = node.custom
        if custom.graph is None and custom.error is None:
            try:
                sub = _trace_gradient(self, node, primitive, inputs)
            except Exception as err:  # noqa: BLE001  (reported when the gradient is needed)
                custom.error = err
            else:
                custom.graph = sub.graph
                node.inputs = node.inputs + [self.ref(t) for t in sub.captures]
        node.primitive = custom_gradient_primitive(custom, len(node.inputs))


def prune(graph):
    """Drops the nodes, constants and variables the outputs do not depend on.

    Ops whose results were thrown away (a layer's initializer drawing
    random numbers while it builds, say) would otherwise run on every call.
    """
    live = [False] * len(graph.nodes)
    used = {"const": set(), "var": set()}

    def mark(ref):
        if ref.kind == "node":
            live[ref.index] = True
        elif ref.kind in used:
            used[ref.kind].add(ref.index)

    outputs = [leaf for leaf in nest.flatten(graph.outputs) if isinstance(leaf, Ref)]
    for ref in outputs:
        mark(ref)
    for i, node in enumerate(graph.nodes):
        if node.primitive.stateful:  # assignments and checks are kept whatever the outputs need
            live[i] = True
    for i in reversed(range(len(graph.nodes))):
        if live[i]:
            for ref in graph.nodes[i].inputs:
                mark(ref)
    new_index = {"node": {}, "const": {}, "var": {}}
    kept = {"node": [], "const": [], "var": []}
    for kind, items in (("node", graph.nodes), ("const", graph.constants),
                        ("var", graph.variables)):
        for i, item in enumerate(items):
            if (live[i] if kind == "node" else i in used[kind]):
                new_index[kind][i] = len(kept[kind])
                kept[kind].append(item)

    def moved(ref):
        if ref.kind == "arg":
            return ref
        return Ref(ref.kind, new_index[ref.kind][ref.index], ref.output)

    for node in kept["node"]:
        node.inputs = [moved(r) for r in node.inputs]
    kept_indices = sorted(new_index["node"])
    graph.backward_starts = sorted({
        new_index["node"][next(k for k in kept_indices if k >= start)]
        for start in graph.backward_starts if kept_indices and start <= kept_indices[-1]})
    graph.nodes, graph.constants, graph.variables = kept["node"], kept["const"], kept["var"]
    graph.outputs = nest.map_structure(lambda leaf: moved(leaf) if isinstance(leaf, Ref) else leaf,
                                       graph.outputs)


def _trace_gradient(parent, node, primitive, inputs):
    """Traces ``grad_fn`` into a Graph from ``(dy..., node inputs...)`` to the input gradients."""
    results = primitive.custom_results
    dys = [Tensor(_ones(y)) for y in results]
    node_tensors = list(results) + list(inputs)
    sub = Tracer(dys + node_tensors, parent=parent)
    g = tuple(dys) if len(dys) > 1 else dys[0]
    trace(sub, lambda: primitive.vjp(g, None, *inputs))
    return sub


def _ones(y):
    return backend.xp.ones(y._value.shape, dtype=y._value.dtype)


def trace(tracer, thunk):
    """Runs ``thunk()`` with ``tracer`` alone on the recorder stack; returns the finished graph.

    The tapes (and accumulators) that were recording are paused meanwhile:
    they should see the graph's ops when it runs, not while it is traced.
    Tracing leaves no trace in the program's state: variables it assigned
    get their values back, and its draws come from copies of the random streams,
    so running the graph afterwards does exactly what the eager call would.
    """
    saved = list(_tape.thread_state.active)
    _tape.thread_state.active[:] = [tracer]
    _tape.thread_state.observers.append(tracer)
    try:
        with random_ops.draws_set_aside():
            result = thunk()
            graph = tracer.finish(result)
    finally:
        _tape.thread_state.active[:] = saved
        _tape.thread_state.observers.remove(tracer)
        for variable, before in tracer._assigned.values():
            variable._value = before  # tracing has no side effects; running the graph does
    return graph
