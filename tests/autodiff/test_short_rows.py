"""Sums, means and Softmax over a short last axis of many rows (ops/short_rows.py): one
product with ones and column maxima give NumPy's values (the maxima exactly, the sums to
rounding), compiled programs equal eager bit for bit, and other layouts keep NumPy's
reduction."""

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import short_rows

RNG = np.random.default_rng(41)


@pytest.mark.parametrize("shape", [(32, 16, 32), (32, 4, 16, 16), (512, 2), (256, 64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_and_maxima_are_numpys(shape, dtype):
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    for keepdims in (False, True):
        got = short_rows.row_sum(x, keepdims=keepdims)
        want = x.sum(axis=-1, keepdims=keepdims)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(x).sum(-1).max())
        mean = short_rows.row_sum(x, keepdims=keepdims, mean=True)
        np.testing.assert_allclose(mean, x.mean(axis=-1, keepdims=keepdims), rtol=tol,
                                   atol=tol * np.abs(x).max())
        if shape[-1] <= 16:
            np.testing.assert_array_equal(short_rows.row_max(x, keepdims=keepdims),
                                          x.max(axis=-1, keepdims=keepdims))


def test_other_shapes_layouts_and_dtypes_are_left_to_numpy():
    x = np.ones((32, 16, 32), np.float32)
    assert short_rows.row_sum(x[:4]) is None                    # 128 rows: too few
    assert short_rows.row_sum(np.ones((512, 65), np.float32)) is None   # rows too wide
    assert short_rows.row_sum(x.transpose(0, 2, 1)) is None     # not C-contiguous
    assert short_rows.row_sum(x.astype(np.float16)) is None
    assert short_rows.row_sum(x.astype(np.int32)) is None
    assert short_rows.row_max(x) is None                        # max: rows of at most 16
    assert short_rows.last_axis_only(x, (2,)) and short_rows.last_axis_only(x, -1)
    assert not short_rows.last_axis_only(x, (1, 2)) and not short_rows.last_axis_only(x, None)


def test_softmax_and_reductions_over_short_rows_keep_their_values():
    scores = (RNG.standard_normal((32, 4, 16, 16)) * 4).astype(np.float32)
    scores[0, 0, 0] = [-1e30] * 15 + [5.0]   # one row where a single key wins
    got = ad.nn.softmax(ad.constant(scores)).numpy()
    shifted = np.exp(scores - scores.max(-1, keepdims=True))
    want = shifted / shifted.sum(-1, keepdims=True)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    assert got[0, 0, 0, 15] == 1.0 and not got[0, 0, 0, :15].any()
    h = (RNG.standard_normal((32, 16, 32))).astype(np.float32)
    np.testing.assert_allclose(ad.reduce_mean(ad.constant(h), axis=-1, keepdims=True).numpy(),
                               h.mean(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_a_compiled_layer_norm_and_softmax_step_equals_eager_bit_for_bit():
    x = ad.constant(RNG.standard_normal((32, 16, 32)).astype(np.float32))
    w = ad.Variable(RNG.standard_normal((32, 16)).astype(np.float32))

    def step(x):
        with ad.GradientTape() as tape:
            mean = ad.reduce_mean(x, axis=-1, keepdims=True)
            centred = x - mean
            var = ad.reduce_mean(centred * centred, axis=-1, keepdims=True)
            h = centred * ad.math.rsqrt(var + 1e-3)
            p = ad.nn.softmax(ad.matmul(h, w))
            loss = ad.reduce_sum(p * p)
        return loss, tape.gradient(loss, w)

    eager = step(x)
    compiled = ad.function(step, jit_compile=True)(x)
    for c, e in zip(compiled, eager):
        np.testing.assert_array_equal(c.numpy(), e.numpy())
