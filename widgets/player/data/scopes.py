"""Records grouped by name scope, and what a debugger jumps to (replay JSON parts).

``scope_groups`` turns each record's ``scope`` (``'dense_1'``, ``'rnn/cell'``;
``''`` for none: ``getattr(rec, "scope", "")``, so older engines work) into
boxes the player can collapse: one group per distinct scope path, holding
its ops, the tensors they produce, the copies of inputs read inside it, and
inputs read only inside it. Collapsed, a group is drawn as one box over its
members and the backward pass lights it step by step; expanded, its ops show.

``debug_marks`` finds the first frame whose forward value or backward
cotangent holds a NaN or an Inf, and the gradient-norm of every group at
every backward step (sparse: only the steps that add to a group). Every
group has a series: from a step that sent NaN/Inf on, its running norm is
``"NaN"`` or ``"Inf"``; a group no backward step ran in (a None gradient)
has an empty one. The health of every group, NaN and None ones included, with
weight norms, ratios and flagged reasons, is ``widgets/health/rows.py``.

Pure Python over the replay dict; nothing here differentiates.

    >>> from widgets import replay
    >>> x = ad.Variable(1.0)
    >>> with ad.GradientTape() as tape:
    ...     with ad.name_scope("layer"):
    ...         y = ad.sin(x * x) + x
    >>> data = replay(tape, y, x).data
    >>> data["groups"][0]["scope"], len(data["groups"][0]["ops"])
    ('layer', 3)
"""

from math import isfinite, isnan

import numpy as np

from autodiff import backend

from .statistics import value_stats

__all__ = ["value_stats", "scope_groups", "group_boxes", "debug_marks", "nonfinite", "explain_sources",
           "lost_gradients"]

PAD = 10.0
COLLAPSE_ABOVE_OPS = 30   # a tape with more ops opens with its groups collapsed (groups.js too)


def scope_groups(nodes, edges, layout, scope_of):
    """One group per scope path: members, a box around them, the op order.

    Args:
        nodes, edges: the replay's nodes and edges.
        layout: the replay's layout (``graph_layout``); without geometry the
            groups get no ``box`` (``group_boxes`` adds it later).
        scope_of: ``op id -> scope string`` ('' for no scope).

    Returns:
        A list of ``{"id", "scope", "ops", "members", "box", "order"}``, in
        the order the groups first ran.
    """
    group_of = {}
    groups = {}
    order = {n["id"]: n["order"] for n in nodes if n["type"] == "op"}
    for op, scope in sorted(scope_of.items(), key=lambda item: order[item[0]]):
        if not scope:
            continue
        g = groups.get(scope)
        if g is None:
            g = groups[scope] = {"id": f"g{len(groups)}", "scope": scope, "ops": [],
                                 "members": [], "order": order[op]}
        g["ops"].append(op)
        group_of[op] = g
    readers, produced = {}, set()
    for e in edges:
        g = group_of.get(e["op"])
        if e["kind"] == "out":
            produced.add(e["to"])
            if g is not None:
                g["members"].append(e["to"])
        elif e["kind"] == "in":
            gid = g["id"] if g else None
            seen = readers.get(e["from"])
            if seen is None:
                readers[e["from"]] = {gid}
            else:
                seen.add(gid)
    by_id = {g["id"]: g for g in groups.values()}
    for tensor, gids in readers.items():   # an input read only inside one group
        if tensor not in produced and len(gids) == 1 and None not in gids:
            by_id[next(iter(gids))]["members"].append(tensor)
    for c in layout.get("copies", ()):
        g = group_of.get(c["op"])
        if g is not None:
            g["members"].append(c["id"])
    result = []
    for g in groups.values():
        own = set(g["ops"])     # a set: a GRU's one scope holds 10,000 ops
        g["members"] = g["ops"] + [m for m in dict.fromkeys(g["members"]) if m not in own]
        result.append(g)
    if "nodes" in layout:
        group_boxes(result, layout)
    return result


def group_boxes(groups, layout):
    """Gives each group its ``box``: around its members as ``layout`` placed them
    (a layout with geometry, ``graph_layout``)."""
    boxes = {**layout["nodes"], **{c["id"]: c for c in layout.get("copies", ())}}
    for g in groups:
        parts = [boxes[m] for m in g["members"]]
        left = min(b["x"] - b["w"] / 2 for b in parts) - PAD
        top = min(b["y"] - b["h"] / 2 for b in parts) - PAD - 12
        right = max(b["x"] + b["w"] / 2 for b in parts) + PAD
        bottom = max(b["y"] + b["h"] / 2 for b in parts) + PAD
        g["box"] = {"x": round(left, 1), "y": round(top, 1), "w": round(right - left, 1),
                    "h": round(bottom - top, 1)}


def nonfinite(value):
    """True when a tensor's value (or None) holds a NaN or an Inf."""
    if value is None:
        return False
    array = np.asarray(backend.to_numpy(getattr(value, "_value", value)))
    return array.dtype.kind in "fc" and not bool(np.all(np.isfinite(array)))


