"""Issue 12's ops against TensorFlow: cross-entropies, moments, conv, pooling, optimizers.

Most tests are one function of the module ``m`` run on ad and on tf
(``harness.same_on_both``): values, gradients, second derivatives and the
error family must agree. Dropout and the optimizers need TensorFlow's own
names (``tf.keras.optimizers``) or its random numbers, so they compare by hand.
"""

import warnings

import numpy as np
import pytest

import autodiff as ad

from .harness import assert_same, same_on_both

RNG = np.random.default_rng(12)
X = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
W = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
LOGITS = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0], [50.0, -50.0, 0.0]], np.float32)
LABELS = np.array([[0.2, 0.3, 0.5], [0.5, 0.5, 0.5], [0.0, 1.0, 0.0]], np.float32)


def _grads(m, f, *xs):
    """[f(xs), d f / d xs] with every x watched (output summed)."""
    xs = [m.constant(x) for x in xs]
    with m.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [y, tape.gradient(y, xs)]


def _second(m, f, x, w):
    """[f(x), g = d<f, 1>/dx, d<g, w>/dx] on nested tapes."""
    x = m.constant(x)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
        s = m.reduce_sum(g * m.constant(w))
    return [y, g, outer.gradient(s, x)]


# ---- cross-entropies ---------------------------------------------------------------------
@same_on_both
def test_softmax_cross_entropy_values_and_both_gradients(m):
    # labels that do not sum to 1 (row 2): TF's logits gradient is still softmax - labels
    return _grads(m, lambda lab, lg: m.nn.softmax_cross_entropy_with_logits(lab, lg),
                  LABELS, LOGITS)


@same_on_both
def test_softmax_cross_entropy_on_another_axis_and_broadcast_labels(m):
    a = _grads(m, lambda lab, lg: m.nn.softmax_cross_entropy_with_logits(lab, lg, axis=0),
               LABELS.T.copy(), LOGITS.T.copy())
    # broadcast labels: values only. TensorFlow 2.21 fails to differentiate this case (its
    # gradient reshapes the (3, 3) backprop to the labels' (1, 3)); ours sums, as broadcasting
    b = m.nn.softmax_cross_entropy_with_logits(m.constant(LABELS[:1]), m.constant(LOGITS))
    return [a, b]


@same_on_both
def test_softmax_cross_entropy_second_derivative_in_logits(m):
    lab = m.constant(LABELS[:2])
    return _second(m, lambda lg: m.nn.softmax_cross_entropy_with_logits(lab, lg), LOGITS[:2],
                   np.arange(6.0, dtype=np.float32).reshape(2, 3))


@same_on_both
def test_softmax_cross_entropy_float64_labels_are_cast(m):
    return m.nn.softmax_cross_entropy_with_logits(m.constant(LABELS.astype(np.float64)),
                                                  m.constant(LOGITS))


@same_on_both
def test_softmax_cross_entropy_raises_for_unbroadcastable_shapes(m):
    return m.nn.softmax_cross_entropy_with_logits(m.ones([2, 4]) / 4.0, m.zeros([2, 3]))


@same_on_both
def test_sparse_softmax_cross_entropy_values_gradient_and_second(m):
    labels = m.constant([2, 0, 1])
    first = _grads(m, lambda lg: m.nn.sparse_softmax_cross_entropy_with_logits(labels, lg),
                   LOGITS)
    second = _second(m, lambda lg: m.nn.sparse_softmax_cross_entropy_with_logits(labels, lg),
                     LOGITS, np.arange(9.0, dtype=np.float32).reshape(3, 3))
    int64 = m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([1, 2], dtype=m.int64),
                                                          m.constant(LOGITS[:2]))
    return [first, second, int64]


@same_on_both
def test_sparse_softmax_cross_entropy_raises_for_a_label_out_of_range(m):
    return m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([0, 3]), m.zeros([2, 3]))


@same_on_both
def test_sparse_softmax_cross_entropy_raises_for_a_negative_label(m):
    return m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([-1, 0]), m.zeros([2, 3]))


