"""The compiler's passes: from a traced graph to the list of steps a program runs.

``plan(graph)`` walks the graph's nodes once, in order, and decides for each
what the compiled program does with it:

- **fold** it: a pure op whose inputs are all constants is computed now, once
  (a gradient's seed broadcast to the target's shape, ``2.0 - 1.0`` in a
  power rule, a Jacobian's one-hot seed stack), and so is an op whose result
  does not depend on its inputs' values (``zeros_like(x)``, ``x ** 0``);
- **alias** it: an op that returns one of its inputs unchanged is dropped
  and its users read that input (``x * 1``, ``x / 1``, ``x ** 1``,
  ``identity``, a reshape to the same shape); every such rule is exact, NaN
  and signed zeros included, so the program computes what eager code does;
- **share** it: the same pure op on the same inputs with the same params
  was already computed (common subexpressions; random ops never match);
- or **run** it, as one call of the op's forward.

Equal small constants count as one (each ``tape.gradient`` seeds with its
own ``1.0``). Then the steps nothing needs are dropped (dead code), and
each value's last use is found so the program can free it right there.

A Jacobian's one-hot seed stack times a matrix becomes a broadcast multiply
(``seeds.py``), and the chunks of a Jacobian are written straight
into the result instead of being concatenated (``concat.py``); an
elementwise op meeting a channel row (a batch norm's scale, a bias) runs
with a wide inner loop (``rowwise.py``).
On NumPy, forward mode's zero tangents are skipped where the values they
meet are checked finite at run time (``zeros.py``); a failed
check runs the exact plan instead.

Last, **buffers are reused**: an elementwise step whose input dies at that
step writes its result into that input's array (``xp.multiply(a, b,
out=a)``) instead of allocating a new one. Only arrays the program made
itself qualify, and only when nothing could still see them: the producer
and every reader of the array are ops that return fresh arrays (no views,
as a reshape or a slice would be), and it is not returned or assigned to a
variable. See ``IN_PLACE`` and ``FRESH``.

Values are named by *sources*: ``("arg", k)``, ``("const", c)``,
``("var", v, epoch)`` (a variable's value between two assignments),
``("node", i, j)`` (output j of node i) and ``("fold", i)``.
"""

import json

import numpy as np

from .. import backend, nest
from ..tracing.graph import ASSIGN, Ref
from . import concat, conv_rows, rowwise, seeds, zeros

__all__ = ["plan", "Plan", "Step", "IMPURE_PREFIXES", "IN_PLACE", "FRESH"]

# Ops that must run once per occurrence even when their inputs match.
IMPURE_PREFIXES = ("Random", "TruncatedNormal", "Stateless", "Dropout")

# Elementwise ops that can write into an input's buffer: op type -> the ufunc
# call their forward makes (``x * y``, ``xp.sin(x)``, ``xp.maximum(0, x)``...),
# writing into ``out``.
IN_PLACE = {"AddV2": "xp.add({0}, {1}, out={out})", "Sub": "xp.subtract({0}, {1}, out={out})",
            "Mul": "xp.multiply({0}, {1}, out={out})",
            "RealDiv": "xp.true_divide({0}, {1}, out={out})", "Neg": "xp.negative({0}, out={out})",
            "Sin": "xp.sin({0}, out={out})", "Cos": "xp.cos({0}, out={out})",
            "Exp": "xp.exp({0}, out={out})", "Log": "xp.log({0}, out={out})",
            "Tanh": "xp.tanh({0}, out={out})", "Sqrt": "xp.sqrt({0}, out={out})",
            "Square": "xp.square({0}, out={out})", "Relu": "xp.maximum(0, {0}, out={out})",
            "ReluGrad": "xp.multiply({0}, {1} > 0, out={out})"}
# Ops whose result is a new array that nothing else holds, and which keep no
# view of their inputs: their outputs (and inputs) are safe to overwrite.
FRESH = frozenset(IN_PLACE) | {"MatMul", "TanhGrad", "Reciprocal", "Maximum", "Minimum",
                                "SquaredDifference"}

# Constants up to this size are compared by value (and merged when equal).
_MERGE_CONSTANTS_UP_TO_BYTES = 1 << 16


class Step:
    """One thing the program does: run an op (``"op"``), write a constant (``"fold"``)
    or assign a variable (``"assign"``). ``inputs`` are sources."""

    __slots__ = ("kind", "index", "node", "inputs", "n_outputs", "backward_start", "rows", "target",
                 "zero_guards", "conv_rows", "rowwise")

    def __init__(self, kind, index, node, inputs, n_outputs=1):
        self.kind, self.index, self.node, self.inputs = kind, index, node, inputs
        self.n_outputs = n_outputs
        self.backward_start = False


class Plan:
    """What ``plan`` decided. ``constants`` maps const and fold sources to arrays;
    ``last_use`` maps a node source to the position of the last step reading it;
    ``reuse`` maps a step's position to the input source whose buffer it writes into."""

    def __init__(self, steps, outputs, constants, last_use, reuse=None, spec=None, guarded=False):
        self.steps, self.outputs, self.constants, self.last_use = steps, outputs, constants, last_use
        self.reuse = reuse or {}
        self.spec = spec or (lambda src: None)   # source -> (shape, dtype), or None
        self.guarded = guarded   # zero tangents skipped under guards (``zeros.py``)


