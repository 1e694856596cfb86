"""``compile`` / ``fit`` / ``evaluate`` / ``predict`` against Keras 3 on TensorFlow 2.21.

The same model (Keras' initial weights copied into ours), the same data in
the same order (``shuffle=False``: the shuffled order is each library's own
random stream), the same arguments: the History, the final weights, the
evaluation and the predictions must agree, with the step run eagerly, traced
and compiled. Then the callbacks: the epoch EarlyStopping stops at, the rates
ReduceLROnPlateau and LearningRateScheduler set, what CSVLogger writes.
"""

import warnings

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(34)
X = RNG.standard_normal((50, 4)).astype(np.float32)
Y_REG = (X @ RNG.standard_normal((4, 2)) + 0.1).astype(np.float32)
Y_CLS = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
MODES = {"eager": dict(run_eagerly=True), "traced": dict(jit_compile=False),
         "compiled": dict()}


def _functional(k):
    x = k.Input((4,), name="features")
    h = k.layers.Dense(8, activation="tanh", name="hidden")(x)
    h = k.layers.Dropout(0.0, name="drop")(h)
    skip = k.layers.Dense(8, name="skip")(x)
    h = k.layers.Add(name="residual")([h, skip])
    return k.Model(x, k.layers.Dense(2, name="head")(h), name="net")


def _classifier(k):
    return k.Sequential([k.Input((4,)), k.layers.Dense(6, activation="relu"),
                         k.layers.BatchNormalization(), k.layers.Dense(3)], name="cls")


def _pair(tf, make):
    theirs, ours = make(tf.keras), make(ad.keras)
    ours.set_weights(theirs.get_weights())
    return theirs, ours


def _assert_logs_equal(ours, theirs, rtol=2e-5, atol=2e-6):
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=rtol, atol=atol, err_msg=key)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_fit_regression_with_validation_split_equals_keras(tf, mode):
    theirs, ours = _pair(tf, _functional)
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.Adam(0.02), "mse", metrics=["mae"],
                      **(MODES[mode] if model is ours else {}))
    kwargs = dict(batch_size=16, epochs=3, validation_split=0.2, shuffle=False, verbose=0)
    h_theirs = theirs.fit(X, Y_REG, **kwargs)
    h_ours = ours.fit(X, Y_REG, **kwargs)
    _assert_logs_equal(h_ours.history, h_theirs.history)
    assert h_ours.epoch == h_theirs.epoch == [0, 1, 2]
    assert h_ours.params == {"verbose": 0, "epochs": 3, "steps": 3} == h_theirs.params
    for a, t in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, t, rtol=2e-5, atol=2e-6)
    assert int(ours.optimizer.iterations.numpy()) == int(theirs.optimizer.iterations.numpy()) == 9
    np.testing.assert_allclose(ours.evaluate(X, Y_REG, verbose=0),
                               theirs.evaluate(X, Y_REG, verbose=0), rtol=2e-5)
    np.testing.assert_allclose(ours.predict(X, batch_size=7, verbose=0),
                               theirs.predict(X, batch_size=7, verbose=0), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_fit_classifier_with_weights_and_validation_data_equals_keras(tf, mode):
    theirs, ours = _pair(tf, _classifier)
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.SGD(0.1, momentum=0.5),
                      k.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], **(MODES[mode] if model is ours else {}))
    weights = np.linspace(0.5, 1.5, 40).astype(np.float32)
    kwargs = dict(batch_size=12, epochs=2, shuffle=False, verbose=0,
                  validation_data=(X[40:], Y_CLS[40:]))
    h_theirs = theirs.fit(X[:40], Y_CLS[:40], sample_weight=weights, **kwargs)
    h_ours = ours.fit(X[:40], Y_CLS[:40], sample_weight=weights, **kwargs)
    _assert_logs_equal(h_ours.history, h_theirs.history)
    h_theirs = theirs.fit(X[:40], Y_CLS[:40], class_weight={0: 0.3, 1: 2.0, 2: 1.0}, **kwargs)
    h_ours = ours.fit(X[:40], Y_CLS[:40], class_weight={0: 0.3, 1: 2.0, 2: 1.0}, **kwargs)
    _assert_logs_equal(h_ours.history, h_theirs.history)
    for a, t in zip(ours.get_weights(), theirs.get_weights()):   # moving statistics too
        np.testing.assert_allclose(a, t, rtol=5e-5, atol=5e-6)
    assert ours.evaluate(X, Y_CLS, verbose=0, return_dict=True).keys() == \
        theirs.evaluate(X, Y_CLS, verbose=0, return_dict=True).keys()


