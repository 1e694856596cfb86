"""Issue 12's pieces without TensorFlow: losses, moments, dropout, conv, pooling, optimizers.

The op table (test_op_table.py) checks every new op's derivatives to second
order against finite differences. Here: values TensorFlow 2.21 printed
(copied in as numbers, so these run without it; tests/conformance compares
live), a plain-loop reference for convolution, errors, and the optimizers'
update formulas.
"""

import warnings

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing


def _value_and_grads(f, *xs):
    xs = [ad.constant(x) for x in xs]
    with ad.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return y.numpy(), [g.numpy() for g in tape.gradient(y, xs)]


# ---- cross-entropies -----------------------------------------------------------------------
def test_softmax_cross_entropy_equals_tensorflow_values_and_gradients():
    labels = np.array([[0.2, 0.3, 0.1], [0.5, 0.5, 0.5]], np.float32)
    logits = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]], np.float32)
    loss, (d_labels, d_logits) = _value_and_grads(
        lambda a, b: ad.nn.softmax_cross_entropy_with_logits(a, b), labels, logits)
    np.testing.assert_allclose(loss, [0.94456357, 4.5371175], rtol=1e-6)
    np.testing.assert_allclose(d_labels, [[2.407606, 1.4076059, 0.40760595],
                                          [4.024745, 5.024745, 0.02474492]], rtol=1e-5)
    # softmax - labels even though the labels do not sum to 1 (TensorFlow's backprop)
    np.testing.assert_allclose(d_logits, [[-0.10996943, -0.05527154, 0.5652409],
                                          [-0.48213202, -0.49342674, 0.4755587]], rtol=1e-5)


def test_softmax_cross_entropy_does_not_overflow_for_huge_logits():
    loss = ad.nn.softmax_cross_entropy_with_logits([0.0, 1.0, 0.0], [1000.0, -1000.0, 0.0])
    np.testing.assert_allclose(loss.numpy(), 2000.0)


def test_sparse_softmax_cross_entropy_picks_the_label_and_checks_its_range():
    logits = ad.constant([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])
    loss, (d_logits,) = _value_and_grads(
        lambda lg: ad.nn.sparse_softmax_cross_entropy_with_logits([2, 0], lg), logits.numpy())
    log_softmax = ad.nn.log_softmax(logits).numpy()
    np.testing.assert_allclose(loss, [-log_softmax[0, 2], -log_softmax[1, 0]], rtol=1e-6)
    np.testing.assert_allclose(d_logits, np.exp(log_softmax) - np.eye(3)[[2, 0]], rtol=1e-5,
                               atol=1e-7)
    if ad.get_backend() == "numpy":   # TensorFlow's CPU kernel raises
        with pytest.raises(ad.errors.InvalidArgumentError,
                           match=r"SparseSoftmaxCrossEntropyWithLogits: label 5 is outside the "
                                 r"valid range \[0, 3\)"):
            ad.nn.sparse_softmax_cross_entropy_with_logits([0, 5], ad.zeros([2, 3]))
    else:   # on a device the check would copy to the host: NaN rows, as TensorFlow on GPU
        loss = ad.nn.sparse_softmax_cross_entropy_with_logits([0, 5], ad.zeros([2, 3])).numpy()
        assert np.isnan(loss[1]) and np.isclose(loss[0], np.log(3.0))
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"labels shape \(3,\), logits"):
        ad.nn.sparse_softmax_cross_entropy_with_logits([0, 1, 2], ad.zeros([2, 3]))
    with pytest.raises(ad.errors.InvalidArgumentError, match="int32 or int64, not float32"):
        ad.nn.sparse_softmax_cross_entropy_with_logits([0.0, 1.0], ad.zeros([2, 3]))


