"""A Keras 3 custom training loop, run on this library: ``keras.`` became ``ad.keras.``.

Run: python examples/train_keras_loop.py

The model is a ``Sequential`` of Dense, Dropout and LayerNormalization
layers; the loss ``SparseCategoricalCrossentropy(from_logits=True)``; the
optimizer Adam with a ``CosineDecay`` schedule; the epoch's mean loss and
accuracy are ``keras.metrics``, updated inside the step. The step is traced
once and compiled (``ad.function(jit_compile=True)``): it trains exactly the
model the eager step would, the step counter, the schedule, the Adam slots,
the metrics and the dropout masks included. Each epoch prints one line of
progress: a bar, the mean loss, the accuracy and the time.

The same file runs on TensorFlow 2.21 with one line changed, the import:
``import tensorflow as ad`` (tests/conformance/test_conf_keras.py runs it so).
"""

import sys
import time

import numpy as np

import autodiff as ad

keras = ad.keras


def spirals(n, classes=3, noise=0.25, seed=0):
    """``n`` points in 2-D on ``classes`` interleaved spiral arms; integer labels."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, classes, n)
    radius = rng.uniform(0.1, 1.0, n)
    angle = label * (2 * np.pi / classes) + radius * 7.0 + rng.normal(0, noise, n)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return points.astype(np.float32), label.astype(np.int32)


def build_model(classes=3):
    return keras.Sequential([
        keras.Input((2,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.LayerNormalization(),
        keras.layers.Dropout(0.1),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(classes),
    ], name="spiral_net")


def progress_line(epoch, epochs, batch, batches, loss, accuracy, seconds, width=20):
    """``epoch 3/12 [=======>......] loss 0.4211 accuracy 0.853 0.3 s``."""
    done = int(width * batch / batches)
    bar = "=" * max(done - 1, 0) + (">" if done < width else "=") + "." * (width - done)
    return (f"epoch {epoch:>2}/{epochs} [{bar[:width]}] loss {loss:.4f} "
            f"accuracy {accuracy:.3f} {seconds:.2f} s")


def main(epochs=12, batch_size=64, out=sys.stdout):
    ad.random.set_seed(0)
    points, labels = spirals(1536)
    batches = len(points) // batch_size
    model = build_model()
    schedule = keras.optimizers.schedules.CosineDecay(0.01, decay_steps=epochs * batches,
                                                      alpha=0.05)
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mean_loss = keras.metrics.Mean()
    accuracy = keras.metrics.SparseCategoricalAccuracy()

    @ad.function(jit_compile=True)
    def train_step(x, y):
        with ad.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        mean_loss.update_state(loss)
        accuracy.update_state(y, logits)

    rng = np.random.default_rng(1)
    history = []
    for epoch in range(1, epochs + 1):
        start, order = time.perf_counter(), rng.permutation(len(points))
        mean_loss.reset_state()
        accuracy.reset_state()
        for b in range(batches):
            take = order[b * batch_size:(b + 1) * batch_size]
            train_step(ad.constant(points[take]), ad.constant(labels[take]))
            line = progress_line(epoch, epochs, b + 1, batches, float(mean_loss.result()),
                                 float(accuracy.result()), time.perf_counter() - start)
            if out.isatty():
                out.write("\r" + line)
        out.write(("\r" if out.isatty() else "") + line + "\n")
        history.append((float(mean_loss.result()), float(accuracy.result())))
    logits = model(ad.constant(points))
    final = float(np.mean(np.argmax(logits.numpy(), axis=1) == labels))
    out.write(f"accuracy on all the points, dropout off: {final:.3f}; "
              f"Adam took {int(optimizer.iterations.numpy())} steps\n")
    return history, final


if __name__ == "__main__":
    main()
