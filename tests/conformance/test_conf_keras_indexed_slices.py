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


def _train(m, ids_per_step, table, optimizer="Adam", compiled=False, **layer_args):
    """``m`` (tf or ad) trains an Embedding on ``ids_per_step``; returns the table and
    the last step's gradient. One setup for both libraries: only the module differs."""
    layer = m.keras.layers.Embedding(6, 2, **layer_args)
    layer(m.constant([0]))
    layer.set_weights([table])
    opt = getattr(m.keras.optimizers, optimizer)(LR) if isinstance(optimizer, str) \
        else optimizer(m)

    def step(ids):
        with m.GradientTape() as tape:
            loss = m.reduce_sum(layer(ids) * m.constant(W[:ids.shape[0]]))
        grads = tape.gradient(loss, layer.trainable_variables)
        opt.apply_gradients(zip(grads, layer.trainable_variables))
        return grads[0]

    if compiled:
        step = m.function(step, jit_compile=compiled == "jit")
    grad = None
    for ids in ids_per_step:
        grad = step(m.constant(ids))
    return layer.get_weights()[0], grad


def _train_keras(tf, ids_per_step, table, optimizer="Adam"):
    weights, grad = _train(tf, ids_per_step, table, optimizer)
    assert type(grad).__name__ == "IndexedSlices"
    return weights


def _train_ours(ids_per_step, table, optimizer="Adam", **kwargs):
    return _train(ad, ids_per_step, table, optimizer, **kwargs)[0]


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


# ---- the opt-in: Embedding(sparse_update=True) gives IndexedSlices, applied as Keras does ----

REPEATS = [[0, 0, 1], [2, 0, 0, 0], [1, 4], [0, 1, 0]]
OPTIMIZERS = {"SGD": "SGD", "Adam": "Adam", "RMSprop": "RMSprop", "Adagrad": "Adagrad",
              "AdamW": "AdamW", "Lion": "Lion",
              "SGD_nesterov": lambda m: m.keras.optimizers.SGD(LR, momentum=0.9, nesterov=True),
              "RMSprop_centered_momentum": lambda m: m.keras.optimizers.RMSprop(
                  LR, momentum=0.5, centered=True),
              "Adam_amsgrad": lambda m: m.keras.optimizers.Adam(LR, amsgrad=True)}


@pytest.mark.parametrize("compiled", [False, "traced", "jit"], ids=["eager", "traced", "jit"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_update_equals_keras_with_repeated_ids(tf, name, compiled):
    keras = _train_keras(tf, REPEATS, TABLE, OPTIMIZERS[name])
    ours, grad = _train(ad, REPEATS, TABLE, OPTIMIZERS[name], compiled=compiled,
                        sparse_update=True)
    if not compiled:
        assert isinstance(grad, ad.IndexedSlices)
    np.testing.assert_allclose(ours, keras, rtol=2e-6, atol=2e-7)


def test_the_lookup_gradient_is_tensorflows_indexed_slices(tf):
    ids = [[4, 1], [4, 4]]
    grads = {}
    for m, args in ((tf, {}), (ad, {"sparse_update": True})):
        layer = m.keras.layers.Embedding(6, 3, **args)
        layer(m.constant([0]))
        layer.set_weights([np.arange(18, dtype=np.float32).reshape(6, 3)])
        with m.GradientTape() as tape:
            loss = m.reduce_sum(layer(m.constant(ids)) * m.constant(W[:2, None, :1]))
        grads[m] = tape.gradient(loss, layer.embeddings)
    theirs, ours = grads[tf], grads[ad]
    assert isinstance(ours, ad.IndexedSlices)
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    assert ours.dense_shape == tuple(theirs.dense_shape.numpy())
    np.testing.assert_array_equal(ad.convert_to_tensor(ours).numpy(),
                                  tf.convert_to_tensor(theirs).numpy())


def test_clipping_makes_the_slices_dense_first():
    clipped = lambda m: m.keras.optimizers.Adam(LR, clipnorm=0.5)   # noqa: E731
    sparse = _train_ours(REPEATS, TABLE, clipped, sparse_update=True)
    np.testing.assert_array_equal(sparse, _train_ours(REPEATS, TABLE, clipped))


def test_fit_with_sparse_update_equals_keras_fit(tf):
    ids = np.array([[0, 0, 3], [2, 0, 5], [1, 1, 1], [4, 0, 2]], np.int32)
    y = np.random.default_rng(13).standard_normal((4, 3, 2)).astype(np.float32)
    weights = {}
    for m, args in ((tf, {}), (ad, {"sparse_update": True})):
        model = m.keras.Sequential([m.keras.Input((3,), dtype="int32"),
                                    m.keras.layers.Embedding(6, 2, **args)])
        model.set_weights([TABLE])
        model.compile(m.keras.optimizers.Adam(LR), "mse")
        model.fit(ids, y, batch_size=2, epochs=3, shuffle=False, verbose=0)
        weights[m] = model.get_weights()[0]
    np.testing.assert_allclose(weights[ad], weights[tf], rtol=2e-6, atol=2e-7)
