"""``ad.keras`` models on their own: what a tape records, what a user is told when something
is wrong. (Agreement with Keras itself is in tests/conformance/test_conf_keras.py.)"""

import numpy as np
import pytest

import autodiff as ad

keras = ad.keras


def _mlp():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                             keras.layers.Dropout(0.5), keras.layers.Dense(1)], name="mlp")


def test_a_sequential_models_tape_reads_as_its_layers():
    model = _mlp()
    with ad.GradientTape(persistent=True) as tape:
        model(ad.ones([2, 3]), training=True)
    scopes = [record.scope for record in tape.records]
    first_dense, second_dense = (layer.name for layer in model.layers[::2])
    assert scopes[0] == f"mlp/{first_dense}" and scopes[-1] == f"mlp/{second_dense}"
    assert any(scope.startswith("mlp/dropout") for scope in scopes)


def test_a_recurrent_layers_steps_are_recorded_inside_its_cell():
    layer = keras.layers.GRU(3, name="encoder")
    with ad.GradientTape(persistent=True) as tape:
        layer(ad.ones([1, 4, 2]))
    assert {record.scope for record in tape.records if "MatMul" in record.op_type} == \
        {"encoder/gru_cell"}


def test_building_an_input_first_sequential_records_nothing_on_an_open_tape():
    with ad.GradientTape(persistent=True) as tape:
        model = _mlp()
    assert len(model.trainable_variables) == 4 and len(tape.records) == 0


def test_summary_counts_every_parameter():
    lines = []
    _mlp().summary(print_fn=lines.append)
    text = lines[0]
    assert 'Model: "mlp"' in text and "Total params: 21" in text
    assert "Trainable params: 21" in text and "Non-trainable params: 0" in text
    assert "Output Shape" in text and text.count("(None, 4)") == 2   # Dense(4), Dropout


def test_set_weights_refuses_the_wrong_number_or_shape_of_arrays():
    model = _mlp()
    weights = model.get_weights()
    with pytest.raises(ValueError, match="got 3 arrays for its 4 weights"):
        model.set_weights(weights[:3])
    with pytest.raises(ValueError, match=r"has shape \(3, 4\)"):
        model.set_weights([np.zeros((4, 3), np.float32)] + weights[1:])
    model.set_weights([w * 0 for w in weights])
    assert float(model(ad.ones([1, 3])).numpy()[0, 0]) == 0.0


def test_a_model_that_forgot_super_init_says_so():
    class Broken(keras.Model):
        def __init__(self):   # no super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\)"):
        Broken()(ad.ones([1, 2]))


def test_a_functional_model_needs_keras_tensors_and_connected_inputs():
    with pytest.raises(ValueError, match="must be a KerasTensor.*got NoneType"):
        keras.Model(inputs=keras.Input((2,)), outputs=None)
    a, b = keras.Input((2,)), keras.Input((2,))
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, keras.layers.Dense(1)(b))


def test_input_must_come_first_and_pop_removes_the_last_layer():
    model = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="Input can only come first"):
        model.add(keras.Input((3,)))
    assert model.pop() is not None and model.layers == []
    with pytest.raises(TypeError, match="no layers"):
        model.pop()


def test_a_non_trainable_layer_makes_non_trainable_variables():
    layer = keras.layers.Dense(2, trainable=False)
    layer(ad.ones([1, 3]))
    assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 2


def test_dropout_only_drops_while_training_and_keeps_the_expected_sum():
    layer = keras.layers.Dropout(0.5, seed=3)
    x = ad.ones([1000])
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())
    dropped = layer(x, training=True).numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0} and 400 < np.count_nonzero(dropped) < 600
    with pytest.raises(ValueError, match="rate=1.5"):
        keras.layers.Dropout(1.5)


def test_layer_normalization_gives_each_example_mean_zero_and_unit_variance():
    x = ad.constant(np.random.default_rng(0).normal(3.0, 2.0, (5, 8)).astype(np.float32))
    y = keras.layers.LayerNormalization(epsilon=1e-6)(x).numpy()
    np.testing.assert_allclose(y.mean(axis=1), 0.0, atol=1e-5)
    np.testing.assert_allclose(y.var(axis=1), 1.0, rtol=1e-4)


def test_layer_gradients_check_against_finite_differences_in_float64():
    for layer, x in ((keras.layers.LayerNormalization(dtype="float64"),
                      np.random.default_rng(1).normal(size=(3, 4))),
                     (keras.layers.AveragePooling2D(2, padding="same", dtype="float64"),
                      np.random.default_rng(2).normal(size=(1, 3, 3, 2))),
                     (keras.layers.GRU(2, dtype="float64"),
                      np.random.default_rng(3).normal(size=(2, 3, 2)))):
        ad.testing.check_grads(lambda t, layer=layer: layer(t), [ad.constant(x)], order=2)