def plan(graph, skip_zero_tangents=True):
    """The Plan of ``graph``: see the module docstring.

    With ``skip_zero_tangents``, forward mode's zero tangents are skipped
    where the values they meet are finite, behind guards
    (``zeros.py``); ``Plan.guarded`` says whether any was, and then
    the program may give up (return None) for the exact plan to run.
    """
    constants, canonical = _constants(graph)
    epoch, value_of, seen, steps = {}, {}, {}, []

    def source(ref):
        if ref.kind == "node":
            return value_of[ref.index][ref.output]
        if ref.kind == "const":
            return ("const", canonical[ref.index])
        if ref.kind == "var":
            return ("var", ref.index, epoch.get(ref.index, 0))
        return ("arg", ref.index)

    def spec(src):
        kind = src[0]
        if kind in ("const", "fold"):
            return constants[src].shape, constants[src].dtype
        if kind == "arg":
            shape, dtype = graph.arg_specs[src[1]]
            return tuple(shape), np.dtype(dtype._np)
        if kind == "var":
            value = graph.variables[src[1]]._value
            return value.shape, value.dtype
        specs = getattr(graph.nodes[src[1]], "specs", None)
        return specs[src[2]] if specs else None

    for i, node in enumerate(graph.nodes):
        inputs = [source(r) for r in node.inputs]
        if node.primitive is ASSIGN:
            steps.append(Step("assign", i, node, inputs))
            epoch[node.inputs[0].index] = epoch.get(node.inputs[0].index, 0) + 1
            value_of[i] = []
            continue
        pure = (node.custom is None and not node.primitive.stateful and not node.subgraphs
                and not node.primitive.name.startswith(IMPURE_PREFIXES))
        single = _n_outputs(node) == 1
        key = _cse_key(node, inputs) if pure else None
        if key is not None and key in seen:   # computed (or folded) already: share it
            value_of[i] = value_of[seen[key]]
            continue
        if key is not None:
            seen[key] = i
        if pure and single and inputs and all(s[0] in ("const", "fold") for s in inputs):
            constants[("fold", i)] = _as_array(node.primitive.forward(
                backend.xp, *[constants[s] for s in inputs], **node.params))
            steps.append(Step("fold", i, node, inputs))
            value_of[i] = [("fold", i)]
            continue
        out_spec = (getattr(node, "specs", None) or [None])[0]
        alias = _alias(node, inputs, out_spec, spec, constants) if pure and single else None
        if alias is not None and alias[0] != "var":  # a variable's name is re-read after assigns
            value_of[i] = [alias]
            continue
        fill = _constant_fill(node, inputs, constants) if pure and single else None
        if fill is not None and out_spec is not None:
            constants[("fold", i)] = backend.xp.full(out_spec[0], fill, dtype=out_spec[1])
            steps.append(Step("fold", i, node, inputs))
            value_of[i] = [("fold", i)]
            continue
        n = _n_outputs(node)
        steps.append(Step("op", i, node, inputs, n))
        value_of[i] = [("node", i, j) for j in range(n if n is not None else _max_output(graph, i))]
        if node.subgraphs and node.primitive.stateful:   # a branch or body may assign: reads
            for v in range(len(graph.variables)):          # after it see the new values
                epoch[v] = epoch.get(v, 0) + 1

    outputs = [source(leaf) for leaf in nest.flatten(graph.outputs) if isinstance(leaf, Ref)]
    seeds.rewrite(steps, constants, spec)
    guarded = False
    if skip_zero_tangents and zeros.applies(steps):
        steps, outputs, guarded = zeros.rewrite(steps, outputs, constants, spec,
                                                         _live_steps, Step)
    else:
        steps = _live_steps(steps, outputs)
    concat.rewrite(steps, spec)
    conv_rows.rewrite(steps, spec)
    rowwise.rewrite(steps, spec)
    _mark_backward_starts(steps, getattr(graph, "backward_starts", ()))
    last_use = {}
    for position, step in enumerate(steps):
        for s in step.inputs:
            if s[0] == "node":
                last_use[s[:2]] = position
    return Plan(steps, outputs, constants, last_use, _buffer_reuse(steps, outputs, last_use), spec,
                guarded)


_MAKES_ARRAYS = ("op", "one_hot_matmul")   # step kinds that compute a node's output


