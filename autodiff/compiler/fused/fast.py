"""The fused program's one call: argument Tensors in, output Tensors out, in one Python function.

A call of ``ad.function(f, jit_compile=True, experimental_fuse=True)`` passes
through five Python layers before its first kernel runs (``Function.__call__``,
``ConcreteFunction._run``, ``Program.run``, ``Fused.call``, the fused function),
and then through numba's dispatcher, which looks at the type of each of the
driver's arguments. Warm, that is about 20 us; in a call that starts after
other work (caches cold) 50-60 us, as much as 0.04 us per op of W1's 1,500
(benchmarks/README.md, "Fused chains"). This module writes, once per fused
program, one function that does what those layers do for the traced shapes
only (``ConcreteFunction._run`` calls it first), and returns None before
running anything when a call is not one it was written for; the caller then
takes the ordinary path. For W1 (``c0``, ``c1``, ``k1503``: constants; ``_keep_0``,
``_tmp_0``, ``_tmp_1``, ``_rows_1``: rows and tables the program holds)::

    def f_lambda_fast(args):
        if len(args) != 1 or type(args[0]) is not Tensor or _backend.xp is not np \\
                or _blas_warmup.pending:
            return None
        x = args[0]._value
        if type(x) is not ndarray or x.shape != (8,) or x.strides != (4,) \\
                or x.dtype is not _dtype_0 or not x.flags.aligned or not x.flags.writeable:
            return None
        _pack_0, _pack_1 = _run_0_entry(x, c0, c1, _keep_0, _tmp_0, k1503, _tmp_1, _rows_1)
        v1500 = _pack_0[0, 0]
        v3002 = _pack_1[0]
        return (Tensor(v1500), Tensor(v3002))

- The body is the fused function's (``Fused.source``), the same lines in the
  same order: the same kernels run on the same arrays, so the results are the
  same bits.
- ``_run_0_entry`` is the compiled function numba's dispatcher would have
  chosen (``dispatcher.overloads[types].entry_point``), called without the
  dispatcher's look at each argument's type. Only a call whose every argument
  has a type known here calls it: an argument of ``f`` (checked above: an
  ndarray of the traced shape and dtype, C-contiguous with NumPy's own strides,
  aligned, writeable: numba types such an array exactly as ``_warm``'s zeros;
  a read-only one is another type to numba, left to the dispatcher) or an array the
  program holds, which no line assigns. A call reading a value that a NumPy line
  computed keeps the dispatcher.
- A guard that fails (``return None`` in the fused function: a NaN where zeros
  were skipped) runs the NumPy program instead, as ``Fused.call`` does.
- The outputs are wrapped as ``Program.run`` wraps them (a nest of tuples and
  lists written out; any other structure through the program's own packer).

It must not change what is computed; it only skips Python work.
"""

import ast

import numpy as np

from ... import backend
from ...tensor import Tensor
from ...tracing.graph import Ref
from .. import blas_warmup
from .kernels import loads

__all__ = ["one_call"]


