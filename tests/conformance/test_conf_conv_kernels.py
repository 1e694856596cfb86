"""Each convolution and pooling formulation (ops/conv_kernels.py, pool_kernels.py) against
TensorFlow: values, gradients and second derivatives of ``conv2d``, ``conv1d`` and the pools,
with the formulation forced, over paddings, strides and dilations."""

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import conv_kernels, pool_kernels

RNG = np.random.default_rng(3701)
CONV_SETTINGS = [  # (strides, dilations, padding)
    (1, 1, "SAME"), (1, 1, "VALID"), (1, 2, "SAME"), (1, [2, 1], "VALID"), (2, 1, "SAME"),
    ([2, 1], 1, "VALID"), (1, 1, [[0, 0], [2, 0], [1, 1], [0, 0]])]
FORMS = ["reference", "im2col", "taps"]


def _conv_derivatives(m, x, w, strides, dilations, padding):
    """[y, dy/dx, dy/dw, d<dy/dx, x>/dw] (outputs summed), on nested tapes."""
    x, w = m.constant(x), m.constant(w)
    with m.GradientTape() as outer:
        outer.watch(w)
        with m.GradientTape() as inner:
            inner.watch([x, w])
            # TensorFlow's CPU Conv2DBackpropInput refuses dilations; its convolution
            # runs dilated filters as space_to_batch around a plain conv2d
            conv = m.nn.conv2d if dilations == 1 else m.nn.convolution
            y = conv(x, w, strides, padding, dilations=dilations)
        dx, dw = inner.gradient(y, [x, w])
        mixed = m.reduce_sum(dx * x)
    return [y, dx, dw, outer.gradient(mixed, w)]


@pytest.mark.parametrize("form, strides, dilations, padding", [
    (form, *setting) for setting in CONV_SETTINGS for form in FORMS
    if form != "taps" or setting[0] == 1], ids=str)     # taps: a stride-1 formulation
def test_conv2d_each_form_matches_tensorflow(tf, monkeypatch, form, strides, dilations, padding):
    monkeypatch.setattr(conv_kernels, "choose", lambda *args: form)
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
    got = _conv_derivatives(ad, x, w, strides, dilations, padding)
    want = _conv_derivatives(tf, x, w, strides, dilations, padding)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("form", FORMS)
def test_conv1d_each_form_matches_tensorflow(tf, monkeypatch, form):
    monkeypatch.setattr(conv_kernels, "choose", lambda *args: form)
    x = RNG.standard_normal((3, 11, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    results = []
    for m in (ad, tf):
        xs, ws = m.constant(x), m.constant(w)
        with m.GradientTape() as tape:
            tape.watch([xs, ws])
            y = m.nn.conv1d(xs, ws, 1, "SAME")
        results.append([y, *tape.gradient(y, [xs, ws])])
    for a, b in zip(*results):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-4, atol=2e-4)


def _pool_derivatives(m, op, x, k, padding):
    """[y, d sum(y**2)/dx, d<that, cos x>/dx] of the pool, on nested tapes."""
    x = m.constant(x)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = getattr(m.nn, op)(x, k, k, padding)
            loss = m.reduce_sum(m.square(y))
        dx = inner.gradient(loss, x)
        mixed = m.reduce_sum(dx * m.cos(x))
    return [y, dx, outer.gradient(mixed, x)]


@pytest.mark.parametrize("tiles", [True, False])
@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("shape, k, padding", [((2, 8, 8, 3), 2, "VALID"),
                                               ((2, 7, 9, 2), 2, "VALID"),
                                               ((1, 9, 9, 2), 3, "SAME")], ids=str)
def test_pools_match_tensorflow_with_ties_in_both_forms(tf, monkeypatch, tiles, op, shape, k,
                                                        padding):
    if not tiles:
        monkeypatch.setattr(pool_kernels, "tiles", lambda *args: False)
    x = np.maximum(np.round(RNG.standard_normal(shape) * 2), 0).astype(np.float32)  # ties at 0
    got, want = _pool_derivatives(ad, op, x, k, padding), _pool_derivatives(tf, op, x, k,
                                                                            padding)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
