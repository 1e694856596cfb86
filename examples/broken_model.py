"""A broken model, debugged with the tape player's views: a NaN and a None.

Run: python examples/broken_model.py [page.html]

An MLP (``2 -> 16 -> 16 -> 2``) on two moons, written with two bugs that
real code has:

1. **A NaN from log(0).** The cross-entropy is written by hand,
   ``-sum(onehot * log(softmax(logits)))``. One row of the data is a
   glitch, (300, 300): its logits are so far apart that float32's softmax
   rounds the other class's probability to exactly 0. ``log(0)`` is
   ``-inf``, and ``0 * -inf`` is NaN, although that prediction is *right*.
2. **A None from a detached branch.** A leftover line zeroes the first
   layer's negative features with NumPy (``np.maximum(h.numpy(), 0)``) and
   wraps them back in ``ad.constant``: the tape never sees it, so the first
   layer's kernel and bias get ``None``.

The player finds both: its "first NaN/Inf" button jumps to the frame of the
``Log`` record (``replay.data["debug"]["first_nonfinite"]``), its "lost
gradient" button to the tensor where the path from the loss back to the
first layer breaks (``replay.data["debug"]["lost"]``), and
``widgets.explain_none_gradient`` with a ``record_history`` names the cause
(``left_library``: the value went through ``.numpy()``). The fix:
``ad.nn.sparse_softmax_cross_entropy_with_logits`` (log-softmax, never
``log(0)``) and ``ad.maximum`` instead of NumPy. After it every
gradient is finite and none is None. The player's gradient health panel
(``replay.data["debug"]["health"]``) says the same in one row per layer:
``loss`` makes the first NaN (the ``Log``), ``logits`` and ``hidden2`` send
a NaN gradient back, ``hidden1`` gets None, each with its reason. The broken
step is written as an offline player page (default: a temp dir).
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import autodiff as ad
import widgets
from widgets.explain_history import record_history

GLITCH = (300.0, 300.0)


def two_moons_with_a_glitch(n=64, noise=0.1, seed=0):
    """Two moons (``n`` points, labels 0/1); row 0 replaced by the glitch, label 0."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label == 0, np.cos(angle), 1.0 - np.cos(angle))
    y = np.where(label == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + rng.normal(0.0, noise, (n, 2))
    points[0], label[0] = GLITCH, 0
    return points.astype(np.float32), label.astype(np.int32)


class MLP(ad.Module):
    """2 -> 16 -> 16 -> 2 logits; ``fixed=False`` zeroes negative features in NumPy."""

    def __init__(self, fixed=False):
        super().__init__(name="mlp")
        self.fixed = fixed
        self.hidden1 = ad.layers.Dense(16, activation="relu", name="hidden1")
        self.hidden2 = ad.layers.Dense(16, activation="relu", name="hidden2")
        self.logits = ad.layers.Dense(2, name="logits")

    def __call__(self, x):
        h = self.hidden1(x)
        with ad.name_scope("features"):
            if self.fixed:
                h = ad.maximum(h, 0.0)
            else:   # the bug: this runs in NumPy, out of every tape's sight
                h = ad.constant(np.maximum(h.numpy(), 0.0))
        return self.logits(self.hidden2(h))


def cross_entropy_by_hand(labels, logits):
    """The bug: ``-mean(sum(onehot * log(softmax)))``; log(0) when softmax underflows."""
    probabilities = ad.nn.softmax(logits)
    onehot = ad.one_hot(labels, 2)
    return -ad.reduce_mean(ad.reduce_sum(onehot * ad.math.log(probabilities), axis=1))


def cross_entropy_fixed(labels, logits):
    """The fix: the fused op works with log-softmax, so it never takes log(0)."""
    return ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))


def step(fixed):
    """Records one step of the model; returns the tape, loss, variables and history."""
    ad.random.set_seed(0)
    points, labels = two_moons_with_a_glitch()
    x, y = ad.constant(points), ad.constant(labels)
    model = MLP(fixed=fixed)
    loss_fn = cross_entropy_fixed if fixed else cross_entropy_by_hand
    with record_history() as history, np.errstate(divide="ignore", invalid="ignore"):
        with ad.GradientTape(persistent=True) as tape:
            logits = model(x)
            with ad.name_scope("loss"):
                loss = loss_fn(y, logits)
    return tape, loss, model.trainable_variables, history


