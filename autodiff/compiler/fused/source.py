"""The source of a fused kernel: a chain's ops as numba loops over the elements.

``fused/__init__.py`` finds the chains and ``reroll.py`` splits each one into
segments: ``Straight`` ops, written one after another inside one loop over the
elements, and ``Loop`` repetitions, written as a loop over the repetitions
around one period's loop over the elements. This module writes a kernel's
source from its segments (``kernel_source``); ``kernels.py`` compiles it.

A kernel reads and writes flat arrays at offsets that are numbers in its
source, so LLVM runs its loop over the elements in SIMD registers. For
``ad.sin(x) * 2.0 + 1.0`` on 8 float32 values (``c0``, ``c1``: the constants)::

    def _fused_0(p_x, p_c0, p_c1):
        a_c1 = np.asarray(p_c1).ravel()
        a_c0 = np.asarray(p_c0).ravel()
        a_x = p_x.ravel()
        v_c0 = a_c0[0]
        v_c1 = a_c1[0]
        n = a_x.size
        out = np.empty(8, np.float32)
        for i in range(n):
            v_x = a_x[i]
            v_v0 = np.sin(v_x)
            v_v1 = v_v0 * v_c0
            v_v2 = v_v1 + v_c1
            out[0 + i] = v_v2
        return out.reshape((1,) + (8,))

A second value kept would be written at ``out[8 + i]``; a sum of ``v_v2``
over its elements would follow the loop as
``out[8] = np.float32(0.0) + pairwise(out, 0, 8, np.float32(-0.0))``.
"""

import ast

import numpy as np

from .kernels import loads
from .reroll import Loop, Straight

__all__ = ["HELD_BYTES", "Inputs", "kernel_source", "locate"]

HELD_BYTES = 1 << 20    # rows held by the program between calls, per array, at most


def kernel_source(name, spec, segments, totals, outputs, inputs, local=frozenset()):
    """One kernel's source, the arguments its call passes and where each output goes.

    Args:
        name: the kernel's name (``_fused_<k>``).
        spec: the chain's ``(shape, dtype)``.
        segments: ``reroll.plan``'s ``Straight`` and ``Loop`` segments, in order.
        totals: ``[(target, source)]``: sums over all elements of ``source``, after the loops.
        outputs: the values the pack hands on, in the order they were defined.
        inputs: an ``Inputs`` for the values read from outside the kernel.
        local: the outputs that only later kernels of the same numba call read: they go
            to an array the program holds (``_keep_<k>``), not to the new pack.

    Returns:
        ``(source, argument names, {output: ("out" or the held array's name, row, whether
        it is a row of a Loop's block)})``.

    Allocating an array of a few kB costs a call that starts after other work 30-50
    us on this VM (glibc's malloc sorts the chunks that work freed), as much as the
    whole warm call of W1. So the rows that never leave the numba call (the forward
    values a gradient reads, a Loop's carries: ``tmp``) live in arrays allocated once,
    with the program, when they are small (``HELD_BYTES``); the kernels of one numba
    call run while it holds the GIL, so no other call of the program can see them.
    Only what Python reads afterwards is a new array on every call.

    Every array is read and written flat, at offsets that are numbers in the source
    (``a_pack[16 + i]``, ``out[8 + i]``: row 2 and row 1 of packs of 8 elements): LLVM
    then sees that the rows cannot overlap and runs the loop over the elements in SIMD
    registers, 8 float32 at once (with a trip count it cannot see, it would need a
    run-time overlap check per pair of rows, gives up past a few, and runs each element's
    whole chain alone). A math function numba has no vector form of (``sin``) is then
    called lane by lane on independent values, which a core overlaps. A Loop's rows
    (``out[s0 + i]``, ``s0 = 16 + r * 8``) are the exception: few, checked at run time."""
    shape, dtype = spec
    size, kind = int(np.prod(shape)), ("float32" if dtype == np.float32 else "float64")
    itemsize = np.dtype(dtype).itemsize
    place = _Places(segments, totals, outputs, local)
    if place.rows["keep"] * size * itemsize > HELD_BYTES:
        place = _Places(segments, totals, outputs)
    lines = []
    for segment in segments:
        if isinstance(segment, Loop):
            lines += _loop_lines(segment, place, inputs, kind, size)
        else:
            reads = dict.fromkeys(n for _, expr, _ in segment.ops for n in loads(expr)
                                  if n != "np" and n not in {t for t, _, _ in segment.ops})
            lines.append("    for i in range(n):")
            lines += _element_reads(reads, place, inputs, size, "        ")
            for target, expr, _ in segment.ops:
                lines.append(f"        v_{target} = {ast.unparse(_elementwise(expr, kind))}")
                lines += [f"        {a}[{row * size} + i] = v_{target}"
                          for a, row in place.stores(target)]
    for target, source in totals:   # np.sum's 0 + the pairwise sum, in NumPy's order
        if source in place.at:
            array, offset = place.at[source][0], place.at[source][1] * size
        else:
            array, offset = inputs.array(source)
        lines.append(f"    out[{place.at[target][1] * size}] = np.{kind}(0.0) + pairwise("
                     f"{array}, {offset}, {size}, np.{kind}(-0.0))")
    held, made = {}, []
    for array in ("keep", "tmp"):
        rows = place.rows[array]
        if rows and (array == "keep" or rows * size * itemsize <= HELD_BYTES):
            held[array] = f"_{array}_{name.rsplit('_', 1)[-1]}"
            inputs.hold(held[array], np.zeros((rows,) + tuple(shape), dtype))
            made.append(f"    {array} = p_{held[array]}.reshape(-1)")
        elif rows:
            made.append(f"    {array} = np.empty({rows * size}, np.{kind})")
    if inputs._rows:
        inputs.hold(f"_rows_{name.rsplit('_', 1)[-1]}", np.array(inputs._rows, np.int64))
    head = [f"def {name}({', '.join('p_' + a for a in inputs.args)}):"] + inputs.setup()
    # The trip count is read at run time: a literal one would let LLVM unroll the loop
    # fully, and compiling a long chain unrolled takes minutes.
    head += [f"    n = {inputs.count or size}",
             f"    out = np.empty({place.rows['out'] * size}, np.{kind})"] + made
    lines.append(f"    return out.reshape(({place.rows['out']},) + {tuple(shape)!r})")
    where = {t: (held.get(place.at[t][0], "out"), place.at[t][1], t in place.in_blocks)
             for t in outputs}
    return "\n".join(head + lines) + "\n", list(inputs.args), where


