"""Gradient health of a replay: one row per scope group, with flags and their reasons.

``group_health`` reads a finished replay (its groups, nodes and first
NaN/Inf frames), the engine's ``BackwardTrace`` and the sources' values, and
returns one row for EVERY group, healthy or not (a NaN or a None row is
kept and marked, never dropped). For a group that reads source variables
(a layer's kernel and bias):

- ``grad_norm``: the norm of the gradient its backward steps sent to those
  variables (all of them together, ``sqrt(sum ||g_v||^2)``); for a layer
  used once this is the norm of ``tape.gradient`` for its variables, for a
  cell unrolled over steps it is this step's share;
- ``weight_norm``: the norm of those variables' values (as they are when
  the health is computed: before the optimizer step, in the usual loop);
- ``ratio``: ``grad_norm / weight_norm``;
- ``update_norm`` and ``update_ratio`` (``||update|| / ||w||``) when the
  updates are given (``replay(..., updates=[w_after - w_before, ...])``);
- ``zero_fraction``: the share of gradient entries that are exactly 0.

A group that reads no source variable (an activation, the loss) gets the
norm of what its backward steps sent to their inputs instead
(``grad_of == "inputs"``). JSON-able: a NaN or Inf number is ``None``, and
the row says so in its flags.

The rules (each flag carries its rule's name and a sentence saying why):

- ``nan_weights``: a variable of the group holds NaN/Inf;
- ``nan_made``: the group made the first NaN/Inf of the forward pass;
- ``nan_fed``: its forward values hold NaN/Inf made upstream (names where);
- ``nan_gradient``: the gradient it sends holds NaN/Inf; names where that
  began: the forward record that made the first NaN/Inf, else the backward
  step that first sent one (``1/sqrt(0)`` in a VJP);
- ``none_gradient``: no gradient reaches one or more of its variables
  (None), with the engine's reason where known; for a group without
  variables: no backward step ran in it at all;
- ``dead_relu``: 90% or more of a Relu output in the group is exactly 0;
- ``zero_gradient``: 90% or more of its variables' gradient is exactly 0;
- and the rules that compare a group with the others (``widgets/health/outliers.py``):
  ``large_weights`` (its weights' RMS 10x the median of the others'),
  ``ratio_high`` / ``ratio_low`` (gradient/weight ratio 100x above, or below:
  vanishing, the median), ``update_high`` / ``update_low`` and
  ``update_large`` (one update changes its weights by more than 10%).

"The others" are the other groups with finite values of that kind; the
relative rules need at least two of them. A row's ``status`` is ``"nan"``,
``"none"``, ``"flagged"`` or ``"ok"``, in that order of precedence.

Cost: one pass over the backward steps and one over the edges and nodes
(linear in records; a 10,000-record tape takes a small part of a second).
Nothing here differentiates; values cross into NumPy only through
``autodiff.backend.to_numpy``.

    >>> from widgets import replay
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(4),
    ...                              ad.keras.layers.Dense(1)], name="mlp")
    >>> _ = model.layers[1].kernel.assign(np.full((4, 1), np.nan, np.float32))
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.reduce_mean(model(ad.ones([2, 3])))
    >>> rows = replay(tape, loss, model.trainable_variables).data["debug"]["health"]
    >>> rows[1]["scope"], rows[1]["status"], rows[1]["flags"][0]["reason"]   # a NaN kernel
    ('mlp/dense_1', 'nan', 'weights hold NaN (dense_1/kernel)')
"""

import math

import numpy as np

from autodiff import backend
from autodiff.tensor import ArraySpec, Variable

from .outliers import flag as _flag, relative_flags, role_of
from .triage import triage

__all__ = ["group_health", "ZERO_SHARE", "NAN_RULES"]

ZERO_SHARE = 0.9       # share of exact zeros that makes a layer dead / its gradient zero
RELUS = ("Relu", "Relu6")
DIVISIONS = ("RealDiv", "Div", "FloorDiv")
NAN_RULES = {"nan_weights", "nan_made", "nan_fed", "nan_gradient"}   # status "nan"


