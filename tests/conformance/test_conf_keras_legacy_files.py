"""Keras 3's older files and its partial loads, compared with Keras 3 on TensorFlow 2.21:

- a legacy ``.h5`` weights file (Keras 2's layout, as ``model.save('x.h5')`` and
  Keras 2's ``save_weights('x.h5')`` write it) loads here by layer order, as
  Keras 3's ``load_weights`` loads it;
- ``load_weights(..., skip_mismatch=True)`` loads and skips what Keras 3 does,
  for ``.weights.h5`` (whole objects) and legacy ``.h5`` (single weights);
- ``ModelCheckpoint(save_freq=N)`` saves after the same batches, to the same
  names, the same weights.
"""

import os
import warnings

import numpy as np
import pytest

import autodiff as ad

h5py = pytest.importorskip("h5py") if os.environ.get("CI", "").lower() not in (
    "1", "true", "yes") else __import__("h5py")   # under CI a missing h5py fails

RNG = np.random.default_rng(34)
X = RNG.standard_normal((20, 5)).astype(np.float32)
Y = RNG.standard_normal((20, 2)).astype(np.float32)


def _model(k, units=4, dropout=0.2):
    return k.Sequential([k.Input((5,)), k.layers.Dense(units, activation="tanh"),
                         k.layers.BatchNormalization(), k.layers.Dropout(dropout),
                         k.layers.Dense(2)])


def _keras_trained(tf):
    model = _model(tf.keras)
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    model.fit(X, Y, epochs=1, batch_size=8, verbose=0, shuffle=False)   # moving stats too
    return model


def _legacy_weights_file(tf, model, path):
    """Keras 2's ``save_weights('x.h5')`` layout, written by Keras 3's own legacy writer."""
    from keras.src.legacy.saving import legacy_h5_format
    with h5py.File(path, "w") as f:
        legacy_h5_format.save_weights_to_hdf5_group(f, model)


def _loaded(make, path, **kwargs):
    """A fresh model, its weights before, the warnings and the weights after loading."""
    model = make()
    before = [w.copy() for w in model.get_weights()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.load_weights(path, **kwargs)
    said = [str(w.message) for w in caught if "could not be loaded" in str(w.message)
            or "Skipping loading" in str(w.message)]
    return model, before, said


@pytest.mark.parametrize("writer", ["model.save", "save_weights"])
def test_a_legacy_h5_file_loads_by_layer_order_as_in_keras(tf, tmp_path, writer):
    theirs = _keras_trained(tf)
    path = str(tmp_path / "legacy.h5")
    if writer == "model.save":
        theirs.save(path)          # weights under /model_weights
    else:
        _legacy_weights_file(tf, theirs, path)
    ours = _model(ad.keras)
    ours.load_weights(path)
    again = _model(tf.keras)
    again.load_weights(path)
    for a, t, k in zip(ours.get_weights(), theirs.get_weights(), again.get_weights()):
        np.testing.assert_array_equal(a, t)
        np.testing.assert_array_equal(k, t)
    np.testing.assert_allclose(ours.predict(X, verbose=0), theirs.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_a_legacy_h5_file_with_fewer_layers_is_refused_and_changes_nothing(tf, tmp_path):
    small = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(2)])
    path = str(tmp_path / "small.h5")
    _legacy_weights_file(tf, small, path)
    with pytest.raises(ValueError, match="Layer count mismatch"):
        _model(tf.keras).load_weights(path)
    ours = _model(ad.keras)
    before = [w.copy() for w in ours.get_weights()]
    with pytest.raises(ValueError, match="Layer count mismatch"):
        ours.load_weights(path)
    for a, b in zip(ours.get_weights(), before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("suffix", [".weights.h5", ".h5"])
def test_skip_mismatch_loads_and_skips_what_keras_does(tf, tmp_path, suffix):
    theirs = _keras_trained(tf)                      # 4 units; the models below have 3
    path = str(tmp_path / f"w{suffix}")
    if suffix == ".h5":
        _legacy_weights_file(tf, theirs, path)
    else:
        theirs.save_weights(path)
    ours, ours_before, ours_said = _loaded(lambda: _model(ad.keras, 3), path,
                                           skip_mismatch=True)
    keras, keras_before, keras_said = _loaded(lambda: _model(tf.keras, 3), path,
                                              skip_mismatch=True)
    loaded_here = [not np.array_equal(a, b) for a, b in zip(ours.get_weights(), ours_before)]
    loaded_there = [not np.array_equal(a, b)
                    for a, b in zip(keras.get_weights(), keras_before)]
    assert loaded_here == loaded_there
    for changed, a, t in zip(loaded_here, ours.get_weights(), theirs.get_weights()):
        if changed:
            np.testing.assert_array_equal(a, t)
    assert len(ours_said) == len(keras_said) >= 1
    if suffix == ".weights.h5":
        assert ours_said[0].startswith("A total of 3 objects could not be loaded")
        assert keras_said[0].startswith("A total of 3 objects could not be loaded")
    else:
        assert loaded_here.count(True) == 1            # only the last bias, (2,), fits
    with pytest.raises(ValueError):
        _model(ad.keras, 3).load_weights(path)       # without skip_mismatch: refused


def _checkpointed_fit(k, weights, folder, save_freq):
    model = _model(k, dropout=0.0)   # no random masks: both sides train alike
    model.set_weights(weights)
    model.compile(k.optimizers.SGD(0.1), "mse")
    pattern = os.path.join(folder, "e{epoch}-b{batch}.weights.h5")
    callback = k.callbacks.ModelCheckpoint(pattern, save_weights_only=True,
                                           save_freq=save_freq)
    model.fit(X, Y, epochs=3, batch_size=8, verbose=0, shuffle=False, callbacks=[callback])
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("save_freq", [2, 4])
def test_model_checkpoint_save_freq_saves_after_the_same_batches_as_keras(tf, tmp_path,
                                                                           save_freq):
    weights = _model(tf.keras).get_weights()
    ours_dir, keras_dir = tmp_path / "ours", tmp_path / "keras"
    ours_dir.mkdir()
    keras_dir.mkdir()
    ours = _checkpointed_fit(ad.keras, weights, str(ours_dir), save_freq)
    keras = _checkpointed_fit(tf.keras, weights, str(keras_dir), save_freq)
    assert ours == keras and len(ours) == 9 // save_freq   # 3 batches an epoch, 3 epochs
    for name in ours:
        here, there = _model(ad.keras), _model(tf.keras)
        here.load_weights(str(ours_dir / name))
        there.load_weights(str(keras_dir / name))
        for a, t in zip(here.get_weights(), there.get_weights()):
            np.testing.assert_allclose(a, t, rtol=2e-5, atol=2e-6)


def test_model_checkpoint_refuses_a_save_freq_keras_refuses(tf, tmp_path):
    for bad in ("batch", 2.5):
        with pytest.raises(ValueError, match="Unrecognized save_freq"):
            tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_freq=bad)
        with pytest.raises(ValueError, match="Unrecognized save_freq"):
            ad.keras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_freq=bad)
