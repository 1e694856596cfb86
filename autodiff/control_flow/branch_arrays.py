"""TensorArrays returned by the branches of a staged ``if`` (``ad.cond``, AutoGraph's ``if``).

Inside ``ad.function`` a TensorArray is one buffer tensor (``tensor_array.py``).
A branch that returns an array returns its buffer, as TensorFlow's ``cond``
returns an array's *flow*, and the ``If`` node's output becomes an array again:

    @ad.function
    def signs(x):
        ta = ad.TensorArray(ad.float32, size=3)
        for i in ad.range(3):
            if x[i] > 0:
                ta = ta.write(i, x[i])
            else:
                ta = ta.write(i, -x[i])
        return ta.stack()

One branch may leave an array unwritten while the other writes it: the
unwritten array's buffer, which carries only the size until an element shape
is known, is then traced again as zeros of the written elements' shape (the
value an unwritten element reads as), so both branches return alike.
"""

from .. import dtypes, nest
from ..ops import concat, zeros
from ..ops.shape import shape as shape_of
from .tensor_array import TensorArray, _flow, from_flows, has_tensor_arrays

__all__ = ["trace_branches", "arrays_again"]


def trace_branches(trace_one, n):
    """Traces ``n`` branches with ``trace_one(k, finish)``, which traces branch ``k`` with
    ``finish`` applied to what it returns (TensorArrays become their buffers).

    Returns the traced branches and the template to make the If node's outputs arrays
    again (``arrays_again``); the template is None when no branch returns an array.
    """
    templates = [None] * n

    def finisher(k, shapes):
        def finish(outputs):
            templates[k] = outputs
            return _buffers(outputs, shapes)
        return finish

    subs = [trace_one(k, finisher(k, {})) for k in range(n)]
    if not any(has_tensor_arrays(t) for t in templates):
        return subs, None
    shapes = _written_shapes(templates)
    for k in range(n):
        if any(p in shapes for p in _unshaped(templates[k])):
            subs[k] = trace_one(k, finisher(k, shapes))   # zeros of the written shape
    return subs, _shaped_template(templates)


def arrays_again(template, outputs):
    """The If node's ``outputs`` with an array wherever a branch returned one."""
    return outputs if template is None else from_flows(template, outputs)


def _arrays(structure):
    return [(p, leaf) for p, leaf in enumerate(nest.flatten(structure))
            if isinstance(leaf, TensorArray)]


def _shaped(ta):
    """Whether the array's buffer has its element dimensions (an element shape is known)."""
    if ta._elements is not None:   # an eager array entering the trace
        return ta._known() or any(e is not None for e in ta._elements)
    return ta._shaped


def _element_shape(ta):
    if ta._elements is None:
        return list(ta._buffer.shape[1:])
    written = [e for e in ta._elements if e is not None]
    return list(written[0].shape) if written else list(ta._element_shape)


def _unshaped(structure):
    return [p for p, ta in _arrays(structure) if not _shaped(ta)]


def _written_shapes(templates):
    """Each array position's element shape, from a branch whose array has one."""
    shapes = {}
    for t in templates:
        for p, ta in _arrays(t):
            if p not in shapes and _shaped(ta):
                shapes[p] = _element_shape(ta)
    return shapes


def _buffers(structure, shapes):
    flat = nest.flatten(structure)
    for p, ta in _arrays(structure):
        flow = _flow(ta)
        if p in shapes and not _shaped(ta):
            flow = zeros(concat([shape_of(flow, out_type=dtypes.int32)[:1], shapes[p]], 0),
                         dtype=ta.dtype)
        flat[p] = flow
    return nest.pack_sequence_as(structure, flat)


def _shaped_template(templates):
    """The first branch's structure, each array taken from a branch where it has a shape
    (``from_flows`` reads only its dtype, sizes and element shape)."""
    flat = nest.flatten(templates[0])
    for p, _ in _arrays(templates[0]):
        for t in templates:
            other = nest.flatten(t)[p]
            if isinstance(other, TensorArray) and _shaped(other):
                flat[p] = other
                break
    return nest.pack_sequence_as(templates[0], flat)