def test_sigmoid_cross_entropy_equals_tensorflow_and_is_stable():
    x = np.array([-3.0, 0.0, 2.0, 100.0, -100.0], np.float32)
    z = np.array([0.0, 0.3, 1.0, 1.0, 0.0], np.float32)
    loss, (d_z, d_x) = _value_and_grads(
        lambda a, b: ad.nn.sigmoid_cross_entropy_with_logits(labels=a, logits=b), z, x)
    np.testing.assert_allclose(loss, [0.04858735, 0.6931472, 0.126928, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(d_z, -x)
    np.testing.assert_allclose(d_x, [0.04742587, 0.19999999, -0.11920291, 0.0, 0.0], atol=1e-7)
    testing.check_grads(lambda a, b: ad.nn.sigmoid_cross_entropy_with_logits(labels=a, logits=b),
                        [np.array([0.1, 0.5, 0.9]), np.array([-1.5, 0.4, 2.0])], order=2)
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"same shape.*\(3,\).*\(2,\)"):
        ad.nn.sigmoid_cross_entropy_with_logits(labels=ad.zeros([2]), logits=ad.zeros([3]))


def test_one_hot():
    np.testing.assert_array_equal(ad.one_hot([0, 2, 5], 3).numpy(),
                                  [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    assert ad.one_hot([1], 2, dtype=ad.float64).dtype == ad.float64


# ---- moments and dropout -------------------------------------------------------------------
def test_moments_values_shapes_and_tensorflows_second_derivative():
    x = ad.constant([[1.0, 2.0], [3.0, 5.0]])
    mean, variance = ad.nn.moments(x, axes=[0])
    np.testing.assert_allclose(mean.numpy(), [2.0, 3.5])
    np.testing.assert_allclose(variance.numpy(), [1.0, 2.25])
    kept = ad.nn.moments(x, axes=[0, 1], keepdims=True)
    assert [t.shape for t in kept] == [(1, 1), (1, 1)]
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            variance = ad.nn.moments(x, axes=[0])[1]
        g = inner.gradient(variance, x)
    np.testing.assert_allclose(g.numpy(), [[-1.0, -1.5], [1.0, 1.5]])
    # TensorFlow's value: the mean inside the variance is stop_gradient-ed
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), np.ones((2, 2)))


def test_dropout_keeps_with_probability_one_minus_rate_and_reuses_its_mask():
    ad.random.set_seed(0)
    x = ad.ones([200, 50])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.nn.dropout(x, rate=0.3)
    values = y.numpy()
    assert set(np.unique(values)) == {0.0, np.float32(1 / 0.7)}
    assert abs((values == 0).mean() - 0.3) < 0.02
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), values)
    ad.random.set_seed(0)
    np.testing.assert_array_equal(ad.nn.dropout(x, rate=0.3).numpy(), values)   # reproducible
    rows = ad.nn.dropout(x, rate=0.5, noise_shape=[200, 1]).numpy()
    assert all(len(set(r)) == 1 for r in rows)
    assert ad.nn.dropout(x, 0.0) is x
    with pytest.raises(ValueError, match=r"range \[0, 1\)"):
        ad.nn.dropout(x, 1.0)
    with pytest.raises(ad.errors.InvalidArgumentError, match="floating"):
        ad.nn.dropout(ad.constant([1, 2]), 0.5)
    with pytest.raises(ad.errors.InvalidArgumentError, match="noise_shape"):
        ad.nn.dropout(x, 0.5, noise_shape=[3, 1])


# ---- convolution ---------------------------------------------------------------------------
def _conv_reference(x, w, strides, pads, dilations):
    """A plain loop: what conv2d means."""
    (sh, sw), (dh, dw) = strides, dilations
    x = np.pad(x, [(0, 0), pads[0], pads[1], (0, 0)])
    kh, kw, _, co = w.shape
    ho = (x.shape[1] - (kh - 1) * dh - 1) // sh + 1
    wo = (x.shape[2] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((x.shape[0], ho, wo, co))
    for i in range(ho):
        for j in range(wo):
            for a in range(kh):
                for b in range(kw):
                    out[:, i, j] += x[:, i * sh + a * dh, j * sw + b * dw] @ w[a, b]
    return out


@pytest.mark.parametrize("strides, padding, dilations, pads", [
    (1, "VALID", 1, ((0, 0), (0, 0))),
    (2, "SAME", 1, ((1, 1), (0, 1))),          # H 7 -> 4: 2 rows of padding; W 6 -> 3: 1
    ((2, 1), "SAME", (1, 2), ((1, 1), (1, 1))),
    (1, [[0, 0], [1, 2], [0, 1], [0, 0]], 1, ((1, 2), (0, 1))),
])
def test_conv2d_equals_a_plain_loop(strides, padding, dilations, pads):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 2, 3, 4))
    got = ad.nn.conv2d(x, w, strides=strides, padding=padding, dilations=dilations).numpy()
    pair = (lambda v: (v, v) if isinstance(v, int) else v)
    np.testing.assert_allclose(got, _conv_reference(x, w, pair(strides), pads, pair(dilations)),
                               rtol=1e-12, atol=1e-12)


