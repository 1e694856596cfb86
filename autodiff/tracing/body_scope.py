"""Which tensors a control-flow body's trace made, and the error for using one outside it.

Inside ``ad.function`` the body of ``ad.while_loop``, ``ad.cond``, ``ad.map_fn`` ...
(and of a Python ``if``/``for``/``while`` that AutoGraph converted) is traced
once, into a subgraph of its own (``control_flow/staged.py``). Its tensors are
that trace's working values: an iteration's counter, a branch's product. The
body hands results out through its return values, which become the node's
outputs. A tensor that leaves some other way (appended to a Python list, put in
a dict, set as an attribute, assigned to a nonlocal) is still a body tensor:

    @ad.function
    def g(n):
        out = []
        for i in ad.range(n):      # a While node; ``i`` is its body's placeholder
            out.append(i)          # ``out`` ends with one tensor, holding the trace's 0
        return out                 # refused here: InaccessibleTensorError

Left alone, the enclosing tracer would capture such a tensor as a constant and
every call would return the trace's value. So each tracer shares, with the
tracers nested in it, a table (``made``) of the tensors a body made: its
placeholders and every op output it recorded, by tensor id (ids are never
reused). A tracer meeting an unknown tensor (an op input, an output, a value to
assign) looks it up there before capturing it, and refuses it as TensorFlow
does. This costs a dict entry per op traced in a body, and nothing when a graph
runs or when code runs eagerly (where a body is plain Python, as in TensorFlow).

Constants made inside a body (``ad.constant(5.0)``) are not recorded as ops, so
one leaving the body is kept: its value is the same on every call.
"""

from ..errors import InaccessibleTensorError

__all__ = ["table_for", "mark", "refuse_if_made_in_body"]


def table_for(parent, active):
    """The table a new tracer uses: its parent's, else that of a tracer already recording
    (an ``ad.function`` traced inside another's trace), else a new one."""
    if parent is not None:
        return parent._body_made
    for recorder in active:
        table = getattr(recorder, "_body_made", None)
        if table is not None:
            return table
    return {}


def mark(table, tensors, op_type, body):
    """Notes that ``body`` (a label: ``body``, ``true_fn`` ...) made ``tensors`` by ``op_type``."""
    for t in tensors:
        table[t._id] = (op_type, body)


def refuse_if_made_in_body(table, tensor):
    """Raises InaccessibleTensorError when ``tensor`` was made inside a body's trace."""
    made = table.get(tensor._id)
    if made is None:
        return
    op_type, body = made
    raise InaccessibleTensorError(
        f"The tensor from {op_type} (shape {tuple(tensor.shape)}, dtype {tensor.dtype.name}) "
        f"was made inside a loop or branch body ({body!r}) of the traced function, and cannot "
        f"be used outside that body: it holds the value of one trace of the body, not of this "
        f"call. It left the body through a Python list, dict, attribute or nonlocal. Return "
        f"it from the body (a branch's result, or a loop variable that the loop carries), or "
        f"collect a value per iteration in an ad.TensorArray written in the loop and read "
        f"after it.")
