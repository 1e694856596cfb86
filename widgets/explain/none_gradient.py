""""Why is my gradient None?": name the break between a source and a target.

``explain_none_gradient(tape, target, source)`` returns an ``Explanation``:
a reason code (``REASONS``), one plain paragraph, and the path with the
missing step marked. It reads the tape without using it up (its records and
watched set; a non-persistent tape stays usable), and runs at most one
backward sweep over a copy of the records with every recorder paused.

How it decides, in order:

1. The source itself: an integer dtype; a Variable with ``trainable=False``;
   a tape with ``watch_accessed_variables=False``; watched by another tape.
2. The records. One sweep forward from the source and one backward from
   the target (the same two sweeps as the backward pass). Records on both
   are the path. If there is a path, the op that stops the gradient is named
   (``StopGradient``, ``Round``...), or the rule that returned None; if
   nothing stops it, the gradient is not None.
3. No recorded path. Without more information the tape cannot tell *why*:
   an integer cast, ``stop_recording()``, ``reset()``, NumPy and a branch
   all leave the same gap. The heuristics, then:
   - a source that is a Variable the tape never read: "variable_not_read"
     (usually a Tensor made from it outside the tape was used instead);
   - an unwatched plain Tensor: "not_watched" (the message adds that
     ``x = x + 1`` turns a Variable into a Tensor);
   - a Variable source that the tape watches (it was read) but that no
     record uses, and a target whose records read some other Variable:
     "stateful_assignment" (``v.assign_add(w)`` reads w, then computes
     outside every tape);
   - otherwise "not_recorded", with the possible causes in ``candidates``.
   With a ``History`` from ``record_history()`` (which sees every op, not
   only watched ones) the exact step is found instead: the first op on the
   full path from source to target that the tape does not hold, and why
   (integer result, paused, reset later, outside the block, source watched
   too late); or, when no op connects them, whether the value left the
   library, went through ``assign``, decided a branch, or is unconnected.

    >>> from widgets.explain import explain_none_gradient
    >>> x = ad.constant(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x * x                      # x never watched
    >>> explain_none_gradient(tape, y, x).reason
    'not_watched'
"""

import sys

from autodiff.tensor import Tensor, Variable

from .history import History, explain_from_history, record_history
from .explanation import REASONS, Explanation, PathStep
from .tape_sweeps import (_backward, _blocked, _caller_name, _chain, _forward, _other_tapes,
                          _run_backward, _watched_ids)
from ..tape_names import tape_names

__all__ = ["explain_none_gradient", "explain_each", "Explanation", "PathStep", "REASONS",
           "record_history", "History"]

_NOT_RECORDED_CANDIDATES = ("left_library", "integer_dtype", "stop_recording", "reset",
                            "watched_too_late", "outside_tape", "branch_not_taken",
                            "stateful_assignment", "unconnected")


# ---- the explainer -------------------------------------------------------------------

