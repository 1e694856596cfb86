"""A flight recorder for "why is my gradient None?": everything, not just the watched.

A tape records only ops that read something it watches, so once a path
from the source to the target is broken the tape holds no trace of *where*
it broke: an integer cast, ``stop_recording()``, ``reset()``, a trip through
NumPy and a ``Variable.assign`` all leave the same empty gap.
``record_history()`` keeps what the tape drops, while it is open:

- every op (like ``ad.function``'s Tracer, it is a recorder on
  ``autodiff.tape.active`` that records every op, watched or not), with
  which tapes were recording, and which were paused, when it ran;
- every Variable read;
- conversions that leave the library (``.numpy()``, ``np.asarray(t)``,
  ``float(t)``; ``bool(t)``, the one ``if t > 0:`` makes, is told apart) and
  ``assign``/``assign_add``/``assign_sub``, ``tape.reset()`` and
  ``tape.stop_recording()``. These are not ops: the engine announces them to
  ``autodiff.tape.observers``, where the History listens while it is open.
  Printing a tensor is not counted as leaving the library.

    >>> from widgets.explain import explain_none_gradient
    >>> from widgets.explain.history import record_history
    >>> x = ad.constant(1.0)
    >>> with record_history() as history:
    ...     with ad.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = ad.constant(np.sin(x.numpy()))   # left the library
    >>> explain_none_gradient(tape, y, x, history=history).reason
    'left_library'

It costs one Python call per op while open: a diagnostic, not for training
loops. Tapes are identified by ``id()``, so keep them alive while explaining.
"""

import collections
import contextlib
import linecache
import os
import sys
import weakref

import numpy as np

from autodiff import tape as _tape
from autodiff.tape import GradientTape
from autodiff.tensor import Tensor, Variable

from .explanation import REASONS, PathStep
from .tape_sweeps import _forward

__all__ = ["record_history", "History", "HistoryOp", "history_of"]

# The packages whose frames are not "the user's code" when a History notes where
# something happened: the engine, the widgets, and contextlib (``with`` blocks).
_LIBRARY = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                 for m in (sys.modules["autodiff"], contextlib))
_WIDGETS = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_RECENT = collections.deque(maxlen=8)    # weak references to the last Histories opened

HistoryOp = collections.namedtuple(
    "HistoryOp", "seq op_type input_ids output_ids output_dtypes recording paused")
HistoryOp.__doc__ = """One op seen by a History.

``recording``: ids of the GradientTapes on the recorder stack when it ran;
``paused``: ids of the tapes inside ``stop_recording()`` then;
``output_dtypes``: NumPy dtype names of its results."""


