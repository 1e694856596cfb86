"""``ad.recompute_grad``: gradient checkpointing (TensorFlow's ``tf.recompute_grad``).

Reverse mode keeps, on the tape, what every recorded op's VJP will need:
a chain of a hundred ops on large arrays keeps about a hundred arrays until
``gradient`` runs. ``recompute_grad(f)`` trades that memory for time. The
forward pass runs ``f`` with the tapes paused, so none of ``f``'s
intermediates are recorded; the call becomes ONE record, whose VJP runs
``f`` again on the same inputs under a fresh tape and differentiates that:

    >>> def block(x):
    ...     for _ in range(10):
    ...         x = ad.tanh(x) * 1.5
    ...     return x
    >>> x = ad.ones([1000])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = ad.recompute_grad(block)(x)
    >>> [r.op_type for r in tape.records]      # 20 records without it
    ['block']

It is TensorFlow's construction, built from ``ad.custom_gradient``
(``custom_gradient.py``):

1. ``inner(*args)`` runs ``f`` with every GradientTape and
   ForwardAccumulator of this thread paused (TensorFlow's
   ``stop_recording``) and returns ``(result, grad_wrapper)``. The custom
   gradient records the call on the tapes that watch ``args`` or a
   Variable ``f`` read; that record keeps shapes only, and ``grad_wrapper``
   keeps ``args`` (to run ``f`` again).
2. ``grad_wrapper(*dy, variables=None)`` runs when ``gradient`` reaches
   that record. It opens a new tape, watches copies of ``args`` (and the
   ``variables``), runs ``f`` again and returns that tape's gradient of
   ``f``'s result, seeded with ``dy``.

What this gives, as in TensorFlow 2:

- Values and first derivatives equal those of ``f`` itself, for the
  arguments (nested structures too) and for the Variables ``f`` reads.
  Keyword arguments are passed to ``f`` both times and get no gradient.
- A tensor that ``f`` merely captures (not an argument, not a Variable)
  gets None: ``f``'s forward ops were not recorded.
- Persistent tapes, ``jacobian`` and ``batch_jacobian`` work as on ``f``.
- ``f`` runs twice for one forward and one backward pass.
- Second derivatives with respect to the arguments, through nested tapes:
  step 2 runs ordinary ops, which an outer tape records.

One difference, on purpose: TensorFlow wraps step 2 in a second custom
gradient whose own gradient raises NotImplementedError, so on TensorFlow
forward mode (``ForwardAccumulator``) and a second derivative through a
tape that also watches a Variable ``f`` reads both raise. Here step 2 is
plain ops, and both give the derivative ``f`` itself would have (this
engine prunes the backward pass by the sources, so copying TensorFlow's
construction would have turned one of those errors into a silent None).

Under ``ad.function`` the call traces like any custom gradient (an
``IdentityN`` node with a traced gradient graph), so the values and
gradients are the same; the memory saving is the eager tape's: a graph
replayed under a tape records ``f``'s nodes like any others.

This module owns the decorator only; it must not reach into the tape's
records or into the subsystems (tracing, compiler).
"""

import contextlib
import functools

from . import nest
from . import tape as _tape
from .custom_gradient import custom_gradient
from .forward import ForwardAccumulator
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor

__all__ = ["recompute_grad"]


def recompute_grad(f):
    """Makes ``f`` keep no intermediates on the tape: its VJP runs ``f`` again.

    Args:
        f: a function of tensors (nested structures allowed) returning a
            tensor or a nested structure of tensors. It may read Variables.
            Keyword arguments are passed through and get no gradient.

    Returns:
        A function with ``f``'s name, values and gradients.

    Raises:
        TypeError: ``f`` is not callable (TensorFlow raises the same class
            when the decorated object is first called).

    >>> @ad.recompute_grad
    ... def layer(x):
    ...     return ad.reduce_sum(ad.sin(x) * x)
    >>> x = ad.constant([1.0, 2.0])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = layer(x)
    >>> tape.gradient(y, x).numpy().round(4)      # cos(x) * x + sin(x)
    array([1.3818, 0.077 ], dtype=float32)
    """
    if not callable(f):
        raise TypeError(f"ad.recompute_grad takes a function to wrap, not {type(f).__name__} "
                        f"{f!r}")
    return _RecomputeGradFunction(f)


class _RecomputeGradFunction:
    """The decorated function. A descriptor, so that on a method ``self`` is bound to
    ``f`` and is not an input (an extra: TensorFlow tries to convert ``self`` to a tensor)."""

    def __init__(self, f):
        self._f = f
        self._call = custom_gradient(_checkpointed(f))
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        bound = _RecomputeGradFunction(functools.partial(self._f, instance))
        bound.__name__ = _name(self._f)
        return bound

    def __repr__(self):
        return f"<recompute_grad {_name(self._f)!r}>"


def _checkpointed(f):
    """``inner(*args) -> (result, grad_wrapper)`` for ``custom_gradient``: steps 1-2 above."""

    def inner(*args, **kwargs):
        with _tapes_paused():
            result = f(*args, **kwargs)

        def grad_wrapper(*dresult, variables=None):
            grads = _recomputed_gradients(f, args, kwargs, variables, dresult)
            return grads[:len(args)], grads[len(args):]

        return result, grad_wrapper

    inner.__name__ = _name(f)   # the eager record's op type: the function's own name
    return inner


def _recomputed_gradients(f, args, kwargs, variables, dresult):
    """Runs ``f`` again under a new tape; the gradients of its result (seeded with
    ``dresult``) for each argument, then for each of ``variables``. Zeros, never None,
    for a source the result does not reach (so the custom gradient gets a tensor)."""
    with GradientTape() as tape:
        copies = nest.map_structure(_copy, args)
        sources = list(copies) + list(variables or [])
        flat = nest.flatten(sources)
        # Only floating sources are watched and asked for: an integer argument gets
        # zeros here (the custom gradient turns them into None), without a warning.
        wanted = [t for t in flat if t.dtype.is_differentiable]
        tape.watch(wanted)
        recomputed = f(*copies, **kwargs)
    grads = iter(tape.gradient(recomputed, wanted, output_gradients=list(dresult),
                               unconnected_gradients=UnconnectedGradients.ZERO))
    flat_grads = [next(grads) if t.dtype.is_differentiable else ops.zeros_like(t) for t in flat]
    return nest.pack_sequence_as(sources, flat_grads)


def _name(f):
    return getattr(f, "__name__", None) or getattr(getattr(f, "func", None), "__name__",
                                                   type(f).__name__)


def _copy(arg):
    """A fresh tensor for each argument (TensorFlow's ``identity``), so the recomputation's
    tape starts from tensors of its own."""
    return ops.identity(arg) if isinstance(arg, Tensor) else arg


@contextlib.contextmanager
def _tapes_paused():
    """Every GradientTape and ForwardAccumulator of this thread stops recording for the
    block (TensorFlow's ``stop_recording``); other recorders (a tracer building a graph,
    the custom gradient's variable watcher) keep going, and the order is restored."""
    active = _tape.thread_state.active
    saved = active[:]
    active[:] = [r for r in active if not isinstance(r, (GradientTape, ForwardAccumulator))]
    try:
        yield
    finally:
        active[:] = saved


from . import ops  # noqa: E402  (ops import the tape, which this module's users import)