class _Case:
    """Everything the rules look at, gathered once.

    ``shared``: a dict kept between the cases of one tape and target
    (``explain_each``): what does not depend on the source (the records, the
    tape's names, which records the target needs, each id's producer) is
    gathered for the first case and read by the others."""

    def __init__(self, tape, target, source, history, source_name, target_name, shared=None):
        self.tape, self.target, self.source, self.history = tape, target, source, history
        self.sid, self.tid = source._id, target._id
        self.shared = shared = {} if shared is None else shared
        if "records" not in shared:
            try:
                shared["records"] = tape.records
            except RuntimeError:  # a non-persistent tape that computed its gradient
                shared["records"] = None
            shared["watched"] = _watched_ids(tape)
            shared["names"] = tape_names(tape, shared["records"]) \
                if shared["records"] is not None else {}
        self.records, self.watched, self._names = \
            shared["records"], shared["watched"], shared["names"]
        self.s = source_name or _default_name(source, self._names)
        self.t = target_name or _default_name(target, self._names)

    def needed(self):
        """Indices of the records the target depends on (``_backward``), swept once."""
        if "needed" not in self.shared:
            self.shared["needed"] = _backward(self.records, self.tid)
        return self.shared["needed"]

    def producer(self):
        """Each id the records made -> the record that made it."""
        if "producer" not in self.shared:
            self.shared["producer"] = {o: rec for rec in self.records for o in rec.output_ids}
        return self.shared["producer"]

    def once(self, key, make):
        """``make()``, made for the first case and kept in ``shared`` for the others."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]

    def watched_variables(self):
        if "variables" not in self.shared:
            self.shared["variables"] = list(self.tape.watched_variables())
        return self.shared["variables"]

    def name(self, tensor_id):
        if tensor_id == self.sid:
            return self.s
        if tensor_id == self.tid:
            return self.t
        if tensor_id in self._names:
            return self._names[tensor_id]
        if self.history is not None and tensor_id in self.history.variables:
            return self.history.variables[tensor_id]
        return f"t{tensor_id}"

    def label(self, rec):
        """A record as the message names it: ``sin(x)``, with this case's names."""
        return rec.label({i: self.name(i) for i in rec.input_ids})

    def explain(self, reason, message, path=(), candidates=(), where=""):
        return Explanation(reason, message, path, candidates, self.s, self.t, where)


def _default_name(tensor, names):
    if isinstance(tensor, Variable):
        return tensor.name.split(":")[0]
    return names.get(tensor._id, f"t{tensor._id}")


def explain_none_gradient(tape, target, source, history=None, source_name=None, target_name=None):
    """Says why ``tape.gradient(target, source)`` is None, and where the path breaks.

    Args:
        tape: the GradientTape (persistent or not; it is not used up).
        target: the Tensor that was differentiated.
        source: the Tensor or Variable whose gradient is None.
        history: a History from ``record_history()``, recorded around the
            computation: it lets the explainer see ops the tape did not
            record, and name the exact cause (see the module docstring).
        source_name, target_name: names for the message (default: the
            names they have in the calling code, else Variable or tape names).

    Returns:
        An Explanation: ``.reason`` (a key of ``REASONS``), ``.message`` (one
        paragraph), ``.path`` (PathSteps, the break marked); it prints as
        text and shows as HTML in a notebook.

    >>> from widgets.explain import explain_none_gradient
    >>> w = ad.Variable(1.0, trainable=False)
    >>> with ad.GradientTape() as tape:
    ...     y = w * 2.0
    >>> explain_none_gradient(tape, y, w).reason
    'not_trainable'
    """
    _check(target, source)
    frame = sys._getframe(1)
    source_name = source_name or _caller_name(source, frame)
    target_name = target_name or _caller_name(target, frame)
    del frame
    return _explain(_Case(tape, target, source, history, source_name, target_name))


def explain_each(tape, target, sources, history=None, source_names=None, target_name=None):
    """``explain_none_gradient`` for several sources of one tape and target: what does
    not depend on the source (the tape's names, the records the target needs, who
    made each id) is gathered once, not once per source.

    Args:
        tape, target, history, target_name: as for ``explain_none_gradient``.
        sources: Tensors or Variables.
        source_names: one name per source (None: the default names).

    Returns:
        One Explanation per source, or the exception explaining that source raised.

    >>> from widgets.explain.none_gradient import explain_each
    >>> w, b = ad.Variable(1.0, trainable=False), ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     y = w * 2.0
    ...     c = b + 1.0                    # recorded, but y does not need it
    >>> [e.reason for e in explain_each(tape, y, [w, b])]
    ['not_trainable', 'not_recorded']
    """
    shared, out = {}, []
    names = list(source_names) if source_names is not None else [None] * len(sources)
    frame = sys._getframe(1)   # unnamed tensors take the caller's names, as one by one
    target_name = target_name or _caller_name(target, frame)
    names = [name or _caller_name(source, frame) for source, name in zip(sources, names)]
    del frame
    for source, name in zip(sources, names):
        try:
            _check(target, source)
            out.append(_explain(_Case(tape, target, source, history, name, target_name,
                                      shared)))
        except Exception as exc:          # reported as it was; the others still answered
            out.append(exc)
    return out