def _loop_lines(loop, place, inputs, kind, size):
    """A Loop's lines: its carries' first values, then ``for r``: around ``for i``."""
    lines, holds = [], place.holds[id(loop)]
    if loop.carries:
        lines.append("    for i in range(n):")
        for j, ref in sorted(loop.carries.items()):
            value = f"np.{kind}({ref[1]!r})" if ref[0] == "const" else \
                _read(ref[1], place, inputs, size)
            lines.append(f"        tmp[{holds[j] * size} + i] = {value}")
    lines.append(f"    for r in range({loop.count}):")
    inner, names = [], {}
    for q, refs in enumerate(loop.varying):
        names[f"@w{q}"] = f"w{q}"
        where = inputs.row_or_table(refs, f"_table_{inputs.kernel.rsplit('_', 1)[-1]}_{q}")
        if where[0] == "table":
            lines.append(f"        w{q} = {where[1]}[r]")
        else:
            array, first, step = where[1:]
            lines.append(f"        o{q} = {first} + r * {step}")
            inner.append(f"            w{q} = {array}[o{q} + i]")
    blocks = place.blocks[id(loop)]
    for j, (array, base) in sorted(blocks.items()):
        lines.append(f"        s{j} = {base * size} + r * {size}")
    lines.append("        for i in range(n):")
    lines += [f"            h{j} = tmp[{row * size} + i]" for j, row in sorted(holds.items())
              if j in loop.carries]
    plain = dict.fromkeys(n for expr in loop.body for n in loads(expr)
                          if n != "np" and not n.startswith("@"))
    lines += _element_reads(plain, place, inputs, size, "            ")
    lines += inner
    names.update({f"@b{j}": f"b{j}" for j in range(loop.period)})
    names.update({f"@h{j}": f"h{j}" for j in loop.carries})
    for j, expr in enumerate(loop.body):
        lines.append(f"            b{j} = {ast.unparse(_elementwise(expr, kind, names))}")
    lines += [f"            tmp[{row * size} + i] = b{j}" for j, row in sorted(holds.items())]
    lines += [f"            {array}[s{j} + i] = b{j}" for j, (array, _) in sorted(blocks.items())]
    return lines


