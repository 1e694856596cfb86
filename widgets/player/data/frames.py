"""The frames of a replay: forward records, the seed, backward steps, the result.

``Frames`` walks what ``replay`` collected (records of every tape, the
engine's BackwardTrace) and writes one JSON-able dict per frame:

- ``phase``: ``"forward"``, ``"seed"``, ``"backward"`` or ``"result"``;
- ``title`` (``'record 1: v3 = Mul(v1, v2)'``, numbered from 1; with
  several tapes ``'tape 2, record 3: ...'``) and ``sentence`` (classroom mode);
- ``op``/``record``/``tape``: the record shown; ``done_ops``: how many ops
  have run by then (the view dims the rest);
- ``nodes``/``edges``: what to highlight (the edges carrying the cotangent
  in a backward step);
- ``cotangents``, ``vjp`` (op type and its rule's doc line),
  ``contributions`` (to which tensor, which value), ``totals``;
- ``grads_new``: the gradients that became known or changed in this frame,
  by node (a delta: ``grads_at(data, k)`` adds them up to frame k, so the
  JSON grows linearly with the tape, not with frames x tensors);
- ``gradients``: on the result frame, the requested gradients (None kept).

Values are ``{"preview", "data", "shape"}`` dicts made by ``value_of``
(``looks.py``, which looks at the backward steps' values all at once) from
the engine's own tensors; nothing here computes a derivative.
"""

from autodiff.tensor import ArraySpec, Tensor

from .frame_rows import FrameRows
from .looks import MAX_DATA, _inspect, look_many, preview, value_of
from .scopes import nonfinite
from .sentences import (backward_sentence, derivative, forward_sentence, record_name,
                        result_sentence, rule_text, seed_sentence)

__all__ = ["Frames", "preview", "value_of", "grads_at", "MAX_DATA"]


def grads_at(data, k, only=None):
    """Every gradient known at frame ``k`` of a replay dict: ``{node id: preview}``
    (``only``: a set of the node ids wanted; None for all).

    >>> from widgets import replay
    >>> from widgets.player.data.frames import grads_at
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x * x
    >>> r = replay(tape, y, x)
    >>> grads_at(r.data, -1)[f"t{x._id}"]      # at the last frame: dy/dx = 2x
    '6.0'
    """
    frames = data["frames"]
    k = k % len(frames)
    if isinstance(frames, FrameRows):      # without making every frame
        return frames.known(k, only)
    known = {}
    for f in frames[:k + 1]:
        known.update(f.get("grads_new") or {})
    return known if only is None else {n: v for n, v in known.items() if n in only}


