"""One optimizer step for many variables of one dtype, as one flat array each.

``Optimizer._step_group`` hands its group here. The gradients, the values and
each slot are laid end to end in one flat array each, the update rule
(``_update_arrays``) runs once on those, elementwise, so each element gets
exactly the floats it would alone, and every variable and slot takes a view
of its piece of the rule's fresh result as its new value:

    >>> opt = ad.optimizers.Adam(0.1)
    >>> a, b = ad.Variable([1.0, 2.0]), ad.Variable(3.0)
    >>> opt.apply_gradients([(ad.constant([1.0, 1.0]), a), (ad.constant(1.0), b)])
    <ad.Variable 'adam/iteration:0' shape=() dtype=int64, numpy=1>
    >>> a._value.base is b._value.base     # both views of one fresh flat array
    True

So at the next step the values and slots usually are those views still, in
order: then the flat array they view is the rule's input as it is, and only
the gradients are copied end to end. Any other value (a variable assigned in
between, a slot restored) is not one of the views kept (``is``), and the
pieces are copied end to end as the first time. The arrays of the last ``KEPT_GROUPS``
groups stepped are kept, so an optimizer stepping ever new sets of variables holds no
memory of old ones. This module owns that bookkeeping and nothing else: no rule, no
scalars.
"""

from ... import backend
from ... import tape as _tape
from ...tensor import Tensor

__all__ = []   # reached through Optimizer._step_group

KEPT_GROUPS = 8   # groups whose flat arrays are kept; the least recently stepped goes first


def step_group(optimizer, group, scalars):
    """``optimizer``'s rule on ``group`` (pairs of a raw gradient array and its variable,
    all of one dtype), with ``scalars`` (``_step_scalars``); stores the new values."""
    names = [name for group_ in optimizer._slot_groups() for name, _ in group_]
    variables = [v for _, v in group]
    holders = {"variable": variables}
    for name in names:
        holders[name] = [optimizer.slot(v, name) for v in variables]
    xp = backend.namespace(backend.backend_of(variables[0]._value))
    key = tuple(v._id for v in variables)
    by_group = optimizer.__dict__.setdefault("_flat_views", {})   # (made in __init__)
    kept = by_group.get(key, {})   # holder name -> (flat array, its views)

    def flat(name):
        arrays = [h._value for h in holders[name]]
        if name in kept:
            base, views = kept[name]
            if all(a is view for a, view in zip(arrays, views)):
                return base
        return xp.concatenate([a.reshape(-1) for a in arrays])

    new = optimizer._update_arrays(xp, xp.concatenate([g.reshape(-1) for g, _ in group]),
                                   flat("variable"), {name: flat(name) for name in names},
                                   scalars)
    ends, end = [], 0
    for v in variables:
        ends.append((end, end + v._value.size, v._value.shape))
        end += v._value.size
    kept = {}
    for name, array in new.items():
        views = [array[start:stop].reshape(shape) for start, stop, shape in ends]
        for holder, view in zip(holders[name], views):
            _store(holder, view)
        kept[name] = (array, [h._value for h in holders[name]])
    by_group.pop(key, None)   # re-inserted last: the dict's order is the order of use
    by_group[key] = kept
    while len(by_group) > KEPT_GROUPS:   # a group no longer stepped (other variables, or
        del by_group[next(iter(by_group))]   # ones gone) must not hold its arrays for ever


def _store(variable, array):
    """``variable``'s new value: ``array``, fresh from an update rule (so no snapshot of the
    old value sees it change). A tracer or debugger observing this thread is told, through
    ``assign``, as for any assignment."""
    if _tape.thread_state.observers:
        variable.assign(Tensor(array))
    else:
        variable._value = array