def diagnose(tape, loss, variables, history):
    """What the player's buttons and the explainer say about one step's tape."""
    with np.errstate(divide="ignore", invalid="ignore"):   # the NaN is what we look for
        rep = widgets.replay(tape, loss, variables)
    nodes = {n["id"]: n for n in rep.nodes}
    first = rep.data["debug"]["first_nonfinite"]
    found = {"replay": rep, "nan_forward": None, "nan_backward": None, "lost": [],
             "health": {row["scope"]: (row["status"], [f["reason"] for f in row["flags"]])
                        for row in rep.data["debug"]["health"]}}
    if first["forward"] is not None:
        frame = rep.frames[first["forward"]]
        op = nodes[frame["op"]]
        # The frame is the first record that made or read a NaN/Inf; name the op that
        # made the first bad tensor it touches (itself, or the producer of an input).
        producer = {e["to"]: e["op"] for e in rep.edges if e["kind"] == "out"}
        touched = [e["tensor"] for e in rep.edges if e["op"] == op["id"]]
        bad = next(t for t in touched if (nodes[t].get("stats") or {}).get("nonfinite"))
        maker = nodes[producer.get(bad, op["id"])]
        found["nan_forward"] = {"frame": first["forward"], "title": frame["title"],
                                "op_type": op["op_type"], "scope": op["scope"],
                                "tensor": nodes[bad]["name"], "preview": nodes[bad]["preview"],
                                "made_by": maker["op_type"], "made_by_label": maker["label"]}
    if first["backward"] is not None:
        frame = rep.frames[first["backward"]]
        found["nan_backward"] = {"frame": first["backward"], "title": frame["title"],
                                 "op_type": nodes[frame["op"]]["op_type"]}
    by_tid = {n["id"]: v for v in variables for n in [rep.node(v)]}
    for lost in rep.data["debug"]["lost"]:
        variable = by_tid[lost["source"]]
        why = widgets.explain_none_gradient(tape, loss, variable, history=history,
                                           source_name=variable.path, target_name="loss")
        found["lost"].append({"source": variable.path, "jump_to": nodes[lost["node"]]["name"],
                              "reason_from_tape": lost["reason"], "reason": why.reason,
                              "message": why.message})
    return found


def main(out=None):
    """Finds both bugs, prints the diagnosis and the fix; returns the findings."""
    out = Path(out) if out else Path(tempfile.mkdtemp()) / "broken_model.html"
    tape, loss, variables, history = step(fixed=False)
    broken_loss = float(loss)
    print(f"the broken step: loss = {broken_loss}")
    found = diagnose(tape, loss, variables, history)
    page = widgets.export_html(found["replay"], out, title="A broken model: a NaN and a None")

    nan = found["nan_forward"]
    print("\n'first NaN/Inf' (forward) jumps to frame "
          f"{nan['frame']}: {nan['title']}  [scope {nan['scope']}]")
    print(f"   {nan['tensor']} = {nan['made_by_label']} is {nan['preview']}: "
          f"the log of a probability that is exactly 0")
    if found["nan_backward"]:
        back = found["nan_backward"]
        print(f"'first NaN/Inf' (backward) jumps to frame {back['frame']}: {back['title']}")
    for lost in found["lost"]:
        print(f"\n'lost gradient': {lost['source']} is None; the player jumps to "
              f"{lost['jump_to']} (the tape alone says: {lost['reason_from_tape']})")
        print(f"   explain_none_gradient with the history: {lost['reason']}")
        print(f"   {lost['message']}")
    print("\nthe gradient health panel, a row per layer:")
    for scope, (status, reasons) in found["health"].items():
        print(f"   {scope:<12} {status:<5} {'; '.join(reasons)}")

    print("\nthe fix: sparse_softmax_cross_entropy_with_logits, and ad.maximum")
    tape, loss, variables, history = step(fixed=True)
    grads = tape.gradient(loss, variables)
    fixed = diagnose(tape, loss, variables, history)
    finite = all(g is not None and bool(np.all(np.isfinite(g.numpy()))) for g in grads)
    print(f"   loss = {float(loss):.4f}; every gradient finite and not None: {finite}; "
          f"first NaN/Inf: {fixed['replay'].data['debug']['first_nonfinite']}; "
          f"lost gradients: {len(fixed['lost'])}")
    print(f"wrote {out} ({len(page.encode('utf-8')) / 1e3:.0f} kB)")
    return {"broken_loss": broken_loss, "nan_forward": nan, "nan_backward": found["nan_backward"],
            "lost": found["lost"], "health": found["health"], "fixed_health": fixed["health"],
            "fixed_loss": float(loss), "fixed_finite": finite,
            "fixed_first_nonfinite": fixed["replay"].data["debug"]["first_nonfinite"],
            "fixed_lost": fixed["lost"], "bytes": len(page.encode("utf-8")), "path": str(out)}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
