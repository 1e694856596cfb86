"""The convolution and pooling formulations (ops/conv_kernels.py, ops/pool_kernels.py).

Every fast form must give the reference formulation's numbers for every shape
it accepts, and derivatives through it (first and second order, float64)
must match finite differences. tests/conformance/test_conf_conv_kernels.py
compares each form with TensorFlow.
"""

import itertools

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import conv, conv_kernels, pool_kernels, pooling

RNG = np.random.default_rng(37)
GEOMETRIES = [  # (H, W, C, Co, kh, kw)
    (7, 6, 3, 4, 3, 3), (5, 8, 2, 3, 2, 3), (6, 6, 4, 2, 1, 1), (9, 7, 5, 2, 3, 2)]
STEPS = [((1, 1), (1, 1)), ((2, 1), (1, 1)), ((2, 3), (1, 1)), ((1, 1), (2, 1)),
         ((1, 1), (1, 2)), ((2, 2), (2, 2))]
PADS = [((0, 0), (0, 0)), ((1, 1), (1, 1)), ((0, 2), (1, 0))]


def _cases():
    for geometry, (strides, dilations), pads in itertools.product(GEOMETRIES, STEPS, PADS):
        h, w, _, _, kh, kw = geometry
        out = [conv.out_size(n, k, s, d, p) for n, k, s, d, p in
               zip((h, w), (kh, kw), strides, dilations, pads)]
        if min(out) > 0:
            yield geometry, strides, dilations, pads, tuple(out)


CASES = list(_cases())


@pytest.mark.parametrize("case, form", [(case, form) for case in CASES for form in
                                        ("im2col", "taps") if form == "im2col" or
                                        case[1] == (1, 1)], ids=str)   # taps: stride 1
def test_every_form_of_the_three_conv_ops_equals_the_reference(case, form):
    (h, w, c, co, kh, kw), strides, dilations, pads, (ho, wo) = case
    x, k = RNG.standard_normal((2, h, w, c)), RNG.standard_normal((kh, kw, c, co))
    g = RNG.standard_normal((2, ho, wo, co))
    p = {"strides": strides, "dilations": dilations, "pads": pads}
    pairs = [(conv_kernels.conv(np, x, k, **p, form=form), conv._reference_conv(np, x, k, **p)),
             (conv_kernels.backprop_filter(np, x, g, **p, filter_hw=(kh, kw), form=form),
              conv._reference_backprop_filter(np, x, g, **p, filter_hw=(kh, kw))),
             (conv_kernels.backprop_input(np, g, k, **p, input_hw=(h, w), form=form),
              conv._reference_backprop_input(np, g, k, **p, input_hw=(h, w)))]
    for got, want in pairs:
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", ["im2col", "taps"])
def test_an_inf_the_convolution_never_reaches_stays_out_of_the_gradients(form):
    # SAME over a width-1 input: the filter's outer columns only ever meet padding, and
    # the junk rows of taps carry zero cotangents, which must not meet the inf (0 * inf)
    x, w = np.zeros((1, 3, 1, 2)), np.zeros((3, 3, 2, 1))
    w[2, 0, 0, 0] = -np.inf
    x_inf = RNG.standard_normal((1, 5, 4, 2))
    x_inf[0, 4, 3, 1] = np.inf
    p = {"strides": (1, 1), "dilations": (1, 1), "pads": ((1, 1), (1, 1))}
    g = np.ones((1, 3, 1, 1))
    got = conv_kernels.backprop_input(np, g, w, **p, input_hw=(3, 1), form=form)
    np.testing.assert_array_equal(got, conv._reference_backprop_input(np, g, w, **p,
                                                                      input_hw=(3, 1)))
    assert not np.isnan(got).any()
    valid = {"strides": (1, 1), "dilations": (1, 1), "pads": ((0, 0), (0, 0))}
    g = np.ones((1, 3, 3, 1))   # VALID: the inf is read by one output; taps' junk rows too
    got = conv_kernels.backprop_filter(np, x_inf, g, **valid, filter_hw=(3, 2), form=form)
    want = conv._reference_backprop_filter(np, x_inf, g, **valid, filter_hw=(3, 2))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_choice_follows_the_cost_model():
    same = ((1, 1), (1, 1))
    assert conv_kernels.describe((32, 16, 16, 3), (3, 3, 3, 16), (1, 1), (1, 1), same) == {
        "Conv2D": "im2col", "Conv2DBackpropInput": "taps", "Conv2DBackpropFilter": "im2col"}
    assert conv_kernels.describe((8, 32, 32, 32), (3, 3, 32, 16), (1, 1), (1, 1), same) == {
        "Conv2D": "taps", "Conv2DBackpropInput": "taps", "Conv2DBackpropFilter": "taps"}
    strided = conv_kernels.describe((8, 32, 32, 32), (3, 3, 32, 16), (2, 2), (1, 1), same)
    assert set(strided.values()) == {"im2col"}
    # extra leading axes (a Jacobian's batch of cotangents) and empty outputs: the reference
    assert conv_kernels.choose("Conv2D", (3, 2, 5, 5, 1), (3, 3, 1, 1), (1, 1), (1, 1),
                               same) == "reference"
    assert conv_kernels.choose("Conv2D", (0, 5, 5, 1), (3, 3, 1, 1), (1, 1), (1, 1),
                               same) == "reference"