class History:
    """What happened while ``record_history()`` was open (see the module docstring).

    Attributes:
        ops: HistoryOps in the order they ran.
        reads: ``(seq, variable_id)`` for every Variable read.
        conversions: ``(seq, tensor_id, kind)``; kind is ``'bool'``,
            ``'float'``, ``'int'``, ``'numpy'``...
        assigns: ``(seq, variable_id, value_id)``; value_id is None when the
            value was not a Tensor.
        resets: ``(seq, tape_id)``.
        variables: ``variable id -> name`` for every Variable read.
        sites: ``seq -> (file, line)``: the line of the user's code behind each
            conversion, assign, reset and op with an integer result (``where``
            writes it as ``train.py:68``).
    """

    def __init__(self):
        self.ops = []
        self.reads = []
        self.conversions = []
        self.assigns = []
        self.resets = []
        self.variables = {}
        self.sites = {}          # seq -> (file, line) in the user's code, for the events
        self._paused = frozenset()
        self._seq = 0

    def _next(self):
        self._seq += 1
        return self._seq

    # ---- the recorder protocol (autodiff.tape.active) ----------------------
    def _wants(self, inputs):
        return False  # a custom gradient's call reaches the history as the ops inside it

    def _record(self, primitive, inputs, outputs, params):
        recording = frozenset(id(t) for t in _tape.thread_state.active if isinstance(t, GradientTape))
        dtypes = tuple(str(o._value.dtype) for o in outputs)
        seq = self._next()
        if not all(d.startswith(("float", "complex", "bfloat")) for d in dtypes):
            self._site(seq)     # an integer result ends a path: say where it was made
        self.ops.append(HistoryOp(seq, primitive.name, tuple(t._id for t in inputs),
                                  tuple(o._id for o in outputs), dtypes, recording, self._paused))

    def _variable_read(self, variable):
        self.reads.append((self._next(), variable._id))
        self.variables.setdefault(variable._id, variable._name)

    # ---- events that are not ops (autodiff.tape.observers) ----------------------
    def _observe(self, event, *details):
        if event == "left_library":
            tensor, kind = details
            self._note("conversions", tensor._id, kind)
        elif event == "assign":
            variable, value, _mode = details
            self._note("assigns", variable._id, value._id if isinstance(value, Tensor) else None)
        elif event == "reset":
            self._note("resets", id(details[0]))
        elif event == "pause":
            self._pause(*details)

    def _pause(self, tape, paused):
        self._next()
        self._paused = self._paused | {id(tape)} if paused else self._paused - {id(tape)}

    def _note(self, kind, *data):
        seq = self._next()
        self._site(seq)
        getattr(self, kind).append((seq,) + data)

    def _site(self, seq):
        """Keeps the first frame outside the library: the user's line behind an event."""
        frame = sys._getframe(2)
        while frame is not None:
            name = os.path.abspath(frame.f_code.co_filename)
            if not name.startswith(_LIBRARY + (_WIDGETS,)):
                self.sites[seq] = (frame.f_code.co_filename, frame.f_lineno)
                return
            frame = frame.f_back

    def where(self, seq):
        """``'train.py:68: m = ad.constant(m.numpy())'``: the user's line behind event
        ``seq``, or ``''`` when none was kept."""
        if seq not in self.sites:
            return ""
        path, line = self.sites[seq]
        code = linecache.getline(path, line).strip()
        code = code if len(code) <= 60 else code[:59] + "…"
        return f"{os.path.basename(path)}:{line}" + (f": {code}" if code else "")

    def saw(self, tape):
        """Whether ``tape`` was recording while this History was open."""
        key = id(tape)
        return any(key in op.recording for op in self.ops)

    # ---- questions the explainer asks ------------------------------------------
    def producer(self, tensor_id):
        """The HistoryOp that made ``tensor_id``, or None (a constant, a Variable)."""
        for op in self.ops:
            if tensor_id in op.output_ids:
                return op
        return None

    def reached_from(self, source_id):
        """Ids computed from ``source_id`` by ops (itself included).

        Returns:
            ``(reached, parent)``: the set of ids, and for each computed one
            ``(op, via)``: the op that first made it and its input on the way.
        """
        return _forward(self.ops, source_id)     # the tape's forward sweep, over every op

    def __repr__(self):
        return (f"<History: {len(self.ops)} ops, {len(self.reads)} reads, "
                f"{len(self.conversions)} conversions, {len(self.assigns)} assigns>")


@contextlib.contextmanager
def record_history():
    """Records every op, Variable read and library exit while the block runs.

    Returns (as the ``with`` target) a History to pass to
    ``explain_none_gradient(..., history=history)``.

    >>> from widgets.explain import explain_none_gradient
    >>> from widgets.explain.history import record_history
    >>> x = ad.constant(1.0)
    >>> with record_history() as history:
    ...     with ad.GradientTape() as tape:
    ...         tape.watch(x)
    ...         with tape.stop_recording():
    ...             y = x * x
    >>> explain_none_gradient(tape, y, x, history=history).reason
    'stop_recording'
    """
    history = History()
    _RECENT.append(weakref.ref(history))
    _tape.thread_state.observers.append(history)
    _tape.thread_state.active.append(history)
    try:
        yield history
    finally:
        if history in _tape.thread_state.active:
            _tape.thread_state.active.remove(history)
        _tape.thread_state.observers.remove(history)


def history_of(tape):
    """The latest History (still alive) that was open while ``tape`` recorded, or None.

    This is how the player's page names the exact cause of a lost gradient
    when the tape was recorded inside ``record_history()``, without being told.
    """
    for ref in reversed(_RECENT):
        history = ref()
        if history is not None and history.saw(tape):
            return history
    return None


