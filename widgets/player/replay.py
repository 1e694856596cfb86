"""A tape and its traced backward pass as plain, JSON-able frames.

``replay(tape, target, sources)`` runs ``tape.backward_trace`` once and
turns what the engine reports into a model the tape player draws:

- **nodes**: every tensor (name, shape, dtype, a few numbers, and flags such
  as ``source``, ``variable``, ``constant``, ``target``, ``integer``,
  ``unconnected``, ``stopped``) and every op (op type, label, its rule's doc
  line, which tape(s) recorded it);
- **edges**: tensor -> op (an input, with its slot) and op -> tensor;
- **frames**: one per forward record (``record 1: v3 = Mul(v1, v2)``, from 1), a
  seed frame, one per backward step (the cotangent that arrived, the VJP
  applied, each contribution and the running totals) and a result frame
  with the gradients on the sources (None marked). Every frame carries a
  one-sentence explanation for classroom mode.

Every number a frame shows comes from ``tape.records`` or the
``BackwardTrace``; nothing here differentiates. Pure Python: no ipywidgets,
so the frames are tested without a display. Values cross into NumPy only
through ``autodiff.backend.to_numpy`` (a CuPy tape works too).

    >>> from widgets import replay
    >>> x = ad.Variable(3.0, name="x")
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> r = replay(tape, y, x, names={"y": y})
    >>> [f["title"] for f in r.frames]
    ['record 1: y = Pow(x, v0)', 'seed: dy/dy = 1.0', 'backward 1: Pow (record 1)', 'result: dy/dx = 6.0']
"""

import contextlib
import gc
import json

from autodiff import IndexedSlices, convert_to_tensor, nest
from autodiff.tensor import Tensor, Variable

from ..health.rows import group_health
from ..tape_names import TEXT_CHARS, TEXT_LIMIT, tape_names
from .data.looks import preview
from .data.scopes import explain_sources, lost_gradients
from .replay_builder import Builder

__all__ = ["replay", "Replay", "preview", "gc_paused"]