@same_on_both
def test_sparse_softmax_cross_entropy_raises_for_mismatched_shapes(m):
    return m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([0, 1, 2]), m.zeros([2, 3]))


@same_on_both
def test_sigmoid_cross_entropy_is_stable_and_has_both_gradients(m):
    x = np.array([-3.0, 0.0, 2.0, 100.0, -100.0], np.float32)
    z = np.array([0.0, 0.3, 1.0, 1.0, 0.0], np.float32)
    return _grads(m, lambda lab, lg: m.nn.sigmoid_cross_entropy_with_logits(labels=lab, logits=lg),
                  z, x)


@same_on_both
def test_sigmoid_cross_entropy_raises_for_mismatched_shapes(m):
    return m.nn.sigmoid_cross_entropy_with_logits(labels=m.zeros([2]), logits=m.zeros([3]))


# ---- moments and dropout -------------------------------------------------------------------
@same_on_both
def test_moments_values_keepdims_and_tf_second_derivative(m):
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    plain = m.nn.moments(m.constant(x), axes=[0])
    kept = m.nn.moments(m.constant(x), axes=[0, 1], keepdims=True)
    # the variance is taken around stop_gradient(mean): TF's second derivative
    second = _second(m, lambda v: m.nn.moments(v, axes=[0])[1], x, np.ones((2, 2), np.float32))
    return [plain, kept, second]


def test_dropout_scales_kept_units_and_its_gradient_uses_the_same_mask(tf):
    x = np.arange(1.0, 41.0, dtype=np.float32).reshape(4, 10)
    for m in (ad, tf):
        m.random.set_seed(3)
        xt = m.constant(x)
        with m.GradientTape() as tape:
            tape.watch(xt)
            y = m.nn.dropout(xt, rate=0.25)
        g = tape.gradient(y, xt).numpy()
        kept = y.numpy() != 0
        np.testing.assert_allclose(y.numpy()[kept], x[kept] / 0.75, rtol=1e-6)
        np.testing.assert_allclose(g, np.where(kept, 1 / 0.75, 0.0), rtol=1e-6)
        assert 0 < kept.sum() < kept.size
        rows = m.nn.dropout(xt, rate=0.5, noise_shape=[4, 1]).numpy()
        assert all(len(set(r != 0)) == 1 for r in rows)   # whole rows kept or dropped
        assert m.nn.dropout(xt, rate=0.0) is xt
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError):
            tf.nn.dropout(tf.ones([2]), bad)
        with pytest.raises(ValueError):
            ad.nn.dropout(ad.ones([2]), bad)


# ---- convolution ---------------------------------------------------------------------------
CONV_SETTINGS = [dict(strides=1, padding="VALID"), dict(strides=2, padding="SAME"),
                 dict(strides=[1, 2, 1, 1], padding="SAME"),
                 dict(strides=1, padding="VALID", dilations=[1, 2, 2, 1]),
                 dict(strides=2, padding="SAME", dilations=2),
                 dict(strides=(2, 1), padding="VALID"),
                 dict(strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]])]


@pytest.mark.parametrize("k", range(len(CONV_SETTINGS)))
def test_conv2d_values_and_gradients(tf, k):
    kwargs = CONV_SETTINGS[k]

    def case(m):
        return _grads(m, lambda x, w: m.nn.conv2d(x, w, **kwargs), X, W)

    def forward(m):
        return m.nn.conv2d(m.constant(X), m.constant(W), **kwargs)

    assert_same(forward, tf, tol=(1e-4, 1e-5))
    if "dilations" in kwargs:
        # TensorFlow's own CPU kernels (oneDNN off, as in the full suite) refuse to
        # differentiate a dilated conv; when they can, the gradients must agree
        try:
            case(tf)
        except tf.errors.InvalidArgumentError as err:
            assert "dilation" in str(err)
            return
    assert_same(case, tf, tol=(1e-4, 1e-5))