def _array(value):
    """A tensor's (or an array's) value as a NumPy array; None for a placeholder."""
    value = getattr(value, "_value", value)
    if value.__class__ is np.ndarray:      # NumPy's own array (most): as it is
        return value
    if value is None or isinstance(value, ArraySpec):
        return None
    return np.asarray(backend.to_numpy(value))


def _sq(array):
    """Sum of squares in float64 (NaN or Inf when the array holds one)."""
    array = np.abs(array) if array.dtype.kind == "c" else array
    flat = np.asarray(array, dtype=np.float64).reshape(-1)
    return float(np.dot(flat, flat))


def _number(x):
    """4 significant digits, or None for NaN/Inf (the replay JSON allows no NaN)."""
    return float(f"{x:.4g}") if x is not None and math.isfinite(x) else None


def _finite_word(array, square_sum):
    """None when ``array`` holds no NaN or Inf (a finite sum of squares proves it),
    else ``"NaN"`` or ``"Inf"``."""
    if math.isfinite(square_sum) or np.all(np.isfinite(array)):
        return None
    return _bad_word(array)


def _bad_word(array):
    return "NaN" if np.isnan(array).any() else "Inf"


def _updates_by_id(updates, sources):
    """``{variable id: update array}`` from a list aligned with ``sources`` or a dict
    keyed by ``variable.ref()`` or by the variable's name."""
    if updates is None:
        return {}
    if isinstance(updates, dict):
        by_name = {s._name: s._id for s in sources if isinstance(s, Variable)}
        found = {}
        for key, value in updates.items():
            if hasattr(key, "deref"):
                found[key.deref()._id] = value
            elif isinstance(key, str) and key.split(":")[0] in by_name:
                found[by_name[key.split(":")[0]]] = value
            else:
                raise KeyError(f"updates: {key!r} is neither a variable.ref() nor the name of "
                               f"a source variable")
        return {k: _array(v) for k, v in found.items() if v is not None}
    updates = list(updates)
    if len(updates) != len(sources):
        raise ValueError(f"updates: got {len(updates)} for {len(sources)} sources "
                         f"(one per source, None where there is none)")
    return {s._id: _array(u) for s, u in zip(sources, updates) if u is not None}


def _record_text(frame, ops):
    """``'record 12: Log'`` for a frame (numbered from 1, as the frame titles)."""
    op = ops.get(frame.get("op")) or {}
    return f"record {frame['record'] + 1}: {op.get('op_type', '?')}"


