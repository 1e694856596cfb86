"""The numba side of a fused program: each kernel's source named canonically and compiled once.

``fused/__init__.py`` finds a program's chains and ``source.py`` writes each one
as a numba function's source; this module names each source canonically so that chains with
the same ops and layout share one compiled function in this process
(``canonical``, ``KERNELS``), and compiles the kernels and the drivers that
``runs.py`` writes (``compile_all``). It never runs a kernel itself.
"""

import ast

import numpy as np

__all__ = ["KERNELS", "canonical", "compile_all", "loads"]

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