def test_conv2d_and_conv1d_errors_name_the_op_and_shapes():
    w = ad.ones([3, 3, 2, 4])
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"Conv2D: input has 3 channels but "
                                                             r"the filters expect 2"):
        ad.nn.conv2d(ad.ones([1, 5, 5, 3]), w, 1, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"Conv2D: input must be 4-D"):
        ad.nn.conv2d(ad.ones([5, 5, 2]), w, 1, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"output size would be negative"):
        ad.nn.conv2d(ad.ones([1, 1, 1, 2]), w, 1, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"padding must be"):
        ad.nn.conv2d(ad.ones([1, 5, 5, 2]), w, 1, "valid")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"NHWC"):
        ad.nn.conv2d(ad.ones([1, 5, 5, 2]), w, 1, "VALID", data_format="NCHW")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"float64.*float32|float32.*float64"):
        ad.nn.conv2d(ad.ones([1, 5, 5, 2], dtype=ad.float64), w, 1, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"Conv1D: input must be 3-D"):
        ad.nn.conv1d(ad.ones([5, 2]), ad.ones([3, 2, 4]), 1, "VALID")


def test_conv2d_jacobian_is_one_vectorized_pass_equal_to_the_loop():
    rng = np.random.default_rng(2)
    x = ad.constant(rng.standard_normal((1, 4, 4, 2)))
    w = ad.constant(rng.standard_normal((2, 2, 2, 3)))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = ad.nn.conv2d(x, w, strides=2, padding="SAME")
    for source in (x, w):
        fast = tape.jacobian(y, source)
        slow = tape.jacobian(y, source, experimental_use_pfor=False)
        np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=1e-12, atol=1e-12)


# ---- pooling -------------------------------------------------------------------------------
TIES = np.array([[1, 3, 3, 0], [3, 2, 1, 3], [0, 0, 2, 2], [1, 2, 2, 1]],
                np.float32).reshape(1, 4, 4, 1)


def test_max_pool_routes_ties_to_the_first_maximum_as_tensorflow():
    y, (g,) = _value_and_grads(lambda x: ad.nn.max_pool2d(x, 2, 2, "VALID"), TIES)
    np.testing.assert_array_equal(y.ravel(), [3, 3, 2, 2])
    np.testing.assert_array_equal(g.reshape(4, 4), [[0, 1, 1, 0], [0, 0, 0, 0],
                                                    [0, 0, 1, 0], [0, 1, 0, 0]])
    _, (g,) = _value_and_grads(lambda x: ad.nn.max_pool2d(x, 3, 1, "SAME"), TIES)
    np.testing.assert_array_equal(g.reshape(4, 4), [[0, 6, 2, 0], [2, 0, 0, 2],
                                                    [0, 0, 3, 0], [0, 1, 0, 0]])


def test_avg_pool_same_divides_by_the_cells_inside_as_tensorflow():
    y, (g,) = _value_and_grads(lambda x: ad.nn.avg_pool2d(x, 3, 2, "SAME"), TIES)
    np.testing.assert_allclose(y.ravel(), [1.6666666, 1.8333334, 1.1666666, 1.75], rtol=1e-6)
    np.testing.assert_allclose(g.reshape(4, 4)[0], [0.11111111, 0.11111111, 0.2777778,
                                                    0.16666667], rtol=1e-6)
    np.testing.assert_allclose(g.reshape(4, 4)[3, 3], 0.25, rtol=1e-6)


def test_pool_errors_name_the_op():
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"MaxPool: input must be 4-D"):
        ad.nn.max_pool2d(ad.ones([4, 4, 1]), 2, 2, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"MaxPool: pooling over the batch"):
        ad.nn.max_pool2d(ad.ones([1, 4, 4, 1]), [2, 2, 1, 1], 1, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"AvgPool: strides must be positive"):
        ad.nn.avg_pool2d(ad.ones([1, 4, 4, 1]), 2, 0, "VALID")
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"MaxPool: the output size would be negative"):
        ad.nn.max_pool2d(ad.ones([1, 4, 4, 1]), 6, 1, "VALID")


