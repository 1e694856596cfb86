"""``ad.function(f, jit_compile=True)``: a traced graph written out as a Python program.

A trace (``graph.py``) is already a straight list of ops, the backward pass
included when ``f`` calls ``tape.gradient``: the ops of the VJP rules were
traced like any others. This module writes that list out as one Python
function over raw backend arrays, so running it costs one call of each op's
forward and nothing else: no Tensor wrappers, no dispatch through
``Primitive.__call__``, no tape bookkeeping. Before writing it:

- **dead code** is dropped: ops whose results the outputs never use;
- **common subexpressions** are shared: the same op on the same inputs with
  the same params is computed once (random and stateful ops excepted);
- **constants** (captured tensors, such as a Jacobian's one-hot seed stack)
  are built once, when the function is traced, and passed in by reference.

The program is meant to be read. ``f.experimental_get_compiler_ir(*args)(stage="python")``
returns its source: one line per op, named like the tape's printout,
calling the op's own forward (the one declared in ``autodiff/ops``)::

    def loss_and_grad(xp, w, x):
        v0 = MatMul(xp, x, w)              # x @ w
        v1 = Tanh(xp, v0)
        ...
        v6 = TanhGrad(xp, v1, v5)          # the chain rule through tanh
        return v3, v7

Differentiating a compiled function still works: when a tape or forward
accumulator is recording in this thread, the graph is replayed op by op
(as without ``jit_compile``) so that the tape sees every op. The program
runs when nothing records, which is when speed matters (a training step
whose gradient is computed inside the function).

Nothing from a file is ever executed: the source is generated here from
op types looked up in the registry, and every param reaches the program as
data (a dict per op), never as code.
"""

import json
import keyword
import re

from . import backend, nest
from .graph import ASSIGN, Ref
from .tensor import Tensor

__all__ = ["Program", "compile_graph", "STAGES"]

STAGES = ("python", "graph")

# Ops that must run once per occurrence even when their inputs match.
_IMPURE_PREFIXES = ("Random", "TruncatedNormal", "Stateless", "Dropout")


def compile_graph(graph, name="f", arg_names=()):
    """Writes ``graph`` out as a Program (see the module docstring).

    Args:
        graph: a traced ``Graph``.
        name: the function's name in the generated source.
        arg_names: display names for the placeholders (the Python
            function's parameter names), padded with ``a0, a1, ...``.

    Returns:
        A Program: ``.source`` (str) and ``.run(args)`` on Tensors.
    """
    return Program(graph, name, arg_names)


class Program:
    """One compiled trace: its Python source, and the function exec'd from it."""

    def __init__(self, graph, name="f", arg_names=()):
        self.graph = graph
        self.name = _identifier(name, "f")
        nodes = _dedupe(graph)
        live = _live(graph, nodes)
        self.source, namespace = _write(graph, nodes, live, self.name, arg_names)
        exec(compile(self.source, f"<ad.function {self.name} (jit_compile)>", "exec"), namespace)
        self._fn = namespace[self.name]
        self._n_ops = sum(1 for i in live if nodes[i][0] is not None)

    def __repr__(self):
        return f"<Program {self.name}: {self._n_ops} ops>"

    def run(self, args):
        """Runs the program on ``args`` (Tensors, one per placeholder); returns the outputs."""
        flat = self._fn(backend.xp, *[a._value for a in args])
        it = iter(flat)
        return nest.map_structure(lambda leaf: Tensor(next(it)) if isinstance(leaf, Ref) else leaf,
                                  self.graph.outputs)


# ---- passes -------------------------------------------------------------------------

