"""One ``apply_gradients`` call as one indivisible step, eager and inside ``ad.function``.

An optimizer step reads state (``iterations``, the slots, the variables)
and writes it back. Two threads stepping one optimizer at once could both
read ``iterations = 5`` and both write 6: a lost step. So each optimizer
holds a lock, and a step runs entirely while holding it.

Eager code takes the lock around the Python that computes the step. A
traced function cannot: its graph replays ops one by one, long after the
Python ran. So, while tracing, ``apply_gradients`` records *one* stateful
node, ``OptimizerApply``, whose inputs are the gradients (an ``IndexedSlices``
gradient: its values and its indices); when the graph
(or the program ``jit_compile=True`` writes from it) runs that node, the
node takes the lock and runs the eager step inside it. Nothing of the step
is frozen at trace time: the learning rate, the schedule and the step
counter are all read when the node runs.

    >>> w = ad.Variable(1.0)
    >>> opt = ad.optimizers.SGD(0.1)
    >>> @ad.function
    ... def train_step(g):
    ...     return opt.apply_gradients([(g, w)])
    >>> print(train_step.get_concrete_function(ad.TensorSpec([], ad.float32)).graph)
    graph(a0: float32[])
      n0 = OptimizerApply(a0, step=<sgd step over 1 variable>)
      return n0

What this costs: the node is opaque to the compiler (it is called, not
written out), and a graph that reads a variable both before and after the
step sees the value it read first (the graph caches a variable's read per
run); a training step that returns the loss computed before the update, as
Keras' does, is not affected.
"""

import threading

from ... import tape as _tape
from ...indexed_slices import IndexedSlices
from ..module import not_recorded
from ...registry import NotDifferentiable, Primitive

__all__ = ["run_atomically", "tracing"]

_state = threading.local()   # .tracing_step: True while apply_gradients records its node


def tracing():
    """True when this thread is tracing an ``ad.function`` (its tracer is observing)."""
    return any(type(o).__module__.startswith("autodiff.tracing")
               for o in _tape.thread_state.observers)


class _Step:
    """The node's one param: which optimizer steps which variables (not saved, not literal),
    and each gradient's form: None for a tensor (one input), or the dense shape of an
    ``IndexedSlices`` (two inputs: its values and indices)."""

    def __init__(self, optimizer, variables, forms):
        self.optimizer, self.variables, self.forms = optimizer, tuple(variables), tuple(forms)

    def __repr__(self):
        n = len(self.variables)
        return f"<{self.optimizer.name} step over {n} variable{'s' * (n != 1)}>"


def _apply_forward(xp, *gradients, step):
    optimizer = step.optimizer
    if getattr(_state, "tracing_step", False):   # recording the node: change nothing yet
        return xp.asarray(optimizer.iterations._value + 1)
    from ...tensor import Tensor
    arrays, grads = iter(gradients), []
    for form in step.forms:
        grads.append(Tensor(next(arrays)) if form is None else
                     IndexedSlices(Tensor(next(arrays)), Tensor(next(arrays)), form))
    pairs = list(zip(grads, step.variables))
    with optimizer._lock, not_recorded():
        optimizer._apply_now(pairs)
        return xp.array(optimizer.iterations._value, copy=True)


OPTIMIZER_APPLY = Primitive(
    "OptimizerApply", _apply_forward, NotDifferentiable, saves="shapes", dtype_args=(),
    stateful=True, register=False, label="OptimizerApply({0}, ...)",
    doc="not differentiable: one optimizer step, run under the optimizer's lock")


def run_atomically(optimizer, pairs):
    """Runs ``optimizer``'s step on ``pairs`` (gradient, variable) as one indivisible step.

    Returns:
        ``optimizer.iterations`` (eager), or the traced node's output: the
        step count after the step, an int64 scalar tensor.
    """
    if not tracing():
        with optimizer._lock:
            optimizer._apply_now(pairs)
        return optimizer.iterations
    _state.tracing_step = True
    try:
        inputs, forms = [], []
        for g, _ in pairs:
            sparse = isinstance(g, IndexedSlices)
            inputs.extend([g.values, g.indices] if sparse else [g])
            forms.append(g.dense_shape if sparse else None)
        return OPTIMIZER_APPLY(*inputs, step=_Step(optimizer, [v for _, v in pairs], forms))
    finally:
        _state.tracing_step = False
