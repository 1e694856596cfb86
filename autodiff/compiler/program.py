"""``ad.function(f, jit_compile=True)``: a traced graph written out as a Python program.

A trace (``tracing/graph.py``) is already a straight list of ops, the backward pass
included when ``f`` calls ``tape.gradient``: the ops of the VJP rules were
traced like any others. This module writes that list out as one Python
function over raw backend arrays, so running it costs one call of each op's
forward and nothing else: no Tensor wrappers, no dispatch through
``Primitive.__call__``, no tape bookkeeping. Before writing it:

- **dead code** is dropped: ops whose results the outputs never use;
- **common subexpressions** are shared: the same op on the same inputs with
  the same params is computed once (random and stateful ops excepted);
- **constants** (captured tensors, such as a Jacobian's one-hot seed stack)
  are built once, when the function is traced, and passed in by reference;
- **buffers are reused**: an elementwise op writes over an input array that
  dies there, when nothing else could see it (``passes.py``).

The program is meant to be read. ``f.experimental_get_compiler_ir(*args)(stage="python")``
returns its source: one line per op, named like the tape's printout. The
simple ops are written as the expressions their forwards compute (``x @ w``,
``v6 * (1 - v1 * v1)`` for tanh's chain rule; ``inline.py``); the
others call the op's own forward (the one declared in ``autodiff/ops``)::

    def loss_and_grad(xp, x):
        w = w_variable._value
        v0 = x @ w
        v1 = xp.tanh(v0, out=v0)  # xp.tanh(v0), written over v0 (not needed again)
        ...
        v7 = v6 * (1 - v1 * v1)
        v8 = x.T @ v7
        return (v3, v8)

Differentiating a compiled function still works: when a tape or forward
accumulator is recording in this thread, the graph is replayed op by op
(as without ``jit_compile``) so that the tape sees every op. The program
runs when nothing records, which is when speed matters (a training step
whose gradient is computed inside the function).

Nothing from a file is ever executed: the source is generated here from
op types looked up in the registry, and every param reaches the program as
data (a dict per op), never as code.
"""

import keyword
import re
import weakref

from .. import backend, nest
from .. import tape as _tape
from ..tensor import Tensor
from ..tracing.graph import ASSIGN, Ref
from . import blas_warmup, control_flow, conv_rows, rowwise
from .fused import for_program
from .inline import expression, inline_template, shared_tanh_factors, transposed
from .passes import IMPURE_PREFIXES as _IMPURE_PREFIXES, plan
from .seeds import one_hot_rows_matmul
from .zeros import all_finite, check_lines, isfinite

__all__ = ["Program", "compile_graph", "STAGES"]

STAGES = ("python", "graph")

def compile_graph(graph, name="f", arg_names=()):
    """Writes ``graph`` out as a Program (see the module docstring).

    Args:
        graph: a traced ``Graph``.
        name: the function's name in the generated source.
        arg_names: display names for the placeholders (the Python
            function's parameter names), padded with ``a0, a1, ...``.

    Returns:
        A Program: ``.source`` (str) and ``.run(args)`` on Tensors.

    Control-flow nodes become ``if``/``while``/``for`` statements calling their
    branches and bodies, each compiled the same way (``control_flow.py``).
    """
    return Program(graph, name, arg_names)


class Program:
    """One compiled trace: its Python source, and the function exec'd from it."""

    def __init__(self, graph, name="f", arg_names=()):
        self.graph = graph
        self.name = _identifier(name, "f")
        self.plan = plan(graph)
        self.source, namespace, called = _write(graph, self.plan, self.name, arg_names)
        self.names = namespace.pop("_names")   # value source -> its name (fused/ reads them)
        self._fn = _exec(self.source, namespace, self.name)
        self.namespace = namespace
        self._exact = None
        if self.plan.guarded:   # the same graph with every zero multiplied out
            exact_name = self.name + "_exact"
            self.exact_source, namespace, _ = _write(graph, plan(graph, skip_zero_tangents=False),
                                                     exact_name, arg_names)
            self._exact = _exec(self.exact_source, namespace, exact_name)
            self.source += (f"\n\n# When a guard above fails (a NaN or inf where zeros were skipped),"
                            f"\n# {self.name} returns None and this exact program runs instead:\n\n"
                            + self.exact_source)
        if called:   # the branches and loop bodies first, as a reader meets their names below
            self.source = "\n\n".join(called + [self.source])
        self._pack = _packer(graph.outputs)

    def __repr__(self):
        n_ops = sum(1 for step in self.plan.steps if step.kind == "op")
        return f"<Program {self.name}: {n_ops} ops>"

    def run(self, args, fuse=False):
        """Runs the program on ``args`` (Tensors, one per placeholder); returns the outputs.
        ``fuse=True`` runs its fused form instead, when numba makes one (``fused/``).
        The first run in a process makes the BLAS warm-up product (``blas_warmup.py``)."""
        if blas_warmup.pending:
            blas_warmup.warm()
        arrays = [a._value for a in args]
        fused = for_program(self) if fuse else None
        if fused is not None:
            return self._pack(iter(fused.call(backend.xp, *arrays)))
        return self._pack(iter(self.call(backend.xp, *arrays)))

    def fused_call(self):
        """The fused form's one-call function (``fused/fast.py``: the argument Tensors in, the
        outputs out, or None for a call it was not written for); None without one."""
        return getattr(for_program(self), "fast", None)

    def call(self, xp, *arrays):
        """The program on raw arrays; returns a tuple of arrays (how an enclosing program
        calls a branch or a loop body)."""
        results = self._fn(xp, *arrays)
        if results is None:   # a guard failed: the exact program gives eager's NaNs
            results = self._exact(xp, *arrays)
        return results


