"""Loop rerolling: a chain that repeats one pattern of ops becomes a loop over the repetitions.

A traced Python loop is unrolled in the trace: ``for _ in range(500): y = sin(y) * c0 + c1``
gives a chain of 1,500 ops, and its gradient one of about as many. Written
straight into a kernel, such a chain is thousands of lines of machine code run
once per call: a call that starts with cold caches spends most of its time
fetching them, and LLVM takes seconds to compile them. This module finds the
repetitions and describes each run of them as a ``Loop``; ``source.py``
writes a Loop as an outer loop over the repetitions around one period's body.
A chain that computes, for each element, (``c0``, ``c1``: constants)::

    v0 = np.sin(x)         v3 = np.sin(v2)        v6 = np.sin(v5)
    v1 = v0 * c0           v4 = v3 * c0           v7 = v6 * c0
    v2 = v1 + c1           v5 = v4 + c1           v8 = v7 + c1

is 3 repetitions of a period of 3 ops. Each repetition reads the one before
it (``v3 = sin(v2)``: a *carry*, the value at position 2 of the repetition
before, ``x`` for the first) and values that are the same in every
repetition (``c0``, ``c1``). The kernel then runs::

    h2 = x                                  # the carry, one row of the chain's shape
    for r in range(3):
        for i in range(n):                  # the elements, as in a straight kernel
            b0 = np.sin(h2[i]); b1 = b0 * c0; b2 = b1 + c1
            h2[i] = b2
            out[r, i] = b2                  # only when needed later (a backward pass)

Every element goes through the same scalar ops in the same order as in the
straight kernel, so the results are the same bit for bit. An operand may also
differ between repetitions when the kernel can index it by the repetition: a
row of an earlier pack whose row number steps evenly (the backward pass reads
the forward values ``v8``, ``v5``, ``v2``: rows 2, 1, 0), or a number known
when the program is made (a literal, or a captured constant of one element),
put in a small table. Anything else ends the loop; the ops that are not in a
loop stay straight.

``plan`` also decides where a long chain is cut into kernels: each kernel gets
at most ``budget`` ops of code, a loop counting as its period, so a rerolled
chain of any length is one kernel.
"""

import ast

__all__ = ["Loop", "Straight", "plan", "MAX_PERIOD"]

MAX_PERIOD = 32    # the longest repeating pattern looked for, in ops (a backward pass
                   # repeats with a period a few times its forward pass's)
MIN_SAVED = 4      # a loop must spare at least this many ops of straight code


class Straight:
    """Ops written one after another, as before: ``ops`` is ``[(target, expr, spec)]``."""

    def __init__(self, ops):
        self.ops = ops


class Loop:
    """``count`` repetitions of ``period`` ops.

    - ``targets[r][j]``: the name of repetition ``r``'s op ``j``;
    - ``body[j]``: op ``j``'s expression, its operands named ``@b<j'>`` (op ``j'`` of the
      same repetition), ``@h<j'>`` (op ``j'`` of the repetition before: a carry), ``@w<q>``
      (operand ``q`` of ``varying``), or by the value's own name (the same in every
      repetition) or a number;
    - ``carries[j']``: what repetition 0 reads as ``@h<j'>``: ``("name", n)`` or
      ``("const", number)``;
    - ``varying[q]``: the operand of each repetition, ``[("name", n) or ("const", x)]``.
    """

    def __init__(self, period, targets, body, carries, varying):
        self.period, self.targets, self.body = period, targets, body
        self.carries, self.varying = carries, varying

    @property
    def count(self):
        return len(self.targets)


