"""Control-flow nodes written into the program as Python ``if``, ``while`` and ``for``.

A control-flow node (``If``, ``Case``, ``While``, ``Scan``, ``MapFn``, ``Foldl``,
``Foldr``; ``autodiff/control_flow/staged.py``) holds its branches and loop
bodies as graphs. Each of those graphs is compiled into a program of its
own (``compile_graph``, so a loop inside a branch is written the same way),
and the node becomes the statement its eager code runs, calling them::

    def f_true_fn(xp, a0):          # each branch is a program of its own ...
        ...
    def f(xp, x):
        v0 = Sum(xp, x, axis=None, keepdims=False)
        v1 = v0 > 0.0
        if _host(v1):               # ... and the node is the statement that calls it
            v2 = f_true_fn(xp, x)
        else:
            v2 = f_false_fn(xp, x)
        return (v2[0],)

A branch or body takes its arguments first (a loop's variables, a slice of
each element), then the enclosing values it captures; it returns a tuple of
arrays, which is what the node's name holds (``v2[0]`` is its first output).
Every statement does what the op's eager code does, in the same order and
with the same forwards, so a compiled result equals the eager one bit for
bit: ``Case`` runs the last branch for an index out of range; a loop stops
at ``maximum_iterations``; ``Scan``'s first result is the first slice when
there is no initializer; the sequence ops stack their results with
``xp.stack`` (``Pack``'s forward) and give empty arrays of the eager shapes
over zero elements. A branch's or loop's test reads its one value through
``_host`` (``backend.host_scalar``): on a device that is one explicit copy, where
``if v1`` would be a hidden one (the strict backend refuses those).

The gradient of a control-flow node taken inside the trace (``IfGrad``,
``WhileGrad`` ...) is not written out: the program calls that node's own
code, which runs the op again under a tape on the arrays it is given.
``while_loop``'s ``shape_invariants`` are checked while tracing, not again
on every iteration of the compiled loop.
"""

from .. import backend
from ..errors import OutOfRangeError
from ..tensor import Tensor

__all__ = ["WRITTEN", "write_statement", "write_node", "helpers"]

WRITTEN = ("If", "Case", "While", "Scan", "MapFn", "Foldl", "Foldr")


def write_statement(node, args, target, fresh, namespace, called, name):
    """The lines computing a control-flow node into ``target``, its branches and bodies
    compiled first: each one's function goes into ``namespace``, its source into ``called``.

    Args:
        node, args, target: as for ``write_node``.
        fresh: ``fresh(wanted, fallback)`` -> a name new to the enclosing program.
        namespace: the enclosing program's namespace.
        called: the list of sources shown above the enclosing program.
        name: the enclosing program's name (its branches are ``<name>_true_fn`` ...).
    """
    from .program import compile_graph   # (program.py imports this module)
    op = node.primitive
    if op.layout is None:   # a gradient node: its own code, called as it is
        subprograms = [fresh(op.name, "op")]
        namespace[subprograms[0]] = recompute_call(op)
    else:
        subprograms = []
        for sub in op.subgraphs:
            subprograms.append(fresh(f"{name}_{sub.label}", f"{name}_fn"))
            program = compile_graph(sub.graph, subprograms[-1])
            namespace[subprograms[-1]] = program.call
            called.append(program.source)
    return write_node(node, args, target, subprograms, lambda wanted: fresh(wanted, "t"))


def write_node(node, args, target, subprograms, fresh):
    """The lines (indented for a function body) that compute ``node`` into ``target``.

    Args:
        node: the graph Node of a control-flow op.
        args: the source text of each of the node's inputs.
        target: the name the node's outputs (a tuple) are bound to.
        subprograms: the name of each subgraph's compiled function, in order.
        fresh: ``fresh(wanted)`` -> a name no other value of the program has.
    """
    op = node.primitive
    if op.layout is None or op.name not in WRITTEN:
        return [f"    {target} = {subprograms[0]}(xp{''.join(', ' + a for a in args)})"
                f"  # {op.name}: runs the op again under a tape (recomputes)"]
    own_positions, capture_positions = op.layout
    own = [args[k] for k in own_positions]
    calls = [_Call(name, [args[k] for k in where]) for name, where in zip(subprograms,
                                                                         capture_positions)]
    return _WRITERS[op.name](op, own, calls, target, fresh)


class _Call:
    """A subprogram's call: its name and the captured values it is given after its arguments."""

    def __init__(self, name, captures):
        self.name, self.captures = name, captures

    def __call__(self, *arguments):
        return f"{self.name}(xp{''.join(', ' + a for a in list(arguments) + self.captures)})"


def _write_if(op, own, calls, target, fresh):
    return [f"    if _host({own[0]}):  # If: the branch is chosen on every call",
            f"        {target} = {calls[0]()}",
            "    else:",
            f"        {target} = {calls[1]()}"]


