"""Vanishing and exploding gradients in an unrolled RNN, seen on its tape.

Run: python examples/rnn_vanishing_gradients.py [page.html]

A tanh RNN, ``h_t = tanh(h_{t-1} @ W + x_t @ U + b)``, unrolled for 200
steps (five records a step, each step in its own name scope
``rnn/step_NNN``, so the tape of 1,001 records reads as 200 boxes). The
loss reads only the last state, so ``dloss/dh_t`` says how much step ``t``
can still learn from it. The backward pass multiplies one Jacobian per
step, ``diag(1 - h_t**2) @ W.T``:

- with a small recurrent matrix (entries ~ N(0, 0.5**2 / H)) each factor
  shrinks the gradient, geometrically: the gradient *vanishes*, and in
  float32 it becomes exactly 0 a hundred steps back;
- with a large one (gain 3) the network is chaotic and the same product
  *explodes*.

The small-matrix tape is exported as a tape player page (default: a temp
dir): collapsed, each step is one box, and its gradient-norm bar shows the
same decay step by step during the backward pass.

Then two bugs are planted in the same 1,001-record tape, and the player's
marks find them: a NaN in the input of step 150 (a missing reading), which
"first NaN/Inf" jumps to, inside box ``rnn/step_150``; and a learned initial
state ``h0`` cut off by a ``.numpy()`` round trip of the state at step 99,
which "lost gradient" jumps to (``explain_none_gradient`` with a
``record_history`` names it: ``left_library``). That page is written next to
the first, ``<name>_planted.html``.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import autodiff as ad
import widgets
from widgets.explain_history import record_history

STEPS = 200
HIDDEN = 16
VANISHING_GAIN = 0.5
EXPLODING_GAIN = 3.0


def unrolled_rnn(gain, steps=STEPS, hidden=HIDDEN, seed=0):
    """The RNN's tape (persistent), its loss, the states h_t and [W, U, b].

    ``W`` has entries N(0, gain**2 / hidden): gain < 1 contracts, gain > 1
    (with tanh) is chaotic.
    """
    rng = np.random.default_rng(seed)
    W = ad.Variable((rng.normal(size=(hidden, hidden)) * gain / np.sqrt(hidden))
                    .astype(np.float32), name="W")
    U = ad.Variable((rng.normal(size=(2, hidden)) * 0.5).astype(np.float32), name="U")
    b = ad.Variable(np.zeros((1, hidden), np.float32), name="b")
    xs = [ad.constant(rng.normal(size=(1, 2)).astype(np.float32)) for _ in range(steps)]
    states = []
    with ad.GradientTape(persistent=True) as tape:
        h = ad.zeros((1, hidden))
        for t, x in enumerate(xs):
            with ad.name_scope(f"rnn/step_{t:03d}"):
                h = ad.tanh(ad.matmul(h, W) + ad.matmul(x, U) + b)
            states.append(h)
        with ad.name_scope("loss"):
            loss = ad.reduce_sum(h)
    return tape, loss, states, [W, U, b]


def planted_bugs_rnn(steps=STEPS, hidden=HIDDEN, seed=0, nan_at=150, detach_at=99):
    """The small-matrix RNN with a learned initial state ``h0``, a NaN in the
    input of step ``nan_at`` and a ``.numpy()`` round trip of the state at step
    ``detach_at``. Returns the tape, loss, [W, U, b, h0] and the history."""
    rng = np.random.default_rng(seed)
    W = ad.Variable((rng.normal(size=(hidden, hidden)) * VANISHING_GAIN / np.sqrt(hidden))
                    .astype(np.float32), name="W")
    U = ad.Variable((rng.normal(size=(2, hidden)) * 0.5).astype(np.float32), name="U")
    b = ad.Variable(np.zeros((1, hidden), np.float32), name="b")
    h0 = ad.Variable(np.zeros((1, hidden), np.float32), name="h0")
    xs = rng.normal(size=(steps, 1, 2)).astype(np.float32)
    xs[nan_at, 0, 0] = np.nan
    with record_history() as history, np.errstate(invalid="ignore"):
        with ad.GradientTape(persistent=True) as tape:
            h = h0
            for t in range(steps):
                with ad.name_scope(f"rnn/step_{t:03d}"):
                    h = ad.tanh(ad.matmul(h, W) + ad.matmul(ad.constant(xs[t]), U) + b)
                    if t == detach_at:   # the bug: a round trip through NumPy
                        h = ad.constant(h.numpy())
            with ad.name_scope("loss"):
                loss = ad.reduce_sum(h)
    return tape, loss, [W, U, b, h0], history


def find_planted_bugs(out):
    """Replays the planted-bugs tape, writes its page; what the two buttons find."""
    tape, loss, sources, history = planted_bugs_rnn()
    with np.errstate(invalid="ignore"):
        rep = widgets.replay(tape, loss, sources)
    page = widgets.export_html(rep, out, title="A 200-step RNN with a planted NaN and None")
    nodes = {n["id"]: n for n in rep.nodes}
    producer = {e["to"]: e["op"] for e in rep.edges if e["kind"] == "out"}
    first = rep.data["debug"]["first_nonfinite"]
    frame = rep.frames[first["forward"]]
    (lost,) = rep.data["debug"]["lost"]
    h0 = sources[3]
    why = widgets.explain_none_gradient(tape, loss, h0, history=history,
                                        source_name="h0", target_name="loss")
    health = rep.data["debug"]["health"]
    statuses = {}
    for row in health:
        statuses.setdefault(row["status"], []).append(row["scope"])
    return {"health": {row["scope"]: (row["status"], [f["reason"] for f in row["flags"]])
                       for row in health},
            "statuses": {status: (len(scopes), scopes[0], scopes[-1])
                         for status, scopes in statuses.items()},"records": len(tape.records), "nan_frame": first["forward"],
            "nan_op": nodes[frame["op"]]["op_type"], "nan_scope": nodes[frame["op"]]["scope"],
            "nan_backward_frame": first["backward"],
            "lost_source": nodes[lost["source"]]["name"], "lost_node": nodes[lost["node"]]["name"],
            "lost_node_id": lost["node"],
            "lost_scope": nodes[producer[lost["node"]]]["scope"],
            "reason_from_tape": lost["reason"], "reason": why.reason,
            "bytes": len(page.encode("utf-8")), "path": str(out)}


def state_gradient_norms(gain, steps=STEPS):
    """``||dloss/dh_t||`` for t = 0 .. steps-1 (float64 list), and the tape's length."""
    tape, loss, states, _ = unrolled_rnn(gain, steps)
    with np.errstate(over="ignore"):
        norms = [float(np.linalg.norm(g.numpy().astype(np.float64)))
                 for g in tape.gradient(loss, states)]
    return norms, len(tape.records)


