"""What converted code calls (``ag__.if_stmt`` ...): Python where the condition is Python,
``ad.cond``/``ad.while_loop`` where it is a tensor that changes from call to call.

A converted block shares its variables with the rest of the function
through ``get_state()``/``set_state(values)`` (``converter.py``). Staged,
the state's tensors (and Python numbers, which become tensors) are the
branches' outputs or the loop's variables; its other Python values must come
out the same whichever way the code goes, as in TensorFlow:

- a variable a branch leaves undefined while the other defines it is an error
  (``'x' must also be initialized in the else branch``), except the function's
  return value, which is only read where a ``return`` ran;
- a loop variable must be defined before a staged loop.
"""

from .. import nest
from ..control_flow.branch_arrays import arrays_again, trace_branches
from ..control_flow.cond import _truth
from ..control_flow.staged import is_staged_value, stage, trace_function
from ..control_flow.tensor_array import TensorArray
from ..control_flow.while_loop import while_loop
from ..ops import open_sizes, zeros
from ..tensor import Tensor, Variable, convert_to_tensor
from .converter import RETVAL

__all__ = ["Undefined", "UndefinedReturnValue", "if_stmt", "while_stmt", "for_stmt", "not_",
           "and_", "or_", "if_exp", "range_", "ld"]


def ld(fn):
    """The function a converted function calls, itself converted when it is the user's own
    (``__init__.py``: ``convert``); the library's functions and builtins as they are."""
    from . import convert_callee
    return convert_callee(fn)


class Undefined:
    """A variable's value before the converted code assigned it."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"


class UndefinedReturnValue(Undefined):
    def __init__(self):
        super().__init__(RETVAL)


# ---- boolean operators --------------------------------------------------------------------
def not_(value):
    if is_staged_value(value):
        from ..ops import logical_not
        return logical_not(value)
    return not value


def and_(*operands):
    """``a and b and ...`` with each operand a thunk; tensors combine with logical_and."""
    value = operands[0]()
    for thunk in operands[1:]:
        if is_staged_value(value):
            from ..ops import logical_and
            return logical_and(value, and_(thunk, *operands[operands.index(thunk) + 1:]))
        if not value:
            return value
        value = thunk()
    return value


def or_(*operands):
    value = operands[0]()
    for thunk in operands[1:]:
        if is_staged_value(value):
            from ..ops import logical_or
            return logical_or(value, or_(thunk, *operands[operands.index(thunk) + 1:]))
        if value:
            return value
        value = thunk()
    return value


def if_exp(test, body, orelse):
    if is_staged_value(test):
        from ..control_flow import cond
        return cond(test, body, orelse)
    return body() if test else orelse()


# ---- if -------------------------------------------------------------------------------------
def if_stmt(test, body, orelse, get_state, set_state, names):
    if not is_staged_value(test):
        body() if _truth(test, "if") else orelse()
        return
    before = get_state()

    def branch(fn):
        def run():
            set_state(before)
            fn()
            return get_state()
        return run

    def keep(values, label):
        return tuple(_as_state(v) for v in values)

    def traced(fill):
        runs = [_filled(branch(fn), fill) if fill else branch(fn) for fn in (body, orelse)]
        return trace_branches(   # a TensorArray leaves a branch as its buffer
            lambda k, finish: trace_function(lambda: finish(runs[k]()), (),
                                             ("if body", "else body")[k], keep), 2)

    subs, arrays = traced(None)
    fill = _undefined_return_fill(subs, names)
    if fill:
        subs, arrays = traced(fill)
    _agree(subs, names)
    test = convert_to_tensor(test)
    outputs = stage("If", lambda tensors, fns: fns[0]() if _truth(tensors[0], "If") else fns[1](),
                    [test], subs, subs[0].outputs)
    set_state(arrays_again(arrays, outputs))


def _as_state(value):
    """A state value for a staged branch: Python numbers become tensors, tensors stay, other
    values (None, objects, undefined) are carried as they are."""
    if isinstance(value, Variable):
        return value   # the same Variable either way
    if isinstance(value, (bool, int, float)) or isinstance(value, Tensor):
        return convert_to_tensor(value)
    return value


def _undefined_return_fill(subs, names):
    """For the return value undefined in one branch: zeros like the other's (only read where
    the other branch's ``return`` ran)."""
    fill = {}
    for k, name in enumerate(names):
        a, b = subs[0].outputs[k], subs[1].outputs[k]
        if name == RETVAL:
            for defined, other in ((a, b), (b, a)):
                if isinstance(other, Undefined) and not isinstance(defined, Undefined):
                    fill[k] = _zeros_like(defined)
    return fill