# ---- optimizers ----------------------------------------------------------------------------
def test_sgd_with_momentum_follows_keras_formula():
    w = ad.Variable([1.0, -2.0])
    opt = ad.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    g = np.array([0.5, 1.0], np.float32)
    m = np.zeros(2, np.float32)
    expected = w.numpy()
    for _ in range(3):
        opt.apply_gradients([(ad.constant(g), w)])
        m = 0.9 * m - 0.1 * g
        expected = expected + m
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    assert int(opt.iterations.numpy()) == 3 and opt.iterations.dtype == ad.int64


def test_adam_follows_keras_formula():
    w = ad.Variable([1.0, -2.0])
    opt = ad.optimizers.Adam(learning_rate=0.01)
    m = v = np.zeros(2)
    expected = w.numpy().astype(np.float64)
    for t, g in enumerate([np.array([0.5, 1.0]), np.array([-0.2, 3.0])], start=1):
        opt.apply_gradients(zip([ad.constant(g.astype(np.float32))], [w]))
        m = m + (g - m) * 0.1
        v = v + (g * g - v) * 0.001
        alpha = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        expected = expected - alpha * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


def test_optimizer_warns_on_none_gradients_and_refuses_all_none():
    v, w = ad.Variable([1.0]), ad.Variable(2.0, name="w")
    opt = ad.optimizers.SGD(0.5)
    with pytest.warns(UserWarning, match=r"gradients of the variables \['w:0'\] are None"):
        opt.apply_gradients([(ad.constant([1.0]), v), (None, w)])
    np.testing.assert_allclose(v.numpy(), [0.5])
    with pytest.raises(ValueError, match="every gradient is None"):
        opt.apply_gradients([(None, v)])
    with pytest.raises(ValueError, match="shape"):
        opt.apply_gradients([(ad.constant([1.0, 2.0]), v)])


def test_minimize_with_a_callable_loss_trains_a_dense_layer():
    ad.random.set_seed(0)
    layer = ad.layers.Dense(1)
    x = ad.random.normal([32, 3])
    y = ad.reduce_sum(x, axis=1, keepdims=True)
    opt = ad.optimizers.Adam(0.05)

    def loss():
        return ad.reduce_mean((layer(x) - y) ** 2)

    layer(x)
    first = float(loss())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(100):
            opt.minimize(loss, layer.trainable_variables)
    assert float(loss()) < first / 10


# ---- the Conv2D layer ----------------------------------------------------------------------
def test_conv2d_layer_builds_names_and_scopes_its_records():
    layer = ad.layers.Conv2D(4, 3, padding="same", activation="relu", name="conv")
    x = ad.ones([2, 8, 8, 3])
    with ad.GradientTape() as tape:
        y = layer(x)
    assert y.shape == (2, 8, 8, 4) and layer.kernel.shape == (3, 3, 3, 4)
    assert [v.path for v in layer.trainable_variables] == ["conv/kernel", "conv/bias"]
    assert [(r.op_type, r.scope) for r in tape.records] == [
        ("Conv2D", "conv"), ("AddV2", "conv"), ("Relu", "conv")]
    assert ad.layers.Conv2D(2, 2).name.startswith("conv2d")
    limit = np.sqrt(6.0 / (3 * 3 * 3 + 3 * 3 * 4))     # Keras' fans for a conv kernel
    assert np.abs(layer.kernel.numpy()).max() <= limit
    with pytest.raises(ValueError, match="padding"):
        ad.layers.Conv2D(2, 2, padding="full")
    with pytest.raises(ValueError, match="must have rank 4"):
        ad.layers.Conv2D(2, 2)(ad.ones([3, 3]))


def test_the_train_mlp_example_lowers_its_loss():
    import pathlib
    import runpy

    path = pathlib.Path(__file__).parents[2] / "examples" / "train_mlp.py"
    losses, accuracy = runpy.run_path(str(path))["main"](steps=100)
    assert losses[-1] < losses[0] / 5 and accuracy > 0.9
