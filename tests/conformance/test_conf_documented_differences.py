"""Where ad deliberately differs from TensorFlow, the difference is asserted here.

Each test names the difference and points at the README line that documents
it. Everything else in ``tests/conformance`` expects ad to match TensorFlow.
"""

import numpy as np

import autodiff as ad

from .harness import value_and_two_derivatives


def test_tape_hessian_exists_in_ad_and_not_in_tf(tf):
    # README, "What it does": "`tape.hessian` (TensorFlow has none)"
    assert not hasattr(tf.GradientTape, "hessian")
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as t:
        t.watch(x)
        y = ad.reduce_sum(x * x * x)
    h = t.hessian(y, x)
    # the Hessian TensorFlow's guide builds from two nested tapes and jacobian
    tx = tf.constant([1.0, 2.0])
    with tf.GradientTape() as outer:
        outer.watch(tx)
        with tf.GradientTape() as inner:
            inner.watch(tx)
            ty = tf.reduce_sum(tx * tx * tx)
        tg = inner.gradient(ty, tx)
    want = outer.jacobian(tg, tx)
    assert h.dtype.name == want.dtype.name == "float32"
    np.testing.assert_allclose(h.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), [[6.0, 0.0], [0.0, 12.0]])


def test_float16_reduce_mean_accumulates_in_float32(tf):
    # README, "Where this project differs from TensorFlow on purpose": "float16
    # `reduce_sum` and `reduce_mean` accumulate in float32" (FINDINGS F3)
    values = np.full(4096, 0.1, dtype=np.float16)
    got = ad.reduce_mean(ad.constant(values))
    want = tf.reduce_mean(tf.constant(values))
    exact = float(values.astype(np.float64).mean())
    assert got.dtype.name == want.dtype.name == "float16"
    assert abs(float(got.numpy()) - exact) < abs(float(want.numpy()) - exact)
    assert abs(float(got.numpy()) - exact) <= 1e-4
    # the sum: exact 409.6; float32 accumulation 409.5, TensorFlow's float16 408.5
    got_sum = ad.reduce_sum(ad.constant(values))
    want_sum = tf.reduce_sum(tf.constant(values))
    assert abs(float(got_sum.numpy()) - 409.6) < abs(float(want_sum.numpy()) - 409.6)


def _second_derivative(m, f, x):
    return value_and_two_derivatives(m, f, x)[1:]


def test_reduce_prod_second_derivative_at_zeros_is_exact(tf):
    # README, "Where this project differs from TensorFlow on purpose": "`cumprod` and
    # `reduce_prod` ... are differentiated exactly at zeros" (FINDINGS F11).
    # The Hessian of a * b is [[0, 1], [1, 0]], so H @ [1, 1] = [1, 1].
    g, h = _second_derivative(ad, ad.reduce_prod, ad.constant([[0.0, 0.0]]))
    tg, th = _second_derivative(tf, tf.reduce_prod, tf.constant([[0.0, 0.0]]))
    np.testing.assert_array_equal(g.numpy(), tg.numpy())        # first order: both [0, 0]
    np.testing.assert_array_equal(h.numpy(), [[1.0, 1.0]])
    np.testing.assert_array_equal(th.numpy(), [[0.0, 0.0]])     # TensorFlow divides by x
    # a factor that is NaN: d^2/dx^2 of reduce_prod([x]) is 0 whatever x is (README, same
    # line); TensorFlow's division makes it NaN. test_generated skips these programs.
    _, h = _second_derivative(ad, ad.reduce_prod, ad.constant([[np.nan]]))
    _, th = _second_derivative(tf, tf.reduce_prod, tf.constant([[np.nan]]))
    np.testing.assert_array_equal(h.numpy(), [[0.0]])
    assert np.isnan(th.numpy()).all()