def group_health(data, trace, sources, updates=None, square_sums=None):
    """One health row per scope group of a replay, with flags and reasons.

    Args:
        data: the replay dict (``Replay.data``) with its groups and debug marks.
        trace: the engine's BackwardTrace it was made from.
        sources: the flattened sources (their values give the weight norms).
        updates: optional optimizer updates, one array per source (None where
            none), or a dict keyed by ``variable.ref()`` or variable name:
            ``[w_after - w_before for ...]``.
        square_sums: optional ``{id(tensor): (tensor, sum of squares in float64)}`` of
            contributions whose sum of squares is already known (the replay's frames
            take it for each contribution's norm), so it is not taken twice.

    Returns:
        A list of dicts, one per group in ``data["groups"]`` order: ``group``,
        ``scope``, ``variables`` (display names), ``grad_of``, ``grad_norm``,
        ``weight_norm``, ``ratio``, ``update_norm``, ``update_ratio``,
        ``zero_fraction``, ``nonfinite_fraction``, ``status`` and ``flags``
        (``[{"rule", "reason"}]``).

    >>> from widgets import group_health, replay
    >>> w0, w1 = ad.Variable([1.0, 2.0], name="w0"), ad.Variable(3.0, name="w1")
    >>> with ad.GradientTape() as tape:
    ...     with ad.name_scope("a"):
    ...         y = ad.reduce_sum(w0 * w0)
    ...     with ad.name_scope("b"):
    ...         z = w1 * 2.0               # y does not need it: no gradient
    >>> r = replay(tape, y, [w0, w1])
    >>> [row["status"] for row in group_health(r.data, r.trace, [w0, w1])]
    ['ok', 'none']
    """
    ix = _Index(data, sources)
    flow = _BackwardFlow(trace, ix, square_sums or {})
    weights = {}   # variable id -> (sum of squares, size, "NaN"/"Inf"/None): once per variable
    for vid in {v for vids in ix.own_vars.values() for v in vids}:
        w = _array(ix.variables[vid])
        if w is not None and w.dtype.kind in "fc":
            square_sum = _sq(w)
            weights[vid] = (square_sum, w.size, _finite_word(w, square_sum))
    update = {vid: _sq(u) for vid, u in _updates_by_id(updates, sources).items()}
    rows = []
    for g in data["groups"]:
        vids = ix.own_vars.get(g["id"], [])
        row = _row(g, vids, weights, ix.tensors, flow.grads.get(g["id"], {}),
                   flow.sent.get(g["id"]), update)
        for vid in vids:
            if vid in weights and weights[vid][2]:
                row["flags"].append(_flag("nan_weights", f"weights hold {weights[vid][2]} "
                                                         f"({ix.tensors[f't{vid}']['name']})"))
        _nan_flags(row, g["id"], ix, flow)
        _none_flags(row, vids, flow.grads.get(g["id"], {}), ix, flow.sent.get(g["id"]))
        _zero_flags(row, flow.relu_zero.get(g["id"]))
        rows.append(row)
    relative_flags(rows)
    triage(rows, ix.lookups)
    for row in rows:
        del row["rms"], row["role"]
    return rows


class _Index:
    """Who is where in a replay: ops and tensors by id, each op's group, what a
    group reads and makes, the source variables it reads, the first NaN frames."""

    def __init__(self, data, sources):
        self.ops, self.tensors = {}, {}
        for n in data["nodes"]:       # one pass: 23,000 nodes at 10,000 records
            kind = n["type"]
            if kind == "op":
                self.ops[n["id"]] = n
            elif kind == "tensor":
                self.tensors[n["id"]] = n
        self.group_of = {op: g["id"] for g in data["groups"] for op in g["ops"]}
        self.variables = {s._id: s for s in sources if isinstance(s, Variable)}
        self.op_of_output, self.reads, self.outputs, self.divisor = {}, {}, {}, {}
        var_of = {f"t{vid}": vid for vid in self.variables}     # node id -> variable id
        group_of, reads, outputs = self.group_of, self.reads, self.outputs
        lookup = set()       # ops that gather rows of a variable (an embedding's lookup)
        for e in data["edges"]:
            op = e["op"]
            gid = group_of.get(op)
            if e["kind"] == "out":
                self.op_of_output[int(e["to"][1:])] = op
                if gid:
                    outputs.setdefault(gid, []).append(e["to"])
                continue
            read, slot = e["from"], e["slot"]
            if slot == 1:
                self.divisor[op] = read
            elif slot == 0 and read in var_of and self.ops[op]["op_type"].startswith("Gather"):
                lookup.add(op)
            if gid:
                reads.setdefault(gid, {})[read] = None
        self.own_vars = {gid: [var_of[t] for t in ts if t in var_of] for gid, ts in reads.items()}
        self.lookups = {group_of[op] for op in lookup if op in group_of}
        debug = data.get("debug", {})
        first = debug.get("first_nonfinite", {})
        frames = data["frames"]
        self.fwd = frames[first["forward"]] if first.get("forward") is not None else None
        self.bwd = frames[first["backward"]] if first.get("backward") is not None else None
        self.lost = {entry["source"]: entry for entry in debug.get("lost", ())}
        self._bad = None

    def bad(self, tensor_ids):
        """Whether any of these tensors' known values holds a NaN or an Inf."""
        if self._bad is None:     # the tensors whose stats count one, found once
            self._bad = {t for t, n in self.tensors.items()
                         if (n.get("stats") or {}).get("nonfinite")}
        return not self._bad.isdisjoint(tensor_ids)