def plan(ops, locate, budget, reroll=True):
    """The first kernel's worth of ``ops``: ``(segments, how many ops they cover)``.

    Args:
        ops: a chain's ops, ``[(target, expr, spec)]``, sums excluded.
        locate: ``locate(("name", n))``: ``("row", array, offset)`` for a value read from an
            array at a known offset, ``("fixed", number)`` for a number known now, None
            otherwise; says which operands may differ between repetitions.
        budget: the most ops of code in one kernel (a loop counts as its period).
        reroll: False: straight ops only (the chain cut every ``budget`` ops).

    Returns:
        ``([Straight | Loop], n)``: segments covering ``ops[:n]``, ``n >= 1``.

    >>> import ast
    >>> from autodiff.compiler.fused.reroll import plan
    >>> lines, y = [], "x"
    >>> for k in range(500):                # y = sin(y) * c0 + c1, 500 times
    ...     lines += [f"s{k} = np.sin({y})", f"m{k} = s{k} * c0", f"a{k} = m{k} + c1"]
    ...     y = f"a{k}"
    >>> spec = ((8,), np.dtype(np.float32))
    >>> pairs = [line.split(" = ") for line in lines]
    >>> ops = [(target, ast.parse(expr, mode="eval").body, spec) for target, expr in pairs]
    >>> segments, n = plan(ops, lambda ref: None, 120)
    >>> [(type(s).__name__, s.period, s.count) for s in segments], n
    ([('Loop', 3, 500)], 1500)
    """
    shapes = _Shapes(ops)
    defs = {target: k for k, (target, _, _) in enumerate(ops)}
    segments, s, cost = [], 0, 0
    while s < len(ops):
        loop = _best_loop(ops, shapes, defs, s, locate) if reroll else None
        if loop is not None and loop.period > budget:
            loop = None
        size = loop.period if loop is not None else 1
        if cost + size > budget and segments:
            break
        cost += size
        if loop is not None:
            segments.append(loop)
            s += loop.period * loop.count
        else:
            if not segments or not isinstance(segments[-1], Straight):
                segments.append(Straight([]))
            segments[-1].ops.append(ops[s])
            s += 1
    return segments, s


class _Shapes:
    """``shapes[k]``: ``_shape`` of ``ops[k]``'s expression, worked out when first asked."""

    def __init__(self, ops):
        self.ops, self.known = ops, {}

    def __getitem__(self, k):
        if k not in self.known:
            self.known[k] = _shape(self.ops[k][1])
        return self.known[k]


def _shape(expr):
    """``(the expression's form with every operand blanked, its operands in order)``: the
    order ``_fill`` puts them back in."""
    refs = []

    def form(node):
        if isinstance(node, ast.Name):
            refs.append(("name", node.id))
            return "@"
        if isinstance(node, ast.Constant):
            refs.append(("const", node.value))
            return "@"
        if isinstance(node, ast.BinOp):
            return type(node.op).__name__, form(node.left), form(node.right)
        if isinstance(node, ast.UnaryOp):
            return type(node.op).__name__, form(node.operand)
        if isinstance(node, ast.Call):     # np.<function>(...)
            return (node.func.attr,) + tuple(form(a) for a in node.args)
        raise TypeError(f"reroll: unexpected {ast.dump(node)} in a chain")
    return form(expr), refs


def _copy(expr):
    return ast.parse(ast.unparse(expr), mode="eval").body


def _best_loop(ops, shapes, defs, s, locate):
    """The loop starting at ``ops[s]`` that spares the most ops of code (its repetitions
    but the first; the shortest period on a tie), or None when none spares ``MIN_SAVED``.
    (Counting the ops covered instead would favour two repetitions of a long period,
    which any two runs of ops of the same forms are.)"""
    best, spared = None, MIN_SAVED - 1
    for period in range(1, MAX_PERIOD + 1):
        loop = _loop_at(ops, shapes, defs, s, period, locate)
        if loop is not None and (loop.count - 1) * period > spared:
            best, spared = loop, (loop.count - 1) * period
    return best


def _kinds(shapes, defs, s, p, r):
    """Each operand of repetition ``r`` (ops ``s + r*p ...``): ``("internal", j')``,
    ``("carry", j')``, ``("outer", ref)`` (defined before the loop, or a number); None when
    the repetition's form differs from repetition 0's or it reads an older repetition."""
    lo, kinds = s + r * p, []
    for j in range(p):
        form, refs = shapes[lo + j]
        if form != shapes[s + j][0]:
            return None
        row = []
        for ref in refs:
            d = defs.get(ref[1]) if ref[0] == "name" else None
            if d is None or d < s:
                row.append(("outer", ref))
            elif lo <= d < lo + j:
                row.append(("internal", d - lo))
            elif r >= 1 and lo - p <= d < lo:
                row.append(("carry", d - lo + p))
            else:
                return None
        kinds.append(row)
    return kinds