def test_cumprod_gradient_and_jvp_at_zero_are_exact(tf):
    # README, same line: d/dx0 of sum(cumprod([x0, 2, 3])) = 1 + 2 + 6 = 9
    x, tx = ad.constant([0.0, 2.0, 3.0]), tf.constant([0.0, 2.0, 3.0])
    g, _ = _second_derivative(ad, ad.math.cumprod, x)
    tg, _ = _second_derivative(tf, tf.math.cumprod, tx)
    np.testing.assert_array_equal(g.numpy(), [9.0, 0.0, 0.0])
    np.testing.assert_array_equal(tg.numpy(), [0.0, 0.0, 0.0])
    with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 1.0, 1.0])) as acc:
        y = ad.math.cumprod(x)
    with tf.autodiff.ForwardAccumulator(tx, tf.constant([1.0, 1.0, 1.0])) as tacc:
        ty = tf.math.cumprod(tx)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 2.0, 6.0])
    np.testing.assert_array_equal(tacc.jvp(ty).numpy(), [0.0, 0.0, 0.0])


def test_gradients_function_is_ad_only(tf):
    # README, "What it does": `ad.gradients_function` (the old eager API; TF 2 has
    # no tf.contrib, so there is nothing to compare against)
    assert not hasattr(tf, "gradients_function")
    g = ad.gradients_function(lambda a, b: a * b * b)
    da, db = g(ad.constant(2.0), ad.constant(3.0))
    assert (float(da), float(db)) == (9.0, 12.0)


def test_gradients_are_dense_tensors_where_tf_gives_indexed_slices(tf):
    # README, "Where this project differs from TensorFlow on purpose": "Every
    # gradient is a dense tensor" (API.md: no IndexedSlices)
    params = [1.0, 2.0, 3.0]
    tx = tf.constant(params)
    with tf.GradientTape() as t:
        t.watch(tx)
        ty = tf.reduce_sum(tf.gather(tx, [0, 0, 2]))
    want = t.gradient(ty, tx)
    assert isinstance(want, tf.IndexedSlices)
    x = ad.constant(params)
    with ad.GradientTape() as t:
        t.watch(x)
        y = ad.reduce_sum(ad.gather(x, [0, 0, 2]))
    got = t.gradient(y, x)
    assert isinstance(got, ad.Tensor)
    np.testing.assert_array_equal(got.numpy(), tf.convert_to_tensor(want).numpy())
    np.testing.assert_array_equal(got.numpy(), [2.0, 0.0, 1.0])


def test_batch_jacobian_of_a_scalar_target_is_a_value_error(tf):
    # README, "Where this project differs from TensorFlow on purpose": a rank-0
    # target in batch_jacobian raises ValueError here (TensorFlow: IndexError)
    import pytest
    tx = tf.ones([2, 2])
    with tf.GradientTape() as t:
        t.watch(tx)
        ty = tf.reduce_sum(tx)
    with pytest.raises(IndexError):
        t.batch_jacobian(ty, tx)
    x = ad.ones([2, 2])
    with ad.GradientTape() as t:
        t.watch(x)
        y = ad.reduce_sum(x)
    with pytest.raises(ValueError, match="rank at least 2"):
        t.batch_jacobian(y, x)


def test_a_variable_argument_traces_once_per_variable(tf):
    # README, "Where this project differs from TensorFlow on purpose": ad.function
    # traces once per Variable passed as an argument (TensorFlow: per shape and dtype)
    def scaled(v, x):
        return v * x

    f_tf, f_ad = tf.function(scaled), ad.function(scaled)
    for m, f in ((tf, f_tf), (ad, f_ad)):
        a, b = m.Variable([1.0, 2.0]), m.Variable([3.0, 4.0])
        np.testing.assert_array_equal(f(a, m.constant(2.0)).numpy(), [2.0, 4.0])
        np.testing.assert_array_equal(f(b, m.constant(2.0)).numpy(), [6.0, 8.0])
    assert f_tf.experimental_get_tracing_count() == 1
    assert f_ad.experimental_get_tracing_count() == 2


