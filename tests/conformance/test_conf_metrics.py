"""``ad.keras.metrics`` against Keras 3's metrics on TensorFlow 2.21: the same updates give the
same results, with and without sample weights, and an update inside ``ad.function``
(compiled or not) changes the state exactly as an eager update does."""

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(7)
LOGITS = RNG.standard_normal((3, 6, 4)).astype(np.float32)      # three batches of six
LABELS = RNG.integers(0, 4, (3, 6)).astype(np.int32)
WEIGHTS = RNG.uniform(0.0, 2.0, (3, 6)).astype(np.float32)
PROBS = RNG.uniform(0.0, 1.0, (3, 6, 2)).astype(np.float32)
BINARY = RNG.integers(0, 2, (3, 6, 2)).astype(np.float32)


def _batches(kind, k):
    if kind == "Mean" or kind == "Sum":
        return (LOGITS[k, :, 0],)
    if kind == "SparseCategoricalAccuracy":
        return LABELS[k], LOGITS[k]
    if kind == "CategoricalAccuracy":
        return np.eye(4, dtype=np.float32)[LABELS[k]], LOGITS[k]
    if kind in ("BinaryAccuracy", "MeanSquaredError", "MeanAbsoluteError",
                "RootMeanSquaredError"):
        return BINARY[k], PROBS[k]
    return LABELS[k], np.argmax(LOGITS[k], axis=-1).astype(np.int32)     # Accuracy


KINDS = ["Mean", "Sum", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
         "SparseCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError",
         "RootMeanSquaredError"]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_metric_results_equal_keras_after_each_update_and_a_reset(tf, kind, weighted):
    theirs, ours = getattr(tf.keras.metrics, kind)(), getattr(ad.keras.metrics, kind)()
    for k in range(3):
        kwargs = {"sample_weight": WEIGHTS[k]} if weighted else {}
        theirs.update_state(*_batches(kind, k), **kwargs)
        ours.update_state(*_batches(kind, k), **kwargs)
        np.testing.assert_allclose(float(ours.result()), float(theirs.result()), rtol=1e-6)
    theirs.reset_state()
    ours.reset_state()
    assert float(ours.result()) == float(theirs.result()) == 0.0


def test_metric_names_and_state_size_follow_keras(tf):
    for kind in KINDS:
        theirs, ours = getattr(tf.keras.metrics, kind)(), getattr(ad.keras.metrics, kind)()
        assert ours.name == theirs.name
        assert len(ours.variables) == len(theirs.variables)
    assert tf.metrics.Mean is tf.keras.metrics.Mean and ad.metrics is ad.keras.metrics


@pytest.mark.parametrize("jit", [False, True])
def test_updates_inside_a_compiled_step_match_eager_updates(tf, jit):
    results = {}
    for mode in ("eager", "traced"):
        loss_mean = ad.keras.metrics.Mean()
        accuracy = ad.keras.metrics.SparseCategoricalAccuracy()

        def step(labels, logits):
            loss_mean.update_state(ad.reduce_mean(logits ** 2))
            accuracy.update_state(labels, logits)

        if mode == "traced":
            step = ad.function(step, jit_compile=jit)
        for k in range(3):
            step(ad.constant(LABELS[k]), ad.constant(LOGITS[k]))
        results[mode] = (float(loss_mean.result()), float(accuracy.result()))
    assert results["traced"] == results["eager"]
    expected = np.mean(np.argmax(LOGITS, axis=-1) == LABELS)
    assert results["eager"][1] == pytest.approx(expected)