def _zeros_like(value):
    """A stand-in for a return value not yet made: zeros in place of each tensor."""
    return nest.map_structure(
        lambda t: zeros(t.shape, dtype=t.dtype) if isinstance(t, Tensor) else t, value)


def _filled(run, fill):
    def filled():
        values = list(run())
        for k, value in fill.items():
            if isinstance(values[k], Undefined):
                values[k] = value
        return tuple(values)
    return filled


def _agree(subs, names):
    a, b = subs[0].outputs, subs[1].outputs
    for name, x, y in zip(names, a, b):
        if isinstance(x, Undefined) != isinstance(y, Undefined):
            where = "else" if isinstance(y, Undefined) else "if"
            raise ValueError(f"'{name}' must also be initialized in the {where} branch")
        if isinstance(x, Undefined):
            continue
        flat_x, flat_y = nest.flatten(x), nest.flatten(y)
        if len(flat_x) != len(flat_y):
            raise ValueError(f"'{name}' must have the same nested structure in the main and "
                             f"else branches: {x!r} and {y!r}")
        for u, v in zip(flat_x, flat_y):
            if isinstance(u, Tensor) != isinstance(v, Tensor):
                raise TypeError(f"'{name}' is a tensor in one branch and {type(v).__name__} in "
                                f"the other; a tensor condition needs tensors in both")
            if isinstance(u, Tensor) and u.dtype != v.dtype:
                raise TypeError(f"'{name}' has dtype {u.dtype.name} in the main branch but "
                                f"{v.dtype.name} in the else branch")
            if not isinstance(u, Tensor) and u is not v and u != v:
                raise ValueError(f"'{name}' has a Python value that depends on a tensor "
                                 f"condition ({u!r} or {v!r}); make it a tensor")


# ---- while and for ----------------------------------------------------------------------------
def while_stmt(test, body, get_state, set_state, names):
    first = test()
    if not is_staged_value(first):
        while _truth(first, "while"):
            body()
            first = test()
            if is_staged_value(first):
                raise _became_staged("while")
        return
    _staged_loop(lambda: test(), body, get_state, set_state, names)


def _staged_loop(test, body, get_state, set_state, names, targets=()):
    """``while test(): body()`` as ``ad.while_loop`` over the state's tensors (a ``for``
    loop's ``targets``, undefined before it, are not carried from one iteration to the next)."""
    state = [_as_state(v) for v in get_state()]
    if any(n == RETVAL and isinstance(v, Undefined) for n, v in zip(names, state)):
        state = _with_return_value(state, body, get_state, set_state, names)
    positions = [k for k, v in enumerate(state) if isinstance(v, TensorArray) or
                 (isinstance(v, Tensor) and not isinstance(v, Variable))]
    undefined = [names[k] for k, v in enumerate(state) if isinstance(v, Undefined)]

    def with_vars(values):
        merged = list(state)
        for k, v in zip(positions, values):
            merged[k] = v
        set_state(tuple(merged))

    def loop_test(*values):
        with_vars(values)
        return convert_to_tensor(test())

    def loop_body(*values):
        with_vars(values)
        body()
        after = [_as_state(v) for v in get_state()]
        for name, old, new in zip(names, state, after):
            if isinstance(old, Undefined) and not isinstance(new, Undefined) and \
                    name not in targets:
                raise ValueError(f"'{name}' must be defined before the loop")
        return tuple(after[k] for k in positions)

    if not positions:
        raise ValueError(f"a loop whose condition is a tensor needs at least one tensor loop "
                         f"variable; none of {list(names)} is one (undefined: {undefined})")
    result = while_loop(loop_test, loop_body, tuple(state[k] for k in positions))
    with_vars(result)