class Frames:
    """Builds the frame list: forward records, seed, backward steps, result."""

    def __init__(self, builder, trace, targets, sources, gradients, output_gradients, words=True):
        self.b = builder
        self.words = words   # False: records and steps get no title or sentence (words.js)
        self.trace = trace
        self.targets = [t for t in targets if isinstance(t, Tensor)]
        self.sources = sources
        self.gradients = gradients
        self.output_gradients = output_gradients
        self.changed = {}  # tensor node id -> preview, new since the last frame
        self.forward_bad, self.backward_bad = [], []   # frames with a NaN or an Inf
        self.norms = {}    # backward frame index -> [(op id, norm of what it sent)]
        self.seen = {}       # id(value) -> (value, its _inspect): the value kept alive
        self.square_sums = {}   # id(contribution) -> (it, its float64 sum of squares): health
        self._in_edges = None   # (op id, kind) and (op id, kind, slot) -> edge ids, on first use

    def bad(self, tensor):
        """Whether a recorded tensor's value holds a NaN or an Inf: from its node's
        stats when the builder took them from this very value, else looked at."""
        node = self.b.tensors.get(tensor._id)
        stats = node.get("stats") if node else None
        if stats is not None and not isinstance(tensor._value, ArraySpec):
            return stats["nonfinite"] > 0
        return nonfinite(tensor)

    def inspect(self, tensor, with_norm=False):
        """``_inspect``, once per value: a step's contribution is often the next
        total, or another step's cotangent, as the same tensor."""
        key = id(tensor)
        seen = self.seen.get(key)
        if seen is None or (with_norm and seen[3] is None and seen[0] is not None):
            seen = self.seen[key] = (tensor, *_inspect(tensor, with_norm))
            if seen[4] is not None:
                self.square_sums[key] = (tensor, seen[4])
        return seen[1:4]

    def look_backward(self):
        """Looks at every value the backward steps move in one ``look_many`` (the
        norms of contributions), and files the answers where ``inspect`` finds them."""
        want = {}      # id(value) -> [value, whether its norm is wanted], first seen first
        for step in self.trace.steps:
            for g in step.cotangents:
                if g is not None and id(g) not in want:
                    want[id(g)] = [g, False]
            for _, c in step.contributions:
                if c is not None:
                    entry = want.get(id(c))
                    if entry is None:
                        want[id(c)] = [c, True]
                    else:
                        entry[1] = True
            for total in step.totals.values():
                if total is not None and id(total) not in want:
                    want[id(total)] = [total, False]
        values = [v for v, _ in want.values()]
        for key, tensor, look in zip(want, values, look_many(values, [n for _, n in want.values()])):
            self.seen[key] = (tensor, *look)
            if look[3] is not None:
                self.square_sums[key] = (tensor, look[3])

    def node_id(self, tid):
        return f"t{tid}"

    def named(self, tid, value):
        return {"node": self.node_id(tid), "name": self.b.names[tid], "value": value}

    def edges_of(self, op_id, kind, slot=None):
        span = self.b.edge_span.get(op_id) if self._in_edges is None else None
        if span is not None and kind in ("in", "out"):
            # an op's edges lie together, inputs then outputs by slot (collect_records):
            # a frame or two read (a NaN page's first bad frames) need no index of them all
            first, n_in, n_out = span
            start, n = (first, n_in) if kind == "in" else (first + n_in, n_out)
            edges = self.b.edges
            if slot is None:
                return [edges[start + j]["id"] for j in range(n)]
            return [edges[start + slot]["id"]] if 0 <= slot < n else []
        key = (op_id, kind) if slot is None else (op_id, kind, slot)
        return list(self.in_edges.get(key, ()))

    @property
    def in_edges(self):
        """``(op id, kind)`` and ``(op id, kind, slot)`` -> edge ids, made when a frame's
        edges are first asked for (a page made from a tape's rows never asks)."""
        if self._in_edges is None:
            self._in_edges = {}
            for e in self.b.edges:
                self._in_edges.setdefault((e["op"], e["kind"]), []).append(e["id"])
                self._in_edges.setdefault((e["op"], e["kind"], e["slot"]), []).append(e["id"])
        return self._in_edges

    def build(self):
        """The frames: a list, or with ``words=False`` (a page writes the words) a
        ``FrameRows`` that makes each forward and backward frame when it is first read
        (a page made from a long tape reads them as rows: ``html_export.page_model``)."""
        ops = sorted(self.b.ops.items(), key=lambda item: item[1]["order"])
        n_ops = len(ops)
        self.ops_in_order = ops
        self.check_forward(ops)
        seed = self.seed(n_ops)
        self.look_backward()
        rows = self.backward_rows(n_ops)
        frames = FrameRows(self, n_ops, seed, rows, self.result(n_ops))
        return frames if not self.words else list(frames)

    def frame(self, phase, title, sentence, done, **fields):
        base = {"phase": phase, "title": title, "sentence": sentence, "op": None,
                "record": None, "tape": None, "done_ops": done, "nodes": [], "edges": [],
                "cotangents": [], "vjp": None, "contributions": [], "totals": [],
                "gradients": [], "grads_new": self.changed}
        if title is None:        # left to the page (words=False)
            del base["title"], base["sentence"]
        self.changed = {}
        base.update(fields)
        return base

    def check_forward(self, ops):
        """Notes forward frame ``k`` in ``forward_bad`` if the ``k``-th op's record reads
        or makes a NaN or an Inf. A big output the tape did not keep (a placeholder) is
        judged by its value where a later record kept it (the tensor's stats)."""
        tensors, records = self.b.tensors, self.b.op_records
        # a value whose node's stats (taken from this value) say finite: most of them
        clean = {tid for tid, node in tensors.items()
                 if node["stats"] is not None and not node["stats"]["nonfinite"]}
        all_clean = clean.issuperset
        for k, (key, _) in enumerate(ops):
            rec = records[key]
            if all_clean(rec[5]) and all_clean(rec[6]):    # input and output ids: most records
                continue
            hit, n_in = False, len(rec.inputs)
            for j, t in enumerate(rec.inputs + rec.outputs):
                tid = t._id
                if isinstance(t._value, ArraySpec):
                    # no value here to look at (self.bad's look at a placeholder finds no
                    # float array: False); an output is judged by its stats below
                    found = False
                elif tid in clean:
                    continue
                else:
                    found = self.bad(t)
                # an output is also judged by its stats (a placeholder's value kept elsewhere)
                if found or (j >= n_in and tid not in clean and
                             (tensors[tid].get("stats") or {}).get("nonfinite")):
                    hit = True
                    break
            if hit:
                self.forward_bad.append(k)

    def forward_frame(self, k):
        """The frame of the ``k``-th op's record (``build`` checked its values)."""
        key, op = self.ops_in_order[k]
        rec = self.b.op_records[key]
        names = self.b.names
        tape, index = op["records"][0]
        outputs = [self.named(y._id, self.b.tensors[y._id].get("preview")) for y in rec.outputs]
        title = sentence = None
        if self.words:
            outs = ", ".join(names[i] for i in rec.output_ids)
            ins = ", ".join(names[i] for i in rec.input_ids)
            title = f"{record_name(self.b.tape_names, tape, index)}: {outs} = {rec.op_type}({ins})"
            if len(self.b.snapshots) > 1:
                title += f"  [{' + '.join(self.b.tape_names[t] for t in sorted(set(op['tapes'])))}]"
            sentence = forward_sentence(op, outputs, [self.b.tape_names[t] for t in op["tapes"]],
                                        len(self.b.snapshots), self.b.tape_names)
        return self.frame("forward", title, sentence, k + 1, op=op["id"], record=index, tape=tape,
                          nodes=[op["id"]] + [self.node_id(i) for i in rec.output_ids],
                          edges=self.edges_of(op["id"], "in") + self.edges_of(op["id"], "out"),
                          outputs=outputs, grads_new={})

    def seed(self, n_ops):
        seeds = []
        for tid, g in self.trace.seeds.items():
            value = value_of(g)
            self.changed[self.node_id(tid)] = value["preview"]
            seeds.append(self.named(tid, value))
        title = "seed: " + ", ".join(
            f"{derivative(s['name'], s['name'])} = {s['value']['preview']}" for s in seeds) if seeds \
            else "seed: no differentiable target"
        sentence = seed_sentence(seeds, self.output_gradients is not None,
                                 [self.b.tensors[t._id] for t in self.targets])
        return self.frame("seed", title, sentence, n_ops, nodes=[s["node"] for s in seeds],
                          cotangents=seeds)

    def backward_rows(self, n_ops):
        """What each backward step moved, looked at once (previews, NaN checks, the
        norms of what it sent): per step ``(op node, record index, [(output id,
        cotangent value)], [(input id, contribution value)] by input slot, [(tensor id,
        total value)])``; steps with a NaN or an Inf go into ``backward_bad`` and the
        norms of what each sent into ``norms``."""
        ops, seen, inspect, norms_of = self.b.ops, self.seen, self.inspect, self.norms
        rows = []
        # look_backward looked at every value: inspect is the fallback
        for i, step in enumerate(self.trace.steps):
            rec = step.record
            output_ids = rec[6]
            op = ops[tuple(output_ids)]
            bad = False
            cotangents = []
            for oid, g in zip(output_ids, step.cotangents):
                look = seen.get(id(g)) if g is not None else None
                value, worse = (look[1], look[2]) if look is not None else inspect(g)[:2]
                bad = bad or worse
                cotangents.append((oid, value))
            contributions, norms = [], []
            op_id = op["id"]
            for x_id, c in step.contributions:
                look = seen.get(id(c)) if c is not None else None
                if look is None or (look[3] is None and look[1] is not None):
                    value, worse, norm = inspect(c, with_norm=True)
                else:
                    value, worse, norm = look[1], look[2], look[3]
                bad = bad or worse
                if c is not None:
                    norms.append((op_id, norm))
                contributions.append((x_id, value))
            k = n_ops + 1 + i
            if bad:
                self.backward_bad.append(k)
            norms_of[k] = norms
            totals = []
            for x_id, total in step.totals.items():
                look = seen.get(id(total)) if total is not None else None
                totals.append((x_id, look[1] if look is not None else inspect(total)[0]))
            rows.append((op, rec[0], cotangents, contributions, totals))
        return rows

    def backward_frame(self, i, row, n_ops):
        """The frame of backward step ``i`` from its row (``backward_rows``)."""
        op, record, cotangents, contributions, totals = row
        cotangents = [self.named(oid, value) for oid, value in cotangents]
        entries = []
        for slot, (x_id, value) in enumerate(contributions):
            entry = self.named(x_id, value)
            entry["slot"] = slot
            entry["edge"] = self.edges_of(op["id"], "in", slot)[0]
            entries.append(entry)
        contributions = entries
        totals = [self.named(x_id, value) for x_id, value in totals]
        changed = {t["node"]: t["value"]["preview"] for t in totals if t["value"] is not None}
        arriving = [e for slot, c in enumerate(cotangents)
                    if c["value"] is not None for e in self.edges_of(op["id"], "out", slot)]
        sending = [c["edge"] for c in contributions if c["value"] is not None]
        vjp = {"op_type": op["op_type"], "doc": op["doc"], "rule": op["rule"],
               "differentiable": op["differentiable"]}
        title = sentence = None
        if self.words:
            title = f"backward {i + 1}: {op['op_type']} ({record_name(self.b.tape_names, 0, record)})"
            sentence = backward_sentence(op, cotangents, contributions, totals, self.b.tensors)
        return self.frame("backward", title, sentence, n_ops,
                          op=op["id"], record=record, tape=0,
                          nodes=[op["id"]] + [c["node"] for c in contributions if c["value"]],
                          edges=arriving + sending, arriving=arriving, cotangents=cotangents,
                          vjp=vjp, contributions=contributions, totals=totals, grads_new=changed)

    def result(self, n_ops):
        gradients, seen = [], self.seen
        for s, g in zip(self.sources, self.gradients):
            # a source's gradient is its last step's total, looked at already
            # (look_backward); one made afterwards (dense slices) is looked at here
            look = seen.get(id(g)) if g is not None else None
            value = look[1] if look is not None and look[0] is g else value_of(g)
            entry = self.named(s._id, value)
            entry["flags"] = list(self.b.tensors[s._id]["flags"])
            gradients.append(entry)
            if g is not None:
                self.changed[self.node_id(s._id)] = entry["value"]["preview"]
        target_name = " + ".join(self.b.names[t._id] for t in self.targets) or "?"
        title = "result: " + ", ".join(
            f"{derivative(target_name, g['name'])} = "
            f"{g['value']['preview'] if g['value'] else 'None'}"
            for g in gradients)
        return self.frame("result", title, result_sentence(target_name, gradients), n_ops,
                          nodes=[g["node"] for g in gradients], gradients=gradients)
