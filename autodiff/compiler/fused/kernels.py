"""The numba side of a fused program: each chain's loop written as source, and compiled once.

``fused/__init__.py`` finds a program's chains; this module writes each one as
a numba function (``kernel_source``), names it canonically so that chains with
the same ops and layout share one compiled function in this process
(``canonical``, ``KERNELS``), and compiles the kernels and the drivers that
``runs.py`` writes (``compile_all``). It never runs a kernel itself.

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

__all__ = ["KERNELS", "canonical", "compile_all", "kernel_source", "loads"]

KERNELS = {}     # canonical source -> (_kernel_<k>, its numba dispatcher), for this process


def compile_all(kernels, drivers):
    """``({name: numba dispatcher}, how many kernels were new)`` for the kernels' and the
    drivers' sources (``{name: source}``); a source met before in this process is not
    compiled again (numba compiles each one on its first call)."""
    native, dispatchers, compiled = {}, {}, 0
    for name, text in kernels.items():
        source = canonical(text)
        if source not in KERNELS:
            compiled += 1
            KERNELS[source] = (f"_kernel_{len(KERNELS)}", _njit(source, {}))
        native[name], dispatchers[name] = KERNELS[source]
    for name, text in drivers.items():
        source = canonical(_renamed(text, native))
        if source not in KERNELS:
            names = set(loads(ast.parse(source)))
            called = {g: d for g, d in KERNELS.values() if g in names}
            KERNELS[source] = (f"_kernel_{len(KERNELS)}", _njit(source, called))
        dispatchers[name] = KERNELS[source][1]
    return dispatchers, compiled


def loads(node):
    """The names ``node`` (an ``ast`` node) reads, in the order the tree holds them."""
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]



def kernel_source(name, ops, outputs, in_pack, specs):
    """One chain as a numba function's source, and the arguments its call passes.

    Every array is read and written flat, at offsets that are numbers in the source
    (``a_pack[16 + i]``, ``out[8 + i]``: row 2 and row 1 of packs of 8 elements): LLVM
    then sees that the rows cannot overlap and runs the loop over the elements in SIMD
    registers, 8 float32 at once (with a trip count it cannot see, it would need a
    run-time overlap check per pair of rows, gives up past a few, and runs each element's
    whole chain alone). A math function numba has no vector form of (``sin``) is then
    called lane by lane on independent values, which a core overlaps."""
    shape, dtype = ops[0][2]
    defined = {target for target, _, _ in ops}
    reads = []
    totals = [(target, expr.source) for target, expr, _ in ops if not isinstance(expr, ast.AST)]
    ops = [op for op in ops if isinstance(op[1], ast.AST)]
    for _, expr, _ in ops:
        reads += [n for n in loads(expr) if n not in defined and n != "np"]
    reads = list(dict.fromkeys(reads))
    args, setup, loop_reads, packs = [], [], [], set()
    size = int(np.prod(shape))
    # A value <name> comes in as the array p_<name> (flat: a_<name>); v_<name> is its element.
    for read in reads:
        if int(np.prod(specs[read][0])) == size:
            where, index = loop_reads, "i"
        else:                # one element, read once before the loop
            where, index = setup, "0"
        indent = "        " if where is loop_reads else "    "
        if read in in_pack:
            pack, row, row_shape = in_pack[read]
            width = int(np.prod(row_shape))
            if pack not in packs:
                packs.add(pack)
                args.append(pack)
                setup.insert(0, f"    a_{pack} = p_{pack}.ravel()")
            where.append(f"{indent}v_{read} = a_{pack}[{row * width} + {index}]")
        else:   # a one-element value may be a NumPy scalar (a Sum's result): asarray
            args.append(read)
            flat = f"p_{read}.ravel()" if index == "i" else f"np.asarray(p_{read}).ravel()"
            setup.insert(0, f"    a_{read} = {flat}")
            where.append(f"{indent}v_{read} = a_{read}[{index}]")
    kind = "float32" if dtype == np.float32 else "float64"
    # The trip count is read at run time: a literal one would let LLVM unroll the loop
    # fully, and compiling a long chain unrolled takes minutes.
    full = [r for r in reads if int(np.prod(specs[r][0])) == size]
    count = (f"p_{in_pack[full[0]][0]}[0].size" if full[0] in in_pack
             else f"a_{full[0]}.size") if full else str(size)
    lines = [f"def {name}({', '.join('p_' + a for a in args)}):"] + setup + [
        f"    n = {count}", f"    out = np.empty({len(outputs) * size}, np.{kind})"]
    lines.append("    for i in range(n):")
    lines += loop_reads
    for target, expr, _ in ops:
        lines.append(f"        v_{target} = {ast.unparse(_elementwise(expr, kind))}")
    rows = {target: row for row, target in enumerate(outputs)}
    for target in outputs:
        if target not in dict(totals):
            lines.append(f"        out[{rows[target] * size} + i] = v_{target}")
    for target, source in totals:   # np.sum's 0 + the pairwise sum, in NumPy's order
        lines.append(f"    out[{rows[target] * size}] = np.{kind}(0.0) + pairwise(out, "
                     f"{rows[source] * size}, {size}, np.{kind}(-0.0))")
    lines.append(f"    return out.reshape(({len(outputs)},) + {tuple(shape)!r})")
    return "\n".join(lines) + "\n", args


def _elementwise(expr, kind):
    """``expr`` on the elements (``v_<name>``), each number written as ``np.float32(...)``:
    NumPy keeps a Python number weak (the array's dtype wins), numba would widen the sum
    to float64."""
    class Elements(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.parse(f"np.{kind}({node.value!r})", mode="eval").body

        def visit_Name(self, node):
            return node if node.id == "np" else ast.Name("v_" + node.id, ast.Load())
    return Elements().visit(expr)


def canonical(text):
    """A kernel's source with its names numbered in the order the tree holds them: two
    chains with the same ops and layout (a long chain's repeating pieces, another trace of
    the same function) give the same text, compiled once (``KERNELS``)."""
    fn = ast.parse(text).body[0]
    fn.name, names = "kernel", {}

    def canon(name):
        return name if name in ("np", "n", "out", "i", "range", "pairwise") \
            or name.startswith("_kernel_") else \
            names.setdefault(name, f"x{len(names)}")
    for arg in fn.args.args:
        arg.arg = canon(arg.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            node.id = canon(node.id)
    return ast.unparse(fn) + "\n"


def _njit(source, scope):
    """The numba dispatcher of ``source``'s function ``kernel``; ``scope`` holds the
    kernels a driver calls."""
    import numba
    scope = {"np": np, "pairwise": _pairwise(), **scope}
    exec(compile(source, "<fused kernel>", "exec"), scope)
    return numba.njit(error_model="numpy", fastmath=False)(scope["kernel"])


_PAIRWISE = []


def _pairwise():
    """``pairwise(a, lo, n, z)``: NumPy's pairwise sum of ``a[lo:lo + n]`` (``z``: -0.0 in
    ``a``'s dtype), compiled once: blocks of up to 128 values summed in 8 running partial
    sums, longer runs split in two at a multiple of 8. ``0 + pairwise(...)`` is what
    ``np.sum`` gives for a contiguous array over all its axes, bit for bit (NumPy 2.4,
    checked against it for every size up to 300 and some larger ones by
    ``tests/autodiff/test_fused.py``)."""
    if not _PAIRWISE:
        import numba

        @numba.njit(error_model="numpy", fastmath=False)
        def pairwise(a, lo, n, z):
            if n < 8:
                res = z
                for i in range(lo, lo + n):
                    res += a[i]
                return res
            if n <= 128:
                r = a[lo:lo + 8].copy()
                i = 8
                while i < n - n % 8:
                    for j in range(8):
                        r[j] += a[lo + i + j]
                    i += 8
                res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
                for i in range(lo + i, lo + n):
                    res += a[i]
                return res
            half = n // 2
            half -= half % 8
            return pairwise(a, lo, half, z) + pairwise(a, lo + half, n - half, z)
        _PAIRWISE.append(pairwise)
    return _PAIRWISE[0]


def _renamed(text, names):
    """``text`` with each name in ``names`` replaced by its value (a driver's kernels by
    their names in ``KERNELS``)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return ast.unparse(tree)