def _write_case(op, own, calls, target, fresh):
    k = fresh("branch")
    lines = [f"    {k} = int(_host({own[0]}))  # Case: the branch is chosen on every call"]
    for n, call in enumerate(calls[:-1]):
        lines += [f"    {'if' if n == 0 else 'elif'} {k} == {n}:", f"        {target} = {call()}"]
    if len(calls) == 1:
        return lines + [f"    {target} = {calls[0]()}"]
    return lines + [f"    else:  # {len(calls) - 1}, or an index out of range",
                    f"        {target} = {calls[-1]()}"]


def _write_while(op, own, calls, target, fresh):
    limited = op.info.get("maximum_iterations")
    loop_vars = own[:-1] if limited else own
    cond, body = calls
    lines = [f"    {target} = ({''.join(v + ', ' for v in loop_vars)})  # While: the loop variables"]
    test = f"_host({cond('*' + target)}[0])"
    if limited:
        count = fresh("iteration")
        lines.append(f"    {count} = 0")
        test = f"{count} < _host({own[-1]}) and {test}"
    lines += [f"    while {test}:", f"        {target} = {body('*' + target)}"]
    if limited:
        lines.append(f"        {count} += 1")
    return lines


def _write_fold(op, own, calls, target, fresh):
    """``Scan``, ``Foldl`` and ``Foldr``: ``acc = fn(acc, row)`` over the rows."""
    info = op.info
    elements, start = own[:info["elements"]], own[info["elements"]:]
    fn, = calls
    n, i, rows = fresh("n"), fresh("i"), fresh("results")
    with_init = info["initializer"]
    lines = [f"    {n} = _length({elements[0]}, {op.name!r}, {not with_init})"
             f"  # {op.name}: fn over the rows, "
             f"{'last to first' if info['reverse'] else 'first to last'}"]
    if with_init:
        lines.append(f"    {target} = ({''.join(s + ', ' for s in start)})")
        order = f"range({n} - 1, -1, -1)" if info["reverse"] else f"range({n})"
    else:
        first = f"{n} - 1" if info["reverse"] else "0"
        lines.append(f"    {target} = ({''.join(f'{e}[{first}, ...], ' for e in elements)})")
        order = f"range({n} - 2, -1, -1)" if info["reverse"] else f"range(1, {n})"
    if info["collect"]:
        lines.append(f"    {rows} = [{'' if with_init else target}]")
    row = "".join(f", {e}[{i}, ...]" for e in elements)[2:]
    lines += [f"    for {i} in {order}:", f"        {target} = {fn('*' + target, row)}"]
    if info["collect"]:
        lines.append(f"        {rows}.append({target})")
        if info["reverse"]:
            lines.append(f"    {rows}.reverse()")
        lines.append(f"    {target} = _stacked(xp, {rows}, {_literal(info['empty'])})")
    return lines


def _write_map_fn(op, own, calls, target, fresh):
    fn, = calls
    i, rows = fresh("i"), fresh("results")
    row = "".join(f", {e}[{i}, ...]" for e in own)[2:]
    return [f"    {rows} = [{fn(row)} for {i} in range({own[0]}.shape[0])]  # MapFn: fn on each row",
            f"    {target} = _stacked(xp, {rows}, {_literal(op.info['empty'])})"]


_WRITERS = {"If": _write_if, "Case": _write_case, "While": _write_while, "Scan": _write_fold,
            "Foldl": _write_fold, "Foldr": _write_fold, "MapFn": _write_map_fn}


def _literal(empty):
    return repr(tuple((tuple(shape), dtype) for shape, dtype in empty))


# ---- what the written statements call --------------------------------------------------

def _length(elements, op, needs_one):
    """The number of rows; with no initializer there must be one (as eagerly)."""
    n = elements.shape[0]
    if needs_one and n == 0:
        raise OutOfRangeError(f"{op.lower()}: elems is empty and there is no initializer: "
                              f"tried to read from index 0 but array size is: 0")
    return n


def _stacked(xp, results, empty):
    """Each output's results stacked (``Pack``'s forward); over zero rows, empty arrays."""
    if results:
        return tuple(xp.stack(column, axis=0) for column in zip(*results))
    return tuple(xp.zeros(shape, dtype=dtype) for shape, dtype in empty)


def recompute_call(op):
    """A gradient node's own code on raw arrays (nothing records while a program runs)."""
    def call(xp, *arrays):
        return tuple(t._value for t in op.run(*[Tensor(a) for a in arrays]))
    return call


def helpers():
    """The names the written statements use, for the program's namespace."""
    return {"_length": _length, "_stacked": _stacked, "_host": backend.host_scalar}