def _check(target, source):
    if not isinstance(target, Tensor):
        raise TypeError(f"explain_none_gradient: target must be a Tensor, "
                        f"got {type(target).__name__}")
    if not isinstance(source, Tensor):
        raise TypeError(f"explain_none_gradient: source must be a Tensor or Variable, "
                        f"got {type(source).__name__}")


def _explain(c):
    s, t = c.s, c.t
    for who, tensor in ((s, c.source), (t, c.target)):
        if not tensor.dtype.is_differentiable:
            role = "the source" if tensor is c.source else "the target"
            return c.explain("integer_dtype", (
                f"{who}, {role}, has the dtype {tensor.dtype.name}. Only floating-point (and "
                f"complex) tensors have gradients, so tape.gradient gives None here. Make it a "
                f"float: write 3.0 rather than 3, or ad.cast({who}, ad.float32) before the tape "
                f"watches it."))
    unwatched = c.sid not in c.watched
    if isinstance(c.source, Variable) and not c.source.trainable and unwatched:
        return c.explain("not_trainable", (
            f"{s} is a Variable created with trainable=False, so a tape does not watch it when "
            f"it is read (Keras keeps its moving statistics this way). Call tape.watch({s}) "
            f"inside the `with` block if you do want its gradient, or create it with "
            f"trainable=True."))
    if c.records is None:
        return c.explain("tape_used", (
            "This non-persistent tape has already computed a gradient, which freed its records: "
            "asking it again raises RuntimeError rather than returning None, and there is nothing "
            "left to read. Record again with ad.GradientTape(persistent=True) to ask several "
            "questions, and call explain_none_gradient before gradient."))
    reached, parent = _forward(c.records, c.sid)
    if c.tid in reached:
        return _explain_path(c, reached, parent)
    if unwatched:
        if isinstance(c.source, Variable) and not c.tape.watch_accessed_variables:
            return c.explain("not_watched", (
                f"{s} is a Variable, but this tape was created with "
                f"watch_accessed_variables=False, so it watches only what is passed to "
                f"tape.watch. Call tape.watch({s}) inside the `with` block before using it."))
        if any(c.sid in _watched_ids(other) for other in _other_tapes(c.tape)):
            return c.explain("watched_by_other_tape", (
                f"{s} is watched by another tape, not by this one. Every tape keeps its own "
                f"watched set: watching {s} on an inner tape does not make an outer tape see it, "
                f"so the outer tape has no record of the ops on {s}. Call tape.watch({s}) on this "
                f"tape too (for a second derivative, each of the nested tapes watches {s})."))
    if c.history is not None:
        found = explain_from_history(c, unwatched)
        if found is not None:
            return found
    if unwatched and isinstance(c.source, Variable):
        return c.explain("variable_not_read", (
            f"This tape never read the Variable {s} while it was recording, so it neither watches "
            f"{s} nor holds an op that uses it. Usually a Tensor made from {s} outside the tape "
            f"was used instead (`x = {s} + 1` before the `with` block gives a Tensor, not a "
            f"Variable), or {s} was read only after the block ended, inside "
            f"tape.stop_recording(), or before tape.reset(). Read {s} inside the `with` block."))
    if unwatched:
        return c.explain("not_watched", (
            f"{s} is a Tensor this tape never watched. A tape watches trainable Variables "
            f"automatically when they are read, but a constant Tensor only after "
            f"tape.watch({s}), called inside the `with` block before {s} is used. (If {s} was an "
            f"ad.Variable earlier, an assignment such as `{s} = {s} + 1` replaced it with a "
            f"Tensor: update Variables with {s}.assign_add(1) instead.)"))
    return _explain_gap(c, reached, parent)


