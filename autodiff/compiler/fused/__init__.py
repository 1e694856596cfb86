"""An optional fused form of a compiled program: its elementwise chains as numba loops.

``ad.function(f, jit_compile=True, experimental_fuse=True)`` runs this form
instead of the NumPy program when numba is installed (the ``[fast]`` extra).
The NumPy program stays what ``experimental_get_compiler_ir`` shows and what
runs by default; this package rewrites a copy of it. This file finds the
chains and rewrites the program's lines; ``reroll.py`` finds the repeating
ops in a chain and cuts it into kernels; ``source.py`` writes each kernel's
source; ``kernels.py`` compiles it; ``runs.py`` joins kernels called in a
row into one call; ``fast.py`` writes the function a call with the traced shapes runs.

- a *chain* is a run of consecutive lines of the program's main function,
  each an elementwise expression (``+ - * /``, unary ``-``, ``xp.sin``,
  ``xp.cos``, ``xp.exp``, ``xp.log``, ``xp.tanh``, ``xp.sqrt``, ``xp.square``,
  ``xp.reciprocal`` and the ufunc calls with ``out=`` that ``inline.py``
  writes) whose operands all have the chain's shape and float dtype, or
  hold one element;
- each chain of two or more ops becomes numba functions, *kernels*, of at
  most ``MAX_CHAIN`` ops of code each: loops over the elements, every op
  computed on scalars in the chain's dtype; ops that repeat (a traced Python
  loop) are one loop over the repetitions around one period's ops
  (``reroll.py``), counted as that period. The values Python reads after the
  chain go into one new array (a *pack*, one row per value; other lines get
  them as views ``pack[j]``), those only later kernels of the same numba call
  read into rows the program holds (``source.kernel_source``);
- a sum over every axis of one of a chain's values (``Sum(xp, v, axis=(0,))``
  where ``v`` is 1-D) ends the chain's kernel: after the loop, in NumPy's own
  order (``kernels.pairwise``: the same bits as ``np.sum``), its result the
  first element of a pack row;
- kernels called one after another, with no other line between them (a long
  chain's pieces; the backward pass's chain after the forward's), run as one
  numba call (a *driver*, ``runs.py``);
- everything else (other reductions, matmuls, random ops, control flow) is the
  NumPy program's own line.

    >>> f = ad.function(lambda x: ad.sin(x) * 2.0 + 1.0, jit_compile=True,
    ...                 experimental_fuse=True)
    >>> f(ad.constant([0.0, 1.0])).numpy().round(4)    # one numba loop: sin, *, +
    array([1.    , 2.6829], dtype=float32)

Results equal the NumPy program's bit for bit for the arithmetic (``+ - * /``,
``sqrt``: IEEE rounds them the same way everywhere; numba's ``fastmath`` is
off and its error model is NumPy's, so 1/0 is inf). ``sin``, ``cos``,
``exp``, ``log`` and ``tanh`` come from numba's math library, NumPy's from its
own SIMD code: they can differ in the last bit (tested: within 2 ulp). Every
pack is a new array on every call, so nothing the caller gets back is shared
with a later call.

The first call compiles each kernel (numba: a few seconds for one of
``MAX_CHAIN`` straight ops on a busy 2-core machine, about half a second for a
rerolled loop); kernels with the same ops and layout share one compiled
function (``kernels.canonical``). ``Fused.compile_seconds`` says how long it
took. Nothing is cached on disk. A call whose arguments' shapes differ from
the trace's (a trace serving any batch size) runs the NumPy program: the packs
are laid out for the traced shapes.
"""

import ast
import time
import warnings

import numpy as np

from ... import backend
from ...ops.reduce import SUM
from ...tape import AutodiffWarning
from .fast import one_call
from .kernels import compile_all, loads
from .reroll import plan
from .runs import join, stays_in_run
from .source import Inputs, kernel_source, locate

__all__ = ["Fused", "available", "for_program", "fuse"]

_UFUNCS = {"sin", "cos", "exp", "log", "tanh", "sqrt"}
_BINARY = {"add": ast.Add, "subtract": ast.Sub, "multiply": ast.Mult, "true_divide": ast.Div,
           "divide": ast.Div}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Ops of code per kernel at most: numba's compile time grows faster than linearly with
# a function's length (1,500 straight ops in one kernel took minutes).
MAX_CHAIN = 120   # divisible by 2, 3, 4, 5, 6 and 8: a repeating chain cuts into equal pieces
MAX_RUN, REROLL = 20000, True   # ops in a chain at most; False: no loops (tests compare)


