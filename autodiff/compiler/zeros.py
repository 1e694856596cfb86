"""Zero tangents in compiled programs: skipped while the values they meet are finite.

Forward mode gives an op's inputs without a tangent a tangent of zeros,
and the JVP rules then multiply those zeros through the computation: in an
HVP, ``zeros @ w`` for every weight, and a whole ``log(x)`` branch of a
power rule whose exponent is a constant. Almost always the result is zero.
Not always: ``0 * inf`` and ``0 * nan`` are NaN, so a zero tangent that
meets an overflowed activation or a weight that went to inf turns into NaN,
and eager code says so (as TensorFlow does:
``test_forward_over_reverse_zero_tangent_meeting_inf_is_nan``).

So the compiled program skips that work under a **guard**: it checks, once,
that the values the zeros would have met are finite
(``if not isfinite(xp.vdot(w, w)): return None``, see ``check_lines``), and
a step whose result can only be zero becomes the constant zeros. When a guard fails the program
gives up and the exact program (every zero multiplied out) runs instead,
so the results are eager's, NaN for NaN. Only the sign of a zero may
differ: ``a + 0.0`` is ``+0.0`` where ``a`` is ``-0.0``, and the skipped
sum keeps ``a``.

The rules (``Z`` a source known to be all zeros, ``a`` anything):

- ``Z * a``, ``a * Z``, ``Z @ a``, ``a @ Z`` and ``TanhGrad(a, Z)`` are zero if ``a`` is finite;
- ``ReluGrad(Z, a)`` is zero (``a`` only chooses where);
- ``-Z``, a sum, reshape, transpose or broadcast of ``Z``, ``where(c, Z, Z)`` are zero;
- ``a + Z``, ``Z + a`` and ``a - Z`` are ``a`` when they have ``a``'s shape and dtype.

A guard on a value that nothing else needs would cost what it saves, so it
is moved to that value's inputs when the op cannot make a non-finite value
from finite ones (tanh, sigmoid, relu, ``where``, ...; tanh's chain rule
``dy * (1 - y * y)`` when ``y`` is a tanh; the guarded ``log(where(x > 0,
x, 1))`` of the power rule); otherwise the step keeps its zeros and runs. See ``rewrite``.

The pass runs only on the NumPy backend (a guard reads a sum on the host,
which a device would have to copy back) and only for programs that assign
no variable and draw no random numbers, so that running the exact program
after a failed guard does nothing twice.
"""

from math import isfinite

import numpy as np

from .. import backend

__all__ = ["rewrite", "all_finite", "isfinite", "check_lines"]

# Op types whose result is zero when the zero input meets finite values: op -> rule.
_TIMES = frozenset({"Mul", "MatMul", "BatchMatMulV2"})
_SHAPE_ONLY = frozenset({"Neg", "Sum", "Reshape", "Transpose", "BroadcastTo", "ExpandDims",
                         "Squeeze", "Identity"})
_PLUS = frozenset({"AddV2", "Sub"})
# Ops that cannot make a NaN or inf from finite inputs: a guard may move to their inputs.
_FINITE_FROM_FINITE = frozenset({"Tanh", "Sigmoid", "Sin", "Cos", "Relu", "Neg", "Abs", "Sign",
                                 "Maximum", "Minimum", "SelectV2", "ReluGrad", "Identity",
                                 "Reshape", "Transpose", "BroadcastTo", "ExpandDims", "Squeeze"})


def all_finite(xp, array):
    """True when every element of ``array`` is a finite number.

    A sum is finite only if every term is; a sum that overflows says False
    too, which only sends the call down the exact path.

    >>> from autodiff.compiler.zeros import all_finite
    >>> all_finite(np, np.array([1.0, 2.0])), all_finite(np, np.array([1.0, np.inf]))
    (True, False)
    """
    total = array.sum()
    return isfinite(total.real) and isfinite(total.imag)


