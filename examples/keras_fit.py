"""Keras 3 as its guides write it, run on this library: the functional API, ``compile``,
``fit`` with callbacks, ``evaluate``, ``save`` and ``load_model``.

Run: python examples/keras_fit.py

Two inputs (a point of a spiral and a noisy copy of its radius) meet in a
``Concatenate``; a residual ``Add`` joins two Dense layers; the model is
compiled with Adam and a sparse categorical cross-entropy, trained with
``fit`` (a validation split, EarlyStopping, ReduceLROnPlateau) and saved as a
``.keras`` file, which loads back with the same predictions. ``fit``'s step
runs compiled, as Keras 3's does.

The same file runs on TensorFlow 2.21 with one line changed, the import:
``import tensorflow as ad`` (tests/conformance/test_conf_keras_fit.py runs it so).
"""

import os
import sys
import tempfile

import numpy as np

import autodiff as ad

keras = ad.keras


def spirals(n, classes=3, noise=0.2, seed=0):
    """``n`` points on ``classes`` spiral arms, their radius (noisy) and integer labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    radius = rng.uniform(0.1, 1.0, n)
    angle = radius * 4.0 + labels * 2 * np.pi / classes + rng.normal(0, noise, n)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return (points.astype("float32"), (radius + rng.normal(0, 0.05, n)).astype("float32")[:, None],
            labels)


def build_model(classes=3):
    points = keras.Input(shape=(2,), name="points")
    radius = keras.Input(shape=(1,), name="radius")
    h = keras.layers.Concatenate()([points, radius])
    h = keras.layers.Dense(32, activation="relu")(h)
    h = keras.layers.Add()([h, keras.layers.Dense(32, activation="relu")(h)])
    h = keras.layers.Dropout(0.1)(h)
    outputs = keras.layers.Dense(classes, activation="softmax", name="classes")(h)
    return keras.Model([points, radius], outputs, name="spiral_net")


def main(epochs=40, verbose=2, out=sys.stdout):
    """Trains, evaluates, saves and reloads; returns ``(history, test accuracy, max
    difference between the reloaded model's predictions and the model's)``."""
    x_points, x_radius, y = spirals(1200)
    t_points, t_radius, t_y = spirals(300, seed=1)
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", patience=8,
                                               restore_best_weights=True),
                 keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=3)]
    history = model.fit([x_points, x_radius], y, batch_size=64, epochs=epochs,
                        validation_split=0.2, callbacks=callbacks, verbose=verbose)
    loss, accuracy = model.evaluate([t_points, t_radius], t_y, verbose=0)
    print(f"test loss {loss:.4f}, test accuracy {accuracy:.3f}", file=out)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "spiral_net.keras")
        model.save(path)
        again = keras.models.load_model(path)
        difference = float(np.abs(again.predict([t_points, t_radius], verbose=0)
                                  - model.predict([t_points, t_radius], verbose=0)).max())
    print(f"reloaded from {os.path.basename(path)}: predictions differ by at most "
          f"{difference:.1e}", file=out)
    return history, accuracy, difference


if __name__ == "__main__":
    main()
