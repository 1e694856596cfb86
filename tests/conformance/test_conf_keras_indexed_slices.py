"""The one place ad.keras's Adam parts from Keras 3 on TensorFlow: an Embedding whose ids repeat.

TensorFlow hands an Embedding's gradient to the optimizer as ``IndexedSlices``:
one row per *occurrence* of an id, not one per id. Keras 3's Adam (TensorFlow
backend) squares that gradient before adding the occurrences up
(``ops.square`` keeps the slices; ``scatter_add`` sums them), so a row looked up
k times gets ``v += (sum_i g_i**2 - v) * (1 - beta_2)`` where the dense rule,
ours, has ``(sum_i g_i)**2``. The first moment ``m`` and every row used at
most once are the same; RMSprop and Adagrad square per occurrence too.
README.md, "Keras 3's update rules step for step", says so; these tests pin it:

- no id repeats: ours equals Keras step for step;
- an id repeats: ours differs from Keras on that row only, and Keras equals a
  NumPy Adam whose second moment adds the per-occurrence squares.
"""

import numpy as np
import pytest

import autodiff as ad

STEPS, LR, B1, B2, EPS = 4, 0.05, 0.9, 0.999, 1e-7
W = np.random.default_rng(11).standard_normal((5, 2)).astype(np.float32)


def _train_keras(tf, ids_per_step, table, optimizer="Adam"):
    layer = tf.keras.layers.Embedding(6, 2)
    layer(tf.constant([0]))
    layer.set_weights([table])
    opt = getattr(tf.keras.optimizers, optimizer)(LR)
    for ids in ids_per_step:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(tf.constant(ids)) * W[:len(ids)])
        grads = tape.gradient(loss, layer.trainable_variables)
        assert type(grads[0]).__name__ == "IndexedSlices"
        opt.apply_gradients(zip(grads, layer.trainable_variables))
    return layer.get_weights()[0]


def _train_ours(ids_per_step, table, optimizer="Adam"):
    layer = ad.keras.layers.Embedding(6, 2)
    layer(ad.constant([0]))
    layer.set_weights([table])
    opt = getattr(ad.keras.optimizers, optimizer)(LR)
    for ids in ids_per_step:
        with ad.GradientTape() as tape:
            loss = ad.reduce_sum(layer(ad.constant(ids)) * ad.constant(W[:len(ids)]))
        grads = tape.gradient(loss, layer.trainable_variables)
        opt.apply_gradients(zip(grads, layer.trainable_variables))
    return layer.get_weights()[0]


def _numpy_keras_sparse_adam(ids_per_step, table):
    """Keras 3's rule on IndexedSlices: m from the summed rows, v from the summed squares."""
    w, m, v = table.astype(np.float64), np.zeros_like(table, np.float64), np.zeros_like(
        table, np.float64)
    for t, ids in enumerate(ids_per_step, start=1):
        summed, squares = np.zeros_like(w), np.zeros_like(w)
        for k, i in enumerate(ids):
            summed[i] += W[k]
            squares[i] += W[k].astype(np.float64) ** 2
        alpha = LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t)
        m += (summed - m) * (1 - B1)
        v += (squares - v) * (1 - B2)
        w -= alpha * m / (np.sqrt(v) + EPS)
    return w


TABLE = np.random.default_rng(12).standard_normal((6, 2)).astype(np.float32)


def test_without_repeated_ids_ours_equals_keras(tf):
    steps = [[0, 3, 1], [2, 4], [5, 0, 1, 2], [3]] [:STEPS]
    np.testing.assert_allclose(_train_ours(steps, TABLE), _train_keras(tf, steps, TABLE),
                               rtol=2e-6, atol=2e-7)


def test_a_repeated_id_is_squared_per_occurrence_by_keras_and_summed_first_here(tf):
    steps = [[0, 0, 1], [2, 0, 0, 0], [1, 4], [0, 1, 0]][:STEPS]   # row 0 repeats
    keras, ours = _train_keras(tf, steps, TABLE), _train_ours(steps, TABLE)
    np.testing.assert_allclose(keras, _numpy_keras_sparse_adam(steps, TABLE), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ours[1:], keras[1:], rtol=2e-6, atol=2e-7)   # used once a step
    assert np.abs(ours[0] - keras[0]).max() > 1e-3                         # repeated: differs


@pytest.mark.parametrize("optimizer", ["RMSprop", "Adagrad"])
def test_rmsprop_and_adagrad_square_per_occurrence_too(tf, optimizer):
    steps = [[0, 0, 1], [2, 0, 0, 0], [1, 4], [0, 1, 0]][:STEPS]
    keras = _train_keras(tf, steps, TABLE, optimizer)
    ours = _train_ours(steps, TABLE, optimizer)
    np.testing.assert_allclose(ours[1:], keras[1:], rtol=2e-6, atol=2e-7)
    assert np.abs(ours[0] - keras[0]).max() > 1e-3