def check_lines(value, spec):
    """The program's lines that give up (return None) unless the array named ``value`` is
    all finite; ``spec`` is its (shape, dtype).

    A float32 or float64 array is checked by the dot product of the array with itself,
    one BLAS call: a sum of squares is finite only if every element is (and none is so
    large that its square overflows, about 1.8e19 in float32, where the exact program
    runs instead). Other dtypes call ``all_finite``.

    >>> from autodiff.compiler.zeros import check_lines
    >>> print("\\n".join(check_lines("v3", ((64, 32), np.dtype("float32")))))
        if not isfinite(xp.vdot(v3, v3)):  # the zeros skipped below meet v3; v3 . v3 is finite only if all of v3 is
            return None
    """
    if spec is not None and spec[1].char in "fd":
        test = f"isfinite(xp.vdot({value}, {value}))"
        why = f"{value} . {value} is finite only if all of {value} is"
    else:
        test, why = f"all_finite(xp, {value})", f"is all of {value} finite?"
    return [f"    if not {test}:  # the zeros skipped below meet {value}; {why}",
            "        return None"]


def applies(steps):
    """Whether the pass may run on a program with these steps (see the module docstring)."""
    from .passes import IMPURE_PREFIXES
    return backend.xp is backend.namespace("numpy") and not any(
        step.kind == "assign" or step.node.custom is not None
        or step.node.primitive.name.startswith(IMPURE_PREFIXES) for step in steps)


def rewrite(steps, outputs, constants, spec, live_steps, step_class):
    """``(steps, outputs, guarded)`` with the zero tangents skipped under guards.

    ``live_steps(steps, outputs)`` is the plan's dead-code pass (it keeps
    guard steps); ``step_class`` makes new steps. ``guarded`` is False when
    nothing was skipped (the steps come back unchanged, dead code dropped).
    """
    producer = {("node", s.index): s for s in steps if s.kind == "op"}
    forbidden, lifted = set(), set()
    while True:
        new_steps, new_outputs, needs = _skip_zeros(steps, outputs, constants, spec, producer,
                                                    forbidden, lifted, step_class)
        if not needs:
            return live_steps(steps, outputs), outputs, False
        live = live_steps(new_steps, new_outputs)
        read = {}
        for step in live:
            for s in step.inputs:
                read.setdefault(s[:2], set()).add(step.kind)
        idle = [g for g in needs if g[0] == "node" and read.get(g[:2]) == {"guard"}
                and g[:2] not in {o[:2] for o in new_outputs}]
        if not idle:
            return live, new_outputs, True
        for g in idle:   # move the guard to the inputs, or give up skipping what needed it
            if _lift(g, producer, constants) is not None and g[:2] not in lifted:
                lifted.add(g[:2])
            else:
                forbidden.update(needs[g])


def _skip_zeros(steps, outputs, constants, spec, producer, forbidden, lifted, step_class):
    """One pass over the steps; returns (steps, outputs, {guarded source: skipped node indices})."""
    rename, zero, needs, new_steps = {}, set(), {}, []
    guard_at = {}   # source -> guard step (placed after its producer, or first)

    def is_zero(src):
        return src in zero or (src[0] in ("const", "fold") and _all_zeros(constants[src]))

    def guards_for(src, index):
        """The sources whose finiteness makes ``0 * src`` zero ([] for finite constants)."""
        kind = spec(src)
        if kind is None or kind[1].kind not in "fc":
            return []          # integers and booleans are finite
        if src[0] in ("const", "fold"):
            return [] if _all_finite_constant(constants[src]) else None
        if src[:2] in lifted:
            found = []
            for s in _lift(src, producer, constants):
                more = guards_for(s, index)
                if more is None:
                    return None
                found += more
            return found
        return [src]

    for step in steps:
        inputs = [rename.get(s, s) for s in step.inputs]
        node = step.node
        out = ("node", step.index, 0)
        result = None if step.kind != "op" or step.index in forbidden or step.n_outputs != 1 \
            else _zero_rule(node, inputs, is_zero, spec, out)
        if result is not None and result[0] == "alias":
            rename[out] = result[1]
            continue
        if result is not None and result[0] == "zero":
            found = []
            for s in result[1]:
                more = guards_for(s, step.index)
                found = None if more is None or found is None else found + more
            if found is not None:
                src = ("fold", step.index)
                constants[src] = backend.xp.zeros(*spec(out))
                zero.add(src)
                rename[out] = src
                made = _copy(step, step_class, inputs)
                made.kind, made.zero_guards = "fold", list(dict.fromkeys(found))
                new_steps.append(made)
                for g in found:
                    needs.setdefault(g, set()).add(step.index)
                    if g not in guard_at:
                        guard_at[g] = _guard_step(g, step_class)
                continue
        new_steps.append(_copy(step, step_class, inputs) if inputs != step.inputs else step)
    new_outputs = [rename.get(s, s) for s in outputs]
    return _place_guards(new_steps, guard_at), new_outputs, needs


