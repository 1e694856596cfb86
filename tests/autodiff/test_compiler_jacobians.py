"""Compiled Jacobians: one-hot seed products and chunks written into the result.

``compiler/seeds.py`` replaces ``(S * g) @ M`` (S a one-hot seed chunk) by a
broadcast multiply, and must give the full product's numbers, NaN included
wherever a zero meets an inf or a NaN; ``compiler/concat.py`` writes each
chunk's product into the joined result. Both are checked against the full
computation, with infs and NaNs planted in the inputs and the weights.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.compiler.seeds import one_hot_rows_matmul


def _full_product(g, m, start, stop):
    n = g.shape[1]
    seeds = np.eye(n, dtype=g.dtype)[start:stop, None, :]
    with np.errstate(all="ignore"):
        return np.matmul((seeds * g).reshape(-1, n), m).reshape(stop - start, g.shape[0], -1)


@pytest.mark.parametrize("plant", ["none", "inf in g", "nan in g", "inf in m", "nan in m", "both"])
@pytest.mark.parametrize("start, stop", [(0, 6), (2, 5), (5, 6)])
def test_one_hot_rows_matmul_is_the_full_product_nans_included(plant, start, stop):
    rng = np.random.default_rng(len(plant) + start)
    g = rng.standard_normal((4, 6)).astype(np.float32)
    m = rng.standard_normal((6, 3)).astype(np.float32)
    if plant in ("inf in g", "both"):
        g[1, 3] = np.inf
    if plant == "nan in g":
        g[2, 0] = np.nan
    if plant in ("inf in m", "both"):
        m[4, 1] = -np.inf
    if plant == "nan in m":
        m[2, 2] = np.nan
    with np.errstate(all="ignore"):
        ours = one_hot_rows_matmul(np, g, m, start, stop)
    np.testing.assert_array_equal(ours, _full_product(g, m, start, stop))


def _dense_elu_batch_jacobian(weights):
    w1, b1, w2, b2 = weights

    def f(x):
        with ad.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            h = ad.nn.elu(ad.matmul(x, w1) + b1)
            y = ad.nn.elu(ad.matmul(h, w2) + b2)
        return tape.batch_jacobian(y, x, parallel_iterations=16)   # three chunks: 16, 16, 8
    return f


@pytest.mark.parametrize("plant", ["none", "inf in a weight", "nan in an input"])
def test_compiled_batch_jacobian_equals_eager(plant):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in [(5, 12), (12,), (12, 40), (40,)]]
    x_np = rng.standard_normal((64, 5)).astype(np.float32)
    if plant == "inf in a weight":
        arrays[2][3, 7] = np.inf
    if plant == "nan in an input":
        x_np[10, 2] = np.nan
    weights = [ad.Variable(a) for a in arrays]
    x = ad.constant(x_np)
    f = _dense_elu_batch_jacobian(weights)
    compiled = ad.function(f, jit_compile=True)
    with np.errstate(all="ignore"):
        eager = f(x).numpy()
        result = compiled(x).numpy()
    np.testing.assert_allclose(result, eager, rtol=2e-6, atol=1e-7)   # NaNs where eager has them
    np.testing.assert_array_equal(np.isnan(result), np.isnan(eager))
    if plant == "inf in a weight":   # zeros of the seeds met the inf: NaN, as in the full product
        assert np.isnan(result).any()
    source = compiled.experimental_get_compiler_ir(x)()
    assert "one_hot_rows_matmul(xp, " in source                  # the seeds' product, rewritten
    assert source.count("out=joined[") >= 2                      # chunks written into the result
    assert "ConcatV2(" not in source


def test_a_product_read_twice_keeps_its_concatenation():
    """A chunk's product that something else also reads is computed on its own, then joined."""
    w = ad.Variable(np.arange(6.0, dtype=np.float32).reshape(3, 2))

    def f(x):
        a, b = x @ w, (x * 2.0) @ w
        return ad.concat([a, b], axis=0), ad.reduce_sum(a)

    x = ad.constant(np.ones((2, 3), np.float32))
    compiled = ad.function(f, jit_compile=True)
    joined, total = compiled(x)
    np.testing.assert_array_equal(joined.numpy(), np.concatenate([np.ones((2, 3)) @ w.numpy(),
                                                                   2 * np.ones((2, 3)) @ w.numpy()]))
    assert float(total) == float(np.sum(np.ones((2, 3)) @ w.numpy()))
    assert "ConcatV2(" in compiled.experimental_get_compiler_ir(x)()