def _element_reads(names, place, inputs, size, indent):
    """``v_<name> = <its element i>`` for each name read element by element (a value of
    one element is read once, before the loops: ``Inputs.element`` says so)."""
    lines = []
    for name in names:
        read = _read(name, place, inputs, size)
        if read != f"v_{name}":
            lines.append(f"{indent}v_{name} = {read}")
    return lines


def _read(name, place, inputs, size):
    """The expression that reads element ``i`` of ``name`` (a number: ``v_<name>``)."""
    if name in place.at:
        array, row = place.at[name]
        return f"{array}[{row * size} + i]"
    return inputs.element(name)


class _Places:
    """Where a kernel keeps the values that outlive their segment: ``at[name] = (array,
    row)``, ``array`` ``out`` (the pack: the outputs Python reads), ``keep`` (the outputs
    only later kernels of the same numba call read) or ``tmp`` (the kernel's own rows);
    a Loop's ``holds`` (``{j: tmp row}``: its carries and its last repetition's values read
    later) and ``blocks`` (``{j: (array, first row)}``: one row per repetition)."""

    def __init__(self, segments, totals, outputs, local=frozenset()):
        self.at, self.holds, self.blocks, self.in_blocks = {}, {}, {}, set()
        self.rows = {"out": 0, "keep": 0, "tmp": 0}
        outputs, later = set(outputs), {source for _, source in totals}
        reads_after = []
        for segment in reversed(segments):
            reads_after.append(set(later))
            later |= _reads(segment)
        for segment, read_later in zip(segments, reversed(reads_after)):
            if isinstance(segment, Straight):
                for target, _, _ in segment.ops:
                    if target in outputs or target in read_later:
                        self._put(target, "tmp" if target not in outputs
                                  else "keep" if target in local else "out")
                continue
            holds, blocks, last = {}, {}, segment.count - 1
            for j in range(segment.period):
                column = [row[j] for row in segment.targets]
                kept = [t in outputs or (t in read_later and r < last) for r, t in enumerate(column)]
                if any(kept):
                    array = "out" if any(t in outputs and t not in local for t in column) \
                        else "keep" if any(t in outputs for t in column) else "tmp"
                    blocks[j] = (array, self.rows[array])
                    for t in column:
                        self._put(t, array)
                    self.in_blocks.update(column)
                if j in segment.carries or (not any(kept) and column[last] in read_later):
                    holds[j] = self.rows["tmp"]
                    self.rows["tmp"] += 1
                    if not any(kept):
                        self.at[column[last]] = ("tmp", holds[j])
            self.holds[id(segment)], self.blocks[id(segment)] = holds, blocks
        for target, _ in totals:
            self._put(target, "out")

    def _put(self, name, array):
        self.at[name] = (array, self.rows[array])
        self.rows[array] += 1

    def stores(self, target):
        return [self.at[target]] if target in self.at else []


def _reads(segment):
    """The names a segment reads from before it."""
    if isinstance(segment, Straight):
        defined = {t for t, _, _ in segment.ops}
        return {n for _, expr, _ in segment.ops for n in loads(expr)
                if n != "np" and n not in defined}
    names = {n for expr in segment.body for n in loads(expr) if n != "np" and not n.startswith("@")}
    names |= {ref[1] for ref in segment.carries.values() if ref[0] == "name"}
    return names | {ref[1] for refs in segment.varying for ref in refs if ref[0] == "name"}


