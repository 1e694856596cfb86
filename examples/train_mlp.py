"""Train a small MLP on two interleaved half-moons with Adam: the loss goes down.

Run: python examples/train_mlp.py

Everything is this library's: ``ad.layers.Dense``, a sparse softmax
cross-entropy, ``ad.GradientTape`` for the gradients and
``ad.optimizers.Adam`` for the updates. The data is made with NumPy. Each
layer records its ops inside its own name scope, so the tape of one step
reads as layers (printed once at the end).
"""

import time

import numpy as np

import autodiff as ad


def two_moons(n, noise=0.1, seed=0):
    """``n`` points in 2-D on two interleaved half circles; labels 0 and 1."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label == 0, np.cos(angle), 1.0 - np.cos(angle))
    y = np.where(label == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + rng.normal(0.0, noise, (n, 2))
    return points.astype(np.float32), label.astype(np.int32)


class MLP(ad.Module):
    """2 -> 32 -> 32 -> 2 logits, relu in between."""

    def __init__(self):
        super().__init__(name="mlp")
        self.hidden1 = ad.layers.Dense(32, activation="relu")
        self.hidden2 = ad.layers.Dense(32, activation="relu")
        self.logits = ad.layers.Dense(2)

    def __call__(self, x):
        return self.logits(self.hidden2(self.hidden1(x)))


def main(steps=300):
    start = time.perf_counter()
    ad.random.set_seed(0)
    points, labels = two_moons(512)
    x, y = ad.constant(points), ad.constant(labels)
    model = MLP()
    optimizer = ad.optimizers.Adam(learning_rate=0.01)
    losses = []
    for step in range(steps + 1):
        with ad.GradientTape() as tape:
            logits = model(x)
            loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        if step == 0:
            last_tape = str(tape)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        losses.append(float(loss))
        if step % 50 == 0:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")
    accuracy = float(ad.reduce_mean(ad.cast(
        ad.equal(ad.cast(ad.argmax(model(x), axis=1), ad.int32), y), ad.float32)))
    print(f"accuracy on the training points: {accuracy:.3f}")
    print(f"({time.perf_counter() - start:.1f} s)\n")
    print("The first step's tape, each op with its layer's scope:")
    print(last_tape)
    return losses, accuracy


if __name__ == "__main__":
    main()