def _exec(source, namespace, name):
    exec(compile(source, f"<ad.function {name} (jit_compile)>", "exec"), namespace)
    return namespace[name]


def _packer(structure):
    """A function from an iterator over the program's arrays to the graph's output
    structure, each array wrapped as a Tensor (built once: no structure walk per call)."""
    if isinstance(structure, Ref):
        return lambda arrays: Tensor(next(arrays))
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "_fields"):
        parts, kind = [_packer(item) for item in structure], type(structure)
        return lambda arrays: kind([part(arrays) for part in parts])
    if isinstance(structure, (list, tuple, dict)):   # namedtuples, dicts: the general walk
        return lambda arrays: nest.map_structure(
            lambda leaf: Tensor(next(arrays)) if isinstance(leaf, Ref) else leaf, structure)
    return lambda arrays: structure


# ---- writing the source ---------------------------------------------------------------

def _identifier(text, fallback):
    name = re.sub(r"\W", "_", str(text)).strip("_") or fallback
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"{fallback}_{name}"
    return name


class _Names:
    """Unique Python names for the program's values."""

    def __init__(self, reserved):
        self.taken = set(reserved)
        self.of = {}   # source (or its first two items, for a node) -> name

    def fresh(self, wanted, fallback):
        base = _identifier(wanted, fallback)
        candidate, k = base, 1
        while candidate in self.taken:
            candidate, k = f"{base}_{k}", k + 1
        self.taken.add(candidate)
        return candidate