def available():
    """True when numba can be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


class Fused:
    """A program's fused form: ``.source`` (the Python that calls the kernels), ``.kernels``
    (each chain's numba source), ``.drivers`` (the sources that call kernels in a row),
    ``.compiled`` (how many kernels were new, not reused), ``.compile_seconds``,
    ``call(xp, *arrays)`` and ``.fast`` (``fast.py``: Tensors in, Tensors out; ``.fast_source``)."""

    def __init__(self, program, fn, source, kernels, arg_shapes, seconds):
        self.program, self._fn, self.source, self.kernels = program, fn, source, kernels
        self._arg_shapes, self.compile_seconds = arg_shapes, seconds

    def call(self, xp, *arrays):
        """The outputs, from the kernels; from the NumPy program when a shape is not the
        trace's or a guard fails."""
        if any(a.shape != s for a, s in zip(arrays, self._arg_shapes)):
            return self.program.call(xp, *arrays)
        results = self._fn(xp, *arrays)
        return self.program.call(xp, *arrays) if results is None else results


def for_program(program):
    """``program``'s Fused form, made on its first use and kept on it; None when numba is
    not installed (with a warning, once per program) or the backend is not NumPy."""
    if backend.get_backend() != "numpy":
        return None
    fused = getattr(program, "_fused", None)
    if fused is None:
        try:
            fused = fuse(program)
        except ImportError as err:
            warnings.warn(f"experimental_fuse=True needs numba (pip install "
                          f"'tapeschool[fast]'): {err}; running the NumPy program instead",
                          AutodiffWarning, stacklevel=4)
            fused = False
        program._fused = fused
    return fused or None


def fuse(program):
    """The Fused form of ``program`` (a ``program.Program``); compiles every chain now.

    Raises:
        ImportError: numba is not installed (``pip install 'tapeschool[fast]'``).
    """
    import numba  # noqa: F401  (without numba: ImportError before any work)
    start = time.perf_counter()
    fn_def = next(node for node in ast.parse(program.source).body
                  if isinstance(node, ast.FunctionDef) and node.name == program.name)
    specs = _name_specs(program)
    sums = program.namespace.get("Sum") is SUM.forward   # the registered Sum: np.sum
    body, kernels, namespace = _rewrite(fn_def.body, specs, sums, _constants(program, fn_def))
    body, drivers = join(body, set(kernels))
    fn_def.body = body
    namespace.update(program.namespace)
    dispatchers, compiled = compile_all(kernels, drivers)
    namespace.update(dispatchers)
    source = ast.unparse(fn_def)
    exec(compile(source, f"<ad.function {program.name} (fused)>", "exec"), namespace)
    fused = Fused(program, namespace[program.name], source, kernels,
                  [tuple(shape) for shape, _ in program.graph.arg_specs], 0.0)
    fused.compiled, fused.drivers = compiled, drivers   # kernels new to this process
    _warm(fused, program)
    fused.fast_source, fused.fast = one_call(program, fn_def, namespace, dispatchers)
    fused.compile_seconds = time.perf_counter() - start
    return fused


def _constants(program, fn_def):
    """``{name: array}``: the one-element arrays the program captured (constants, folds),
    which no line of its function assigns: a Loop may put them in a table."""
    assigned = {a.arg for a in fn_def.args.args} | {
        n.id for n in ast.walk(fn_def) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return {name: value for name, value in program.namespace.items()
            if isinstance(value, (np.ndarray, np.generic)) and value.size == 1
            and name not in assigned}


def _warm(fused, program):
    """Compiles every kernel by calling it on zeros of the traced shapes (numba compiles
    on the first call); skipped when a placeholder's shape is not fully known."""
    args = []
    for shape, dtype in program.graph.arg_specs:
        if any(d is None for d in shape):
            return
        args.append(np.zeros(tuple(shape), np.dtype(dtype._np)))
    try:
        fused._fn(np, *args)
    except Exception:  # noqa: BLE001 - a program that cannot run on zeros compiles on its first call
        pass


def _name_specs(program):
    """``{python name: (shape, dtype)}`` for the program's values (args, variables,
    constants, folds, single-output nodes)."""
    specs = {}
    for src, name in program.names.items():
        if not isinstance(name, str) or src[0] == "multi":
            continue
        key = src + (0,) if src[0] in ("node", "var") and len(src) == 2 else src
        try:
            spec = program.plan.spec(key)
        except (KeyError, IndexError, TypeError):
            spec = None
        if spec is not None:
            specs[name] = (tuple(spec[0]), np.dtype(spec[1]))
    return specs


# ---- finding the chains ----------------------------------------------------------------

def _scalar_ast(node, specs, dtype, shape):
    """``node`` as a scalar expression (ast), or None when it is not elementwise here."""
    if isinstance(node, ast.Name):
        spec = specs.get(node.id)
        if spec is None or spec[1] != dtype or (spec[0] != shape and int(np.prod(spec[0])) != 1):
            return None
        return ast.Name(node.id, ast.Load())
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return ast.Constant(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
        left, right = (_scalar_ast(n, specs, dtype, shape) for n in (node.left, node.right))
        return None if left is None or right is None else ast.BinOp(left, node.op, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _scalar_ast(node.operand, specs, dtype, shape)
        return None if operand is None else ast.UnaryOp(ast.USub(), operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "xp" \
            and all(k.arg == "out" for k in node.keywords):
        args = [_scalar_ast(a, specs, dtype, shape) for a in node.args]
        if any(a is None for a in args):
            return None
        name = node.func.attr
        if name in _UFUNCS and len(args) == 1:
            return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load()), args, [])
        if name in _BINARY and len(args) == 2:
            return ast.BinOp(args[0], _BINARY[name](), args[1])
        if name == "negative" and len(args) == 1:
            return ast.UnaryOp(ast.USub(), args[0])
        if name == "square" and len(args) == 1:
            return ast.BinOp(args[0], ast.Mult(), args[0])
        if name == "reciprocal" and len(args) == 1:
            return ast.BinOp(ast.Constant(1), ast.Div(), args[0])
    return None


def _chain_op(stmt, specs):
    """``(target, scalar ast, (shape, dtype))`` for an elementwise line, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    target = stmt.targets[0].id
    spec = specs.get(target)
    if spec is None or spec[1] not in _FLOATS or not spec[0]:
        return None
    expr = _scalar_ast(stmt.value, specs, spec[1], spec[0])
    return None if expr is None else (target, expr, spec)


def _chains(body, specs, sums=False):
    """``[(start, stop, ops, positions)]``: runs of two or more elementwise lines (``del``
    lines inside a run belong to it) with one shape and dtype, ``positions[j]`` the line of
    ``ops[j]``. A line summing one of the run's values over all its axes (when ``sums``: the
    program's ``Sum`` is np.sum) ends the run and belongs to it: its op is ``(target,
    Total(source), spec)``. ``_rewrite`` cuts a run into kernels (``reroll.plan``)."""
    chains, current, start, spec = [], [], None, None

    def close(stop):
        if len(current) >= 2:
            chains.append((start, stop, [op for op, _ in current], [k for _, k in current]))

    for k, stmt in enumerate(body):
        op = _chain_op(stmt, specs)
        if op is not None and (not current or op[2] == spec) and len(current) < MAX_RUN:
            if not current:
                start, spec = k, op[2]
            current.append((op, k))
            continue
        if isinstance(stmt, ast.Delete) and current:
            continue
        total = _total(stmt, specs, spec) if current and sums else None
        if total is not None and total[1].source in {o[0] for o, _ in current}:
            current.append((total, k))
            close(k + 1)
            current, start, spec = [], None, None
            continue
        close(k)
        current, start, spec = ([(op, k)], k, op[2]) if op is not None else ([], None, None)
    close(len(body))
    return chains


class Total:
    """A chain's last op: the sum of the value ``source`` over all its elements, written
    after the loop in NumPy's own order (``kernels.pairwise``)."""

    def __init__(self, source):
        self.source = source


def _total(stmt, specs, spec):
    """``(target, Total(source), spec)`` for ``t = Sum(xp, source, axis=<every axis>,
    keepdims=False)`` of a value of ``spec`` (the NumPy program's ``np.sum``), else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "Sum" and len(call.args) == 2
            and all(isinstance(a, ast.Name) for a in call.args) and call.args[0].id == "xp"):
        return None
    try:
        keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        return None
    source, target = call.args[1].id, stmt.targets[0].id
    if specs.get(source) != spec or specs.get(target) != ((), spec[1]) \
            or keywords != {"axis": tuple(range(len(spec[0]))), "keepdims": False} \
            or int(np.prod(spec[0])) == 0:
        return None
    return target, Total(source), spec


# ---- writing the kernels and the program that calls them -------------------------------

def _rewrite(body, specs, sums=False, constants=None):
    """The main function's new body, the kernels' sources by name, and the namespace
    entries the body needs (``source.Inputs.arrays``). ``constants``: the program's
    captured one-element constants by name."""
    chains = _chains(body, specs, sums)
    if not chains:
        return body, {}, {}
    in_pack = {}      # value name -> (pack name, row, elements per row)
    materialized = set()   # packed values other lines read, as views ``pack[j]``
    internal = {target for _, _, ops, _ in chains for target, _, _ in ops}
    new_body, kernels, arrays, blocks, k = [], {}, {}, set(), 0
    stays = stays_in_run(body, [(start, stop) for start, stop, _, _ in chains])
    position = 0
    later_loads = _later_loads(body)
    fused_ranges = {start: (stop, ops, lines) for start, stop, ops, lines in chains}
    while position < len(body):
        if position not in fused_ranges:
            stmt = body[position]
            new_body.extend(_with_unpacked(stmt, in_pack, materialized, internal, specs))
            position += 1
            continue
        stop, ops, lines = fused_ranges[position]
        while ops:     # one kernel per piece of at most MAX_CHAIN ops of code
            name, pack = f"_fused_{k}", f"_pack_{k}"
            k += 1
            spec = ops[0][2]
            inputs = Inputs(name, in_pack, specs, int(np.prod(spec[0])), spec[1],
                            constants or {}, blocks)
            body_ops = [op for op in ops if not isinstance(op[1], Total)]
            segments, used = plan(body_ops, lambda ref: locate(ref, inputs), MAX_CHAIN,
                                  REROLL) if body_ops else ([], 0)
            if used == len(body_ops):
                used = len(ops)           # the sum ends the last piece
            piece, ops = ops[:used], ops[used:]
            piece_stop = lines[used] if ops else stop
            needed_after = later_loads[piece_stop] if piece_stop < len(body) else set()
            kept = {t for t, expr, _ in piece if isinstance(expr, Total)} \
                | {expr.source for _, expr, _ in piece if isinstance(expr, Total)}
            outputs = [t for t, _, _ in piece if t in needed_after or t in kept]
            totals = [(t, expr.source) for t, expr, _ in piece if isinstance(expr, Total)]
            local = {t for t in outputs if stays(t, piece_stop)}
            text, args, rows = kernel_source(name, spec, segments, totals, outputs, inputs, local)
            kernels[name] = text
            arrays.update(inputs.arrays)
            new_body.append(ast.parse(f"{pack} = {name}({', '.join(args)})").body[0])
            freed = [t.id for stmt in body[position:piece_stop] if isinstance(stmt, ast.Delete)
                     for t in stmt.targets if isinstance(t, ast.Name) and t.id not in internal]
            if freed:   # values from before the chain that died in it
                new_body.append(ast.parse(f"del {', '.join(freed)}").body[0])
            for t in outputs:
                where, row, block = rows[t]
                in_pack[t] = (pack if where == "out" else where, row, spec[0])
                if block:
                    blocks.add(t)
            position, lines = piece_stop, lines[used:]
    return new_body, kernels, arrays


def _later_loads(body):
    """``later[k]``: the names read by ``body[k:]`` (``del`` lines excluded)."""
    later, seen = [set() for _ in range(len(body) + 1)], set()
    for k in range(len(body) - 1, -1, -1):
        if not isinstance(body[k], ast.Delete):
            seen |= set(loads(body[k]))
        later[k] = set(seen)
    return later


def _with_unpacked(stmt, in_pack, materialized, internal, specs):
    """``stmt``, preceded by ``v = pack[j]`` for each packed value it reads first here;
    a ``del`` forgets the names that only ever lived inside a kernel or a pack."""
    if isinstance(stmt, ast.Delete):
        kept = [t for t in stmt.targets
                if not (isinstance(t, ast.Name) and t.id in internal and t.id not in materialized)]
        if not kept:
            return []
        stmt.targets = kept
        return [stmt]
    lines = []
    for name in dict.fromkeys(loads(stmt)):
        if name in in_pack and name not in materialized:
            pack, row, shape = in_pack[name]
            materialized.add(name)
            # a Total is the first element of its row: a NumPy scalar, as np.sum gives
            index = (row,) + (0,) * len(shape) if specs[name][0] != shape else row
            lines.append(ast.parse(f"{name} = {pack}[{index}]").body[0])
    return lines + [stmt]


