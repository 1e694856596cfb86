"""Sums and means over the leading axes of narrow arrays run in blocks (ops/reduce.py).

A batch norm's statistics and a conv bias's gradient reduce an NHWC array over
(N, H, W), leaving a few channels. ``_accumulated`` sums those as 512-wide
rows and then adds the partial sums: the same value as NumPy's reduction up to
rounding, closer to the exact sum, and the same for eager and compiled code.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import reduce

RNG = np.random.default_rng(37)


@pytest.mark.parametrize("shape, axis", [((32, 16, 16, 16), (0, 1, 2)),
                                         ((32, 8, 8, 32), (0, 1, 2)), ((4096, 3), (0,)),
                                         ((33, 31, 5), (0, 1)), ((64, 32, 2, 2), (0, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
def test_blocked_sums_and_means_equal_numpys_and_are_closer_to_exact(shape, axis, dtype,
                                                                     keepdims):
    x = (RNG.standard_normal(shape) + 3.0).astype(dtype)
    exact = x.astype(np.float64).sum(axis=axis, keepdims=keepdims)
    assert reduce._leading_blocks(x, axis) > 1 or shape == (33, 31, 5)   # 1,023 rows: NumPy's
    for fn, op, scale in ((np.sum, ad.reduce_sum, 1), (np.mean, ad.reduce_mean,
                                                       np.prod([shape[a] for a in axis]))):
        got = op(ad.constant(x), axis=list(axis), keepdims=keepdims).numpy()
        want = fn(x, axis=axis, keepdims=keepdims)
        assert got.shape == want.shape and got.dtype == want.dtype
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol)
        if dtype == np.float32:   # against the float64 sum: no further from it than NumPy
            error = np.abs(got - exact / scale).max()
            slack = 1e-7 * np.abs(exact).max() / scale
            assert error <= np.abs(want - exact / scale).max() * 1.01 + slack


def test_other_layouts_keep_numpys_reduction():
    x = RNG.standard_normal((64, 32, 8)).astype(np.float32)
    assert reduce._leading_blocks(x, (1, 2)) == 0                    # not the leading axes
    assert reduce._leading_blocks(x.transpose(1, 0, 2), (0, 1)) == 0  # not C-contiguous
    assert reduce._leading_blocks(x.astype(np.int32), (0, 1)) == 0    # integers: exact anyway
    assert reduce._leading_blocks(np.ones((1024, 65), np.float32), (0,)) == 0   # wide rows
    assert reduce._leading_blocks(np.ones((1021, 4), np.float32), (0,)) == 0    # a prime count


def test_a_compiled_batch_norm_step_reduces_as_eager():
    x = ad.constant(RNG.standard_normal((32, 8, 8, 16)).astype(np.float32))

    def stats(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            mean = ad.reduce_mean(x, axis=[0, 1, 2], keepdims=True)
            loss = ad.reduce_sum(ad.reduce_mean((x - mean) ** 2, axis=[0, 1, 2]))
        return loss, tape.gradient(loss, x)

    want, got = stats(x), ad.function(stats, jit_compile=True)(x)
    np.testing.assert_array_equal(want[0].numpy(), got[0].numpy())
    np.testing.assert_array_equal(want[1].numpy(), got[1].numpy())


@pytest.mark.parametrize("axis", [None, 0])
def test_a_sum_node_as_a_graph_writes_it_keeps_numpys_reduction(axis):
    # a saved graph's node carries its axis as written (None, an int), not the
    # normalized tuple: the blocked path must leave it to NumPy, not fail on len(None)
    from autodiff.ops.reduce import SUM
    x = np.random.default_rng(3).standard_normal((2048, 4)).astype(np.float32)
    got = SUM(ad.constant(x), axis=axis, keepdims=False).numpy()
    want = np.sum(x, axis=None if axis is None else tuple(np.atleast_1d(axis)), dtype=np.float32)
    np.testing.assert_array_equal(got, want)