def test_other_backends_take_the_reference():
    import autodiff._strict as sx
    x, w = RNG.standard_normal((1, 5, 5, 2)), RNG.standard_normal((3, 3, 2, 3))
    p = {"strides": (1, 1), "dilations": (1, 1), "pads": ((1, 1), (1, 1))}
    got = conv_kernels.conv(sx, sx.asarray(x), sx.asarray(w), **p).get()
    np.testing.assert_allclose(got, conv._reference_conv(np, x, w, **p), rtol=1e-12)
    y = pooling._max_pool_forward(sx, sx.asarray(x), (1, 1), (1, 1), ((0, 0), (0, 0)))
    np.testing.assert_array_equal(y.get(), x)


@pytest.mark.parametrize("form, strides, padding", [
    ("reference", 1, "SAME"), ("reference", 2, "SAME"), ("im2col", 1, "SAME"),
    ("im2col", 2, "SAME"), ("im2col", 1, "VALID"), ("taps", 1, "SAME"), ("taps", 1, "VALID")])
def test_conv2d_derivatives_through_each_form_match_finite_differences(monkeypatch, form,
                                                                       strides, padding):
    monkeypatch.setattr(conv_kernels, "choose", lambda *args: form)
    x, w = RNG.standard_normal((2, 5, 4, 3)), RNG.standard_normal((3, 2, 3, 2))
    ad.testing.check_grads(lambda a, b: ad.nn.conv2d(a, b, strides, padding), [x, w], order=2)


def test_the_rows_a_convolution_keeps_give_its_filter_gradient():
    x, w = RNG.standard_normal((3, 9, 7, 4)), RNG.standard_normal((3, 2, 4, 5))
    p = {"strides": (1, 1), "dilations": (1, 1), "pads": ((1, 1), (0, 1))}
    y, rows = conv_kernels.conv(np, x, w, **p, form="im2col", keep_rows=True)
    np.testing.assert_array_equal(y, conv_kernels.conv(np, x, w, **p, form="im2col"))
    g = RNG.standard_normal(y.shape)
    got = conv_kernels.backprop_filter(np, x, g, **p, filter_hw=(3, 2), rows=rows)
    np.testing.assert_array_equal(got, conv_kernels.backprop_filter(np, x, g, **p,
                                                                    filter_hw=(3, 2),
                                                                    form="im2col"))
    np.testing.assert_allclose(got, conv._reference_backprop_filter(np, x, g, **p,
                                                                    filter_hw=(3, 2)),
                               rtol=1e-12, atol=1e-12)
    assert conv_kernels.conv(np, x, w, **p, form="taps", keep_rows=True)[1] is None