def test_train_and_test_on_batch_equal_keras(tf):
    theirs, ours = _pair(tf, _functional)
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.RMSprop(0.01), "mae", metrics=["mse"])
    for _ in range(3):
        np.testing.assert_allclose(ours.train_on_batch(X[:10], Y_REG[:10]),
                                   theirs.train_on_batch(X[:10], Y_REG[:10]), rtol=2e-5)
    np.testing.assert_allclose(ours.test_on_batch(X, Y_REG), theirs.test_on_batch(X, Y_REG),
                               rtol=2e-5)
    np.testing.assert_allclose(ours.predict_on_batch(X), theirs.predict_on_batch(X), rtol=2e-5,
                               atol=2e-6)


def _fit_with(tf, callbacks_for, epochs=12, **fit_kwargs):
    results = []
    for model, k in zip(_pair(tf, _functional), (tf.keras, ad.keras)):
        model.compile(k.optimizers.SGD(0.05), "mse")
        history = model.fit(X, Y_REG, batch_size=10, epochs=epochs, shuffle=False, verbose=0,
                            validation_split=0.2, callbacks=callbacks_for(k), **fit_kwargs)
        results.append((model, history))
    return results


def test_early_stopping_stops_at_keras_epoch_and_restores_the_best_weights(tf):
    def callbacks(k):
        return [k.callbacks.EarlyStopping(monitor="loss", min_delta=0.05, patience=2,
                                          restore_best_weights=True)]
    (theirs, h_theirs), (ours, h_ours) = _fit_with(tf, callbacks, epochs=30)
    assert h_ours.epoch == h_theirs.epoch and len(h_ours.epoch) < 30
    for a, t in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, t, rtol=5e-5, atol=5e-6)


def test_learning_rate_callbacks_set_keras_rates(tf):
    def callbacks(k):
        return [k.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch % 2 else lr),
                k.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1,
                                              min_delta=10.0)]   # never "improves": reduces
    (theirs, h_theirs), (ours, h_ours) = _fit_with(tf, callbacks, epochs=5)
    np.testing.assert_allclose(h_ours.history["learning_rate"],
                               h_theirs.history["learning_rate"], rtol=1e-6)
    _assert_logs_equal(h_ours.history, h_theirs.history, rtol=5e-5, atol=5e-6)


def test_csv_logger_writes_keras_columns(tf, tmp_path):
    (_, _), (_, _) = _fit_with(
        tf, lambda k: [k.callbacks.CSVLogger(str(tmp_path / f"{k.__name__}.csv"))], epochs=3)
    files = sorted(tmp_path.glob("*.csv"))
    ours = [p for p in files if "autodiff" in p.name][0].read_text().splitlines()
    theirs = [p for p in files if "autodiff" not in p.name][0].read_text().splitlines()
    assert ours[0] == theirs[0] == "epoch,loss,val_loss"
    assert len(ours) == len(theirs) == 4
    for a, t in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose([float(v) for v in a.split(",")],
                                   [float(v) for v in t.split(",")], rtol=5e-5)