def _loop_at(ops, shapes, defs, s, p, locate):
    """The longest run of repetitions of ``ops[s:s + p]`` from ``s`` as a Loop, or None."""
    if s + 2 * p > len(ops) or any(shapes[s + j][0] != shapes[s + p + j][0] for j in range(p)):
        return None
    first, second = _kinds(shapes, defs, s, p, 0), _kinds(shapes, defs, s, p, 1)
    if first is None or second is None:
        return None
    carries, outer = {}, []     # outer: (j, m) of the operands read from before the loop
    for j, (row0, row1) in enumerate(zip(first, second)):
        for m, (k0, k1) in enumerate(zip(row0, row1)):
            if k1[0] == "internal" and k0 != k1:
                return None
            if k1[0] == "carry":
                if k0[0] != "outer" or carries.setdefault(k1[1], k0[1]) != k0[1]:
                    return None
            if k1[0] == "outer":
                if k0[0] != "outer":
                    return None
                outer.append((j, m))
    values = {slot: [first[slot[0]][slot[1]][1]] for slot in outer}
    modes = {}        # slot -> how its values vary, once they do (``_mode``)
    count = 1
    while s + (count + 1) * p <= len(ops):
        kinds = second if count == 1 else _kinds(shapes, defs, s, p, count)
        if kinds is None or any(k[0] != want[0] or (want[0] != "outer" and k != want)
                                for row, wants in zip(kinds, second)
                                for k, want in zip(row, wants)):
            break
        new = {slot: kinds[slot[0]][slot[1]][1] for slot in values}
        grown = {slot: _mode(values[slot], modes.get(slot), ref, locate)
                 for slot, ref in new.items()}
        if any(mode is False for mode in grown.values()):
            break
        for slot, ref in new.items():
            values[slot].append(ref)
            modes[slot] = grown[slot]
        count += 1
    if count < 2:
        return None
    return _as_loop(ops, s, p, count, first, second, carries, values)


def _mode(vals, mode, ref, locate):
    """How an operand's values vary when ``ref`` joins ``vals`` (one per repetition so
    far): None (all the same), ``("fixed",)`` (numbers known now: a table),
    ``("row", array, offset, step)`` (rows of one array at evenly stepping offsets); False
    when the loop cannot read it. ``mode``: how ``vals`` vary."""
    if mode is None:
        if ref == vals[0]:
            return None
        where = [_where(v, locate) for v in vals + [ref]]
        if any(w is None for w in where):
            return False
        if all(w[0] == "fixed" for w in where):
            return ("fixed",)
        if len(vals) > 1 or where[0][0] != "row" or where[1][0] != "row" \
                or where[0][1] != where[1][1]:
            return False
        return "row", where[0][1], where[0][2], where[1][2] - where[0][2]
    where = _where(ref, locate)
    if where is None or where[0] != mode[0]:
        return False
    if mode[0] == "fixed":
        return mode
    return mode if where[1] == mode[1] and where[2] == mode[2] + len(vals) * mode[3] else False


def _where(ref, locate):
    return ("fixed", ref[1]) if ref[0] == "const" else locate(ref)


def _as_loop(ops, s, p, count, first, second, carries, values):
    """The Loop: repetition 0's expressions with each operand renamed by its kind."""
    varying, names = [], {}
    for (j, m), vals in values.items():
        if any(v != vals[0] for v in vals):
            names[(j, m)] = f"@w{len(varying)}"
            varying.append(vals)
    body = []
    for j in range(p):
        marks = []
        for m, kind in enumerate(second[j]):
            if kind[0] == "internal":
                marks.append(ast.Name(f"@b{kind[1]}", ast.Load()))
            elif kind[0] == "carry":
                marks.append(ast.Name(f"@h{kind[1]}", ast.Load()))
            elif (j, m) in names:
                marks.append(ast.Name(names[(j, m)], ast.Load()))
            else:
                ref = first[j][m][1]
                marks.append(ast.Name(ref[1], ast.Load()) if ref[0] == "name"
                             else ast.Constant(ref[1]))
        body.append(_fill(ops[s + j][1], marks))
    targets = [[ops[s + r * p + j][0] for j in range(p)] for r in range(count)]
    return Loop(p, targets, body, carries, varying)


def _fill(expr, marks):
    """``expr`` with its operands (in ``_shape``'s order) replaced by ``marks``."""
    marks = iter(marks)

    class Fill(ast.NodeTransformer):
        def visit_Name(self, node):
            return node if node.id == "np" else next(marks)

        def visit_Constant(self, node):
            return next(marks)
    return Fill().visit(_copy(expr))