def _dedupe(graph):
    """Per node: ``(node, ref_map)`` after sharing common subexpressions.

    Returns a list parallel to ``graph.nodes``: ``(node, None)`` for a node
    that is computed, ``(None, index)`` for one that repeats node ``index``.
    """
    seen = {}
    epoch = {}        # variable index -> how many assigns so far (reads differ across them)
    replaced = {}     # node index -> the earlier node it repeats
    result = []

    def key_of(ref):
        if ref.kind == "node":
            return ("node", replaced.get(ref.index, ref.index), ref.output)
        if ref.kind == "var":
            return ("var", ref.index, epoch.get(ref.index, 0))
        return (ref.kind, ref.index)

    for i, node in enumerate(graph.nodes):
        if node.primitive is ASSIGN:
            var = node.inputs[0].index
            epoch[var] = epoch.get(var, 0) + 1
            result.append((node, None))
            continue
        pure = node.custom is None and not node.primitive.name.startswith(_IMPURE_PREFIXES)
        key = None
        if pure:
            try:
                params = json.dumps(node.params, sort_keys=True)
            except (TypeError, ValueError):
                params = None  # params that are not plain data: never shared
            if params is not None:
                key = (id(node.primitive), tuple(key_of(r) for r in node.inputs), params)
        if key is not None and key in seen:
            replaced[i] = seen[key]
            result.append((None, seen[key]))
            continue
        if key is not None:
            seen[key] = i
        result.append((node, None))
    return result


def _live(graph, nodes):
    """Indices of the nodes the outputs (or an assign) need, in order."""
    needed = set()
    pending = [leaf.index for leaf in nest.flatten(graph.outputs)
               if isinstance(leaf, Ref) and leaf.kind == "node"]
    pending += [i for i, (node, _) in enumerate(nodes) if node is not None and node.primitive is ASSIGN]
    while pending:
        i = pending.pop()
        if i in needed:
            continue
        needed.add(i)
        node, same_as = nodes[i]
        if node is None:
            pending.append(same_as)
            continue
        pending.extend(r.index for r in node.inputs if r.kind == "node")
    return sorted(needed)


# ---- writing the source ---------------------------------------------------------------

def _identifier(text, fallback):
    name = re.sub(r"\W", "_", str(text)).strip("_") or fallback
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"{fallback}_{name}"
    return name