@same_on_both
def test_conv2d_second_derivative_through_both_inputs(m):
    x, w = m.constant(X[:1, :5, :5]), m.constant(W)
    with m.GradientTape(persistent=True) as outer:
        outer.watch([x, w])
        with m.GradientTape() as inner:
            inner.watch([x, w])
            y = m.nn.conv2d(x, w, strides=2, padding="SAME")
            loss = m.reduce_sum(y * y)
        gx, gw = inner.gradient(loss, [x, w])
        s = m.reduce_sum(gx * gx) + m.reduce_sum(gw)
    return outer.gradient(s, [x, w])


@same_on_both
def test_conv1d_matches(m):
    x = m.constant(X[:, 0])            # (2, 6, 3)
    w = m.constant(W[0])               # (2, 3, 4)
    return [_grads(m, lambda a, b: m.nn.conv1d(a, b, stride=2, padding="SAME"), X[:, 0], W[0]),
            m.nn.conv1d(x, w, stride=1, padding="VALID", dilations=2)]


@same_on_both
def test_conv2d_raises_for_mismatched_channels(m):
    return m.nn.conv2d(m.ones([1, 5, 5, 2]), m.constant(W), strides=1, padding="VALID")


@same_on_both
def test_conv2d_raises_for_mixed_dtypes(m):
    return m.nn.conv2d(m.ones([1, 5, 5, 3], dtype=m.float64), m.constant(W), 1, "VALID")


# ---- pooling -------------------------------------------------------------------------------
TIES = np.array([[1, 3, 3, 0], [3, 2, 1, 3], [0, 0, 2, 2], [1, 2, 2, 1]],
                np.float32).reshape(1, 4, 4, 1)


@same_on_both
def test_max_pool_sends_ties_to_the_first_maximum(m):
    return [_grads(m, lambda x: m.nn.max_pool2d(x, 2, 2, "VALID"), TIES),
            _grads(m, lambda x: m.nn.max_pool2d(x, 3, 1, "SAME"), TIES),
            _grads(m, lambda x: m.nn.max_pool2d(x, 2, 1, "VALID"), np.ones((1, 4, 4, 1),
                                                                           np.float32))]


@same_on_both
def test_max_pool_second_derivative(m):
    return _second(m, lambda x: m.nn.max_pool2d(x, 2, 2, "VALID") ** 2, TIES,
                   np.arange(16.0, dtype=np.float32).reshape(1, 4, 4, 1))


@same_on_both
def test_pools_on_random_inputs_with_strides_and_padding(m):
    out = []
    for f in (m.nn.max_pool2d, m.nn.avg_pool2d):
        out.append(_grads(m, lambda x: f(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"), X))
        out.append(_grads(m, lambda x: f(x, 3, 2, "VALID"), X))
    return out


@same_on_both
def test_avg_pool_same_counts_only_cells_inside_the_input(m):
    return _second(m, lambda x: m.nn.avg_pool2d(x, 3, 2, "SAME") ** 2, TIES,
                   np.ones((1, 4, 4, 1), np.float32))


@same_on_both
def test_max_pool_raises_for_a_lowercase_padding(m):
    return m.nn.max_pool2d(m.constant(TIES), 2, 1, "valid")


@same_on_both
def test_avg_pool_raises_for_an_integer_input(m):
    return m.nn.avg_pool2d(m.ones([1, 4, 4, 1], dtype=m.int32), 2, 2, "VALID")


# ---- optimizers ----------------------------------------------------------------------------
OPTIMIZERS = [("SGD", {}), ("SGD", dict(learning_rate=0.1, momentum=0.9)),
              ("SGD", dict(learning_rate=0.1, momentum=0.9, nesterov=True)), ("Adam", {}),
              ("Adam", dict(learning_rate=0.05, beta_1=0.8, beta_2=0.99, epsilon=1e-3))]


@pytest.mark.parametrize("k", range(len(OPTIMIZERS)))
def test_optimizer_steps_equal_keras(tf, k):
    kind, kwargs = OPTIMIZERS[k]
    rng = np.random.default_rng(k)
    start = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 2), (2,))]
    grads = [[rng.standard_normal(s.shape).astype(np.float32) for s in start] for _ in range(6)]
    tf_vars, ad_vars = [tf.Variable(s) for s in start], [ad.Variable(s) for s in start]
    tf_opt = getattr(tf.keras.optimizers, kind)(**kwargs)
    ad_opt = getattr(ad.optimizers, kind)(**kwargs)
    for g in grads:
        tf_opt.apply_gradients(zip([tf.constant(a) for a in g], tf_vars))
        ad_opt.apply_gradients(zip([ad.constant(a) for a in g], ad_vars))
    for a, t in zip(ad_vars, tf_vars):
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
    assert int(ad_opt.iterations.numpy()) == int(tf_opt.iterations.numpy()) == 6