def one_call(program, fn_def, namespace, dispatchers):
    """``(source, function)`` of the one-call function of a fused program, or
    ``(None, None)`` when it cannot be written (a shape not fully known, a return
    it does not recognise).

    Args:
        program: the NumPy ``Program`` the fused form was made from.
        fn_def: the fused function (an ``ast.FunctionDef``; it is not changed).
        namespace: the globals the fused function runs in.
        dispatchers: ``{name: numba dispatcher}`` of the kernels and drivers it calls.
    """
    fn_def = ast.parse(ast.unparse(fn_def)).body[0]    # a copy: the caller keeps its own
    params = [a.arg for a in fn_def.args.args]
    specs = program.graph.arg_specs
    if params[:1] != ["xp"] or len(params) != len(specs) + 1 \
            or any(d is None for shape, _ in specs for d in shape):
        return None, None
    params = params[1:]
    arrays = {name: np.zeros(tuple(shape), np.dtype(dtype._np))
              for name, (shape, dtype) in zip(params, specs)}
    scope = dict(namespace)
    taken = set(scope) | {n.id for n in ast.walk(fn_def) if isinstance(n, ast.Name)} | set(params)

    def helper(base, value):
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        scope[name] = value
        return name

    names = {key: helper(key, value) for key, value in (
        ("_backend", backend), ("_blas_warmup", blas_warmup), ("np", np), ("ndarray", np.ndarray),
        ("Tensor", Tensor))}
    assigned = {n.id for n in ast.walk(fn_def) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Store)}
    held = {name: value for name, value in namespace.items()
            if name not in assigned and isinstance(value, (np.ndarray, np.generic))}
    _call_entry_points(fn_def, dispatchers, arrays, held, helper)
    numpy_program = helper("_numpy_program",
                           lambda *a: program._pack(iter(program.call(np, *a))))
    final = fn_def.body[-1]
    for node in ast.walk(fn_def):
        if not isinstance(node, ast.Return):
            continue
        if node is final and isinstance(node.value, ast.Tuple):
            continue
        if node.value is not None and not (isinstance(node.value, ast.Constant)
                                           and node.value.value is None):
            return None, None
        node.value = ast.parse(f"{numpy_program}({', '.join(params)})", mode="eval").body
    if not (isinstance(final, ast.Return) and isinstance(final.value, ast.Tuple)):
        return None, None
    results = [ast.unparse(e) for e in final.value.elts]
    try:
        packed = _packed(program.graph.outputs, iter(results), names["Tensor"])
    except _Unwritable:
        packed = f"{helper('_pack', program._pack)}(iter(({''.join(r + ', ' for r in results)})))"
    fn_def.body[-1] = ast.parse(f"return {packed}").body[0]
    name = helper(f"{program.name}_fast", None)
    tensors = "".join(f" or type(args[{k}]) is not {names['Tensor']}" for k in range(len(params)))
    lines = [f"def {name}(args):",
             f"    if len(args) != {len(params)}{tensors} or {names['_backend']}.xp is not "
             f"{names['np']} or {names['_blas_warmup']}.pending:",
             "        return None"]
    for k, param in enumerate(params):
        value = arrays[param]
        dtype = helper(f"_dtype_{k}", value.dtype)
        lines += [f"    {param} = args[{k}]._value",
                  f"    if type({param}) is not {names['ndarray']} or {param}.shape != {value.shape!r}"
                  f" or {param}.strides != {value.strides!r} or {param}.dtype is not {dtype}"
                  f" or not {param}.flags.aligned or not {param}.flags.writeable:",
                  "        return None"]
    if "xp" in loads(fn_def):
        lines.append(f"    xp = {names['np']}")
    fn = ast.parse("\n".join(lines)).body[0]
    fn.body += fn_def.body
    source = ast.unparse(fn) + "\n"
    exec(compile(source, f"<ad.function {program.name} (fused, one call)>", "exec"), scope)
    return source, scope[name]


def _call_entry_points(fn_def, dispatchers, arrays, held, helper):
    """Points each call of a kernel or driver whose arguments all have known types
    (``arrays``: the function's arguments as checked; ``held``: the arrays the program
    holds) at numba's compiled function for those types, when it has one."""
    import numba
    for node in ast.walk(fn_def):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in dispatchers and not node.keywords
                and all(isinstance(a, ast.Name) for a in node.args)):
            continue
        values = [arrays.get(a.id, held.get(a.id)) for a in node.args]
        if any(v is None for v in values):
            continue
        compiled = dispatchers[node.func.id].overloads.get(tuple(numba.typeof(v) for v in values))
        if compiled is not None:
            node.func.id = helper(f"{node.func.id}_entry", compiled.entry_point)


class _Unwritable(Exception):
    """An output structure other than a nest of tuples and lists of graph outputs."""


def _packed(structure, results, tensor):
    """The expression wrapping the results (names, in order) as ``structure``, as
    ``program._packer`` would."""
    if isinstance(structure, Ref):
        return f"{tensor}({next(results)})"
    if type(structure) in (tuple, list):
        parts = [_packed(item, results, tensor) for item in structure]
        if type(structure) is list:
            return f"[{', '.join(parts)}]"
        return f"({''.join(p + ', ' for p in parts)})"
    raise _Unwritable