# ---- the explainer's rules when a History is given ---------------------------------

def _is_float(dtype_name):
    return np.dtype(dtype_name).kind in "fc"


def _chain(c, parent, end):
    """PathSteps of History ops leading to ``end`` (``parent`` from ``reached_from``).

    A step is "recorded" when the tape holds the op (its output is on the
    tape), "missing" otherwise.
    """
    on_tape = {o for rec in c.records or () for o in rec.output_ids}
    steps = []
    while end in parent:
        op, via = parent[end]
        status = "recorded" if end in on_tape else "missing"
        steps.append(PathStep(op.op_type, c.name(via), c.name(end), status, ""))
        end = via
    return steps[::-1]


def _exit_path(c, parent, tensor_id, exit_op, exit_to, after_id=None):
    """From the source to where the value left the ops, a gap, then on to the target."""
    path = _chain(c, parent, tensor_id)
    path.append(PathStep(exit_op, c.name(tensor_id), exit_to, "missing", "the break"))
    if after_id is not None:
        reached, after = c.history.reached_from(after_id)
        if c.tid in reached:
            return path + _chain(c, after, c.tid)
    return path + [PathStep(None, exit_to, c.t, "gap", "")]


def explain_from_history(c, unwatched):
    """The exact break, from everything a History saw; None when it cannot tell.

    ``c`` is the explainer's case (tape, target, source, names). If ops
    connect the source to the target, the first one the tape does not hold
    is the break; otherwise the source's value went somewhere ops cannot
    follow (an assign, NumPy, a Python ``if``), or nowhere.
    """
    h, s, t = c.history, c.s, c.t
    reached, parent = h.reached_from(c.sid)
    if c.tid not in reached:
        return _no_op_path(c, reached, parent)
    on_tape = {o for rec in c.records for o in rec.output_ids}
    chain, end = [], c.tid
    while end in parent:
        op, via = parent[end]
        chain.append((op, via, end))
        end = via
    chain.reverse()
    broken = next((k for k, (op, via, out) in enumerate(chain) if out not in on_tape), None)
    if broken is None:  # the whole path is on the tape: the tape's own rules have spoken
        return None
    op, via, out = chain[broken]
    tape_id = id(c.tape)
    what = f"{op.op_type}({', '.join(c.name(i) for i in op.input_ids)})"
    where = ""
    if not _is_float(op.output_dtypes[op.output_ids.index(out)]):
        reason = "integer_dtype"
        where = h.where(op.seq)
        message = (f"On the way from {s} to {t}, {what}{_at(where)} gave an integer result "
                   f"({op.output_dtypes[op.output_ids.index(out)]}). A tape does not record ops "
                   f"with integer or boolean results (they have no gradient), so the path ends "
                   f"there. Keep the computation from {s} to {t} in floating point.")
    elif tape_id in op.paused:
        reason = "stop_recording"
        message = (f"{what}, on the path from {s} to {t}, ran inside tape.stop_recording(), where "
                   f"the tape records nothing, so the path was never written down. Move that "
                   f"computation out of the stop_recording() block.")
    elif tape_id in op.recording and any(seq > op.seq and i == tape_id for seq, i in h.resets):
        reason = "reset"
        message = (f"The tape recorded {what} on the path from {s} to {t}, but tape.reset() "
                   f"erased it afterwards (reset forgets every record and every watched tensor). "
                   f"Compute what you differentiate after the last reset(), or use a new tape.")
    elif tape_id in op.recording:
        if via != c.sid or unwatched:
            return _replaced(c) if unwatched else None
        reason = "watched_too_late"
        message = (f"{s} was watched only after {what} had used it: a tape records an op only if "
                   f"it already watches one of the op's inputs when the op runs. Call "
                   f"tape.watch({s}) first, then compute.")
    elif via == c.sid and isinstance(c.source, Variable):
        reason = "variable_replaced"
        message = (f"{s} was used outside the tape: {what} made a new Tensor from it before the "
                   f"tape was recording, and the tape saw only that Tensor, never {s} itself (a "
                   f"Variable combined with anything gives a Tensor). Compute from {s} inside "
                   f"the `with` block, and update Variables with {s}.assign_add(...).")
    else:
        reason = "outside_tape"
        message = (f"{what}, on the path from {s} to {t}, ran while this tape was not recording "
                   f"(before its `with` block began or after it ended), so the tape never saw it. "
                   f"Put the whole computation from {s} to {t} inside the `with` block.")
    path = []
    for k, (step_op, step_via, step_out) in enumerate(chain):
        status = "recorded" if step_out in on_tape else "missing"
        path.append(PathStep(step_op.op_type, c.name(step_via), c.name(step_out), status,
                             REASONS[reason] if k == broken else ""))
    return c.explain(reason, message, path, where=where)