def debug_marks(frames, groups, forward_bad, backward_bad, contributions_norms):
    """Where the player's debugging buttons jump, and per-group gradient norms.

    Args:
        frames: the replay's frames.
        groups: from ``scope_groups``.
        forward_bad: frame indices whose forward outputs are not finite.
        backward_bad: frame indices whose cotangents or contributions are not finite.
        contributions_norms: ``frame index -> [(op id, norm), ...]``, the norm
            of what each backward step sent.

    Returns:
        ``{"first_nonfinite": {"forward": k or None, "backward": k or None},
        "group_norms": {group id: [[frame, running norm], ...]}}`` with a
        series for EVERY group: the running norm is ``"NaN"`` or ``"Inf"`` (a
        string: JSON has no NaN) from the step that sent one on, and the
        series is empty when no backward step ran in the group (nothing flowed
        back through it: a None gradient).

    ``replay`` keeps what it returns in ``data["debug"]``:

    >>> from widgets import replay
    >>> w, v, u = ad.Variable(2.0), ad.Variable(-1.0), ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     with ad.name_scope("d0"):
    ...         a = w * 0.5
    ...     with ad.name_scope("d1"):
    ...         b = ad.sqrt(v)                # NaN
    ...     with ad.name_scope("aux"):
    ...         c = u * 2.0                   # not on the way to y
    ...     y = a + a + b
    >>> marks = replay(tape, y, [w, v, u]).data["debug"]
    >>> marks["group_norms"]       # d0 sent 1.0 (0.5 twice, added); d1 a NaN; aux nothing
    {'g0': [[9, 1.0]], 'g1': [[8, 'NaN']], 'g2': []}
    """
    group_of = {op: g["id"] for g in groups for op in g["ops"]}
    squares = {}
    norms = {g["id"]: [] for g in groups}
    for k in sorted(contributions_norms):
        for op, norm in contributions_norms[k]:
            gid = group_of.get(op)
            if gid is None:
                continue
            total = squares[gid] = squares.get(gid, 0.0) + norm * norm
            norms[gid].append([k, float(f"{total ** 0.5:.4g}") if isfinite(total)
                               else "NaN" if isnan(total) else "Inf"])
    return {"first_nonfinite": {"forward": min(forward_bad, default=None),
                                "backward": min(backward_bad, default=None)},
            "group_norms": norms}


def explain_sources(tape, target, sources, limit=8, names=None, history=None):
    """``explain_none_gradient`` for each source, asked BEFORE the backward pass
    (a non-persistent tape frees its records then).

    With more than ``limit`` sources (a model's variables), only those no
    differentiable record leads to from the target are asked about (one
    sweep finds them: the ones whose gradient will be None), still at most
    ``limit``; each answer is a sweep over the records.

    ``names`` (tensor id -> the player's name) names the source and the
    target in each message as the player does; ``history``: a History to
    read the exact cause from, by default the one that was open while the
    tape recorded (``record_history()``), if any.
    """
    from ...explain.history import history_of
    from ...explain.none_gradient import explain_each

    if len(sources) > limit:
        sources = _unreached(tape, target, sources)[:limit]
    names = names or {}
    if history is None and sources:
        history = history_of(tape)
    sources = [s for s in sources if hasattr(s, "_id")]
    if not sources:
        return {}
    try:
        target_name = _name(target, names)
    except Exception as exc:   # reported as it was, the jump still goes to the source
        return {source._id: exc for source in sources}
    # one sweep of the records for all of them, where it does not depend on the source
    answers = explain_each(tape, target, sources, history=history,
                           source_names=[_name(s, names) for s in sources],
                           target_name=target_name)
    return {source._id: answer for source, answer in zip(sources, answers)}


def _name(tensor, names):
    """The player's name of a tensor (never the name it has in this module's code)."""
    if tensor._id in names:
        return names[tensor._id]
    return tensor.name.split(":")[0] if getattr(tensor, "trainable", None) is not None \
        else f"v{tensor._id}"


def _unreached(tape, target, sources):
    """The sources that no differentiable record connects to ``target`` (a walk back
    over the records, as the backward pass goes; their gradient will be None)."""
    try:
        records = tape.records
    except RuntimeError:
        return []
    from autodiff import nest

    reached = {t._id for t in nest.flatten(target) if hasattr(t, "_id")}
    for rec in reversed(records):
        if rec.primitive.differentiable and any(i in reached for i in rec.output_ids):
            reached.update(rec.input_ids)
    return [s for s in sources if hasattr(s, "_id") and s._id not in reached]


def lost_gradients(answers, sources, gradients, nodes):
    """Why each source's gradient is None, and which node to jump to.

    ``answers`` come from ``explain_sources`` (one sweep over the records
    per source, linear in the tape). The node to jump to is the tensor named
    where the path breaks (a ``blocked``/``missing``/``gap`` step), else the
    source itself.

    Returns:
        ``[{"source", "reason", "message", "node", "why"}]``, one per None gradient;
        ``why``: the reason in words, with the line of code when a History knew it.
    """
    from ...explain.explanation import REASONS

    by_name = {n["name"]: n["id"] for n in nodes if n["type"] == "tensor"}
    lost = []
    for source, grad in zip(sources, gradients):
        if grad is not None or not hasattr(source, "_id"):
            continue
        sid = f"t{source._id}"
        why = answers.get(source._id)
        if why is None or isinstance(why, Exception):
            lost.append({"source": sid, "reason": None, "node": sid,
                         "message": str(why) if why else "not explained (too many sources)"})
            continue
        node = sid
        for step in why.path:
            if step.status != "recorded":
                node = by_name.get(step.via) or by_name.get(step.to) or sid
                break
        words = REASONS.get(why.reason, why.reason)
        gap = next((step for step in why.path if step.status == "gap"), None)
        if why.reason == "not_recorded" and gap is not None:
            words += (f" between {gap.via} and {gap.to} (.numpy(), a cast, stop_recording()?"
                      f" record inside record_history() to know)")
        lost.append({"source": sid, "reason": why.reason, "message": why.message, "node": node,
                     "why": f"{words} ({why.where})" if why.where else words})
    return lost
