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
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import autodiff as ad
import widgets

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
    bars = {groups[gid]: series[-1][1] for gid, series in rep.data["debug"]["group_norms"].items()}
    results["player"] = {"records": len(tape.records), "groups": len(groups), "bars": bars,
                         "bytes": len(page.encode("utf-8")), "path": str(out)}
    print(f"player: {len(tape.records)} records in {len(groups)} scope groups; "
          f"the page is {len(page.encode('utf-8')) / 1e6:.1f} MB")
    print("gradient-norm bars (what each step's group sent back):")
    for t in shown:
        print(f"   rnn/step_{t:03d}: {bars.get(f'rnn/step_{t:03d}', 0.0):.2g}")
    print(f"wrote {out}")
    return results


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