def _at(where):
    """`` (at train.py:68: m = ...)`` in a message, or nothing."""
    return f" (at {where})" if where else ""


def _replaced(c):
    """An unwatched Tensor source that an op made from a Variable: ``x = x + 1``."""
    op = c.history.producer(c.sid)
    if op is None:
        return None
    variables = [i for i in op.input_ids if i in c.history.variables]
    if not variables:
        return None
    v, s = c.history.variables[variables[0]], c.s
    return c.explain("variable_replaced", (
        f"{s} is a Tensor that {op.op_type} made from the Variable {v} (an assignment such as "
        f"`{s} = {s} + 1` replaces a Variable with a Tensor). A tape watches Variables "
        f"automatically when they are read, never such a Tensor, so this tape ignored {s}. Update "
        f"the Variable in place with {v}.assign_add(1), or call tape.watch({s})."),
        [PathStep(op.op_type, v, s, "missing", "the break")])


def _no_op_path(c, reached, parent):
    """No op connects source and target: an assign, a trip out of the library, a branch, or nothing."""
    h, s, t = c.history, c.s, c.t
    for seq, variable_id, value_id in h.assigns:
        if value_id in reached:
            v = h.variables.get(variable_id) or c.name(variable_id)
            where = h.where(seq)
            return c.explain("stateful_assignment", (
                f"The value of {s} went into the Variable {v} through assign (or assign_add / "
                f"assign_sub){_at(where)}. An assignment copies a value into a Variable outside every tape: "
                f"the tape sees {v} being read afterwards, not the ops on {s}, so {t} does not "
                f"depend on {s} as far as gradients go. Write the arithmetic as ops ({v} + {s}) "
                f"inside the differentiated computation."),
                _exit_path(c, parent, value_id, "assign", v, variable_id), where=where)
    exits = [(i, kind, seq) for seq, i, kind in h.conversions if i in reached]
    left = [(i, kind, seq) for i, kind, seq in exits if kind != "bool"]
    if left:
        i, kind, seq = left[0]
        how = "float()" if kind == "float" else "int()" if kind in ("int", "index") else ".numpy()"
        where = f"{how} at {h.where(seq)}" if h.where(seq) else how
        return c.explain("left_library", (
            f"A value computed from {s} left the library: {c.name(i)} was turned into a NumPy or "
            f"Python value ({where}). Math on it is invisible to every tape, and what came back "
            f"(ad.constant(...), or a Python number in an op) is a new tensor with no history. Use "
            f"ad ops (ad.sin, ad.reduce_sum, ...) all the way from {s} to {t}."),
            _exit_path(c, parent, i, how, "NumPy"), where=where)
    if exits:
        where = h.where(exits[0][2])
        return c.explain("branch_not_taken", (
            f"{t} does not depend on {s}: the code looked at {s}'s value (bool() of "
            f"{c.name(exits[0][0])}{_at(where)}, as `if x > 0:` does) and took a branch whose result does not "
            f"use {s}. On this branch the gradient is None; on the other it would not be. Use "
            f"ad.where(condition, a, b) to keep both sides differentiable, or pass "
            f"unconnected_gradients='zero' if None should count as 0."),
            _exit_path(c, parent, exits[0][0], "bool()", "if"), where=where)
    return c.explain("unconnected", (
        f"{t} does not depend on {s}: no op, recorded or not, leads from {s} to {t} while the "
        f"history was open. The gradient of something that does not depend on {s} is None "
        f"(pass unconnected_gradients='zero' to get zeros). If {s} was used before "
        f"record_history() began, open it earlier."))
