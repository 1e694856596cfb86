"""Reverse-mode automatic differentiation: the tape and the backward pass.

How it works, in three steps.

1. **Recording.** While a ``GradientTape`` is active, every op that reads a
   tensor the tape *watches* is appended to the tape as a ``TapeRecord``
   (op type, input and output ids, and what the op's derivative rule needs).
   The op's outputs become watched too, so "watched" spreads forward:

       >>> x = ad.constant(3.0)
       >>> with ad.GradientTape() as tape:
       ...     tape.watch(x)           # tape watches x
       ...     y = x * x               # recorded: reads x; y is now watched
       ...     z = ad.sin(y)           # recorded: reads y
       >>> print(tape)
       GradientTape: 2 records, watching v0
         v1 = Mul(v0, v0)
         v2 = Sin(v1)

2. **Seeding.** ``tape.gradient(z, x)`` starts from dz/dz = 1 (ones shaped
   like z; so a non-scalar target is summed).

3. **Walking back** (``backward.py``). The records are already in the order
   the ops ran, a topological order, so the backward pass walks them in reverse. For each
   record it takes the gradient arriving at its output (the *cotangent*
   ``g``) and calls the op's VJP rule once per input, e.g. for ``Sin``:
   ``g * cos(v1)``. Contributions are *added* into a dict keyed by tensor
   id, never assigned: ``x * x`` sends two contributions to ``x``.

Higher-order derivatives need no extra machinery. VJP rules are written
with this library's ops, so if an outer tape is recording while an inner
tape's ``gradient`` runs, the outer tape records the backward computation
and can differentiate it again:

    >>> with ad.GradientTape() as outer:
    ...     outer.watch(x)
    ...     with ad.GradientTape() as inner:
    ...         inner.watch(x)
    ...         y = x * x * x
    ...     dy_dx = inner.gradient(y, x)     # 3x^2, recorded on `outer`
    >>> float(outer.gradient(dy_dx, x))      # 6x
    18.0

Jacobians and Hessians (``jacobian.py``) reuse the same sweep with a stack
of cotangents; ``tape.hessian`` and ``ad.functional.hessian`` build on it,
and ``ad.functional.hvp`` gives Hessian-vector products for big models.

Every tape keeps its own watched set: a tensor watched only by the inner
tape is invisible to the outer one, whose gradient for it is then None.
"""

import enum
import threading
import warnings

from . import nest
from .records import BackwardStep, BackwardTrace, TapeRecord  # noqa: F401  (public here too)
from .tensor import ArraySpec, Tensor
from .variable import Variable

__all__ = ["GradientTape", "TapeRecord", "BackwardStep", "BackwardTrace",
           "UnconnectedGradients", "AutodiffWarning"]

class _ThreadState(threading.local):
    """What is recording in one thread. TensorFlow's tapes are per thread too:
    two threads each running their own tape never see each other's ops.

    ``active``: the recorders (tapes, forward accumulators, tracers) that are
    recording right now in this thread, outermost first. Every op offers
    itself to each of them; when the list is empty an op costs only its
    forward computation.

    ``observers``: listeners for events that are not ops (see ``notify``).

    ``scope``: the current ``ad.name_scope`` (``'model/dense'``; ``''`` at the
    top), stamped on every record (see ``name_scope.py``).
    """

    def __init__(self):
        self.active = []
        self.observers = []
        self.scope = ""


thread_state = _ThreadState()