def per_step_factor(norms, back):
    """The geometric mean of ``||g_{t-1}|| / ||g_t||`` over the last ``back`` steps."""
    last = len(norms) - 1
    return (norms[last - back] / norms[last]) ** (1.0 / back)


def main(out=None):
    """Prints both stories and exports the player page; returns the numbers."""
    out = Path(out) if out else Path(tempfile.mkdtemp()) / "rnn_vanishing.html"
    shown = (199, 190, 180, 150, 100, 50, 0)
    results = {}
    for story, gain, back in (("vanishing", VANISHING_GAIN, 50),
                              ("exploding", EXPLODING_GAIN, STEPS - 1)):
        norms, records = state_gradient_norms(gain)
        factor = per_step_factor(norms, back)
        results[story] = {"norms": norms, "records": records, "factor": factor}
        print(f"{story} (W gain {gain}): ||dloss/dh_t|| on a {records}-record tape, "
              f"x{factor:.2f} a step over the last {back} steps")
        print("   " + "  ".join(f"t={t}: {norms[t]:.2g}" for t in shown))
    zero = max(t for t, n in enumerate(results["vanishing"]["norms"]) if n == 0.0)
    results["vanishing"]["last_zero_step"] = zero
    print(f"vanishing: at step {zero} and every step before it, the float32 gradient "
          f"is exactly 0\n")

    # The player reads the same story from the tape: one box a step, one norm bar each.
    tape, loss, _, sources = unrolled_rnn(VANISHING_GAIN)
    rep = widgets.replay(tape, loss, sources)
    page = widgets.export_html(rep, out, title="A 200-step RNN: vanishing gradients")
    groups = {g["id"]: g["scope"] for g in rep.data["groups"]}
    bars = {groups[gid]: series[-1][1] if series else None     # None: nothing came back
            for gid, series in rep.data["debug"]["group_norms"].items()}
    results["player"] = {"records": len(tape.records), "groups": len(groups), "bars": bars,
                         "bytes": len(page.encode("utf-8")), "path": str(out)}
    print(f"player: {len(tape.records)} records in {len(groups)} scope groups; "
          f"the page is {len(page.encode('utf-8')) / 1e6:.1f} MB")
    print("gradient-norm bars (what each step's group sent back):")
    for t in shown:
        print(f"   rnn/step_{t:03d}: {bars[f'rnn/step_{t:03d}']:.2g}")
    print(f"wrote {out}")

    planted = out.with_name(out.stem + "_planted.html")
    found = results["planted"] = find_planted_bugs(planted)
    print(f"\nplanted bugs, {found['records']} records: 'first NaN/Inf' jumps to frame "
          f"{found['nan_frame']}, a {found['nan_op']} in {found['nan_scope']}")
    print(f"'lost gradient': {found['lost_source']} is None; the player jumps to "
          f"{found['lost_node']} in {found['lost_scope']} (the tape alone: "
          f"{found['reason_from_tape']}; with the history: {found['reason']})")
    print("the health panel's rows: " + ", ".join(
        f"{n} {status} ({first} to {last})" for status, (n, first, last) in found["statuses"].items()))
    print(f"wrote {planted} ({found['bytes'] / 1e6:.1f} MB)")
    return results


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
