"""The sweeps over a tape's records that ``explain_none_gradient`` reads.

Plain functions over ``tape.records`` (each a list of frozen TapeRecords in
the order the ops ran): which ids a source reaches going forward, which
records a target needs going back, the PathSteps of a chain, which records on
the path pass no gradient on, and the real backward sweep with every recorder
paused. None of them uses up a tape or records anything.

    >>> from widgets.explain.tape_sweeps import _forward
    >>> x = ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x * x
    ...     z = ad.sin(y)
    >>> reached, parent = _forward(tape.records, x._id)     # ids computed from x
    >>> reached == {x._id, y._id, z._id}
    True
"""

from autodiff import backend, ops
from autodiff import tape as _tape
from autodiff.backward import backward
from autodiff.registry import NotDifferentiable

from .explanation import PathStep

def _watched_ids(tape):
    return set(tape.watched_ids())


def _forward(records, start):
    """Ids computed from ``start`` on the tape, and the record that first reached each.

    Anything with ``input_ids`` and ``output_ids`` in the order it ran will do: a
    History's ops too (``History.reached_from``)."""
    reached, parent = {start}, {}
    for rec in records:
        for i in rec.input_ids:
            if i in reached:
                for o in rec.output_ids:
                    if o not in reached:
                        reached.add(o)
                        parent[o] = (rec, i)
                break
    return reached, parent


def _backward(records, target_id):
    """Indices of the records ``target_id`` depends on."""
    needed, on = {target_id}, set()
    for rec in reversed(records):
        if not needed.isdisjoint(rec.output_ids):
            on.add(rec.index)
            needed.update(rec.input_ids)
    return on


def _chain(parent, end, name):
    """The PathSteps that led to ``end``, following ``parent`` back to the start."""
    steps = []
    while end in parent:
        rec, via = parent[end]
        steps.append(PathStep(rec.op_type, name(via), name(end), "recorded", ""))
        end = via
    return steps[::-1]


def _blocked(records, on_path, reached, target_id):
    """Records on the path whose VJP cannot pass a gradient on: ``[(record, input_id)]``."""
    flowing, blocked = {target_id}, []
    for rec in reversed(records):
        if rec.index not in on_path or flowing.isdisjoint(rec.output_ids):
            continue
        rules = rec.primitive.vjp
        for i in rec.input_ids:
            if i in reached:
                if rules is None or rules is NotDifferentiable:
                    blocked.append((rec, i))
                else:
                    flowing.add(i)
    return flowing, blocked


def _run_backward(records, target, source_id):
    """The real sweep over the records, with every recorder paused: (gradients, steps).

    Like ``tape.gradient`` it runs on the backend holding the target (a CuPy
    tape may be explained after its ``use_backend`` block has ended).
    """
    saved = list(_tape.thread_state.active)
    _tape.thread_state.active.clear()
    where = backend.backend_of(target._value)
    try:
        with backend.use_backend(where or backend.get_backend()):
            steps = []
            grads = backward(records, {target._id: ops.ones_like(target)}, {source_id},
                             trace=steps)
        return grads, steps
    finally:
        _tape.thread_state.active[:] = saved


def _other_tapes(tape):
    """Live tapes other than ``tape`` (those recording, then any the collector knows)."""
    import gc
    seen = [t for t in _tape.thread_state.active if isinstance(t, _tape.GradientTape) and t is not tape]
    seen += [t for t in gc.get_objects() if type(t) is _tape.GradientTape and t is not tape
             and all(t is not s for s in seen)]
    return seen


def _caller_name(obj, frame):
    """The name a tensor has in the caller's code (``x``), if it is bound to one."""
    for key, value in frame.f_locals.items():
        if value is obj and not key.startswith("_"):
            return key
    return None
