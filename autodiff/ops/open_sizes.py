"""Sizes read in the graph, for a trace that serves every size of a ``None`` signature.

``ad.function(f, input_signature=[ad.TensorSpec([None, 4])])`` is traced on
real values, at the first call's batch size (``tracing/polymorphic.py``). A
gradient rule that writes a size into the graph as a number (``reduce_mean``'s
``1/n``, ``reduce_sum``'s broadcast back to ``x``'s shape, a reshape back to
``x``'s shape) makes the trace fit that size only, and the function is traced
again for every batch size. TensorFlow's gradient rules read such sizes with
``tf.shape`` when the graph runs, so one trace serves them all.

In such a trace (``validate.open_sized``), the rules here do the same: each
size is read from a ``Shape`` node and handed to the ops that take a shape
as a tensor (``dynamic_shape.py``)::

    @ad.function(input_signature=[ad.TensorSpec([None, 4])])
    def step(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            loss = ad.reduce_mean(x * x)      # gradient: 2x / size(x), size read in the graph
        return tape.gradient(loss, x)

Other traces keep writing the numbers: their graphs (and the compiled
programs lessons show) stay as short as they were.
"""

from .. import dtypes
from ..validate import open_sized   # the test itself lives with the other checks on tensors

__all__ = ["open_sized", "dims", "reshape_like", "keep_dims", "spread_like", "count",
           "expand_dims", "squeeze"]


def dims(x):
    """``x``'s sizes as scalar int32 tensors (one ``Shape`` node, unstacked)."""
    from .dynamic_shape import traced_shape
    from .join import unstack
    return unstack(traced_shape(x, "int32")) if x._value.ndim else []


def reshape_like(g, x):
    """``g`` reshaped to ``x``'s shape, read when the graph runs."""
    from .dynamic_shape import reshape_to, traced_shape
    return reshape_to(g, traced_shape(x, "int32"))


def keep_dims(g, x, axis):
    """``g`` (``x`` reduced over ``axis``) with those axes back as size 1."""
    from .dynamic_shape import reshape_to
    return reshape_to(g, [1 if i in axis else d for i, d in enumerate(dims(x))])


def spread_like(g, x):
    """``g`` broadcast to ``x``'s shape, read when the graph runs."""
    from .dynamic_shape import broadcast_to_shape, traced_shape
    return broadcast_to_shape(g, traced_shape(x, "int32"))


def count(x, axis, dtype):
    """How many elements of ``x`` a reduction over ``axis`` takes, as a ``dtype`` scalar."""
    from .dynamic_shape import traced_shape
    from .elementwise import cast
    from .reduce import reduce_prod
    from .gathering import gather
    sizes = gather(traced_shape(x, "int32"), list(axis))
    return cast(reduce_prod(sizes), dtypes.as_dtype(dtype))


def expand_dims(x, axis):
    """``x`` with a size-1 axis inserted at ``axis`` (non-negative)."""
    from .dynamic_shape import reshape_to
    sizes = dims(x)
    return reshape_to(x, sizes[:axis] + [1] + sizes[axis:])


def squeeze(x, axes):
    """``x`` without its axes in ``axes`` (each of size 1)."""
    from .dynamic_shape import reshape_to
    return reshape_to(x, [d for i, d in enumerate(dims(x)) if i not in axes])
