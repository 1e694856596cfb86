"""One numba call per run of fused chains: the calls between two NumPy lines join into one.

``fused/__init__.py`` cuts a long elementwise chain into kernels of at most
``MAX_CHAIN`` ops, and a program's forward and backward chains are each many
such kernels in a row (a sum over all of a chain's elements ends its last
kernel, so W1's forward and backward run back to back). Called from Python, every kernel costs a dispatch (numba looks at
each argument's type: about 2 µs here), as much as the loop itself for a
vector of 8. This module writes each run of two or more kernel calls with
nothing but ``del`` lines between them as one numba function, a *driver*, that
calls the kernels natively and returns the packs that later lines read::

    _pack_0 = _fused_0(x, c0, c1)                (_pack_2,) = _run_0(x, c0, c1)
    _pack_1 = _fused_1(_pack_0, c0, c1)    ->    v299 = _pack_2[19]
    _pack_2 = _fused_2(_pack_1, c0, c1)
    v299 = _pack_2[19]

The packs that only the run's own kernels read never reach Python. The
kernels are compiled on their own and called, not inlined, so a driver costs
little to compile and the kernels stay shared between programs (``kernels.canonical``).
It must not change what is computed: the same kernels run in the same order on
the same arrays.
"""

import ast

from .kernels import loads

__all__ = ["join", "stays_in_run"]


def join(body, kernel_names):
    """``body`` with each run of two or more kernel calls joined into a driver's call.

    Args:
        body: the fused function's statements (``ast`` nodes), kernel calls written
            ``_pack_k = _fused_k(...)``.
        kernel_names: the names of the kernels (``_fused_k``).

    Returns:
        ``(new body, {driver name: driver source})``; each driver's source calls the
        kernels by the names in ``kernel_names``. A ``del`` inside a run moves after it.
    """
    new_body, drivers, k = [], {}, 0
    position = 0
    while position < len(body):
        stop, calls = position, 0
        while stop < len(body) and (_is_kernel_call(body[stop], kernel_names)
                                    or (calls and isinstance(body[stop], ast.Delete))):
            calls += isinstance(body[stop], ast.Assign)
            stop += 1
        while stop > position and isinstance(body[stop - 1], ast.Delete):
            stop -= 1    # trailing dels stay where they were
        calls = sum(isinstance(s, ast.Assign) for s in body[position:stop])
        if calls < 2:
            new_body.append(body[position])
            position += 1
            continue
        name = f"_run_{k}"
        k += 1
        run = body[position:stop]
        text, args, results = _driver(name, run, _loads_after(body[stop:]))
        drivers[name] = text
        call = f"{name}({', '.join(args)})"
        new_body.append(ast.parse(f"({', '.join(results)},) = {call}" if results else call).body[0])
        new_body.extend(s for s in run if isinstance(s, ast.Delete))
        position = stop
    return new_body, drivers


def _is_kernel_call(stmt, kernel_names):
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in kernel_names)


def _loads_after(statements):
    return {n.id for stmt in statements if not isinstance(stmt, ast.Delete)
            for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _driver(name, run, needed_after):
    """The driver's source, the names its call passes, and the packs it hands back."""
    defined, args, results = set(), [], []
    lines = []
    for stmt in run:
        if isinstance(stmt, ast.Delete):
            continue
        for arg in stmt.value.args:
            if arg.id not in defined and arg.id not in args:
                args.append(arg.id)
        target = stmt.targets[0].id
        defined.add(target)
        lines.append(f"    {ast.unparse(stmt)}")
        if target in needed_after:
            results.append(target)
    lines.append(f"    return ({''.join(r + ', ' for r in results)})")
    return "\n".join([f"def {name}({', '.join(args)}):"] + lines) + "\n", args, results


def stays_in_run(body, chains):
    """``stays(name, k)`` (``chains``: each chain's ``(start, stop)`` lines): whether every line that reads ``name`` is a chain's, with nothing
    but chains' lines and ``del`` lines from line ``k`` to the last of them: ``runs.py`` then
    joins its kernel and theirs into one numba call, and the value never reaches Python."""
    member = [False] * (len(body) + 1)
    for start, stop in chains:
        member[start:stop] = [True] * (stop - start)
    barrier = [len(body)] * (len(body) + 1)   # the first line from k on that is not a chain's
    for k in range(len(body) - 1, -1, -1):
        barrier[k] = barrier[k + 1] if member[k] or isinstance(body[k], ast.Delete) else k
    readers = {}
    for k, stmt in enumerate(body):
        if not isinstance(stmt, ast.Delete):
            for name in loads(stmt):
                readers.setdefault(name, []).append(k)
    return lambda name, k: all(member[r] for r in readers.get(name, [])) \
        and max(readers.get(name, [k])) < barrier[k]