def _write(graph, nodes, live, name, arg_names):
    """The source text and the namespace it runs in."""
    taken = {"xp", name, "_assign"}
    names = {}

    def fresh(wanted, fallback):
        base = _identifier(wanted, fallback)
        candidate, k = base, 1
        while candidate in taken:
            candidate, k = f"{base}_{k}", k + 1
        taken.add(candidate)
        return candidate

    params = []
    for k in range(len(graph.arg_specs)):
        wanted = arg_names[k] if k < len(arg_names) else f"a{k}"
        names[("arg", k)] = fresh(wanted, f"a{k}")
        params.append(names[("arg", k)])
    namespace = {"_assign": _assign}
    for c, tensor in enumerate(graph.constants):
        names[("const", c)] = fresh(f"c{c}", f"c{c}")
        namespace[names[("const", c)]] = tensor._value
    var_holders = {}
    for v, variable in enumerate(graph.variables):
        holder = fresh(f"{variable._name}_variable", f"var{v}")
        namespace[holder] = variable
        var_holders[v] = holder
        names[("var", v)] = fresh(variable._name, f"var{v}")

    forwards = {}  # op type -> the name its forward has in the namespace
    lines = [f"def {name}(xp{''.join(', ' + p for p in params)}):"]
    read = set()

    def ref_text(ref):
        if ref.kind == "var" and ref.index not in read:
            read.add(ref.index)
            lines.append(f"    {names[('var', ref.index)]} = {var_holders[ref.index]}._value")
        if ref.kind != "node":
            return names[(ref.kind, ref.index)]
        node, same_as = nodes[ref.index]
        index = ref.index if node is not None else same_as
        base = names[("node", index)]
        return f"{base}[{ref.output}]" if ("multi", index) in names else base

    for c, tensor in enumerate(graph.constants):
        lines.append(f"    # {names[('const', c)]}: {_describe_constant(tensor)}")
    def producer(ref):  # the node index whose value a node ref names, after sharing
        node, same_as = nodes[ref.index]
        return ref.index if node is not None else same_as

    # Each intermediate is deleted right after its last use, so big arrays are
    # freed as early as in eager code (and their memory reused at once).
    returned = {producer(leaf) for leaf in nest.flatten(graph.outputs)
                if isinstance(leaf, Ref) and leaf.kind == "node"}
    last_use = {}
    for i in live:
        if nodes[i][0] is not None:
            for r in nodes[i][0].inputs:
                if r.kind == "node":
                    last_use[producer(r)] = i
    folded = {}  # node index -> its value, for pure nodes of constants only (computed now)
    counter = 0
    backward_at = set(getattr(graph, "backward_starts", ()))
    for i in live:
        node, _ = nodes[i]
        if node is None:
            continue
        if i >= min(backward_at, default=len(graph.nodes)):
            lines.append("    # ---- the backward pass (tape.gradient) ----")
            backward_at = {b for b in backward_at if b > i}
        if node.primitive is ASSIGN:
            var_ref, value_ref = node.inputs
            lines.append(f"    _assign({var_holders[var_ref.index]}, {node.params['mode']!r}, "
                         f"{ref_text(value_ref)})")
            read.discard(var_ref.index)  # the next use reads the new value
            continue
        op_type = node.op_type
        if _foldable(node, folded):
            value = node.primitive.forward(backend.xp, *[
                graph.constants[r.index]._value if r.kind == "const" else folded[r.index]
                for r in node.inputs], **node.params)
            folded[i] = value
            names[("node", i)] = target = fresh(f"k{counter}", "k")
            counter += 1
            namespace[target] = value
            call = ", ".join([ref_text(r) for r in node.inputs]
                             + [f"{k}={v!r}" for k, v in node.params.items()])
            lines.append(f"    # {target} = {op_type}({call}) is constant, computed once: "
                         f"{_describe_constant(Tensor(value))}")
            continue
        fn = forwards.get((op_type, id(node.primitive)))
        if fn is None:
            fn = fresh(op_type, "op")
            forwards[(op_type, id(node.primitive))] = fn
            namespace[fn] = node.primitive.forward
        args = "".join(", " + ref_text(r) for r in node.inputs)
        if node.params and all(_is_literal(v) for v in node.params.values()) \
                and all(k.isidentifier() and not keyword.iskeyword(k) for k in node.params):
            args += "".join(f", {k}={v!r}" for k, v in node.params.items())
        elif node.params:
            pname = fresh(f"{fn}_params_{counter}", "params")
            namespace[pname] = dict(node.params)
            args += f", **{pname}"
        target = fresh(f"v{counter}", "v")
        counter += 1
        names[("node", i)] = target
        single = node.custom is None and node.primitive.n_outputs == 1 or \
            node.custom is not None and len(node.inputs) == 1
        if not single:
            names[("multi", i)] = True
        label = _label(node, ref_text)
        lines.append(f"    {target} = {fn}(xp{args})" + (f"  # {label}" if label else ""))
        done = sorted({producer(r) for r in node.inputs if r.kind == "node"
                       and last_use.get(producer(r)) == i and producer(r) not in returned
                       and producer(r) not in folded})
        if done:
            lines.append(f"    del {', '.join(names[('node', j)] for j in done)}")
    outs = [ref_text(leaf) for leaf in nest.flatten(graph.outputs) if isinstance(leaf, Ref)]
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return "\n".join(lines) + "\n", namespace


def _foldable(node, folded):
    """A pure single-output op whose inputs are all constants: computed at compile time."""
    if node.custom is not None or node.primitive.n_outputs != 1 or not node.inputs \
            or node.primitive.name.startswith(_IMPURE_PREFIXES):
        return False
    return all(r.kind == "const" or r.kind == "node" and r.index in folded for r in node.inputs)


def _is_literal(value):
    """Plain data whose repr is a Python literal: safe to write into the source."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, (tuple, list)):
        return all(_is_literal(v) for v in value)
    return False


def _describe_constant(tensor):
    value = tensor._value
    if value.size == 1:
        return f"{value.dtype.name} {backend.to_numpy(value).reshape(()).item()!r}"
    return f"{value.dtype.name} array of shape {tuple(value.shape)}"


def _label(node, ref_text):
    """The op's display template (``x @ w``), as the tape printout shows it; '' if none."""
    template = node.primitive.label
    if not template or node.custom is not None:
        return "custom gradient" if node.custom is not None else ""
    if template.startswith(node.op_type):
        return ""  # ``Tanh(v0)`` would only repeat the line
    try:
        return template.format(*[ref_text(r) for r in node.inputs], **node.params)
    except (IndexError, KeyError, ValueError):
        return ""


def _assign(variable, mode, value):
    """An ``AssignVariableOp`` of the program: ``variable.assign*(value)``."""
    getattr(variable, ASSIGN.methods[mode])(Tensor(value))