def _write(graph, plan, name, arg_names):
    """The source text of ``plan``, the namespace it runs in, and the sources of the
    branches and loop bodies it calls."""
    names = _Names({"xp", name, "_assign", "all_finite", "isfinite", "rowwise", "broadcast_rows",
                    *control_flow.helpers()})
    namespace = {"_assign": _assign, "all_finite": all_finite, "isfinite": isfinite,
                 "rowwise": rowwise.rowwise, "broadcast_rows": rowwise.broadcast_rows,
                 **control_flow.helpers()}
    called = []
    params = []
    for k in range(len(graph.arg_specs)):
        names.of[("arg", k)] = names.fresh(arg_names[k] if k < len(arg_names) else f"a{k}", f"a{k}")
        params.append(names.of[("arg", k)])
    holders = {}
    for v, variable in enumerate(graph.variables):
        name_of_holder = names.fresh(f"{variable._name}_variable", f"var{v}")
        # A Variable the trace holds weakly (a traced argument) stays weak here:
        # the program reaches it through the weakref, ``w_variable()``.
        entry = list.__getitem__(graph.variables, v)
        namespace[name_of_holder] = entry
        holders[v] = name_of_holder + ("()" if isinstance(entry, weakref.ref) else "")
        names.of[("var", v)] = names.fresh(variable._name, f"var{v}")
    lines = [f"def {name}(xp{''.join(', ' + p for p in params)}):"]
    used = {s for step in plan.steps for s in step.inputs} | set(plan.outputs)
    for src in sorted(s for s in used if s[0] == "const"):
        names.of[src] = names.fresh(f"c{src[1]}", "c")
        namespace[names.of[src]] = plan.constants[src]
        lines.append(f"    # {names.of[src]}: {_describe_constant(plan.constants[src])}")
    read_epoch = {}

    def text(src):
        kind = src[0]
        if kind == "var":
            if read_epoch.get(src[1]) != src[2]:
                read_epoch[src[1]] = src[2]
                lines.append(f"    {names.of[('var', src[1])]} = {holders[src[1]]}._value")
            return names.of[("var", src[1])]
        if kind == "node":
            base = names.of[src[:2]]
            return f"{base}[{src[2]}]" if ("multi",) + src[1:2] in names.of else base
        return names.of[src]

    returned = {s[:2] for s in plan.outputs}
    factors, factor_names = shared_tanh_factors(plan), {}
    forwards = {}
    rows_names, rows_pending = {}, {}   # a convolution's im2col rows kept (conv_rows.py)
    counter = 0

    def name_result(step):
        """A fresh ``v<n>`` for the step's (first) output."""
        nonlocal counter
        names.of[("node", step.index)] = target = names.fresh(f"v{counter}", "v")
        counter += 1
        return target
    for position, step in enumerate(plan.steps):
        node = step.node
        if step.backward_start:
            lines.append("    # ---- the backward pass (tape.gradient) ----")
        if step.kind == "assign":
            var = node.inputs[0].index
            lines.append(f"    _assign({holders[var]}, {node.params['mode']!r}, {text(step.inputs[1])})")
            continue
        if step.kind == "concat_target":   # its pieces wrote into it already
            lines.append(f"    # {text(('node', step.index, 0))}: the {len(step.inputs)} products "
                         f"above, each written into its rows")
            _free(lines, step, position, plan, names, returned)
            continue
        args = [text(s) for s in step.inputs]
        if node is not None and node.subgraphs:
            names.of[("multi", step.index)] = True   # its outputs are a tuple: ``v2[0]``
            lines.extend(control_flow.write_statement(node, args, name_result(step), names.fresh,
                                                      namespace, called, name))
            _free(lines, step, position, plan, names, returned)
            if node.primitive.stateful:   # a branch or body may have assigned a Variable
                read_epoch.clear()
            continue
        if step.kind == "one_hot_matmul":
            target = name_result(step)
            namespace["one_hot_rows_matmul"] = one_hot_rows_matmul
            matrix = transposed(args[1], node.params.get("transpose_b"))
            start, stop = step.rows
            lines.append(f"    {target} = one_hot_rows_matmul(xp, {args[0]}, {matrix}, {start}, {stop})"
                         f"  # (one-hot seeds * {args[0]}) @ {matrix}: row j is {args[0]}[:, j] "
                         f"times {matrix}[j], j = {start}..{stop - 1}")
            _free(lines, step, position, plan, names, returned)
            continue
        if step.kind == "matmul_into":
            _write_matmul_into(lines, step, args, names, plan, text)
            _free(lines, step, position, plan, names, returned)
            continue
        if step.kind == "guard":
            lines.extend(check_lines(args[0], plan.spec(step.inputs[0])))
            _free(lines, step, position, plan, names, returned)
            continue
        if step.kind == "fold" and getattr(step, "zero_guards", None) is not None:
            src = ("fold", step.index)
            names.of[src] = target = names.fresh(f"z{counter}", "z")
            counter += 1
            namespace[target] = plan.constants[src]
            label = _label(node, args) or f"{node.op_type}({', '.join(args)})"
            met = ", ".join(text(g) for g in step.zero_guards)
            lines.append(f"    # {target} = {label} is zeros"
                         + (f" ({met} checked finite above): skipped" if met else ": skipped"))
            continue
        if step.kind == "fold":
            src = ("fold", step.index)
            names.of[src] = target = names.fresh(f"k{counter}", "k")
            counter += 1
            namespace[target] = plan.constants[src]
            call = ", ".join(args + [f"{k}={v!r}" for k, v in node.params.items()])
            lines.append(f"    # {target} = {node.op_type}({call}) is constant, computed once: "
                         f"{_describe_constant(plan.constants[src])}")
            continue
        template = inline_template(node, step, plan, plan.spec)
        if position in factors:   # tanh's chain rule, its factor shared with the others on y
            first = factors[position][0]
            if first:
                factor_names[step.inputs[0]] = names.fresh(f"dtanh_{args[0]}", "dtanh")
                lines.append(f"    {factor_names[step.inputs[0]]} = 1 - {args[0]} * {args[0]}"
                             f"  # tanh' = 1 - tanh**2, for the chain rules through {args[0]} below")
            factor = factor_names[step.inputs[0]]
            template = "{1} * " + factor
        if template is not None:
            target = name_result(step)
            lines.append(f"    {target} = {expression(template, node, args, position, plan, text)}")
            _free(lines, step, position, plan, names, returned)
            if position in factors and factors[position][1]:
                if lines[-1].startswith("    del "):
                    lines[-1] += f", {factor}"
                else:
                    lines.append(f"    del {factor}")
            continue
        key = (node.op_type, id(node.primitive))
        if key not in forwards:
            forwards[key] = names.fresh(node.op_type, "op")
            namespace[forwards[key]] = node.primitive.forward
        call = "".join(", " + a for a in args)
        if node.params and all(_is_literal(v) for v in node.params.values()) \
                and all(k.isidentifier() and not keyword.iskeyword(k) for k in node.params):
            call += "".join(f", {k}={v!r}" for k, v in node.params.items())
        elif node.params:
            pname = names.fresh(f"{forwards[key]}_params_{counter}", "params")
            namespace[pname] = dict(node.params)
            call += f", **{pname}"
        target = name_result(step)
        if step.n_outputs != 1:
            names.of[("multi", step.index)] = True
        target, call, label, rows_done = conv_rows.write_call(
            step, target, call, _label(node, args), names.fresh, rows_names, rows_pending)
        lines.append(f"    {target} = {forwards[key]}(xp{call})" + (f"  # {label}" if label else ""))
        _free(lines, step, position, plan, names, returned)
        if rows_done:
            lines.append(f"    del {rows_done}")
    outs = [text(s) for s in plan.outputs]
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    namespace["_names"] = names.of
    return "\n".join(lines) + "\n", namespace, called