def _explain_path(c, reached, parent):
    """The tape holds a path from the source to the target: does the gradient get through?"""
    s, t = c.s, c.t
    on_target_side = c.needed()
    on_path = {i for i in on_target_side if not reached.isdisjoint(c.records[i].input_ids)}
    flowing, blocked = _blocked(c.records, on_path, reached, c.tid)
    if c.sid not in flowing:
        stops = [b for b in blocked if b[0].op_type == "StopGradient"] or blocked
        rec, via = stops[0]
        label = c.label(rec)
        after = _chain(_forward(c.records, rec.output_ids[0])[1], c.tid, c.name)
        path = (_chain(parent, via, c.name)
                + [PathStep(rec.op_type, c.name(via), c.name(rec.output_ids[0]), "blocked",
                            REASONS["stop_gradient" if rec.op_type == "StopGradient"
                                    else "not_differentiable"])] + after)
        if rec.op_type == "StopGradient":
            return c.explain("stop_gradient", (
                f"The path from {s} to {t} goes through ad.stop_gradient ({label}). The tape "
                f"recorded it, but by design no gradient flows back through it, so {t} counts "
                f"as a constant with respect to {s}. Remove the stop_gradient if {s} should get "
                f"a gradient through that path."), path)
        why = ("no gradient is registered for it (tape.gradient raises LookupError)"
               if rec.primitive.vjp is None else (rec.primitive.doc or "it has no gradient"))
        return c.explain("not_differentiable", (
            f"The path from {s} to {t} goes through {rec.op_type} ({label}): {why}. Every path "
            f"from {s} to {t} passes an op like this, so no gradient reaches {s}. Use a "
            f"differentiable op there, or a custom gradient if you want a surrogate."), path)
    path = _chain(parent, c.tid, c.name)
    try:
        grads, steps = _run_backward(c.records, c.target, c.sid)
    except LookupError as err:  # an op without a registered gradient, on another path
        return c.explain("not_differentiable", (
            f"tape.gradient({t}, {s}) does not return None here: it raises LookupError ({err}). "
            f"Register a gradient for that op (ad.RegisterGradient) or keep it off the path."),
            path)
    if grads.get(c.sid) is not None:
        return c.explain("not_none", (
            f"The tape holds a differentiable path from {s} to {t}, so tape.gradient({t}, {s}) "
            f"is not None. Check that you pass the same tensor objects to gradient, and that the "
            f"tape was not reset or used since."), path)
    culprit = next(((step.record, i) for step in steps for i, g in step.contributions
                    if g is None and i in reached), None)
    if culprit is None:
        return c.explain("vjp_returned_none", (
            f"The tape holds a path from {s} to {t} made of differentiable ops, yet no gradient "
            f"reached {s}: a gradient rule returned None."), path)
    rec, via = culprit
    path = [PathStep(p.op_type, p.via, p.to, "blocked" if p.via == c.name(via) and
                     p.op_type == rec.op_type else p.status, p.note) for p in path]
    return c.explain("vjp_returned_none", (
        f"The tape holds a path from {s} to {t}, but the gradient rule of {rec.op_type} "
        f"({c.label(rec)}) returned None for its input {c.name(via)}. A custom gradient "
        f"whose grad_fn returns None for an input, or a rule that declines an input (an index, "
        f"an integer cast), stops the gradient there."), path)


def _entry(c, records, producer, after):
    """The first value the target's records read that no record made and the tape did
    not watch, made after tensor ``after`` (ids grow as tensors are made): where a value
    computed from the source came back into the tape's view, as ``ad.constant(m.numpy())``
    does. None when there is no such value."""
    def outside():      # ids the target's records read that nothing on the tape made
        variables = {v._id for v in c.watched_variables()}
        return [i for k in c.needed() for i in records[k].input_ids
                if i not in producer and i not in c.watched and i not in variables]
    return min((i for i in c.once("outside", outside) if i > after), default=None)


