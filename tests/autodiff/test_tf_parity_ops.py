"""Op-level parity with TensorFlow 2: values, None-ness of gradients, forward mode.

Every expected number here was computed with TensorFlow 2.21 (CPU) running the
same program; the comment above each test names the TF call it mirrors.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import nn as nn_ops

ForwardAccumulator = ad.autodiff.ForwardAccumulator


def _second_order(f, x0):
    x = ad.Variable(x0)
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            y = f(x)
        g = inner.gradient(y, x)
    return g, outer.gradient(g, x)


# ---- fill and linspace are differentiable ------------------------------------------

def test_fill_gradient_counts_every_copy_of_the_value():
    # tf: d/ds sum(fill([2, 3], s)) = 6
    s = ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = ad.fill([2, 3], s * 1.0)
    assert y.shape == (2, 3)
    assert float(tape.gradient(y, s)) == 6.0


def test_fill_forward_mode_fills_the_tangent():
    s = ad.constant(2.0)
    with ForwardAccumulator(s, ad.constant(0.5)) as acc:
        y = ad.fill([2, 2], s)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), np.full((2, 2), 0.5, np.float32))


def test_linspace_gradient_in_start_and_stop():
    # tf: d/ds sum(linspace(s, 3 s, 4)) = 8
    s = ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = ad.linspace(s, 3 * s, 4)
    assert float(tape.gradient(y, s)) == 8.0


def test_linspace_of_vectors_along_an_axis_matches_tensorflow():
    # tf.linspace(a, b, 5, axis=1), tf.linspace(0.1 a, 1.3 b, 7, axis=0) with a = [1, 2], b = [3, 7]
    a, b = ad.Variable([1.0, 2.0]), ad.Variable([3.0, 7.0])
    with ad.GradientTape(persistent=True) as tape:
        y = ad.linspace(a, b, 5, axis=1)
        z = ad.linspace(a * 0.1, b * 1.3, 7, axis=0)
        l1, l2 = ad.reduce_sum(y * y), ad.reduce_sum(z * z * z)
    np.testing.assert_array_equal(y.numpy(), [[1, 1.5, 2, 2.5, 3], [2, 3.25, 4.5, 5.75, 7]])
    np.testing.assert_array_equal(z.numpy()[1], np.float32([0.7333333492279053, 1.6833332777023315]))
    ga, gb = tape.gradient(l1, [a, b])
    np.testing.assert_allclose(ga.numpy(), [7.5, 16.25])
    np.testing.assert_allclose(gb.numpy(), [12.5, 28.75])
    ga, gb = tape.gradient(l2, [a, b])
    np.testing.assert_allclose(ga.numpy(), [2.338, 12.63179], rtol=1e-5)
    np.testing.assert_allclose(gb.numpy(), [122.607315, 666.3512], rtol=1e-5)


def test_linspace_forward_mode():
    a, b = ad.constant(1.0), ad.constant(3.0)
    with ForwardAccumulator([a, b], [ad.constant(1.0), ad.constant(2.0)]) as acc:
        y = ad.linspace(a, b, 3)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1.0, 1.5, 2.0])


# ---- second order: zeros through ReluGrad-style ops, None where TF says None ------

@pytest.mark.parametrize("f, first", [
    (ad.nn.relu, [1.0, 0.0, 1.0]),
    (ad.nn.relu6, [1.0, 0.0, 1.0]),
    (ad.nn.leaky_relu, [1.0, 0.2, 1.0]),
    (ad.abs, [1.0, -1.0, 1.0]),
])
def test_second_derivative_of_piecewise_linear_activation_is_zeros_not_none(f, first):
    g, g2 = _second_order(f, [0.3, -0.2, 1.5])
    np.testing.assert_allclose(g.numpy(), first)
    assert g2 is not None
    np.testing.assert_array_equal(g2.numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("f", [
    ad.sign,
    lambda x: ad.clip_by_value(x, -1.0, 1.0),
    lambda x: ad.maximum(x, 0.5),
    lambda x: ad.minimum(x, 0.5),
    ad.reduce_max,
])
def test_second_derivative_through_a_select_is_none_as_in_tensorflow(f):
    _, g2 = _second_order(f, [0.3, -0.2, 1.5])
    assert g2 is None


@pytest.mark.parametrize("exclusive, reverse, first", [
    (True, False, [0.0]), (True, True, [0.0]), (False, False, [1.0])])
def test_cumprod_of_one_element_has_zero_second_derivative(exclusive, reverse, first):
    # tf.math.cumprod over a length-1 axis: gradient as below, second derivative [0.]
    g, g2 = _second_order(lambda x: ad.cumprod(x, exclusive=exclusive, reverse=reverse), [1.0])
    np.testing.assert_array_equal(g.numpy(), first)
    np.testing.assert_array_equal(g2.numpy(), [0.0])


def test_forward_mode_through_sign_is_unconnected():
    x = ad.constant([0.3, -0.2, 1.5])
    with ForwardAccumulator(x, ad.ones_like(x)) as acc:
        y = ad.sign(x)
    assert acc.jvp(y) is None


@pytest.mark.parametrize("f, expected", [
    (ad.nn.relu, [1.0, 0.0, 1.0]), (ad.nn.relu6, [1.0, 0.0, 1.0]),
    (ad.nn.leaky_relu, [1.0, 0.2, 1.0]), (ad.abs, [1.0, -1.0, 1.0]),
    (lambda x: ad.clip_by_value(x, -1.0, 1.0), [1.0, 1.0, 0.0]),
    (lambda x: ad.maximum(x, 0.5), [0.0, 0.0, 1.0]),
])
def test_forward_mode_through_kinks_matches_tensorflow(f, expected):
    x = ad.constant([0.3, -0.2, 1.5])
    with ForwardAccumulator(x, ad.ones_like(x)) as acc:
        y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected)


@pytest.mark.parametrize("grad_op", [nn_ops.RELU_GRAD, nn_ops.RELU6_GRAD, nn_ops.LEAKY_RELU_GRAD])
def test_forward_mode_through_relu_grad_ops_in_their_features_is_zeros(grad_op):
    # tf.raw_ops.ReluGrad / Relu6Grad / LeakyReluGrad with a tangent on the features only:
    # zeros (their gradient in g reads the cotangent), not None
    g, x = ad.constant([1.0, 2.0, 3.0]), ad.constant([0.5, -1.0, 2.0])
    with ForwardAccumulator(x, ad.ones_like(x)) as acc:
        y = grad_op(g, x)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [0.0, 0.0, 0.0])


# ---- multi-output ops with one output under forward mode ---------------------------

def test_unstack_along_a_size_one_axis_under_forward_accumulator():
    x = ad.constant([[1.0, 2.0]])
    with ForwardAccumulator(x, 2 * ad.ones_like(x)) as acc:
        (row,) = ad.unstack(x, axis=0)
    np.testing.assert_array_equal(acc.jvp(row).numpy(), [2.0, 2.0])


# ---- empty inputs -----------------------------------------------------------------

@pytest.mark.parametrize("reduce, expected", [
    (ad.reduce_max, -np.inf), (ad.reduce_min, np.inf), (ad.reduce_logsumexp, -np.inf),
    (ad.reduce_sum, 0.0), (ad.reduce_prod, 1.0)])
def test_reduction_of_no_elements_matches_tensorflow(reduce, expected):
    x = ad.Variable(ad.zeros([0]))
    with ad.GradientTape() as tape:
        y = reduce(x)
    assert float(y) == expected
    g = tape.gradient(y, x)
    assert g.shape == (0,) and g.dtype == ad.float32


def test_max_and_min_over_an_empty_axis_keep_the_other_axes():
    x = ad.zeros([2, 0])
    np.testing.assert_array_equal(ad.reduce_max(x, axis=1).numpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(ad.reduce_logsumexp(x, axis=1).numpy(), [-np.inf, -np.inf])
    assert ad.reduce_min(x, axis=1, keepdims=True).shape == (2, 1)
    assert ad.reduce_max(x, axis=0).shape == (0,)
    # tf.reduce_max of an empty int32 tensor is the lowest int32
    assert int(ad.reduce_max(ad.zeros([0], dtype=ad.int32))) == -2147483648


@pytest.mark.parametrize("f, shape", [(ad.nn.softmax, [2, 0]), (ad.nn.log_softmax, [2, 0]),
                                      (ad.nn.softmax, [0, 3])])
def test_softmax_of_an_empty_tensor_is_empty(f, shape):
    x = ad.Variable(ad.zeros(shape))
    with ad.GradientTape() as tape:
        y = f(x)
    assert y.shape == tuple(shape)
    assert tape.gradient(y, x).shape == tuple(shape)


def test_where_on_empty_tensors():
    x = ad.Variable(ad.zeros([0]))
    with ad.GradientTape() as tape:
        y = ad.where(x > 0, x, x * 2.0)
    assert y.shape == (0,)
    assert tape.gradient(y, x).shape == (0,)


# ---- complex inputs: the gradient is g * conj(f'(z)), the JVP f'(z) * t -------------

Z0, W0 = [1 + 2j, -0.5 + 0.3j], [0.7 - 1j, 2 + 0.5j]
M0 = [[1 + 1j, 2 - 1j], [0.5j, -1 + 0j]]
# (name, f(z, w), gradient in z, gradient in w, JVP for tangents [1, .5-1j] and [0, 1+1j]),
# each from TensorFlow 2.21 (rounded to 3 decimals)
COMPLEX_CASES = [
    ("square", lambda z, w: z * z, [2 - 4j, -1 - 0.6j], None, [2 + 4j, 0.1 + 1.3j]),
    ("exp", lambda z, w: ad.exp(z), [-1.131 - 2.472j, 0.579 - 0.179j], None,
     [-1.131 + 2.472j, 0.469 - 0.49j]),
    ("sin", lambda z, w: ad.sin(z), [2.033 + 3.052j, 0.917 - 0.146j], None,
     [2.033 - 3.052j, 0.605 - 0.844j]),
    ("div", lambda z, w: z / w, [0.47 - 0.671j, 0.471 + 0.118j], [1.491 + 0.171j, 0.071 + 0.118j],
     [0.47 + 0.671j, 0.306 - 0.576j]),
    ("pow", lambda z, w: ad.pow(z, w), [-1.457 + 2.509j, -0.277 - 0.175j],
     [4.45 - 5.754j, 0.224 - 0.101j], [-1.457 - 2.509j, 0.16 + 0.69j]),
    ("sum", lambda z, w: ad.reduce_sum(z * w), [0.7 + 1j, 2 - 0.5j], [1 - 2j, -0.5 - 0.3j],
     1.4 - 2.95j),
    ("prod", lambda z, w: ad.reduce_prod(z * w), [-0.455 - 1.395j, 5.2 - 2.15j],
     [-1.85 + 1.95j, -1.47 - 0.61j], 2.215 - 3.59j),
    ("matmul", lambda z, w: ad.matmul(ad.constant(M0, dtype=z.dtype),
                                      ad.reshape(z, [2, 1]) * ad.reshape(w, [1, 2])),
     [3.45 - 3.55j, 2.2 + 3.2j], [-2.2 - 4.3j, -2.2 - 4.3j],
     [[-0.8 - 2.05j, -3.05 - 0.1j], [1.15 + 1.55j, -2.45 + 2.45j]]),
]


@pytest.mark.parametrize("dtype", [ad.complex64, ad.complex128])
@pytest.mark.parametrize("name, f, gz, gw, jvp", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_gradients_and_jvps_follow_tensorflow(dtype, name, f, gz, gw, jvp):
    z, w = ad.Variable(ad.constant(Z0, dtype=dtype)), ad.Variable(ad.constant(W0, dtype=dtype))
    with ad.GradientTape() as tape:
        y = f(z, w)
    got_z, got_w = tape.gradient(y, [z, w])
    np.testing.assert_allclose(got_z.numpy(), gz, atol=2e-3)
    if gw is None:
        assert got_w is None
    else:
        np.testing.assert_allclose(got_w.numpy(), gw, atol=2e-3)
    tangents = [ad.constant([1 + 0j, 0.5 - 1j], dtype=dtype), ad.constant([0j, 1 + 1j], dtype=dtype)]
    with ForwardAccumulator([z, w], tangents) as acc:
        y = f(z, w)
    np.testing.assert_allclose(acc.jvp(y).numpy(), jvp, atol=2e-3)


def test_gradient_of_z_squared_is_twice_the_conjugate():
    # tf: gradient of x * x at 1+2j is 2 conj(x) = 2-4j
    z = ad.Variable(ad.constant(1 + 2j, dtype=ad.complex64))
    with ad.GradientTape() as tape:
        y = z * z
    assert complex(tape.gradient(y, z)) == 2 - 4j


# tf.abs / tf.sigmoid / tf.norm / tf.cast of complex128 [1+2j, -0.5+0.3j]
def test_abs_of_complex_gradient_and_jvp():
    z = ad.Variable(ad.constant(Z0, dtype=ad.complex128))
    with ad.GradientTape() as tape:
        y = ad.abs(z)
    assert y.dtype == ad.float64
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), [0.447 + 0.894j, -0.857 + 0.514j],
                               atol=1e-3)
    with ForwardAccumulator(z, ad.constant([1 + 1j, 2 - 0.5j], dtype=ad.complex128)) as acc:
        y = ad.abs(z)
    jvp = acc.jvp(y)
    assert jvp.dtype == ad.float64
    np.testing.assert_allclose(jvp.numpy(), [1.3416, -1.9722], atol=1e-4)


def test_sigmoid_and_norm_of_complex():
    z = ad.Variable(ad.constant(Z0, dtype=ad.complex128))
    with ad.GradientTape(persistent=True) as tape:
        s, n = ad.sigmoid(z), ad.norm(z)
    np.testing.assert_allclose(tape.gradient(s, z).numpy(), [0.141 + 0.421j, 0.239 - 0.018j],
                               atol=1e-3)
    np.testing.assert_allclose(complex(n), np.sqrt(5.34))
    np.testing.assert_allclose(tape.gradient(n, z).numpy(), [0.433 + 0.865j, -0.216 + 0.13j],
                               atol=1e-3)


def test_cast_of_complex_to_real_keeps_the_real_part_quietly():
    z = ad.Variable(ad.constant(Z0, dtype=ad.complex128))
    with ad.GradientTape() as tape:
        y = ad.cast(z, ad.float64)
    np.testing.assert_array_equal(y.numpy(), [1.0, -0.5])
    np.testing.assert_array_equal(tape.gradient(y, z).numpy(), [1 + 0j, 1 + 0j])


# ---- kinks, NaN and signed zeros (TensorFlow 2.21 values) -------------------------------

def test_elu_second_derivative_at_zero_and_gradient_at_nan():
    # tf: elu'(0) = 1, elu''(0) = 0 (EluGrad selects on y < 0); elu'(nan) = 1
    g, g2 = _second_order(ad.nn.elu, [0.0, -1.0, float("nan")])
    np.testing.assert_allclose(g.numpy(), [1.0, 0.3678794, 1.0], rtol=1e-6)
    np.testing.assert_allclose(g2.numpy(), [0.0, 0.3678794, 0.0], rtol=1e-6)


def test_relu_elu_selu_of_negative_zero_keep_the_sign():
    # tf: 1 / relu(-0.0) = 1 / elu(-0.0) = 1 / selu(-0.0) = -inf
    x = ad.constant([-0.0, -1.0, 2.0])
    for f in (ad.nn.relu, ad.nn.elu, ad.nn.selu, ad.nn.relu6):
        assert np.signbit(f(x).numpy()[0]), f


def test_reduce_mean_of_nothing_has_a_zero_tangent():
    x = ad.zeros([0])
    with ForwardAccumulator(x, ad.zeros([0])) as acc:
        y = ad.reduce_mean(x)
    assert float(acc.jvp(y)) == 0.0


def test_linspace_ends_exactly_at_stop():
    # tf.linspace(0.1, 1.7, 7)[-1] == 1.7 (float32), not start + 6 step
    line = ad.linspace(0.1, 1.7, 7).numpy()
    assert line[-1] == np.float32(1.7)
    assert ad.linspace(0.1, 1.7, 1).numpy().tolist() == [np.float32(0.1)]
