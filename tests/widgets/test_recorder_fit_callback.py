"""``TrainingRecorder.callback()`` in ``model.fit`` (issue 34, item 5): the same statistics
as recording by hand in a custom loop with the same model, data and optimizer."""

import numpy as np
import pytest

import autodiff as ad
from widgets import TrainingRecorder


def _model():
    ad.random.set_seed(3)
    model = ad.keras.Sequential([ad.keras.layers.Dense(8, activation="relu"),
                                 ad.keras.layers.Dense(1)], name="mlp")
    model.build((None, 4))
    return model


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    return x, (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32))


@pytest.mark.parametrize("mode", ["compiled", "traced", "eager"])
def test_fit_records_what_a_custom_loop_records(mode):
    x, y = _data()
    model = _model()
    model.compile(optimizer=ad.keras.optimizers.SGD(0.01), loss="mse",
                  jit_compile=mode == "compiled", run_eagerly=mode == "eager")
    by_fit = TrainingRecorder()
    model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
              callbacks=[by_fit.callback()])

    by_hand, twin = TrainingRecorder(), _model()
    optimizer = ad.keras.optimizers.SGD(0.01)
    for step in range(8):
        xb, yb = x[16 * (step % 4):16 * (step % 4 + 1)], y[16 * (step % 4):16 * (step % 4 + 1)]
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean(ad.square(yb - twin(xb, training=True)))
        grads = tape.gradient(loss, twin.trainable_variables)
        by_hand.record(grads, twin, step=step)
        optimizer.apply_gradients(zip(grads, twin.trainable_variables))

    assert by_fit.steps == by_hand.steps == list(range(8))
    assert len(by_fit.layers) == len(by_hand.layers) == 2   # (the twin's layers are dense_2 ...)
    for ours, theirs in zip(by_fit.layers, by_hand.layers):
        assert ours.startswith("mlp/dense")
        np.testing.assert_allclose(by_fit.series(ours, "grad_norm")[1],
                                   by_hand.series(theirs, "grad_norm")[1], rtol=1e-5)
        # fit's step updates the weights before the callback sees them: one step later
        np.testing.assert_allclose(by_fit.series(ours, "weight_norm")[1][:-1],
                                   by_hand.series(theirs, "weight_norm")[1][1:], rtol=1e-5)
    # the gradients never reach the logs
    assert set(model.history.history) == {"loss"}


def test_every_records_one_step_in_n_and_refuses_zero():
    x, y = _data()
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    recorder = TrainingRecorder()
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[recorder.callback(every=2)])
    assert recorder.steps == [0, 2]
    assert model.train_on_batch(x[:16], y[:16]) > 0   # a later step hands out no gradients
    with pytest.raises(ValueError, match="every must be a positive"):
        recorder.callback(every=0)