def _explain_stop(c, rec, parent):
    """The path from the source runs into ``rec``, a StopGradient: the tape records the
    op itself but does not watch its output, so nothing computed from it is on the tape."""
    s, t = c.s, c.t
    via, out = rec.input_ids[0], rec.output_ids[0]
    path = _chain(parent, via, c.name) + [
        PathStep("StopGradient", c.name(via), c.name(out), "blocked", REASONS["stop_gradient"]),
        PathStep(None, c.name(out), t, "gap", "not recorded: the output of stop_gradient is "
                                              "not watched")]
    return c.explain("stop_gradient", (
        f"The path from {s} to {t} goes through ad.stop_gradient ({c.label(rec)}). The tape "
        f"recorded it, but it does not watch what stop_gradient returns, so the ops that use "
        f"that value are not recorded and {t} counts as a constant with respect to {s}. Remove "
        f"the stop_gradient if {s} should get a gradient through that path."), path)


def _explain_gap(c, reached, parent):
    """The source is watched, but no records lead from it to the target: heuristics."""
    s, t = c.s, c.t
    records = c.records
    stops = c.once("stops", lambda: [rec for rec in records if rec.op_type == "StopGradient"])
    stop = next((rec for rec in stops if rec.output_ids[0] in reached), None)
    if stop is not None:
        return _explain_stop(c, stop, parent)
    producer = c.producer()
    source_side = []
    last = c.sid
    if parent:
        last = max(parent, key=lambda o: parent[o][0].index)
        source_side = _chain(parent, last, c.name)
    entry = _entry(c, records, producer, last)
    if entry is not None:      # the value that came back, e.g. ad.constant(m.numpy())
        target_side = _chain(c.once(("forward", entry), lambda: _forward(records, entry))[1],
                             c.tid, c.name)
    else:
        target_side, end = [], c.tid
        while end in producer:
            rec = producer[end]
            via = next((i for i in rec.input_ids if i in producer), rec.input_ids[0])
            target_side.append(PathStep(rec.op_type, c.name(via), c.name(end), "recorded", ""))
            end = via
        target_side.reverse()
    gap_from = source_side[-1].to if source_side else s
    gap = PathStep(None, gap_from, target_side[0].via if target_side else t, "gap",
                   "not recorded by this tape")
    path = source_side + [gap] + target_side
    target_reads = c.once("target_reads", lambda: {i for k in c.needed()
                                                   for i in records[k].input_ids})
    variables = [v for v in c.watched_variables() if v._id in target_reads and v._id != c.sid]
    if isinstance(c.source, Variable) and variables \
            and not any(c.sid in rec.input_ids for rec in records):
        v = variables[0].name.split(":")[0]
        return c.explain("stateful_assignment", (
            f"The tape watches {s} but no op it recorded uses {s}, while {t} comes from a read of "
            f"the Variable {v}. That is what a stateful assignment looks like: {v}.assign_add({s}) "
            f"(or assign) reads {s} and changes {v} outside every tape, so the tape only sees "
            f"{v} being read afterwards. Write the arithmetic as ops ({v} + {s}) inside the "
            f"differentiated computation. (A guess from the tape alone: record_history() can "
            f"confirm it.)"), path, ("stateful_assignment", "left_library", "integer_dtype"))
    made = ("the op that made it is not on the tape" if c.tid not in producer
            else f"its recorded ops read {gap.to}, a value made after {gap_from} by something "
                 f"the tape did not see" if entry is not None
            else f"its recorded ops start from {gap.to}, which the tape did not see being made")
    used = (f"recorded {len(source_side)} op(s) from it, ending at {gap_from}" if source_side
            else "recorded no op that uses it")
    return c.explain("not_recorded", (
        f"The tape watches {s} and {used}, but nothing it recorded leads to {t} ({made}). "
        f"Something between them happened where this tape could not see it: the value left the "
        f"library (.numpy(), NumPy math, float()), went through an integer cast, ran inside "
        f"tape.stop_recording() or before tape.reset(), outside the `with` block, or before "
        f"tape.watch({s}); or it went through an assign, or a branch that did not use {s}; or "
        f"{t} simply does not depend on {s}. Run the code inside `with record_history() as h:` "
        f"(from widgets.explain) and pass history=h to name the exact cause."),
        path, _NOT_RECORDED_CANDIDATES)