class Inputs:
    """The values a kernel reads from outside it, and how: a value ``<name>`` comes in as
    the array ``p_<name>`` (flat: ``a_<name>``), or as a row of a pack ``p_<pack>``; a value
    of one element is read once, before the loops, as ``v_<name>``. ``constants`` maps the
    program's captured one-element constants to their arrays; ``arrays`` collects the
    arrays the program holds for the kernel: the tables of operands that differ between a
    Loop's repetitions, and its held rows (``kernel_source``)."""

    def __init__(self, kernel, in_pack, specs, size, dtype, constants, blocks=frozenset()):
        self.kernel, self.in_pack, self.specs, self.size = kernel, in_pack, specs, size
        self.dtype, self.constants, self.arrays, self.blocks = dtype, constants, {}, blocks
        self.args, self._flat, self._scalars, self.count, self._rows = [], [], [], None, []

    def full(self, name):
        return int(np.prod(self.specs[name][0])) == self.size

    def array(self, name):
        """``(flat array, offset)`` of ``name``'s elements; the first array of the chain's
        size gives the loops' trip count."""
        full = self.full(name)
        if name in self.in_pack:
            pack, row, row_shape = self.in_pack[name]
            self._arg(pack, f"p_{pack}.ravel()", f"p_{pack}[0].size" if full else None)
            offset = row * int(np.prod(row_shape))
            if name not in self.blocks:
                return f"a_{pack}", offset
            # a row of a Loop's block: its offset comes from a table, so that kernels reading
            # different rows of one long block share their compiled code (kernels.canonical)
            if offset not in self._rows:
                self._rows.append(offset)
                self._scalars.append(f"    q{len(self._rows) - 1} = p__rows_"
                                     f"{self.kernel.rsplit('_', 1)[-1]}[{len(self._rows) - 1}]")
            return f"a_{pack}", f"q{self._rows.index(offset)}"
        # a one-element value may be a NumPy scalar (a Sum's result): asarray
        self._arg(name, f"p_{name}.ravel()" if full else f"np.asarray(p_{name}).ravel()",
                  f"a_{name}.size" if full else None)
        return f"a_{name}", 0

    def element(self, name):
        """The expression of element ``i`` of ``name``; ``v_<name>``, read once before the
        loops, for a value of one element."""
        array, offset = self.array(name)
        if self.full(name):
            return f"{array}[{offset} + i]" if offset else f"{array}[i]"
        line = f"    v_{name} = {array}[{offset}]"
        if line not in self._scalars:
            self._scalars.append(line)
        return f"v_{name}"

    def _arg(self, name, flat, count):
        if self.count is None and count is not None:
            self.count = count
        if name not in self.args:
            self.args.append(name)
            self._flat.insert(0, f"    a_{name} = {flat}")

    def row_or_table(self, refs, table):
        """How a Loop reads an operand that differs between repetitions (``refs``, one a
        repetition): ``("rows", flat array, first offset, step)`` or ``("table", array)``."""
        where = [locate(ref, self) for ref in refs]
        if where[0][0] == "row":
            array, first = self.array(refs[0][1])
            return "rows", array, first, where[1][2] - where[0][2]
        self.arrays[table] = np.array([w[1] for w in where], self.dtype)
        self._arg(table, f"p_{table}", None)
        return "table", f"a_{table}"

    def hold(self, name, array):
        """``array``, held by the program as ``name``, passed to the kernel as ``p_<name>``."""
        self.arrays[name] = array
        self.args.append(name)

    def setup(self):
        return self._flat + self._scalars


def locate(ref, inputs):
    """``reroll.plan``'s ``locate``: where a Loop could read ``ref`` repetition by
    repetition (``("row", pack, offset)``, ``("fixed", number)``), or None."""
    if ref[0] == "const":
        return "fixed", ref[1]
    name = ref[1]
    if name in inputs.constants:
        return "fixed", np.asarray(inputs.constants[name]).ravel()[0]
    if name in inputs.in_pack and inputs.full(name):
        pack, row, row_shape = inputs.in_pack[name]
        return "row", pack, row * int(np.prod(row_shape))
    return None


def _elementwise(expr, kind, marks=None):
    """``expr`` on the elements (``v_<name>``; a Loop's ``@`` operands by ``marks``), each
    number written as ``np.float32(...)``: NumPy keeps a Python number weak (the array's
    dtype wins), numba would widen the sum to float64."""
    marks = marks or {}

    class Elements(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.parse(f"np.{kind}({node.value!r})", mode="eval").body

        def visit_Name(self, node):
            if node.id in marks:
                return ast.Name(marks[node.id], ast.Load())
            return node if node.id == "np" else ast.Name("v_" + node.id, ast.Load())
    return Elements().visit(expr)
