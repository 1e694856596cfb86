"""Keras 3's losses (``autodiff/models/losses.py``) against ``tf.keras.losses`` (TensorFlow 2.21).

Every case runs the same loss on both libraries and compares the value and
its gradient with respect to ``y_pred`` (``tf.GradientTape`` against
``ad.GradientTape``) to rtol 1e-5. The inputs are chosen to reach the edges
Keras' numerics care about: probabilities of exactly 0 and 1, and within
1e-7 of them (where the clip to ``[1e-7, 1 - 1e-7]`` bites and the gradient
stops), logits in the hundreds and thousands, unnormalized rows. The class
forms run under every reduction, with and without ``sample_weight``; float64
runs through the functions (which keep it) and the classes (which cast to
their ``dtype``, float32 unless told).
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.models import losses

RTOL = 1e-5
RNG_SEED = 7

# Probabilities at and around the clip points, in float32 and float64 terms.
EDGES = [0.0, 1.0, 1e-9, 1e-7, 2e-7, 1 - 1e-7, 1 - 1e-8, 0.5, 1e-3, 0.999]


def _probabilities(rng, shape):
    p = rng.uniform(0.0, 1.0, size=shape).ravel()
    p[:len(EDGES)] = EDGES[:p.size]
    return p.reshape(shape)


def _rows(rng, shape):
    """Positive, unnormalized rows with a few entries at (or next to) zero."""
    p = rng.uniform(0.0, 2.0, size=shape).ravel()
    p[[0, 3, 7]] = [0.0, 1e-9, 1e-6]
    return p.reshape(shape)


def _logits(rng, shape):
    x = rng.normal(0.0, 30.0, size=shape).ravel()
    x[:6] = [200.0, -200.0, 3e3, -3e3, 0.0, 40.0]
    return x.reshape(shape)


def _one_hot(rng, shape):
    return np.eye(shape[-1])[rng.integers(0, shape[-1], size=shape[:-1])]


def _soft(rng, shape):
    t = rng.uniform(0.0, 1.0, size=shape)
    return t / t.sum(axis=-1, keepdims=True)


# name -> (function name in both libraries, kwargs, make (y_true, y_pred) from rng)
INPUTS = {
    "regression": lambda r: (r.normal(size=(4, 5)), r.normal(size=(4, 5)) * 2),
    "regression_3d": lambda r: (r.normal(size=(2, 3, 4)), r.normal(size=(2, 3, 4))),
    "regression_vector_vs_column": lambda r: (r.normal(size=(6,)), r.normal(size=(6, 1))),
    "binary_probs": lambda r: (r.integers(0, 2, size=(4, 5)).astype(float),
                               _probabilities(r, (4, 5))),
    "binary_soft_probs": lambda r: (r.uniform(size=(2, 3, 4)), _probabilities(r, (2, 3, 4))),
    "binary_logits": lambda r: (r.integers(0, 2, size=(4, 5)).astype(float), _logits(r, (4, 5))),
    "onehot_rows": lambda r: (_one_hot(r, (4, 5)), _rows(r, (4, 5))),
    "soft_rows": lambda r: (_soft(r, (2, 3, 4)), _rows(r, (2, 3, 4))),
    "onehot_logits": lambda r: (_one_hot(r, (4, 5)), _logits(r, (4, 5))),
    "sparse_rows": lambda r: (r.integers(0, 5, size=(6,)), _rows(r, (6, 5))),
    "sparse_column_rows": lambda r: (r.integers(0, 5, size=(6, 1)), _rows(r, (6, 5))),
    "sparse_logits": lambda r: (r.integers(0, 5, size=(6,)), _logits(r, (6, 5))),
    "sparse_ignored": lambda r: (np.array([0, -1, 4, 2, -1, 1]), _rows(r, (6, 5))),
}

FUNCTIONS = {
    "mse": ("mean_squared_error", "mse", {}, "regression"),
    "mse_3d": ("mean_squared_error", "mse", {}, "regression_3d"),
    "mse_vector_vs_column": ("mean_squared_error", "mse", {}, "regression_vector_vs_column"),
    "mae": ("mean_absolute_error", "mae", {}, "regression"),
    "mae_3d": ("mean_absolute_error", "mae", {}, "regression_3d"),
    "huber": ("huber", "huber", {}, "regression"),
    "huber_delta": ("huber", "huber", {"delta": 0.3}, "regression_3d"),
    "bce_probs": ("binary_crossentropy", None, {}, "binary_probs"),
    "bce_soft_probs": ("binary_crossentropy", None, {}, "binary_soft_probs"),
    "bce_smoothing": ("binary_crossentropy", None, {"label_smoothing": 0.1}, "binary_probs"),
    "bce_axis0": ("binary_crossentropy", None, {"axis": 0}, "binary_probs"),
    "bce_logits": ("binary_crossentropy", None, {"from_logits": True}, "binary_logits"),
    "bce_logits_smoothing": ("binary_crossentropy", None,
                             {"from_logits": True, "label_smoothing": 0.2}, "binary_logits"),
    "cce_probs": ("categorical_crossentropy", None, {}, "onehot_rows"),
    "cce_soft_probs": ("categorical_crossentropy", None, {}, "soft_rows"),
    "cce_smoothing": ("categorical_crossentropy", None, {"label_smoothing": 0.1}, "onehot_rows"),
    "cce_axis0": ("categorical_crossentropy", None, {"axis": 0}, "soft_rows"),
    "cce_logits": ("categorical_crossentropy", None, {"from_logits": True}, "onehot_logits"),
    "cce_logits_smoothing": ("categorical_crossentropy", None,
                             {"from_logits": True, "label_smoothing": 0.3}, "onehot_logits"),
    "scce_probs": ("sparse_categorical_crossentropy", None, {}, "sparse_rows"),
    "scce_column_labels": ("sparse_categorical_crossentropy", None, {}, "sparse_column_rows"),
    "scce_logits": ("sparse_categorical_crossentropy", None, {"from_logits": True},
                    "sparse_logits"),
    "scce_ignore_class": ("sparse_categorical_crossentropy", None, {"ignore_class": -1},
                          "sparse_ignored"),
}

# name -> (class name, kwargs, inputs)
CLASSES = {
    "MeanSquaredError": ("MeanSquaredError", {}, "regression_3d"),
    "MeanSquaredError_column": ("MeanSquaredError", {}, "regression_vector_vs_column"),
    "MeanAbsoluteError": ("MeanAbsoluteError", {}, "regression"),
    "Huber": ("Huber", {"delta": 0.5}, "regression"),
    "BinaryCrossentropy": ("BinaryCrossentropy", {}, "binary_probs"),
    "BinaryCrossentropy_logits": ("BinaryCrossentropy",
                                  {"from_logits": True, "label_smoothing": 0.1}, "binary_logits"),
    "CategoricalCrossentropy": ("CategoricalCrossentropy", {"label_smoothing": 0.1},
                                "onehot_rows"),
    "CategoricalCrossentropy_logits": ("CategoricalCrossentropy", {"from_logits": True},
                                       "onehot_logits"),
    "SparseCategoricalCrossentropy": ("SparseCategoricalCrossentropy", {}, "sparse_rows"),
    "SparseCategoricalCrossentropy_logits": ("SparseCategoricalCrossentropy",
                                             {"from_logits": True}, "sparse_logits"),
    "SparseCategoricalCrossentropy_ignore": ("SparseCategoricalCrossentropy",
                                             {"ignore_class": -1}, "sparse_ignored"),
}

REDUCTIONS = ["sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight"]
WEIGHTS = {"none": None, "scalar": 2.5, "per_sample": "per_sample", "column": "column"}


def _inputs(key, dtype):
    y_true, y_pred = INPUTS[key](np.random.default_rng(RNG_SEED))
    if not key.startswith("sparse"):
        y_true = y_true.astype(dtype)
    return y_true, y_pred.astype(dtype)


def _sample_weight(kind, y_pred):
    """One weight per per-sample loss (the shape of y_pred without its last axis), or a
    ``(B, 1)`` column (Keras then expands ``(B,)`` losses to ``(B, 1)``)."""
    if kind not in ("per_sample", "column"):
        return kind
    shape = y_pred.shape[:-1] if kind == "per_sample" else y_pred.shape[:1] + (1,)
    return np.random.default_rng(3).uniform(0.0, 2.0, size=shape).astype(np.float32)


def _value_and_grad_tf(tf, loss, y_true, y_pred):
    y_pred = tf.constant(y_pred)
    with tf.GradientTape() as tape:
        tape.watch(y_pred)
        value = loss(tf.constant(y_true), y_pred)
    return value, tape.gradient(value, y_pred)


def _value_and_grad_ad(loss, y_true, y_pred):
    y_pred = ad.constant(y_pred)
    with ad.GradientTape() as tape:
        tape.watch(y_pred)
        value = loss(ad.constant(y_true), y_pred)
    return value, tape.gradient(value, y_pred)


def _assert_close(got, want, what):
    """rtol 1e-5, and a floor of a few ulps of the largest entry: a gradient that
    cancels to 0 in one summation order can be 1e-19 in another (the logits
    gradient of ``sigmoid_cross_entropy_with_logits`` at |x| = 40, ``1 - 1 - e``)."""
    assert got.dtype.name == want.dtype.name, what
    assert tuple(got.shape) == tuple(want.shape), what
    want = want.numpy()
    floor = 4 * np.finfo(want.dtype).eps * float(np.max(np.abs(want), initial=0.0))
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=floor, err_msg=str(what))


def _assert_same(ours, theirs, what):
    _assert_close(ours[0], theirs[0], what)
    _assert_close(ours[1], theirs[1], what)


def _functions(tf, key):
    name, tf_name, kwargs, inputs = FUNCTIONS[key]
    ours = getattr(losses, name)
    theirs = getattr(tf.keras.losses, tf_name or name)
    return (lambda t, p: ours(t, p, **kwargs)), (lambda t, p: theirs(t, p, **kwargs)), inputs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_function_value_and_gradient_equal_keras(tf, key, dtype):
    ours, theirs, inputs = _functions(tf, key)
    y_true, y_pred = _inputs(inputs, dtype)
    _assert_same(_value_and_grad_ad(ours, y_true, y_pred),
                 _value_and_grad_tf(tf, theirs, y_true, y_pred), key)


@pytest.mark.parametrize("weight", sorted(WEIGHTS))
@pytest.mark.parametrize("reduction", REDUCTIONS, ids=str)
@pytest.mark.parametrize("key", sorted(CLASSES))
def test_class_reductions_and_sample_weight_equal_keras(tf, key, reduction, weight):
    name, kwargs, inputs = CLASSES[key]
    y_true, y_pred = _inputs(inputs, "float32")
    sample_weight = _sample_weight(WEIGHTS[weight], y_pred)
    ours = getattr(losses, name)(reduction=reduction, **kwargs)
    theirs = getattr(tf.keras.losses, name)(reduction=reduction, **kwargs)
    _assert_same(
        _value_and_grad_ad(lambda t, p: ours(t, p, sample_weight=sample_weight), y_true, y_pred),
        _value_and_grad_tf(tf, lambda t, p: theirs(t, p, sample_weight=sample_weight),
                           y_true, y_pred),
        (key, reduction, weight))


@pytest.mark.parametrize("loss_dtype", [None, "float64"])
@pytest.mark.parametrize("key", sorted(CLASSES))
def test_class_on_float64_inputs_computes_in_its_dtype_as_keras(tf, key, loss_dtype):
    name, kwargs, inputs = CLASSES[key]
    y_true, y_pred = _inputs(inputs, "float64")
    ours = getattr(losses, name)(dtype=loss_dtype, **kwargs)
    theirs = getattr(tf.keras.losses, name)(dtype=loss_dtype, **kwargs)
    got = _value_and_grad_ad(ours, y_true, y_pred)
    _assert_same(got, _value_and_grad_tf(tf, theirs, y_true, y_pred), key)
    assert got[0].dtype.name == (loss_dtype or "float32")
    assert got[1].dtype.name == "float64"   # the gradient comes back through the cast


def test_sample_weight_that_matches_the_per_sample_losses_shape_equal_keras(tf):
    y_true, y_pred = _inputs("regression_3d", "float32")
    weight = np.random.default_rng(5).uniform(size=(2, 3)).astype(np.float32)
    for reduction in ("sum_over_batch_size", "mean_with_sample_weight", "none"):
        ours = losses.MeanAbsoluteError(reduction=reduction)
        theirs = tf.keras.losses.MeanAbsoluteError(reduction=reduction)
        _assert_same(
            _value_and_grad_ad(lambda t, p: ours(t, p, sample_weight=weight), y_true, y_pred),
            _value_and_grad_tf(tf, lambda t, p: theirs(t, p, sample_weight=weight),
                               y_true, y_pred), reduction)


def test_probabilities_at_the_clip_points_get_keras_values_and_zero_gradient(tf):
    y_true = np.array([[0.0, 1.0, 0.0, 1.0, 1.0, 0.0]], np.float32)
    y_pred = np.array([[0.0, 1.0, 1e-8, 1e-7, 1 - 1e-7, 1.0]], np.float32)
    got = _value_and_grad_ad(losses.binary_crossentropy, y_true, y_pred)
    _assert_same(got, _value_and_grad_tf(tf, tf.keras.losses.binary_crossentropy,
                                         y_true, y_pred), "clip points")
    # outside [1e-7, 1 - 1e-7] the clip stops the gradient; at the bounds it passes
    assert got[1].numpy()[0, [0, 1, 2, 5]].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert got[1].numpy()[0, 3] != 0.0


def test_config_and_names_equal_keras(tf):
    for name, kwargs, _ in CLASSES.values():
        ours = getattr(losses, name)(reduction="sum", **kwargs)
        theirs = getattr(tf.keras.losses, name)(reduction="sum", **kwargs)
        assert ours.get_config() == theirs.get_config(), name
        assert ours.dtype == theirs.dtype == "float32"
        again = getattr(losses, name).from_config(ours.get_config())
        assert again.get_config() == ours.get_config(), name


def test_a_subclass_of_loss_is_named_after_it_and_reduced_as_keras(tf):
    def cubed(m):
        class CubedError(m.Loss):
            def call(self, y_true, y_pred):
                return (y_pred - y_true) ** 3
        return CubedError
    y_true, y_pred = _inputs("regression", "float32")
    ours, theirs = cubed(losses)(), cubed(tf.keras.losses)()
    assert ours.name.startswith("cubed_error") and theirs.name.startswith("cubed_error")
    _assert_same(_value_and_grad_ad(ours, y_true, y_pred),
                 _value_and_grad_tf(tf, theirs, y_true, y_pred), "subclass")


def test_empty_batch_reduces_to_zero_as_keras(tf):
    y = np.zeros((0, 3), np.float32)
    for reduction in ("sum_over_batch_size", "sum"):
        got = losses.MeanSquaredError(reduction=reduction)(y, y)
        want = tf.keras.losses.MeanSquaredError(reduction=reduction)(y, y)
        assert tuple(got.shape) == tuple(want.shape) == (0,)


def test_losses_trace_in_ad_function_with_the_eager_values(tf):
    y_true, y_pred = _inputs("binary_probs", "float32")
    for loss in (losses.BinaryCrossentropy(label_smoothing=0.1),
                 losses.CategoricalCrossentropy(from_logits=True),
                 losses.SparseCategoricalCrossentropy(ignore_class=-1)):
        if isinstance(loss, losses.SparseCategoricalCrossentropy):
            y_true, y_pred = _inputs("sparse_ignored", "float32")

        def value_and_grad(t, p, loss=loss):
            with ad.GradientTape() as tape:
                tape.watch(p)
                value = loss(t, p)
            return value, tape.gradient(value, p)

        eager = value_and_grad(ad.constant(y_true), ad.constant(y_pred))
        traced = ad.function(value_and_grad)(ad.constant(y_true), ad.constant(y_pred))
        for a, b in zip(eager, traced):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn, y_true, y_pred", [
    ("mean_squared_error", np.zeros((2, 3)), np.zeros((2, 4))),
    ("mean_absolute_error", np.zeros((2, 3)), np.zeros((4, 3))),
    ("huber", np.zeros((2, 3)), np.zeros((2, 2))),
    ("binary_crossentropy", np.zeros((2, 3)), np.full((2, 4), 0.5)),
    ("categorical_crossentropy", np.zeros((2, 3)), np.full((2, 4), 0.5)),
    ("sparse_categorical_crossentropy", np.zeros((3,)), np.full((2, 4), 0.5)),
])
def test_shapes_that_cannot_pair_raise_value_error_naming_the_loss_and_shapes(tf, fn, y_true,
                                                                                y_pred):
    with pytest.raises(Exception):   # TensorFlow raises too (some as InvalidArgumentError)
        getattr(tf.keras.losses, fn)(y_true.astype(np.float32), y_pred.astype(np.float32))
    with pytest.raises(ValueError) as info:
        getattr(losses, fn)(y_true.astype(np.float32), y_pred.astype(np.float32))
    message = str(info.value)
    assert fn in message
    assert str(y_true.shape) in message and str(y_pred.shape) in message


def test_sample_weight_that_cannot_broadcast_raises_value_error(tf):
    with pytest.raises(ValueError, match=r"MeanSquaredError.*\(4,\).*\(3,\)"):
        losses.MeanSquaredError()(np.zeros((4, 2)), np.ones((4, 2)), sample_weight=np.ones(3))


def test_unknown_reduction_raises_value_error_as_keras(tf):
    with pytest.raises(ValueError, match="reduction"):
        tf.keras.losses.MeanSquaredError(reduction="average")
    with pytest.raises(ValueError, match="reduction"):
        losses.MeanSquaredError(reduction="average")