def _zero_rule(node, inputs, is_zero, spec, out):
    """``("zero", [sources it must meet finite])``, ``("alias", source)`` or None."""
    op = node.op_type
    out_spec = spec(out)
    if out_spec is None or out_spec[1].kind not in "fc" or not node.runs_builtin(op):
        return None
    zeros = [is_zero(s) for s in inputs]
    if op in _TIMES and len(inputs) == 2 and any(zeros):
        return ("zero", [s for s, z in zip(inputs, zeros) if not z])
    if op == "TanhGrad" and zeros[1]:
        return ("zero", [] if zeros[0] else [inputs[0]])
    if op == "ReluGrad" and zeros[0]:
        return ("zero", [])
    if op in _SHAPE_ONLY and inputs and zeros[0]:
        return ("zero", [])
    if op == "SelectV2" and zeros[1] and zeros[2]:
        return ("zero", [])
    if op in _PLUS and len(inputs) == 2:
        if all(zeros):
            return ("zero", [])
        for keep, other in ((0, 1), (1, 0)) if op == "AddV2" else ((0, 1),):
            if zeros[other] and spec(inputs[keep]) == out_spec:
                return ("alias", inputs[keep])
    return None


def _lift(src, producer, constants):
    """The inputs whose finiteness makes ``src`` finite, or None when its op could overflow."""
    step = producer.get(src[:2])
    if step is None or step.n_outputs != 1:
        return None
    node = step.node
    if node.runs_builtin(_FINITE_FROM_FINITE):
        return list(step.inputs)
    if node.runs_builtin("TanhGrad"):   # dy * (1 - y * y) with y = tanh(.): at most |dy|
        made = producer.get(step.inputs[0][:2])
        return list(step.inputs) if made is not None and made.node.runs_builtin("Tanh") else None
    if node.runs_builtin("Log"):   # log(where(x > 0, x, c)) with a constant c > 0: finite if x is
        select = producer.get(step.inputs[0][:2])
        if select is None or not select.node.runs_builtin("SelectV2"):
            return None
        condition, x, fallback = select.inputs
        test = producer.get(condition[:2])
        if test is not None and test.node.runs_builtin("Greater") and test.inputs[0] == x \
                and test.inputs[1] in constants and _all_zeros(constants[test.inputs[1]]) \
                and fallback in constants and _all_positive_finite(constants[fallback]):
            return [x]
    return None


def _place_guards(steps, guard_at):
    """Each guard step right after the step that makes its source (or first, for inputs)."""
    if not guard_at:
        return steps
    after = {}
    for src, guard in guard_at.items():
        after.setdefault(src[:2] if src[0] == "node" else None, []).append(guard)
    placed = list(after.pop(None, []))
    for step in steps:
        placed.append(step)
        placed.extend(after.pop(("node", step.index), []))
    return placed


def _guard_step(src, step_class):
    return step_class("guard", -1, None, [src])


def _copy(step, step_class, inputs):
    made = step_class(step.kind, step.index, step.node, inputs, step.n_outputs)
    for slot in ("rows", "target", "backward_start"):
        if hasattr(step, slot):
            setattr(made, slot, getattr(step, slot))
    return made


def _host(value):
    return backend.to_numpy(value)


def _all_zeros(value):
    return value.dtype.kind in "fc" and not _host(value).any()


def _all_finite_constant(value):
    return bool(np.isfinite(_host(value)).all())


def _all_positive_finite(value):
    host = _host(value)
    return host.dtype.kind == "f" and bool(((host > 0) & np.isfinite(host)).all())