def _with_return_value(state, body, get_state, set_state, names):
    """The state with the return value, still undefined before a staged loop that may
    ``return``, set to zeros like what the body returns (read only where a return ran)."""
    k = names.index(RETVAL)

    def probe():
        set_state(tuple(state))
        body()
        return get_state()[k]

    returned = trace_function(probe, (), "probe", lambda value, label: value).outputs
    set_state(tuple(state))
    if isinstance(returned, Undefined):
        return state
    state = list(state)
    state[k] = _zeros_like(nest.map_structure(_as_state, returned))
    return state


def for_stmt(iterated, extra_test, body, get_state, set_state, names, targets=()):
    if isinstance(iterated, _Range):
        return _staged_range(iterated, extra_test, body, get_state, set_state, names, targets)
    if is_staged_value(iterated):
        return _staged_rows(iterated, extra_test, body, get_state, set_state, names, targets)
    for item in iterated:
        if extra_test is not None:
            go_on = extra_test()
            if is_staged_value(go_on):
                raise _became_staged("for")
            if not go_on:
                break
        body(item)


class _Range:
    def __init__(self, start, limit, delta):
        self.start, self.limit, self.delta = start, limit, delta


def range_(range_fn, start, limit=None, delta=1):
    """``ad.range`` in a ``for``: a lazy range when a bound is a traced tensor."""
    if limit is None:
        start, limit = 0, start
    if any(is_staged_value(v) for v in (start, limit, delta)):
        return _Range(start, limit, delta)
    return range_fn(start, limit, delta)


def _staged_range(r, extra_test, body, get_state, set_state, names, targets):
    start = convert_to_tensor(r.start)
    limit = convert_to_tensor(r.limit, dtype=start.dtype)
    delta = convert_to_tensor(r.delta, dtype=start.dtype)
    _counted_loop(start, lambda i: (i < limit) if float(r.delta) > 0 else (i > limit),
                  lambda i: i, delta, extra_test, body, get_state, set_state, names, targets)


def _staged_rows(tensor, extra_test, body, get_state, set_state, names, targets):
    if open_sizes.open_sized(tensor):   # a None size: the rows counted when the graph runs
        n = open_sizes.dims(tensor)[0]
    else:
        n = tensor._value.shape[0]   # a size of the trace's signature: fixed per trace
    _counted_loop(convert_to_tensor(0), lambda i: i < n, lambda i: tensor[i],
                  convert_to_tensor(1), extra_test, body, get_state, set_state, names, targets)


def _counted_loop(start, test, item, delta, extra_test, body, get_state, set_state, names,
                  targets):
    box = {"i": start}

    def get():
        return tuple(get_state()) + (box["i"],)

    def put(values):
        values = tuple(values)
        box["i"] = values[-1]
        set_state(values[:-1])

    def loop_test():
        go = test(box["i"])
        if extra_test is None:
            return go
        return and_(lambda: go, extra_test)

    def loop_body():
        i = box["i"]
        body(item(i))
        box["i"] = i + delta

    _staged_loop(loop_test, loop_body, get, put, tuple(names) + ("ag__i",), targets)


def _became_staged(what):
    from ..errors import OperatorNotAllowedInGraphError
    return OperatorNotAllowedInGraphError(
        f"a Python {what} loop's condition became a tensor of the traced function after it "
        f"started as a Python value; start it with a tensor (ad.constant(0)) so that AutoGraph "
        f"makes the whole loop an ad.while_loop")
