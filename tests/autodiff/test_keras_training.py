"""``ad.keras`` without TensorFlow: Keras 3's add_weight and errors, the functional API,
fit's modes agreeing with each other and with a custom loop, callbacks, regularizers,
and saving (h5py: a failure under CI=true when missing). Agreement with Keras itself
is in tests/conformance/test_conf_keras_fit.py and test_conf_keras_saving.py.
"""

import io
import os

import numpy as np
import pytest

import autodiff as ad

keras = ad.keras
RNG = np.random.default_rng(0)
X = RNG.standard_normal((30, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


@pytest.fixture
def h5py():
    try:
        import h5py
    except ImportError as err:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but h5py is missing ({err}): pip install -e '.[keras]'")
        pytest.skip("h5py is not installed: pip install -e '.[keras]'")
    return h5py


def test_add_weight_takes_keras_3_arguments_and_refuses_the_rest_by_name():
    layer = keras.layers.Layer(name="scaler")
    w = layer.add_weight(shape=(2,), initializer="ones", name="w")
    assert (w.name, w.path, w.numpy().tolist()) == ("w", "scaler/w", [1.0, 1.0])
    b = layer.add_weight((3,), "zeros")                # Keras 3's positional shape, initializer
    assert b.shape == (3,) and b.name == "variable"
    with pytest.raises(ValueError, match="`name` must be passed as a keyword argument"):
        layer.add_weight("kernel", (2, 2))
    with pytest.raises(NotImplementedError, match="constraint="):
        layer.add_weight(shape=(1,), constraint=lambda v: v)
    with pytest.raises(NotImplementedError, match="kernel_constraint="):
        keras.layers.Dense(2, kernel_constraint="non_neg")
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Dense"):
        keras.layers.Dense(2, colour="red")


def test_initializers_have_keras_variances():
    for name, variance in (("he_normal", 2 / 400), ("lecun_uniform", 1 / 400),
                           ("glorot_normal", 2 / 600)):
        values = keras.initializers.get(name)((400, 200)).numpy()
        assert values.var() == pytest.approx(variance, rel=0.05), name
    assert isinstance(keras.initializers.get("he_normal"), keras.initializers.HeNormal)
    with pytest.raises(ValueError, match="Unknown initializer: 'he_normel'"):
        keras.initializers.get("he_normel")


def test_regularizers_and_activity_losses_reach_model_losses_and_the_fit_loss():
    reg = keras.regularizers.L2(0.1)
    x = keras.Input((3,))
    y = keras.layers.Dense(1, kernel_regularizer=reg, activity_regularizer=keras.regularizers.L1(0.5),
                           kernel_initializer="ones")(x)
    model = keras.Model(x, y)
    out = model(ad.ones([2, 3]))
    losses = [float(v) for v in model.losses]
    # the |outputs| sum over the batch size (Keras 3), then 0.1 * |k|^2
    assert losses == pytest.approx([0.5 * 6.0 / 2, 0.1 * 3.0])
    model.compile("sgd", "mse", run_eagerly=True)
    logs = model.train_on_batch(np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32),
                                return_dict=True)
    assert logs["loss"] == pytest.approx(float(ad.reduce_mean(out ** 2)) + sum(losses), rel=1e-5)


def _model():
    ad.random.set_seed(3)
    x = keras.Input((3,), name="x")
    h = keras.layers.Dense(5, activation="relu")(x)
    return keras.Model(x, keras.layers.Dense(1)(keras.layers.Concatenate()([h, x])))


@pytest.mark.parametrize("mode", [dict(run_eagerly=True), dict(jit_compile=False), dict()],
                         ids=["eager", "traced", "compiled"])
def test_fit_in_every_mode_equals_the_custom_loop(mode):
    model, reference = _model(), _model()
    model.compile(keras.optimizers.Adam(0.05), "mse", **mode)
    history = model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    opt, loss_fn = keras.optimizers.Adam(0.05), keras.losses.MeanSquaredError()
    for _ in range(2):
        for start in range(0, 30, 8):
            with ad.GradientTape() as tape:
                loss = loss_fn(Y[start:start + 8], reference(X[start:start + 8], training=True))
            grads = tape.gradient(loss, reference.trainable_variables)
            opt.apply_gradients(zip(grads, reference.trainable_variables))
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert len(history.history["loss"]) == 2 and history.history["loss"][1] < history.history["loss"][0]


def test_progress_bar_and_one_line_per_epoch(capsys):
    model = _model()
    model.compile("adam", "mse", metrics=["mae"])
    model.fit(X, Y, batch_size=10, epochs=2, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    assert lines[1].startswith("3/3 - ") and " - loss: " in lines[1] and " - mae: " in lines[1]
    model.fit(X, Y, batch_size=10, epochs=1, verbose=1)
    out = capsys.readouterr().out
    assert "\r1/3 ━━━━━━" in out and "\r3/3 ━━━━━━━━━━━━━━━━━━━━ " in out


def test_terminate_on_nan_and_a_stop_from_a_callback():
    model = _model()
    model.compile(keras.optimizers.SGD(1e30), "mse")
    history = model.fit(X * 1e20, Y, batch_size=5, epochs=3, verbose=0,
                        callbacks=[keras.callbacks.TerminateOnNaN()])
    assert history.epoch == [0] and not np.isfinite(history.history["loss"][0])
    seen = []
    stopper = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: (seen.append(epoch), setattr(model, "stop_training", epoch == 1)))
    model = _model()
    model.compile("sgd", "mse")
    assert model.fit(X, Y, epochs=5, verbose=0, callbacks=[stopper]).epoch == [0, 1] == seen


def test_fit_before_compile_and_mismatched_lengths_are_refused():
    model = _model()
    with pytest.raises(ValueError, match="You must call `compile\\(\\)`"):
        model.fit(X, Y)
    model.compile("adam", "mse")
    with pytest.raises(ValueError, match="Data cardinality is ambiguous"):
        model.fit(X, Y[:10], verbose=0)
    with pytest.raises(NotImplementedError, match="generator or dataset"):
        model.fit((row for row in X), verbose=0)


def test_saving_round_trips_and_checkpoints(h5py, tmp_path):
    model = _model()
    model.compile(keras.optimizers.Adam(0.01), "mse", metrics=["mae"])
    model.fit(X, Y, epochs=2, verbose=0, validation_split=0.2, callbacks=[
        keras.callbacks.ModelCheckpoint(str(tmp_path / "best.keras"), save_best_only=True),
        keras.callbacks.ModelCheckpoint(str(tmp_path / "e{epoch}.weights.h5"),
                                        save_weights_only=True)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.keras", "e1.weights.h5",
                                                          "e2.weights.h5"]
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(again.predict(X, verbose=0), model.predict(X, verbose=0))
    assert again.optimizer.get_config()["learning_rate"] == pytest.approx(0.01)
    assert int(again.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())
    other = _model()
    with pytest.raises(ValueError, match=r"\.weights\.h5"):
        other.save_weights(tmp_path / "w.h5")
    wrong = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="expected 0 variables|has shape|expected"):
        wrong.load_weights(tmp_path / "e1.weights.h5")