def test_the_keras_fit_example_runs_on_tensorflow_with_only_its_import_changed(tf, tmp_path):
    import importlib.util
    import io
    import pathlib

    source = (pathlib.Path(__file__).parents[2] / "examples" / "keras_fit.py").read_text()
    assert source.count("import autodiff as ad\n") == 1
    results = {}
    for name, line in (("ad", "import autodiff as ad\n"), ("tf", "import tensorflow as ad\n")):
        path = tmp_path / f"keras_fit_{name}.py"
        path.write_text(source.replace("import autodiff as ad\n", line))
        spec = importlib.util.spec_from_file_location(f"keras_fit_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out = io.StringIO()
        results[name] = module.main(epochs=6, verbose=0, out=out)
        assert "test accuracy" in out.getvalue()
    for name, (history, accuracy, difference) in results.items():
        assert accuracy > 0.8, name                      # both learn the spirals
        assert difference < 1e-6, name                   # and reload what they saved
        assert sorted(history.history) == ["accuracy", "learning_rate", "loss",
                                           "val_accuracy", "val_loss"], name


@pytest.mark.parametrize("steps_per_epoch", [2, 3])
def test_steps_per_epoch_carries_on_through_the_data_as_keras(tf, steps_per_epoch):
    # 50 rows in batches of 10: five batches; Keras' epochs go on from where the
    # last one stopped, and an epoch that reaches the end of the data ends early
    theirs, ours = _pair(tf, _functional)
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.SGD(0.05), "mse")
    kwargs = dict(batch_size=10, epochs=4, steps_per_epoch=steps_per_epoch, shuffle=False,
                  verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # Keras: "Your input ran out of data"
        h_theirs = theirs.fit(X, Y_REG, **kwargs)
    h_ours = ours.fit(X, Y_REG, **kwargs)
    _assert_logs_equal(h_ours.history, h_theirs.history)
    assert int(ours.optimizer.iterations.numpy()) == int(theirs.optimizer.iterations.numpy())
    for a, t in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, t, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("call", ["fit", "evaluate", "train_on_batch"])
def test_training_before_compile_raises_value_error_as_keras(tf, call):
    for k in (tf.keras, ad.keras):
        model = _functional(k)
        with pytest.raises(ValueError, match="must call `compile\\(\\)`"):
            getattr(model, call)(X, Y_REG)


def test_fit_with_error_metric_objects_and_rmse_logs_as_keras(tf):
    theirs, ours = _pair(tf, _functional)
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.SGD(0.05), "mse",
                      metrics=[k.metrics.MeanAbsoluteError(name="my_mae"),
                               k.metrics.MeanSquaredError(), "root_mean_squared_error"])
    kwargs = dict(batch_size=16, epochs=2, validation_split=0.2, shuffle=False, verbose=0)
    _assert_logs_equal(ours.fit(X, Y_REG, **kwargs).history, theirs.fit(X, Y_REG, **kwargs).history)


def test_binary_accuracy_of_labels_without_a_last_axis_equals_keras(tf):
    # labels (n,) beside sigmoid outputs (n, 1): they broadcast to (n, n) here once, and
    # the accuracy came out fractional (0.485 of 40 examples); uneven last batch (16, 16, 8)
    def make(k):
        return k.Sequential([k.Input((4,)), k.layers.Dense(3, activation="relu"),
                             k.layers.Dense(1, activation="sigmoid")])
    theirs, ours = _pair(tf, make)
    labels = (X[:, 0] > 0).astype(np.float32)
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.Adam(0.05), "binary_crossentropy",
                      metrics=["accuracy", k.metrics.BinaryAccuracy(name="bacc")])
    kwargs = dict(batch_size=16, epochs=3, shuffle=False, verbose=0)
    _assert_logs_equal(ours.fit(X, labels, **kwargs).history,
                       theirs.fit(X, labels, **kwargs).history)
    np.testing.assert_allclose(ours.evaluate(X, labels, verbose=0),
                               theirs.evaluate(X, labels, verbose=0), rtol=2e-5)


def test_csv_logger_without_validation_has_keras_na_columns(tf, tmp_path):
    lines = []
    for model, k in zip(_pair(tf, _functional), (tf.keras, ad.keras)):
        model.compile(k.optimizers.SGD(0.05), "mse", metrics=["mae"])
        path = tmp_path / f"{k.__name__}.csv"
        model.fit(X, Y_REG, batch_size=25, epochs=2, shuffle=False, verbose=0,
                  callbacks=[k.callbacks.CSVLogger(str(path))])
        lines.append(path.read_text().splitlines())
    ours, theirs = lines[1], lines[0]
    assert ours[0] == theirs[0] == "epoch,loss,mae,val_loss,val_mae"
    assert [row.split(",")[-2:] for row in ours[1:]] == \
        [row.split(",")[-2:] for row in theirs[1:]] == [["NA", "NA"]] * 2
