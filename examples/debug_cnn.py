"""One training step of a small CNN, recorded, played and measured layer by layer.

Run: python examples/debug_cnn.py [page.html]

The data: 8x8 images made with NumPy, a bar (one full row or column) or a
cross (a row and a column), with a little noise. The model:
``Conv2D(4, 3x3, relu) -> max_pool2d 2x2 -> flatten -> Dense(2)`` and a
sparse softmax cross-entropy. Each layer records in its own name scope
(``cnn/conv``, ``cnn/pool``, ``cnn/flatten``, ``cnn/dense``, ``loss``),
so the step's tape reads as layers in the player.

It prints the gradient norm of every variable (from ``tape.gradient``),
each layer's gradient-norm bar from the player (what the layer's ops sent
back during the backward pass) and its row of the player's gradient health
panel (``replay.data["debug"]["health"]``: gradient and weight norms, their
ratio, a mark and its reason), takes one ``ad.optimizers.Adam`` step, and
writes the player as one offline HTML page (default: a temp dir).

Then it trains 30 more steps with a ``widgets.TrainingRecorder`` (one line
in the loop, ``recorder.record(grads, model)``), prints its table at the
last step and the layers its rules flag, and saves its plot (trends and
gradient histograms over the steps) next to the page.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import autodiff as ad
import widgets


def bars_and_crosses(n, size=8, noise=0.1, seed=0):
    """``n`` images ``[n, size, size, 1]``: label 0 a bar, label 1 a cross."""
    rng = np.random.default_rng(seed)
    images = rng.normal(0.0, noise, (n, size, size, 1))
    labels = np.arange(n) % 2
    for image, label in zip(images, labels):
        row, col = rng.integers(1, size - 1, 2)
        horizontal = rng.random() < 0.5
        if label == 1 or horizontal:
            image[row, :, 0] += 1.0
        if label == 1 or not horizontal:
            image[:, col, 0] += 1.0
    return images.astype(np.float32), labels.astype(np.int32)


class SmallCNN(ad.Module):
    """Conv2D(4, 3x3, relu) -> 2x2 max pool -> flatten -> Dense(2) logits."""

    def __init__(self):
        super().__init__(name="cnn")
        self.conv = ad.layers.Conv2D(4, 3, padding="same", activation="relu", name="conv")
        self.dense = ad.layers.Dense(2, name="dense")

    def __call__(self, images):
        h = self.conv(images)
        with ad.name_scope("pool"):
            h = ad.nn.max_pool2d(h, 2, 2, "VALID")
        with ad.name_scope("flatten"):
            h = ad.reshape(h, [h.shape[0], -1])
        return self.dense(h)


def training_step(model, optimizer, images, labels):
    """One recorded step: the tape, the loss and the model's variables (updated)."""
    with ad.GradientTape(persistent=True) as tape:
        logits = model(images)
        with ad.name_scope("loss"):
            loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return tape, loss, variables, grads


def main(out=None):
    """Runs the step, prints the norms, exports the page; returns the numbers."""
    out = Path(out) if out else Path(tempfile.mkdtemp()) / "debug_cnn.html"
    ad.random.set_seed(0)
    images, labels = bars_and_crosses(32)
    x, y = ad.constant(images), ad.constant(labels)
    model = SmallCNN()
    optimizer = ad.optimizers.Adam(learning_rate=0.01)
    tape, loss, variables, grads = training_step(model, optimizer, x, y)
    print(f"{len(images)} images of {images.shape[1]}x{images.shape[2]}, "
          f"loss before the step {float(loss):.4f}")
    print("the step's tape, each op with its layer's scope:")
    print(tape)

    variable_norms = {v.path: float(np.linalg.norm(g.numpy())) for v, g in zip(variables, grads)}
    print("\ngradient norm of each variable (tape.gradient):")
    for name, norm in variable_norms.items():
        print(f"   {name:<16} {norm:.4f}")

    rep = widgets.replay(tape, loss, variables)
    page = widgets.export_html(rep, out, title="One training step of a small CNN")
    groups = {g["id"]: g["scope"] for g in rep.data["groups"]}
    bars = {groups[gid]: series[-1][1] if series else None     # None: nothing came back
            for gid, series in rep.data["debug"]["group_norms"].items()}
    print("\neach layer's gradient-norm bar in the player (what its ops sent back):")
    for scope in groups.values():
        print(f"   {scope:<12} {bars[scope]}")
    health = rep.data["debug"]["health"]
    print("\nthe player's gradient health panel, a row per layer:")
    for row in health:
        print(f"   {row['scope']:<12} {row['status']:<7} |g| {row['grad_norm']}  "
              f"|w| {row['weight_norm']}  g/w {row['ratio']}  "
              + "; ".join(flag["reason"] for flag in row["flags"]))

    loss_after = float(ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y, model(x))))
    print(f"\nafter one Adam step the loss is {loss_after:.4f}")
    print(f"player: {len(tape.records)} records, {len(rep.frames)} frames, "
          f"page {len(page.encode('utf-8')) / 1e3:.0f} kB; wrote {out}")
    recorder, losses = train_with_recorder(model, optimizer, x, y, steps=30)
    print(f"\n30 more steps, recorded: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(recorder)
    plot = out.with_name(out.stem + "_trends.png")
    recorder.plot().savefig(plot, dpi=80)
    print(f"wrote {plot}")
    return {"loss": float(loss), "loss_after": loss_after, "variable_norms": variable_norms,
            "scopes": list(groups.values()), "bars": bars, "health": health,
            "records": len(tape.records), "op_types": [r.op_type for r in tape.records],
            "first_nonfinite": rep.data["debug"]["first_nonfinite"],
            "bytes": len(page.encode("utf-8")), "path": str(out),
            "recorder": recorder, "losses": losses, "plot": str(plot)}


def train_with_recorder(model, optimizer, x, y, steps):
    """``steps`` training steps, each recorded by a TrainingRecorder; the losses."""
    recorder = widgets.TrainingRecorder()
    losses = []
    for _ in range(steps):
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        recorder.record(grads, model)          # the one line: layers by module path
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return recorder, losses


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