@contextlib.contextmanager
def gc_paused():
    """Pauses Python's cycle collector while a replay or a page is built.

    Both make hundreds of thousands of small dicts and lists (a 10,000-record
    tape: about 30 per record) and no reference cycles, so the collector only
    walks a growing heap again and again: a third of the time at 10,000
    records, more the longer the tape. Reference counting still frees all of
    it; the collector runs again afterwards as before.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

class Replay:
    """The model the player draws: nodes, edges, frames and a fixed layout.

    Attributes:
        data: the whole JSON-able dict (``to_json()`` serializes it).
        nodes, edges, frames, tapes, layout: its parts.
        trace: the engine's BackwardTrace (not part of the JSON).
        gradients: what ``tape.gradient`` would have returned.
    """

    def __init__(self, data, trace):
        self.data = data
        self.trace = trace

    nodes = property(lambda self: self.data["nodes"])
    edges = property(lambda self: self.data["edges"])
    frames = property(lambda self: self.data["frames"])
    tapes = property(lambda self: self.data["tapes"])
    layout = property(lambda self: self.data["layout"])
    gradients = property(lambda self: self.trace.gradients)

    def node(self, tensor):
        """The node dict of ``tensor`` (a Tensor, Variable or tensor id)."""
        tid = tensor._id if isinstance(tensor, Tensor) else int(tensor)
        for node in self.data["nodes"]:
            if node.get("tid") == tid:
                return node
        raise KeyError(f"tensor v{tid} is not in this replay")

    def to_json(self, **kwargs):
        """The model as a JSON string (what the player and the HTML export embed)."""
        # frames kept as rows (words=False: FrameRows) are written as the list they stand for
        return json.dumps(self.data, allow_nan=False, default=list, **kwargs)

    def __len__(self):
        return len(self.data["frames"])

    def __repr__(self):
        counts = {}
        for f in self.data["frames"]:
            counts[f["phase"]] = counts.get(f["phase"], 0) + 1
        return (f"<Replay: {len(self.data['nodes'])} nodes, {len(self)} frames "
                f"({counts.get('forward', 0)} forward, {counts.get('backward', 0)} backward)>")


def replay(tape, target, sources, output_gradients=None, *, names=None, tape_names=None,
           updates=None, history=None, geometry=True, words=True):
    """Runs the backward pass of ``tape`` step by step and records it as frames.

    Like ``tape.gradient``, this uses up a non-persistent tape (its records are
    freed afterwards); on a persistent tape it can be called again and again.

    Args:
        tape: a GradientTape, or a list of tapes for nested tapes (e.g.
            ``[outer, inner]`` for a second derivative). The FIRST tape's
            backward pass is replayed; every tape's records are drawn and
            each op is tagged with the tapes that recorded it (records on
            different tapes are the same op when their output ids match).
            An inner tape must still hold its records (``persistent=True``
            if its ``gradient`` already ran).
        target, sources, output_gradients: as for ``tape.gradient``.
        names: optional ``{display name: tensor}`` (e.g. ``{"y": y}``); a
            module as the value names its variables by their path under that
            name (``{"net": model}``: ``net/dense/kernel``); other tensors keep
            the tape's names (variables by name, v0, v1...).
        tape_names: optional display names, one per tape ("tape 1", ...).
        updates: optional optimizer updates (``w_after - w_before``), one per
            source, for the update/weight ratios of ``data["debug"]["health"]``
            (``widgets/health/rows.py``: one row per scope group, flags and reasons).
        history: a History from ``record_history()`` to name the exact cause
            of a None gradient; by default the one that was open while the
            tape recorded, if any.
        geometry: False leaves out the positions of the drawing with every box
            open, its edge paths and the groups' boxes (``layout["tree"]`` stays:
            the page places the tree itself); ``drawing.svg.with_geometry`` adds them.
        words: False leaves out the title and sentence of every forward record
            and backward step (the page writes them: ``static/words.js``); the
            seed and result frames keep theirs.

    Returns:
        A Replay.

    >>> import widgets
    >>> x = ad.Variable(3.0, name="x")
    >>> with ad.GradientTape(persistent=True) as tape:
    ...     y = x * x
    >>> r = widgets.replay(tape, y, x, names={"y": y})
    >>> r.frames[-1]["sentence"]
    'Done: dy/dx = 6.0.'
    """
    with gc_paused():
        return _replay(tape, target, sources, output_gradients, names, tape_names, updates,
                       history, geometry, words)


_PLAIN = frozenset((Tensor, Variable, type(None)))    # no IndexedSlices, seen at a glance


def _dense_slices(trace):
    """``trace`` with every ``IndexedSlices`` (the gradient of an ``Embedding(...,
    sparse_update=True)`` table) as its dense tensor: the player shows what the slices add
    up to, the gradient ``tape.gradient`` stands for."""
    def dense(g):
        return convert_to_tensor(g) if isinstance(g, IndexedSlices) else g
    # Every cotangent and total the backward pass holds was some step's contribution
    # (or a seed, a Tensor): a trace none of whose steps sent an IndexedSlices holds
    # none at all, and the one look at each step is at what it sent.
    steps = trace.steps
    sent = [c for step in steps for _, c in step.contributions]
    if _PLAIN.issuperset(map(type, sent)):
        steps = ()
    for step in steps:       # most steps hold none: left as they are
        values = [*step.cotangents, *step.totals.values(), *(c for _, c in step.contributions)]
        if not _PLAIN.issuperset(map(type, values)) and any(
                isinstance(g, IndexedSlices) for g in values):
            step.cotangents = tuple(dense(g) for g in step.cotangents)
            step.contributions = [(i, dense(c)) for i, c in step.contributions]
            step.totals = {i: dense(g) for i, g in step.totals.items()}
    flat = nest.flatten(trace.gradients)
    if any(isinstance(g, IndexedSlices) for g in flat):
        trace.gradients = nest.pack_sequence_as(trace.gradients, [dense(g) for g in flat])
    return trace


def _replay(tape, target, sources, output_gradients, names, tape_names, updates, history,
            geometry=True, words=True):
    tapes = list(tape) if isinstance(tape, (list, tuple)) else [tape]
    snapshots = [_snapshot(t) for t in tapes]   # before backward_trace frees the records
    if snapshots[0]["records"] is None:
        raise RuntimeError("replay needs the tape's records, but this non-persistent tape "
                           "already computed its gradient (use persistent=True to replay it)")
    flat_sources = nest.flatten(sources)
    # "Why is this gradient None?" reads the records: ask a persistent tape
    # afterwards, only about the None gradients (each answer is one backward
    # sweep); a non-persistent tape frees its records, so ask it first.
    keeps = bool(getattr(tapes[0], "_persistent", False))
    tape_names = list(tape_names) if tape_names else \
        [f"tape {i + 1}" for i in range(len(tapes))]
    builder = Builder(snapshots, tape_names, names or {})
    named = builder.names      # the messages name source and target as the player does
    answers = explain_sources(tapes[0], target, flat_sources, names=named, history=history) \
        if output_gradients is None and not keeps else {}
    trace = _dense_slices(tapes[0].backward_trace(target, sources, output_gradients))
    if output_gradients is None and keeps:
        lost = [s for s, g in zip(flat_sources, nest.flatten(trace.gradients)) if g is None]
        answers = explain_sources(tapes[0], target, lost, names=named, history=history)
    data = builder.build(trace, nest.flatten(target), nest.flatten(sources), output_gradients,
                         geometry, words)
    data["debug"]["lost"] = lost_gradients(answers, flat_sources,
                                           nest.flatten(trace.gradients), data["nodes"])
    data["debug"]["health"] = group_health(data, trace, flat_sources, updates, builder.square_sums)
    return Replay(data, trace)


def _snapshot(tape):
    """What replay reads from a tape, taken before a backward pass can free it."""
    try:
        records = tape.records
    except RuntimeError:
        records = None
    # watched_ids() tells a constant passed to tape.watch() from an unwatched one.
    n = len(records or ())
    text = str(tape) if n <= TEXT_LIMIT else ""
    if not text or len(text) > TEXT_CHARS:   # a long tape, or names long enough to bloat the page
        text = f"GradientTape: {n} records (print the tape itself to list them)"
    return {"records": records, "names": tape_names(tape, records or ()),
            "variables": {v._id for v in tape.watched_variables()},
            "watched": set(tape.watched_ids()), "text": text}