class _BackwardFlow:
    """One pass over the backward steps: per group, the gradient sent to its
    variables (summed: a variable read twice gets two contributions), the
    squared norm of all it sent, whether that held NaN/Inf, and the largest
    share of zeros in a Relu output it made."""

    def __init__(self, trace, ix, square_sums):
        self.grads, self.sent, self.bad_sent, self.relu_zero = {}, {}, {}, {}
        self.square_sums = square_sums
        for step in trace.steps:
            rec = step.record
            gid = ix.group_of.get(ix.op_of_output.get(rec.output_ids[0]))
            if gid is not None:
                self.add(gid, step, ix.own_vars.get(gid, ()))

    def add(self, gid, step, mine):
        for x_id, c in step.contributions:
            known = self.square_sums.get(id(c))
            if known is not None and known[0] is c:      # a float value: its array when needed
                array, sq = None, float(known[1])
            else:
                array = None if c is None else _array(c)
                if array is None or array.dtype.kind not in "fc":
                    continue
                sq = _sq(array)
            self.sent[gid] = self.sent.get(gid, 0.0) + sq
            bad = not math.isfinite(sq) and gid not in self.bad_sent   # the group's first one
            if bad or x_id in mine:
                array = _array(c) if array is None else array
            if bad and not np.all(np.isfinite(array)):
                self.bad_sent[gid] = _bad_word(array)
            if x_id in mine:      # (gradient, its sum of squares): one contribution's is known
                acc = self.grads.setdefault(gid, {})
                if x_id not in acc:
                    acc[x_id] = (array, sq)
                else:
                    total = acc[x_id][0] + array
                    acc[x_id] = (total, _sq(total))
        if step.record.op_type in RELUS:
            out = _array(step.record.outputs[0])
            if out is not None and out.size:
                share = float(np.mean(out == 0))
                if share > self.relu_zero.get(gid, (-1.0, None))[0]:
                    self.relu_zero[gid] = (share, step.record.index)


def _nan_flags(row, gid, ix, flow):
    """``nan_made``, ``nan_fed`` and ``nan_gradient``, each naming where the NaN began."""
    fwd, flags = ix.fwd, row["flags"]
    where = ""
    if fwd is not None:
        scope = ix.ops.get(fwd.get("op"), {}).get("scope") or "no scope"
        where = f"{_record_text(fwd, ix.ops)} in {scope}"
        inputs = [t for t in ix.reads.get(gid, ()) if int(t[1:]) not in ix.variables]
        if ix.group_of.get(fwd.get("op")) == gid:
            flags.append(_flag("nan_made", f"NaN made here: the first NaN/Inf of the forward "
                                           f"pass ({_record_text(fwd, ix.ops)})"
                                           f"{_division_by_zero(gid, fwd, ix)}"))
        elif ix.bad(ix.outputs.get(gid, ())) or ix.bad(inputs):
            flags.append(_flag("nan_fed", f"is fed NaN/Inf from {where}"))
    if fwd is None and ix.bwd is not None and ix.group_of.get(ix.bwd.get("op")) == gid:
        flags.append(_flag("nan_made", f"NaN made here: its backward step sends the first "
                                       f"NaN/Inf ({_record_text(ix.bwd, ix.ops)})"))
    if gid in flow.bad_sent:
        if fwd is not None:    # the backward pass carries the forward NaN back
            origin = f" (from {where})"
        else:
            origin = f" (first made by {_record_text(ix.bwd, ix.ops)})" if ix.bwd else ""
        flags.append(_flag("nan_gradient", f"gradient is {flow.bad_sent[gid]}{origin}"))