def test_optimizers_skip_none_gradients_with_a_warning_and_refuse_all_none(tf):
    for m, opt in ((tf, tf.keras.optimizers.SGD(0.1)), (ad, ad.optimizers.SGD(0.1))):
        v, w = m.Variable([1.0, 2.0]), m.Variable(3.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opt.apply_gradients(zip([m.constant([1.0, 1.0]), None], [v, w]))
        # Keras's words, and ours: both name the variables whose gradient is None
        assert any("Gradients do not exist for variables" in str(c.message)
                   or "are None" in str(c.message) for c in caught)
        np.testing.assert_allclose(v.numpy(), [0.9, 1.9], rtol=1e-6)
        assert float(w.numpy()) == 3.0
        with pytest.raises(ValueError, match="No gradients provided|every gradient is None"):
            opt.apply_gradients(zip([None, None], [v, w]))
        assert int(opt.iterations.numpy()) == 1


def test_conv2d_layer_with_the_same_kernel_equals_keras(tf):
    keras_layer = tf.keras.layers.Conv2D(4, (3, 2), strides=(2, 1), padding="same",
                                         activation="relu")
    ours = ad.layers.Conv2D(4, (3, 2), strides=(2, 1), padding="same", activation="relu")
    want = keras_layer(tf.constant(X)).numpy()
    ours(ad.constant(X))
    ours.kernel.assign(keras_layer.kernel.numpy())
    ours.bias.assign(np.linspace(-1, 1, 4).astype(np.float32))
    keras_layer.bias.assign(np.linspace(-1, 1, 4).astype(np.float32))
    want = keras_layer(tf.constant(X)).numpy()
    np.testing.assert_allclose(ours(ad.constant(X)).numpy(), want, rtol=1e-4, atol=1e-5)
    assert ours.kernel.shape == tuple(keras_layer.kernel.shape)


def test_softmax_cross_entropy_mixed_second_derivative_is_documented_difference(tf):
    """d/dlabels of the logits gradient: TF's fused kernel gives zeros; ours differentiates
    its own formula g * (softmax - labels), giving -g * w (see autodiff/ops/losses.py)."""
    w = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    results = {}
    for m in (ad, tf):
        lab, lg = m.constant(LABELS[:2]), m.constant(LOGITS[:2])
        with m.GradientTape() as outer:
            outer.watch(lab)
            with m.GradientTape() as inner:
                inner.watch(lg)
                loss = m.nn.softmax_cross_entropy_with_logits(lab, lg)
            s = m.reduce_sum(inner.gradient(loss, lg) * m.constant(w))
        results[m.__name__] = outer.gradient(s, lab)
    np.testing.assert_allclose(results["autodiff"].numpy(), -w)
    tf_value = results["tensorflow"]
    assert tf_value is None or not np.any(tf_value.numpy())


@same_on_both
def test_cross_entropies_of_float16_logits(m):
    lg = m.constant(LOGITS[:2].astype(np.float16))
    return [_grads(m, lambda x: m.nn.softmax_cross_entropy_with_logits(
                m.constant(LABELS[:2].astype(np.float16)), x), LOGITS[:2].astype(np.float16)),
            m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([0, 2]), lg),
            m.nn.moments(lg, axes=[1])]