def _write_matmul_into(lines, step, args, names, plan, text):
    """A chunk's MatMul writing into its rows of the joined result (``concat.py``)."""
    concat = step.target
    key = ("node", concat.index)
    if key not in names.of:
        names.of[key] = names.fresh("joined", "v")
        shape, dtype = concat.node.specs[0]
        lines.append(f"    {names.of[key]} = xp.empty({tuple(shape)!r}, dtype=xp.{dtype.name})"
                     f"  # filled by the products below (ConcatV2 along axis 0)")
    a_spec, b_spec = plan.spec(step.inputs[0]), plan.spec(step.inputs[1])
    b = transposed(args[1], step.node.params.get("transpose_b"))
    start, stop = step.rows
    rows = f"{names.of[key]}[{start}:{stop}]"
    if len(a_spec[0]) > 2:
        n = b_spec[0][0] if step.node.params.get("transpose_b") else b_spec[0][1]
        lines.append(f"    xp.matmul({args[0]}.reshape(-1, {a_spec[0][-1]}), {b}, "
                     f"out={rows}.reshape(-1, {n}))")
    else:
        lines.append(f"    xp.matmul({args[0]}, {b}, out={rows})")


def _free(lines, step, position, plan, names, returned):
    """``del`` the values whose last use was this step, so their memory goes back at once."""
    done = []
    for s in step.inputs:
        if s[0] == "node" and plan.last_use.get(s[:2]) == position and s[:2] not in returned \
                and s[:2] in names.of and names.of[s[:2]] not in done:
            done.append(names.of[s[:2]])
    if done:
        lines.append(f"    del {', '.join(done)}")


def _is_literal(value):
    """Plain data whose repr is a Python literal: safe to write into the source."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, (tuple, list)):
        return all(_is_literal(v) for v in value)
    return False


def _describe_constant(value):
    if value.size == 1:
        return f"{value.dtype.name} {backend.to_numpy(value).reshape(()).item()!r}"
    return f"{value.dtype.name} array of shape {tuple(value.shape)}"


def _label(node, args):
    """The op's display template (``x @ w``), as the tape printout shows it; '' if none."""
    template = node.primitive.label
    if node.custom is not None:
        return "custom gradient"
    if not template or template.startswith(node.op_type):
        return ""  # ``Tanh(v0)`` would only repeat the line
    try:
        return template.format(*args, **node.params)
    except (IndexError, KeyError, ValueError):
        return ""


def _assign(variable, mode, value):
    """An ``AssignVariableOp`` of the program: ``variable.assign*(value)``.

    On raw arrays when nothing observes the thread and the value fits (the
    moving statistics of a BatchNormalization, every step): ``add``/``sub``
    compute a fresh array, so earlier snapshots keep theirs; ``assign``
    copies, since the program may write over its value later (``passes.py``).
    """
    current = variable._value
    if _tape.thread_state.observers or getattr(value, "dtype", None) != current.dtype \
            or getattr(value, "shape", None) != current.shape:
        getattr(variable, ASSIGN.methods[mode])(Tensor(value))
        return
    xp = backend.namespace(backend.backend_of(current))
    if mode == "assign":
        variable._value = xp.array(value, copy=True)
    else:
        variable._value = xp.asarray(current + value if mode == "add" else current - value)