@pytest.mark.parametrize("rows", [5, 511, 1024, 1500, 2049])
def test_the_blocked_product_of_tall_matrices_equals_the_plain_one(rows):
    a, b = RNG.standard_normal((rows, 7)), RNG.standard_normal((rows, 3))
    np.testing.assert_allclose(conv_kernels._rows_t_matmul(a, b), a.T @ b, rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("hw, channels, strides", [(6, (2, 3), 1), (16, (3, 16), 1),
                                                   (7, (2, 2), 2)])
def test_a_compiled_step_reuses_the_rows_and_equals_eager_bit_for_bit(hw, channels, strides):
    # (16, (3, 16)): im2col, rows kept; (6, (2, 3)): taps, rows None; strides 2: im2col
    c, co = channels
    x = ad.constant(RNG.standard_normal((2, hw, hw, c)).astype(np.float32))
    w = ad.Variable(RNG.standard_normal((3, 3, c, co)).astype(np.float32))

    def step(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            h = ad.nn.relu(ad.nn.conv2d(x, w, strides, "SAME"))
            loss = ad.reduce_sum(ad.nn.max_pool2d(h, 2, 2, "VALID") ** 2)
        return loss, tape.gradient(loss, [x, w])

    compiled = ad.function(step, jit_compile=True)
    want, got = step(x), compiled(x)
    for a, b in zip([want[0], *want[1]], [got[0], *got[1]]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    source = compiled.experimental_get_compiler_ir(x)()
    assert "keep_rows=True" in source and "rows=v0_rows" in source


def test_a_compiled_jacobian_of_a_convolution_equals_eager():
    # the Jacobian's filter gradient has a batch axis: it must not read the forward's
    # rows (one image's worth) but build its own; it raised a matmul size error before
    # (as a generated program with a jacobian of a 1x1 convolution found)
    x = ad.constant(RNG.standard_normal((3, 1, 3, 2)).astype(np.float32))
    w = ad.Variable(RNG.standard_normal((1, 1, 2, 1)).astype(np.float32))

    def jac(x):
        with ad.GradientTape() as tape:
            y = ad.nn.conv2d(x, w, 1, "VALID")
        return y, tape.jacobian(y, w)

    compiled = ad.function(jac, jit_compile=True)
    (y0, want), (y1, got) = jac(x), compiled(x)
    assert "keep_rows=True" in compiled.experimental_get_compiler_ir(x)()
    assert got.shape == (3, 1, 3, 1, 1, 1, 2, 1)
    np.testing.assert_array_equal(y1.numpy(), y0.numpy())
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


# ---- pooling --------------------------------------------------------------------------------
def _reference_pool(monkeypatch, fn):
    with monkeypatch.context() as patch:
        patch.setattr(pool_kernels, "tiles", lambda *args: False)
        return fn()


POOL_INPUTS = {
    "random": lambda shape: RNG.standard_normal(shape),
    "ties after relu": lambda shape: np.maximum(np.round(RNG.standard_normal(shape)), 0),
    "all -inf": lambda shape: np.full(shape, -np.inf),
    "a NaN": lambda shape: np.where(RNG.random(shape) < 0.1, np.nan, RNG.standard_normal(shape)),
    "an inf in g": lambda shape: RNG.standard_normal(shape),   # g made below
    "int32": lambda shape: RNG.integers(-2, 3, shape).astype(np.int32),
}


@pytest.mark.parametrize("kind", list(POOL_INPUTS))
@pytest.mark.parametrize("shape, k", [((2, 4, 4, 3), (2, 2)), ((2, 5, 7, 2), (2, 3)),
                                      ((1, 9, 9, 1), (3, 3)), ((3, 6, 5, 2), (1, 2))])
def test_pool_blocks_equal_the_reference(monkeypatch, shape, k, kind):
    x = POOL_INPUTS[kind](shape)
    p = {"ksize": k, "strides": k, "pads": ((0, 0), (0, 0))}
    assert pool_kernels.tiles(shape, k, k, p["pads"], (1, 1))
    y = pooling._max_pool_forward(np, x, **p)
    g = RNG.standard_normal(y.shape).astype(x.dtype if x.dtype.kind == "f" else np.float64)
    if kind == "an inf in g":   # must reach its window's maximum only (not 0 * inf elsewhere)
        g.flat[::3] = np.inf
        g.flat[1::5] = np.nan
    h = RNG.standard_normal(shape)
    runs = [lambda: pooling._max_pool_forward(np, x, **p),
            lambda: pooling._max_pool_grad_forward(np, x, g, **p),
            lambda: pooling._max_pool_grad_grad_forward(np, x, h, **p)]
    if x.dtype.kind == "f":
        runs += [lambda: pooling._avg_pool_forward(np, x, **p),
                 lambda: pooling._avg_pool_grad_forward(np, g, input_hw=shape[1:3], **p)]
    for run in runs:
        got, want = run(), _reference_pool(monkeypatch, run)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_pool_blocks_do_not_apply_to_overlapping_or_padded_windows():
    assert not pool_kernels.tiles((1, 4, 4, 1), (3, 3), (2, 2), ((0, 0), (0, 0)), (1, 1))
    assert not pool_kernels.tiles((1, 5, 5, 1), (2, 2), (2, 2), ((0, 1), (0, 1)), (1, 1))
    assert not pool_kernels.tiles((1, 6, 6, 1), (2, 2), (2, 2), ((0, 0), (0, 0)), (2, 1))


@pytest.mark.parametrize("op", [ad.nn.max_pool2d, ad.nn.avg_pool2d])
@pytest.mark.parametrize("tiles", [True, False])
def test_pool_derivatives_through_each_form_match_finite_differences(monkeypatch, op, tiles):
    if not tiles:
        monkeypatch.setattr(pool_kernels, "tiles", lambda *args: False)
    x = RNG.permutation(2 * 6 * 5 * 2).reshape(2, 6, 5, 2) * 0.1   # no ties: differentiable
    ad.testing.check_grads(lambda a: op(a, 2, 2, "VALID") ** 2, [x], order=2)