def __getattr__(name):
    # ``autodiff.tape.active`` and ``.observers`` read as module attributes:
    # this thread's lists. (The engine's hot paths use ``thread_state``.)
    if name in ("active", "observers"):
        return getattr(thread_state, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class AutodiffWarning(UserWarning):
    """Warnings about probable mistakes (watching an integer tensor, ...)."""


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def notify(event, *details):
    """Tells this thread's observers about an event that is not an op: a value
    leaving the library (``.numpy()``, ``float(t)``), a Variable assigned, a
    tape paused or reset. The widgets' None-gradient explainer listens; the
    engine never does. (``observer._observe(event, *details)``.)"""
    for observer in thread_state.observers:
        observer._observe(event, *details)


def record_operation(primitive, inputs, outputs, params):
    """Offers an op that just ran to every recording tape (called by Primitive)."""
    for recorder in thread_state.active:
        recorder._record(primitive, inputs, outputs, params)


def read_variable(variable):
    """A snapshot of ``variable`` for an op to read; watches it where asked."""
    for recorder in thread_state.active:
        recorder._variable_read(variable)
    return Tensor._with_id(variable._value, variable._id)


# A placeholder object costs about as much memory as a small array, so values
# up to this many bytes are kept whole. The tests set it to -1 so that a rule
# reading a value it did not declare in ``saves`` fails on every input size.
KEEP_VALUES_UP_TO_BYTES = 512


def _spec(tensor):
    """Shape and dtype of ``tensor``, keeping its id but not its data."""
    value = tensor._value
    if value.nbytes <= KEEP_VALUES_UP_TO_BYTES:
        return tensor
    return Tensor._with_id(ArraySpec(value.shape, value.dtype), tensor._id)


def _normalize_unconnected(value):
    try:
        return UnconnectedGradients(value.value if isinstance(value, UnconnectedGradients) else value)
    except ValueError:
        raise ValueError(
            f"Unknown value for unconnected_gradients: {value!r} "
            f"(use ad.UnconnectedGradients.NONE / .ZERO or 'none' / 'zero')") from None


class GradientTape:
    """Records operations for automatic differentiation.

    Args:
        persistent: allow several ``gradient``/``jacobian`` calls (the records
            are kept until the tape is garbage collected).
        watch_accessed_variables: watch every trainable Variable read while
            the tape is recording.

    >>> w = ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     loss = w ** 2
    >>> print(tape.gradient(loss, w))
    ad.Tensor(4.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._records = []
        self._watched = set()        # ids of watched tensors (grows as ops run)
        self._variables = {}         # id -> Variable, for watched_variables()
        self._recording = False
        self._entered = False        # whether its `with` block was ever entered
        self._used = False           # a non-persistent tape computes gradients once
        self._warned_inside = False

    # ---- context manager --------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("GradientTape: this tape is already recording; a tape cannot be "
                             "entered again while its `with` block is still open")
        self._push()
        return self

    def __exit__(self, *exc_info):
        if self._recording:
            self._pop()

    def _push(self):
        self._recording = self._entered = True
        thread_state.active.append(self)

    def _pop(self):
        self._recording = False
        if self in thread_state.active:
            thread_state.active.remove(self)

    def stop_recording(self):
        """Context manager: ops in the block are not recorded on this tape.

        >>> x = ad.Variable(2.0)
        >>> with ad.GradientTape() as t:
        ...     with t.stop_recording():
        ...         y = x * x          # not on the tape
        >>> print(t.gradient(y, x))
        None
        """
        if not self._recording:
            raise RuntimeError("GradientTape.stop_recording: this tape is not recording (use "
                               "it inside the tape's `with` block)")
        return _Paused(self)

    def reset(self):
        """Forgets everything recorded and watched so far (keeps recording)."""
        if thread_state.observers:
            notify("reset", self)
        self._records = []
        self._watched = set()
        self._variables = {}

    # ---- watching ---------------------------------------------------------
    def watch(self, tensor):
        """Ensures ``tensor`` (or every tensor in a nested structure) is watched.

        As in TensorFlow, a tape watches only while it records: a ``watch`` inside
        ``stop_recording()``, or between two ``with`` blocks of a persistent tape, does
        nothing (TensorFlow's tape is off its stack then).

        >>> x = ad.constant(2.0)
        >>> with ad.GradientTape() as tape:
        ...     with tape.stop_recording():
        ...         tape.watch(x)          # not recording: not watched
        ...     y = x * x
        >>> print(tape.gradient(y, x))
        None

        Raises:
            ValueError: for something that is not a Tensor or Variable.
            RuntimeError: on a tape whose ``with`` block has never been entered (where
                TensorFlow fails with an AttributeError of its own internals).
        """
        if not self._recording and not self._entered:
            raise RuntimeError("GradientTape.watch: this tape has not started recording; call "
                               "watch inside its `with` block (with ad.GradientTape() as "
                               "tape: tape.watch(x) ...)")
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(f"GradientTape.watch: can only watch ad.Tensor or ad.Variable "
                                 f"objects, got {type(t).__name__} {t!r}")
            if not t.dtype.is_differentiable:
                warnings.warn(f"GradientTape.watch: a tensor of dtype ad.{t.dtype.name} has no "
                              f"gradient (only floating and complex dtypes do); its gradient "
                              f"will be None", AutodiffWarning, stacklevel=2)
            if self._records is None:
                raise RuntimeError("this non-persistent tape was already used by gradient()")
            if not self._recording:
                continue
            self._watched.add(t._id)
            if isinstance(t, Variable):
                self._variables[t._id] = t

    def _watch_quietly(self, tensors):
        """Watch without the integer-dtype warning (their gradients are None anyway)."""
        for t in tensors:
            self._watched.add(t._id)

    def watched_ids(self):
        """Ids of every tensor this tape watches now (explicitly, or by recording
        an op that read one); an empty set once a non-persistent tape is freed."""
        return frozenset(self._watched or ())

    @property
    def watch_accessed_variables(self):
        """Whether reading a trainable Variable watches it (set at construction)."""
        return self._watch_accessed_variables

    def watched_variables(self):
        """The Variables this tape watches, in the order they were created."""
        return tuple(v for _, v in sorted(self._variables.items()))

    def _variable_read(self, variable):
        if self._watch_accessed_variables and variable._trainable \
                and variable._id not in self._watched and variable.dtype.is_differentiable:
            self._watched.add(variable._id)
            self._variables[variable._id] = variable

    # ---- recording --------------------------------------------------------
    def _wants(self, inputs):
        """Whether an op reading ``inputs`` would be recorded here (it reads a watched tensor)."""
        watched = self._watched
        return any(t._id in watched for t in inputs)

    def _record(self, primitive, inputs, outputs, params):
        # Runs once per op while the tape records: written for speed, so the
        # common one-input and one-output cases are spelled out.
        watched = self._watched
        if len(inputs) == 1:
            input_ids = (inputs[0]._id,)
            if input_ids[0] not in watched:
                return  # the op touches nothing this tape watches
        else:
            input_ids = tuple([t._id for t in inputs])
            if watched.isdisjoint(input_ids):
                return
        out = outputs[0]
        if out._value.dtype.kind not in "fc" and (
                len(outputs) == 1 or all(o._value.dtype.kind not in "fc" for o in outputs)):
            return  # integer and bool results carry no gradient
        saves = primitive.saves
        if saves != "both":
            if saves != "ans":     # "inputs" or "shapes": the outputs' data is not needed
                outputs = (_spec(out),) if len(outputs) == 1 else tuple([_spec(o) for o in outputs])
            if saves != "inputs":  # "ans" or "shapes": the inputs' data is not needed
                inputs = [_spec(t) for t in inputs]
        output_ids = (out._id,) if len(outputs) == 1 else tuple([o._id for o in outputs])
        records = self._records
        records.append(tuple.__new__(TapeRecord, (len(records), primitive, tuple(inputs),
                                                  outputs, params, input_ids, output_ids,
                                                  thread_state.scope)))
        if not primitive.watches_outputs:
            return  # StopGradient: on the tape (for the widgets) but its output is not watched
        if len(output_ids) == 1:
            watched.add(output_ids[0])
        else:
            watched.update(output_ids)

    @property
    def records(self):
        """The recorded ops, in execution order (a tuple of TapeRecords)."""
        if self._records is None:
            raise RuntimeError("this non-persistent tape's records were freed by gradient()")
        return tuple(self._records)

    def names(self):
        """Display names for the tensors on this tape: variables by name, others v0, v1, ..."""
        names = {}
        for vid, var in self._variables.items():
            names[vid] = var._name
        # The next number is how many names so far start with "v" (a Variable
        # named "velocity" counts too), kept as a running count: linear time.
        count = sum(1 for n in names.values() if n.startswith("v"))
        for rec in self._records or ():
            for t in rec.inputs + rec.outputs:
                if t._id not in names:
                    names[t._id] = f"v{count}"
                    count += 1
        return names

    def __str__(self):
        if self._records is None:
            return "GradientTape: freed (a non-persistent tape frees its records after gradient())"
        names = self.names()
        leaves = ({i for r in self._records for i in r.input_ids}
                  - {i for r in self._records for i in r.output_ids})
        watching = ", ".join(names[i] for i in sorted(leaves) if i in self._watched)
        n = len(self._records)
        lines = [f"GradientTape: {n} record{'s' if n != 1 else ''}"
                 + (f", watching {watching}" if watching else "")]
        for rec in self._records:
            outs = ", ".join(names[i] for i in rec.output_ids)
            ins = ", ".join(names[i] for i in rec.input_ids)
            lines.append(f"  {outs} = {rec.op_type}({ins})" + (f"  # {rec[7]}" if rec[7] else ""))
        return "\n".join(lines)

    def __repr__(self):
        n = "freed" if self._records is None else f"{len(self._records)} records"
        return f"<GradientTape persistent={self._persistent}: {n}>"

    # ---- differentiation --------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Computes the gradient of ``target`` with respect to ``sources``.

        Args:
            target: a Tensor or nested structure of Tensors; a non-scalar or
                nested target is summed.
            sources: a Tensor, Variable or nested structure of them.
            output_gradients: the cotangent for each target (default ones).
            unconnected_gradients: ``'none'`` (default) or ``'zero'``: what
                to return for a source the target does not depend on.

        Returns:
            Gradients shaped like ``sources``: Tensors, or None where there is
            no path (and for integer sources).

        Raises:
            RuntimeError: a second call on a non-persistent tape.
            TypeError: a target of None.
        """
        with on_backend_of(target):
            return self._gradient(target, sources, output_gradients, unconnected_gradients, None)

    def backward_trace(self, target, sources, output_gradients=None,
                       unconnected_gradients=UnconnectedGradients.NONE):
        """Like ``gradient``, but also returns every step of the backward pass.

        Returns:
            A BackwardTrace: ``.gradients`` (as ``gradient`` returns them) and
            ``.steps``, one BackwardStep per record visited, in the order
            visited, each with the cotangent that arrived and what it sent on.

        >>> x = ad.Variable(3.0)
        >>> with ad.GradientTape() as tape:
        ...     y = x * x
        >>> trace = tape.backward_trace(y, x)
        >>> [step.op_type for step in trace.steps]
        ['Mul']
        >>> float(trace.gradients)
        6.0
        """
        trace = BackwardTrace(None, [], {}, ())
        with on_backend_of(target):
            trace.gradients = self._gradient(target, sources, output_gradients,
                                             unconnected_gradients, trace)
        return trace

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of ``target`` with respect to each of ``sources``.

        One backward pass carries all ``target.size`` one-hot cotangents at
        once (see ``jacobian.py``); ``parallel_iterations`` splits them into
        chunks of that many rows to bound memory.

        Args:
            target: one Tensor.
            sources: a Tensor, Variable or nested structure of them.
            unconnected_gradients: ``'none'`` or ``'zero'``.
            parallel_iterations: rows per backward pass (default: all).
            experimental_use_pfor: False loops over rows with ``gradient``
                (needs ``persistent=True``), as TensorFlow does.

        Returns:
            For each source, a Tensor of shape ``target.shape + source.shape``.

        >>> x = ad.Variable(np.ones((5, 10), np.float32))
        >>> w = ad.constant(np.ones((7, 5), np.float32))
        >>> with ad.GradientTape() as tape:
        ...     y = ad.matmul(w, x)           # shape (7, 10)
        >>> tape.jacobian(y, x).shape
        TensorShape([7, 10, 5, 10])
        """
        with on_backend_of(target):
            return _jacobian.jacobian(self, target, sources, unconnected_gradients,
                                      parallel_iterations, experimental_use_pfor)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: ``result[b] = d target[b] / d source[b]``.

        Assumes example b's output depends only on example b's input, and (like
        TensorFlow) does not check it: ``ad.testing.check_batch_independence``
        does. Unconnected sources give zeros.

        Returns:
            A Tensor of shape ``(batch,) + target.shape[1:] + source.shape[1:]``.
        """
        with on_backend_of(target):
            return _jacobian.batch_jacobian(self, target, source, unconnected_gradients,
                                            parallel_iterations, experimental_use_pfor)

    def hessian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE):
        """The Hessian of ``target`` (summed if not scalar): beyond TensorFlow.

        TensorFlow has no Hessian on the tape (its guide nests two tapes and
        calls ``jacobian``); this does exactly that from the records already
        on this tape. For one source x the shape is ``x.shape + x.shape``; for
        several, blocks ``H[i][j]`` nested like ``sources`` in ``sources``.
        Counts as this tape's one use when it is not persistent.

        >>> w = ad.Variable([1.0, 2.0])
        >>> with ad.GradientTape() as tape:
        ...     loss = ad.reduce_sum(w ** 3)
        >>> tape.hessian(loss, w).numpy()      # diag(6 w)
        array([[ 6.,  0.],
               [ 0., 12.]], dtype=float32)
        """
        from .functional import tape_hessian  # functional builds on this module
        return tape_hessian(self, target, sources, unconnected_gradients)

    def _begin_backward(self):
        """Checks before a backward pass; leaves the tape's own context (TensorFlow's rules)."""
        if self._records is None:
            raise RuntimeError("GradientTape: this non-persistent tape was already used for "
                               "one gradient (or jacobian) call and has freed its records; "
                               "create it with persistent=True to call it more than once")
        self._leave_context_for_gradient()
        if thread_state.observers:
            notify("backward", self)  # a tracer marks where a backward pass begins

    def _end_backward(self):
        """A non-persistent tape frees its records once its gradients are computed."""
        if not self._persistent:
            self._records, self._watched, self._used = None, None, True

    def _gradient(self, target, sources, output_gradients, unconnected_gradients, trace):
        unconnected = _normalize_unconnected(unconnected_gradients)
        self._begin_backward()  # TensorFlow's order: a used tape, then the context, then target
        if target is None:
            raise TypeError("GradientTape.gradient: the target is None; pass the Tensor (or a "
                            "nested structure of Tensors) to differentiate")
        targets = nest.flatten(target)
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError(f"sources must be Tensors or Variables; got {type(s).__name__} {s!r}")
        seeds = make_seeds(targets, output_gradients)
        source_ids = self._watched_source_ids(flat_sources)
        steps = None
        if trace is not None:
            trace.seeds, trace.source_ids, steps = seeds, tuple(s._id for s in flat_sources), trace.steps
        grads = backward(self._records, seeds, source_ids, trace=steps)
        self._end_backward()
        results = []
        for s in flat_sources:  # a plain loop keeps the warnings' stacklevel right
            results.append(_result_for(s, grads, unconnected))
        return nest.pack_sequence_as(sources, results)

    def _watched_source_ids(self, sources):
        """The ids of ``sources`` this tape can differentiate with respect to.

        Only a watched tensor can receive a gradient: one passed to ``watch``,
        a trainable Variable read while recording, or the output of an op
        this tape recorded. An unwatched constant gets None even when it fed
        a recorded op directly, as in TensorFlow:

            >>> x, c = ad.constant(2.0), ad.constant(5.0)
            >>> with ad.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * c                # c: an unwatched constant
            >>> dx, dc = tape.gradient(y, [x, c])
            >>> float(dx), dc                # dy/dx = c
            (5.0, None)
        """
        watched = self._watched
        return {s._id for s in sources if s.dtype.is_differentiable and s._id in watched}

    def _leave_context_for_gradient(self):
        """TensorFlow's rule for ``gradient`` called inside the tape's own block."""
        if not self._recording:
            return
        if not self._persistent:
            self._pop()  # a non-persistent tape stops recording: it is about to be freed
        elif not self._warned_inside:
            self._warned_inside = True
            warnings.warn(
                "GradientTape.gradient was called inside the `with` block of a persistent "
                "tape: the tape records the backward pass's own ops too, which costs time "
                "and memory. Call it after the block, unless you want those ops recorded "
                "(to differentiate the gradient again).", AutodiffWarning, stacklevel=4)


class _Paused:
    """The context manager returned by ``tape.stop_recording()``."""

    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        if thread_state.observers:
            notify("pause", self._tape, True)
        self._tape._pop()

    def __exit__(self, *exc_info):
        if thread_state.observers:
            notify("pause", self._tape, False)
        self._tape._push()


def _result_for(source, grads, unconnected):
    zero = unconnected is UnconnectedGradients.ZERO
    if not source.dtype.is_differentiable:
        # Never connected, so 'zero' gives zeros of its own dtype (as TensorFlow does).
        warnings.warn(f"GradientTape.gradient: a source of dtype ad.{source.dtype.name} has no "
                      f"gradient (only floating and complex dtypes do); returning "
                      f"{'zeros' if zero else 'None'}", AutodiffWarning, stacklevel=4)
        return ops.zeros(source._value.shape, dtype=source.dtype) if zero else None
    g = grads.get(source._id)
    if g is None and zero:
        return ops.zeros(source._value.shape, dtype=source.dtype)
    return g


from . import ops  # noqa: E402  (ops need the tape; the tape's backward needs ops)
from . import jacobian as _jacobian  # noqa: E402
from .backward import backward, make_seeds, on_backend_of  # noqa: E402