def test_softsign_has_a_second_derivative_where_tensorflow_raises_lookup_error(tf):
    # README, "Where this project differs from TensorFlow on purpose": "`softsign` ... its
    # second derivative raises `LookupError`. First derivatives agree."
    import pytest
    values = [-3.0, -0.5, 0.0, 2.0]
    tx = tf.constant(values, dtype=tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(tx)
        with tf.GradientTape() as inner:
            inner.watch(tx)
            ty = tf.nn.softsign(tx)
        tg = inner.gradient(ty, tx)
    with pytest.raises(LookupError):
        outer.gradient(tg, tx)
    g, second = _second_derivative(ad, ad.nn.softsign, ad.constant(values, dtype=ad.float64))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)
    a = np.abs(values)
    np.testing.assert_allclose(second.numpy(), -2 * np.sign(values) / (1 + a) ** 3, rtol=1e-12)


def test_labels_second_derivative_of_softmax_cross_entropy_is_not_zero(tf):
    # README, "Where this project differs from TensorFlow on purpose":
    # "`softmax_cross_entropy_with_logits`: ... its derivative along the labels". Both give
    # the logits gradient softmax(logits) - labels; its derivative along the labels is -v
    # for a direction v. TensorFlow's gradient of that gradient says 0.
    logits, labels, v = [0.5, -1.0, 2.0], [0.2, 0.3, 0.5], [1.0, 2.0, 3.0]

    def mixed(m):
        x, y = m.constant([logits], dtype=m.float64), m.constant([labels], dtype=m.float64)
        with m.GradientTape() as outer:
            outer.watch(y)
            with m.GradientTape() as inner:
                inner.watch(x)
                loss = m.nn.softmax_cross_entropy_with_logits(labels=y, logits=x)
            g = inner.gradient(loss, x)
            s = m.reduce_sum(g * m.constant([v], dtype=m.float64))
        return g, outer.gradient(s, y)

    g, got = mixed(ad)
    tg, want = mixed(tf)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)      # first order agrees
    np.testing.assert_array_equal(want.numpy(), [[0.0, 0.0, 0.0]])
    np.testing.assert_allclose(got.numpy(), [[-1.0, -2.0, -3.0]], rtol=1e-12)
    # central differences of TensorFlow's own logits gradient along the labels: -v
    eps = 1e-6

    def tf_g(lab):
        x, y = tf.constant([logits], tf.float64), tf.constant([lab], tf.float64)
        with tf.GradientTape() as t:
            t.watch(x)
            loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x)
        return float(tf.reduce_sum(t.gradient(loss, x) * tf.constant([v], tf.float64)))
    fd = [(tf_g(np.add(labels, eps * e)) - tf_g(np.subtract(labels, eps * e))) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(got.numpy()[0], fd, rtol=1e-6)


def test_gather_nd_with_vector_indices_has_a_gradient(tf):
    # README, same section: "The gradient of `gather_nd` with 1-D indices"
    import pytest

    def grad(m):
        p = m.constant([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64)
        with m.GradientTape() as tape:
            tape.watch(p)
            y = m.gather_nd(p, [1])          # the row p[1]
        return y, tape.gradient(y, p)

    y, g = grad(ad)
    np.testing.assert_array_equal(y.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(g.numpy(), [[0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(tf.errors.InvalidArgumentError):
        grad(tf)


def test_avg_pool_gradient_where_a_same_window_is_larger_than_the_input(tf):
    # README, same section: "The gradient of an average pool whose SAME window is larger
    # than the input". The forward values agree; ad's gradient is the central differences
    # of TensorFlow's own forward, TensorFlow's gradient is not.
    x = np.array([1.0, 2.0, 4.0, 8.0]).reshape(1, 4, 1)

    def value_and_grad(m, v):
        t = m.constant(v)
        with m.GradientTape() as tape:
            tape.watch(t)
            y = m.nn.avg_pool1d(t, 5, 1, "SAME")
            s = m.reduce_sum(y)
        return y.numpy(), tape.gradient(s, t).numpy()

    (y, g), (ty, tg) = value_and_grad(ad, x), value_and_grad(tf, x)
    np.testing.assert_allclose(y, ty, rtol=1e-12)
    eps = 1e-6
    fd = [(float(np.sum(value_and_grad(tf, x + eps * e.reshape(x.shape))[0]))
           - float(np.sum(value_and_grad(tf, x - eps * e.reshape(x.shape))[0]))) / (2 * eps)
          for e in np.eye(4)]
    np.testing.assert_allclose(g.ravel(), fd, rtol=1e-6)
    np.testing.assert_allclose(g.ravel(), [5 / 6, 7 / 6, 7 / 6, 5 / 6], rtol=1e-12)
    np.testing.assert_allclose(tg.ravel(), [0.75, 13 / 12, 13 / 12, 13 / 12], rtol=1e-12)


def test_a_python_number_left_of_a_float64_tensor_in_add_truediv_multiply_no_nan(tf):
    # README, same section: "A Python number on the left of a tensor takes the tensor's
    # dtype in `add`, `truediv` and `math.multiply_no_nan` too"
    import pytest
    x = [0.5, -1.25]
    for path, want in (("add", np.add(1.79, x)), ("truediv", np.divide(1.79, x)),
                       ("math.multiply_no_nan", np.multiply(1.79, x))):
        ad_fn, tf_fn = ad, tf
        for part in path.split("."):
            ad_fn, tf_fn = getattr(ad_fn, part), getattr(tf_fn, part)
        got = ad_fn(1.79, ad.constant(x, dtype=ad.float64))
        assert got.dtype == ad.float64
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
        with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
            tf_fn(1.79, tf.constant(x, dtype=tf.float64))
        # the number on the right: both agree
        np.testing.assert_allclose(ad_fn(ad.constant(x, dtype=ad.float64), 1.79).numpy(),
                                   tf_fn(tf.constant(x, dtype=tf.float64), 1.79).numpy())


def test_recompute_grad_forward_mode_and_a_watched_variable_in_second_order(tf):
    # README, same section: "`recompute_grad` also works in forward mode and under a second
    # tape that watches a Variable the function reads; TensorFlow raises NotImplementedError"
    import pytest

    def jvp(m, wrap):
        v = m.Variable([0.5, 3.0])
        f = wrap(lambda x: m.reduce_sum(m.sin(x * v) * x))
        x = m.constant([1.0, 2.0])
        with m.autodiff.ForwardAccumulator(x, m.constant([1.0, -1.0])) as acc:
            y = f(x)
        return [acc.jvp(y)]

    def second_order(m, wrap):
        v = m.Variable([0.5, 3.0])
        f = wrap(lambda x: m.reduce_sum(m.sin(x * v) * x))
        x = m.constant([1.0, 2.0])
        with m.GradientTape() as outer:            # watches v: f reads it
            outer.watch(x)
            with m.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        return outer.gradient(g, [x, v])

    def plain(f):
        return f

    for case in (jvp, second_order):
        with pytest.raises(NotImplementedError):
            case(tf, tf.recompute_grad)
        got, want = case(ad, ad.recompute_grad), case(tf, plain)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)


def test_vectorized_map_calls_fn_once_per_example_tensorflow_once(tf):
    # README, same section: "`vectorized_map` calls the function once per example
    # (TensorFlow traces it once and vectorizes it): the same results"
    def run(m):
        calls = []

        def fn(row):
            calls.append(1)
            return m.reduce_sum(m.sin(row) * row)

        return m.vectorized_map(fn, m.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])), len(calls)

    (got, ad_calls), (want, tf_calls) = run(ad), run(tf)
    assert (ad_calls, tf_calls) == (3, 1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