def _buffer_reuse(steps, outputs, last_use):
    """``{position: input source}`` for the steps that can write into a dying input."""
    producer, readers_fresh = {}, {}
    kept = {s[:2] for s in outputs if s[0] == "node"}
    for step in steps:
        if step.kind in _MAKES_ARRAYS:
            producer[("node", step.index)] = step
        # a guard reads its value once, where it is made, and keeps nothing
        fresh = step.kind == "guard" or (step.kind in _MAKES_ARRAYS
                                         and _makes_fresh(step))
        for s in step.inputs:
            if s[0] == "node":
                readers_fresh[s[:2]] = readers_fresh.get(s[:2], True) and fresh
                if step.kind == "assign":
                    kept.add(s[:2])
    reuse, taken = {}, set()
    for position, step in enumerate(steps):
        if step.kind != "op" or not step.node.runs_builtin(IN_PLACE):
            continue
        out_spec = (getattr(step.node, "specs", None) or [None])[0]
        if out_spec is None or len(out_spec[0]) == 0:
            continue  # 0-d results may be NumPy scalars, which have no buffer
        for s in step.inputs:
            owner = producer.get(s[:2])
            if s[0] == "node" and s[:2] not in kept and s[:2] not in taken \
                    and last_use.get(s[:2]) == position and readers_fresh.get(s[:2]) \
                    and owner is not None and _makes_fresh(owner) \
                    and tuple(owner.node.specs[0][0]) == tuple(out_spec[0]) \
                    and owner.node.specs[0][1] == out_spec[1]:
                reuse[position] = s
                taken.add(s[:2])
                break
    return reuse


def _makes_fresh(step):
    """Whether ``step`` returns a new array and keeps no view of its inputs: an op of
    ``FRESH``, or a ``BroadcastTo`` written as a fresh copy (``rowwise.py``)."""
    return step.node.runs_builtin(FRESH) or getattr(step, "rowwise", None) is not None


def _constants(graph):
    """``{("const", c): array}`` for the canonical constants, and each constant's canonical index."""
    constants, canonical, by_value = {}, {}, {}
    for c, tensor in enumerate(graph.constants):
        value = tensor._value
        key = None
        if value.nbytes <= _MERGE_CONSTANTS_UP_TO_BYTES:
            key = (value.dtype.str, value.shape, backend.to_numpy(value).tobytes())
        canonical[c] = by_value.setdefault(key, c) if key is not None else c
        constants.setdefault(("const", canonical[c]), value)
    return constants, canonical


def _n_outputs(node):
    if node.custom is not None:
        return len(node.inputs)
    return node.primitive.n_outputs


def _max_output(graph, i):
    """How many outputs of node ``i`` are read (for ops whose forward decides the count)."""
    used = [r.output for n in graph.nodes for r in n.inputs if r.kind == "node" and r.index == i]
    used += [leaf.output for leaf in nest.flatten(graph.outputs)
             if isinstance(leaf, Ref) and leaf.kind == "node" and leaf.index == i]
    return max(used, default=0) + 1


def _as_array(value):
    return value if hasattr(value, "shape") else backend.xp.asarray(value)


def _all_equal(constants, src, number):
    value = constants.get(src)
    if value is None or value.size > (1 << 16):
        return False
    return bool((backend.to_numpy(value) == number).all())


def _alias(node, inputs, out_spec, spec, constants):
    """The input an op returns unchanged, or None. Exact rules only."""
    op = node.op_type
    if op in ("Identity", "StopGradient") and len(inputs) == 1:
        return inputs[0]
    if out_spec is None:
        return None
    if op in ("Reshape", "BroadcastTo") and spec(inputs[0]) == out_spec:
        return inputs[0]
    if op == "Mul":
        for keep, other in ((0, 1), (1, 0)):
            if spec(inputs[keep]) == out_spec and _all_equal(constants, inputs[other], 1):
                return inputs[keep]
    if op in ("RealDiv", "Pow") and spec(inputs[0]) == out_spec \
            and _all_equal(constants, inputs[1], 1):
        return inputs[0]
    return None


def _constant_fill(node, inputs, constants):
    """The one value every element of the op's result has, whatever its inputs hold, or None.

    ``zeros_like(x)`` and ``ones_like(x)`` read only x's shape (forward mode makes many
    zero tangents); ``x ** 0`` is 1 even for NaN and inf.
    """
    if node.runs_builtin(("ZerosLike", "OnesLike")):
        return 0 if node.op_type == "ZerosLike" else 1
    if node.op_type == "Pow" and _all_equal(constants, inputs[1], 0):
        return 1
    return None


def _cse_key(node, inputs):
    try:
        params = json.dumps(node.params, sort_keys=True)
    except (TypeError, ValueError):
        return None  # params that are not plain data: never shared
    return (id(node.primitive), tuple(inputs), params)


def _live_steps(steps, outputs):
    """The steps the outputs (or an assignment) need, in order."""
    needed = {s[:2] for s in outputs if s[0] in ("node", "fold")}
    kept = []
    for step in reversed(steps):
        if step.kind in ("assign", "guard") or (step.kind, step.index) in needed \
                or ("node", step.index) in needed or step.node.primitive.stateful:
            kept.append(step)
            needed.update(s[:2] for s in step.inputs if s[0] in ("node", "fold"))
    kept.reverse()
    return kept


def _mark_backward_starts(steps, starts):
    pending = sorted(starts)
    for step in steps:
        if step.kind != "assign" and pending and step.index >= pending[0]:
            step.backward_start = True
            pending = [p for p in pending if p > step.index]
