"""Chunked Jacobians in compiled programs: each chunk's product written into the result.

``batch_jacobian`` computes its result a chunk of output positions at a
time and joins the chunks with one ``ConcatV2`` along axis 0: a copy of the
whole result (W4: 8 MiB, about 7% of the compiled time). When every piece
of such a concatenation is a ``MatMul`` that nothing else reads, the
compiled program allocates the result first and lets each product write
straight into its slice::

    joined = xp.empty((64, 512, 64), dtype=xp.float32)   # ConcatV2 of the products below
    ...
    xp.matmul(v15.reshape(-1, 128), w.T, out=joined[0:8].reshape(-1, 64))

``xp.matmul(..., out=...)`` computes the same numbers as the product it
replaces (the MatMul forward in ``ops/matmul.py``, stacked rows times one
matrix, is this same GEMM); only where they land changes.

``rewrite(steps, spec)`` marks the steps: the concatenation becomes
``concat_target`` (written where its first piece is computed) and each piece
``matmul_into``, with ``step.rows = (start, stop)`` its slice.
"""


__all__ = ["rewrite"]


def rewrite(steps, spec):
    """Marks each ConcatV2 along axis 0 of single-use 2-D-matrix MatMuls; see the module docstring."""
    readers = {}
    for step in steps:
        for s in step.inputs:
            readers[s[:2]] = readers.get(s[:2], 0) + 1
    producer = {("node", step.index): step for step in steps if step.kind == "op"}
    for step in steps:
        node = step.node
        if step.kind != "op" or not node.runs_builtin("ConcatV2") or node.params.get("axis") != 0:
            continue
        out = (getattr(node, "specs", None) or [None])[0]
        pieces = [producer.get(s[:2]) for s in step.inputs]
        if out is None or len(set(step.inputs)) != len(step.inputs) \
                or not all(p is not None and _matmul_piece(p, spec) for p in pieces) \
                or any(readers.get(s[:2]) != 1 for s in step.inputs):
            continue
        start = 0
        for piece in pieces:
            stop = start + piece.node.specs[0][0][0]
            piece.kind, piece.rows, piece.target = "matmul_into", (start, stop), step
            start = stop
        step.kind = "concat_target"


def _matmul_piece(step, spec):
    """A MatMul of a stack (or matrix) of rows by one 2-D matrix, with a known result."""
    if not step.node.runs_builtin("MatMul") or step.node.params.get("transpose_a"):
        return False
    a, b = spec(step.inputs[0]), spec(step.inputs[1])
    specs = getattr(step.node, "specs", None)
    return a is not None and b is not None and specs is not None and len(b[0]) == 2 \
        and len(a[0]) >= 2 and a[1] == b[1] == specs[0][1]