def _division_by_zero(gid, made, ix):
    """``'; record 82 divides by 0 (RealDiv(v94, t), t = 0)'``: a division by a zero
    in this group up to the record that made the first NaN/Inf (a temperature typo)."""
    last = ix.ops.get(made.get("op"), {}).get("order", -1)
    for op_id, op in ix.ops.items():
        if op["op_type"] not in DIVISIONS or ix.group_of.get(op_id) != gid or op["order"] > last:
            continue
        divisor = ix.tensors.get(ix.divisor.get(op_id))
        stats = (divisor or {}).get("stats") or {}
        if stats.get("min") == 0 and stats.get("max") == 0:
            return (f"; record {op['records'][0][1] + 1} divides by 0 ({op['label']}, "
                    f"{divisor['name']} = 0)")
    return ""


def _zero_flags(row, relu):
    """``dead_relu`` (a Relu output mostly 0) and ``zero_gradient``."""
    share, index = relu or (0.0, None)
    if share >= ZERO_SHARE:
        row["flags"].append(_flag("dead_relu", f"dead ReLU: {share:.0%} of its outputs are 0 "
                                               f"(record {index + 1}: Relu)"))
    zero = row["zero_fraction"]
    if zero is not None and zero >= ZERO_SHARE:
        row["flags"].append(_flag("zero_gradient", f"dead: gradient is exactly 0 for {zero:.0%} "
                                                   f"of its weights"))


def _row(g, vids, weights, tensors, grads, sent, update):
    """The numbers of one group (flags are added by the caller)."""
    w_sq = g_sq = u_sq = 0.0
    size = zeros = bad = entries = 0
    for vid in vids:
        if vid in weights:
            w_sq += weights[vid][0]
            size += weights[vid][1]
        if vid in grads:
            grad, square_sum = grads[vid]
            g_sq += square_sum
            zeros += int(np.count_nonzero(grad == 0))
            if not math.isfinite(square_sum):     # else every entry is finite
                bad += int(grad.size - np.count_nonzero(np.isfinite(grad)))
            entries += grad.size
        if vid in update:
            u_sq += update[vid]
    has_vars = bool(vids)
    if has_vars:
        grad = g_sq ** 0.5 if grads else None
    else:
        grad = sent ** 0.5 if sent is not None else None
    weight = w_sq ** 0.5 if has_vars and size else None
    upd = u_sq ** 0.5 if any(v in update for v in vids) else None
    ratio = grad / weight if grad is not None and weight else None
    return {
        "group": g["id"], "scope": g["scope"],
        "variables": [tensors[f"t{v}"]["name"] for v in vids],
        "grad_of": "weights" if has_vars else "inputs",
        "grad_norm": _number(grad), "weight_norm": _number(weight), "ratio": _number(ratio),
        "update_norm": _number(upd),
        "update_ratio": _number(upd / weight) if upd is not None and weight else None,
        "zero_fraction": round(zeros / entries, 4) if entries else None,
        "nonfinite_fraction": round(bad / entries, 4) if entries else None,
        "rms": (weight / size ** 0.5) if weight is not None and np.isfinite(weight) else None,
        "role": role_of(g["scope"]), "flags": [],
    }


def _lost_text(entry):
    """A lost gradient's reason in words (``lost_gradients``' ``why``: where in the code
    when a History knew, ``'the value left the library (.numpy() at train.py:68)'``)."""
    return entry.get("why") or entry["reason"]


def _none_flags(row, vids, grads, ix, sent):
    """``none_gradient`` for the variables that got no gradient through this group."""
    tensors, lost = ix.tensors, ix.lost
    missing = [v for v in vids if v not in grads]
    if not vids:
        if sent is None:
            row["flags"].append(_flag("none_gradient", "None: no gradient flows back through it"))
        return
    if not missing:
        return
    reasons = sorted({_lost_text(lost[f"t{v}"]) for v in missing
                      if f"t{v}" in lost and lost[f"t{v}"].get("reason")})
    why = f": {'; '.join(reasons)}" if reasons else ""
    if len(missing) == len(vids):
        text = f"None: no gradient reaches its variables{why}"
    else:
        text = (f"None: no gradient reaches "
                f"{', '.join(tensors[f't{v}']['name'] for v in missing)}{why}")
    row["flags"].append(_flag("none_gradient", text))
