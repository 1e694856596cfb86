"""ad.IndexedSlices and the ResourceGather lookup that makes them (Embedding(sparse_update=True)).

The slices stand for the dense tensor whose rows add up the values that share an
index; only a source of ``tape.gradient`` keeps them, everything else meets the
dense tensor. TensorFlow's side of these facts is in
tests/conformance/test_conf_keras_indexed_slices.py.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops.resource_gather import lookup_rows

TABLE = np.arange(12, dtype=np.float32).reshape(4, 3)
IDS = [[3, 1], [3, 3]]
W = np.random.default_rng(0).standard_normal((2, 2, 3)).astype(np.float32)


def _dense_grad():
    """The gradient of sum(table[IDS] * W) made by hand: W's rows added at their ids."""
    out = np.zeros_like(TABLE)
    for (i, j), k in np.ndenumerate(np.array(IDS)):
        out[k] += W[i, j]
    return out


def test_a_lookups_gradient_is_slices_that_densify_to_the_dense_gradient():
    table = ad.Variable(TABLE)
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(lookup_rows(table, ad.constant(IDS)) * ad.constant(W))
    grad = tape.gradient(loss, table)
    assert isinstance(grad, ad.IndexedSlices)
    assert grad.dense_shape == (4, 3) and tuple(grad.shape) == (4, 3)
    np.testing.assert_array_equal(grad.indices.numpy(), [3, 1, 3, 3])
    np.testing.assert_array_equal(grad.values.numpy(), W.reshape(4, 3))
    np.testing.assert_allclose(ad.convert_to_tensor(grad).numpy(), _dense_grad(), rtol=1e-6)
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(ad.gather(table, IDS) * ad.constant(W))
    np.testing.assert_allclose(tape.gradient(loss, table).numpy(), _dense_grad(), rtol=1e-6)


def test_a_dense_path_to_the_same_source_makes_the_sum_dense():
    table = ad.Variable(TABLE)
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(lookup_rows(table, ad.constant(IDS)) * ad.constant(W)) + \
            ad.reduce_sum(table * 2.0)
    grad = tape.gradient(loss, table)
    assert type(grad) is ad.Tensor
    np.testing.assert_allclose(grad.numpy(), _dense_grad() + 2.0, rtol=1e-6)


def test_an_intermediate_passes_dense_cotangents_to_the_ops_before_it():
    table = ad.Variable(TABLE)
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(lookup_rows(table * 3.0, ad.constant(IDS)) * ad.constant(W))
    grad = tape.gradient(loss, table)
    assert type(grad) is ad.Tensor
    np.testing.assert_allclose(grad.numpy(), 3.0 * _dense_grad(), rtol=1e-6)


def test_jacobian_rows_are_dense():
    table = ad.Variable(TABLE)
    with ad.GradientTape() as tape:
        y = lookup_rows(table, ad.constant([2, 2]))
    jac = tape.jacobian(y, table).numpy()
    assert jac.shape == (2, 3, 4, 3)
    assert jac[0, 1, 2, 1] == 1.0 and jac[1, 1, 2, 1] == 1.0 and jac.sum() == 6.0


def test_arithmetic_keeps_slices_with_numbers_and_densifies_otherwise():
    g = ad.IndexedSlices(ad.constant([[1.0, 2.0], [3.0, 4.0]]), ad.constant([1, 1]), (3, 2))
    assert isinstance(g * 2.0, ad.IndexedSlices) and isinstance(-g, ad.IndexedSlices)
    np.testing.assert_array_equal((g / 2.0).numpy(), [[0, 0], [2, 3], [0, 0]])
    both = g + g
    assert isinstance(both, ad.IndexedSlices) and both.indices.numpy().tolist() == [1, 1, 1, 1]
    ones = ad.ones([3, 2])
    np.testing.assert_array_equal((g + ones).numpy(), [[1, 1], [5, 7], [1, 1]])
    np.testing.assert_array_equal((ones - g).numpy(), [[1, 1], [-3, -5], [1, 1]])
    np.testing.assert_array_equal(ad.square(g).numpy(), [[0, 0], [16, 36], [0, 0]])


def test_malformed_slices_are_refused_by_name():
    with pytest.raises(TypeError, match="IndexedSlices: indices must be an integer vector"):
        ad.IndexedSlices(ad.ones([2, 2]), ad.constant([0.0, 1.0]), (3, 2))
    with pytest.raises(ValueError, match="one row per index"):
        ad.IndexedSlices(ad.ones([2, 2]), ad.constant([0, 1, 2]), (3, 2))
    with pytest.raises(ValueError, match="do not fit rows of dense_shape"):
        ad.IndexedSlices(ad.ones([2, 2]), ad.constant([0, 1]), (3, 5))


def test_embedding_sparse_update_is_saved_only_when_set():
    plain = ad.keras.layers.Embedding(5, 2)
    sparse = ad.keras.layers.Embedding(5, 2, sparse_update=True)
    assert "sparse_update" not in plain.get_config()
    again = ad.keras.layers.Embedding.from_config(sparse.get_config())
    assert again.sparse_update is True


def test_training_recorder_reads_a_sparse_gradient_as_its_dense_tensor():
    from widgets import TrainingRecorder
    model = ad.keras.Sequential([ad.keras.Input((3,), dtype="int32"),
                                 ad.keras.layers.Embedding(6, 2, sparse_update=True)])
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(model(ad.constant([[0, 0, 1]])) * ad.constant([[[3.0, 4.0]] * 3]))
    grads = tape.gradient(loss, model.trainable_variables)
    assert isinstance(grads[0], ad.IndexedSlices)
    recorder = TrainingRecorder()
    recorder.record(grads, model)
    (layer,) = list(recorder.layers)
    dense = np.zeros((6, 2))
    dense[0], dense[1] = [6.0, 8.0], [3.0, 4.0]    # id 0 twice: its rows add up
    _, norms = recorder.series(layer, "grad_norm")
    np.testing.assert_allclose(norms, [np.linalg.norm(dense)], rtol=1e-6)


def test_the_player_replays_a_sparse_gradient_as_its_dense_tensor():
    from widgets import replay
    layer = ad.keras.layers.Embedding(6, 2, sparse_update=True)
    layer(ad.constant([0]))
    with ad.GradientTape(persistent=True) as tape:
        loss = ad.reduce_sum(layer(ad.constant([1, 1, 4])))
    played = replay(tape, loss, layer.embeddings)
    expected = np.zeros((6, 2), np.float32)
    expected[1], expected[4] = 2.0, 1.0
    np.testing.assert_array_equal(played.gradients.numpy(), expected)
    assert isinstance(tape.gradient(loss, layer.embeddings), ad.IndexedSlices)
