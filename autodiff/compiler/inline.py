"""How the compiled program writes simple ops: as the expressions a person would write.

The library's ops whose forward is exactly an expression (``x + y``,
``xp.tanh(x)``, tanh's chain rule ``dy * (1 - y * y)``, ``x.T @ g``) are
written as that expression instead of a call of the op's forward; the floats
are the same, because the forward computes this very expression. When the
plan lets a step write over an input that dies there (``passes.py``,
``IN_PLACE``), the expression becomes the ufunc call with ``out=``, and the
expression stays beside it as a comment. Tanh's ``1 - y * y`` is computed
once for all the chain rules through the same ``y``. A binary op meeting a
channel row, and a ``BroadcastTo`` of one, are written as calls of
``rowwise.py``'s helpers, the expression beside them as a comment.
"""

from .. import backend
from . import rowwise
from .passes import IN_PLACE

__all__ = ["inline_template", "expression", "shared_tanh_factors", "transposed"]

# The library's ops whose forward is exactly this expression: written inline,
# as a person would write them by hand.
_INLINE = {"AddV2": "{0} + {1}", "Sub": "{0} - {1}", "Mul": "{0} * {1}", "RealDiv": "{0} / {1}",
           "Neg": "-{0}", "Square": "{0} * {0}", "Sin": "xp.sin({0})", "Cos": "xp.cos({0})",
           "Exp": "xp.exp({0})", "Log": "xp.log({0})", "Tanh": "xp.tanh({0})",
           "Sqrt": "xp.sqrt({0})", "TanhGrad": "{1} * (1 - {0} * {0})",
           "Relu": "xp.maximum(0, {0})", "ReluGrad": "{0} * ({1} > 0)"}
# Pow by a constant float exponent that its forward computes with a cheaper
# ufunc (``ops/elementwise.py``, as NumPy's own ``**`` does): the same floats.
_CONSTANT_POWERS = {2.0: "xp.square({0})", -1.0: "xp.reciprocal({0})"}


def inline_template(node, step, plan, spec):
    """The expression an op is written as, or None when it is written as a call."""
    if not node.runs_builtin(node.op_type):
        return None
    tile = getattr(step, "rowwise", None)
    if tile is not None and node.op_type == "BroadcastTo":
        shape = tuple(node.specs[0][0])
        return (f"broadcast_rows(xp, {{0}}, {shape}, {tile})"
                f"  # xp.broadcast_to({{0}}, {shape}), as a fresh array")
    if node.op_type in _INLINE and not node.params:
        return _INLINE[node.op_type]
    if node.op_type == "MatMul" and set(node.params) <= {"transpose_a", "transpose_b"} \
            and all(s is not None and len(s[0]) == 2 for s in map(spec, step.inputs)):
        return transposed("{0}", node.params.get("transpose_a")) + " @ " \
            + transposed("{1}", node.params.get("transpose_b"))
    if node.op_type == "Pow":
        exponent, base = plan.constants.get(step.inputs[1]), spec(step.inputs[0])
        if exponent is not None and exponent.ndim == 0 and base is not None \
                and base[1].kind == "f" and exponent.dtype == base[1]:
            # read once, while compiling (a device scalar is copied to the host here only)
            return _CONSTANT_POWERS.get(float(backend.to_numpy(exponent)))
    return None


def shared_tanh_factors(plan):
    """``{position: (first, last)}`` for the TanhGrad steps that share their ``y`` with
    another: ``1 - y * y`` is computed once for all of them (the same floats)."""
    by_y = {}
    for position, step in enumerate(plan.steps):
        if step.kind == "op" and step.node.runs_builtin("TanhGrad") and not step.node.params:
            by_y.setdefault(step.inputs[0], []).append(position)
    return {p: (p == uses[0], p == uses[-1])
            for uses in by_y.values() if len(uses) > 1 for p in uses}


def transposed(operand, flag):
    """``x.T`` for a MatMul operand with its ``transpose_*`` flag set (2-D operands only)."""
    return operand + ".T" if flag else operand


def expression(template, node, args, position, plan, text):
    """The right-hand side of an inline op: an expression, or a ufunc writing over a dying input."""
    written = template.format(*args)
    step = plan.steps[position]
    tile = getattr(step, "rowwise", None)
    buffer = text(plan.reuse[position]) if position in plan.reuse else None
    if tile is not None and node.op_type in rowwise.BINARY:
        row_first = tuple(plan.spec(step.inputs[0])[0]) != tuple(node.specs[0][0])
        call = f"rowwise({rowwise.BINARY[node.op_type]}, {args[0]}, {args[1]}, {tile}, {row_first}"
        if buffer is None:
            return f"{call})  # {written}, {args[0] if row_first else args[1]} a channel row"
        return f"{call}, out={buffer})  # {written}, written over {buffer} (not needed again)"
    if buffer is None:
        return written
    return (IN_PLACE[node.op_type].format(*args, out=buffer)
            + f"  # {written}, written over {buffer} (not needed again)")
