"""Forward mode's zero tangents in compiled programs (``autodiff/compiler/zeros.py``).

The compiled program skips products with zero tangents behind guards that
check the values the zeros meet are finite; when one is not, the exact
program runs. So the results equal eager's, NaN for NaN, and the fast
program does less work.
"""

import math
import re

import numpy as np
import pytest

import autodiff as ad
from autodiff.compiler import program as compiler


def _hvp_function(weights):
    """Forward-over-reverse HVP of a two-layer tanh net's loss w.r.t. its first kernel."""
    k1, b1, k2 = weights

    def hvp(x, v):
        def loss(k):
            h = ad.tanh(ad.matmul(x, k) + b1)
            out = ad.tanh(ad.matmul(h, k2))
            return ad.reduce_mean(out ** 2)
        return ad.functional.hvp(loss, k1, v)
    return hvp


def _weights(rng, bad=None):
    k1 = rng.standard_normal((4, 5)).astype(np.float32)
    b1 = rng.standard_normal(5).astype(np.float32)
    k2 = rng.standard_normal((5, 3)).astype(np.float32)
    if bad is not None:
        k1[1, 2] = bad
    return [ad.Variable(k1, name="k1"), ad.Variable(b1, name="b1"), ad.Variable(k2, name="k2")]


def _compiled_and_eager(f, *args):
    compiled = ad.function(f, jit_compile=True)(*args)
    eager = f(*args)
    return compiled.numpy(), eager.numpy()


def test_the_fast_program_skips_the_zero_tangents_and_keeps_eagers_values():
    rng = np.random.default_rng(0)
    hvp = _hvp_function(_weights(rng))
    x, v = ad.constant(rng.standard_normal((6, 4)).astype(np.float32)), ad.constant(
        rng.standard_normal((4, 5)).astype(np.float32))
    compiled, eager = _compiled_and_eager(hvp, x, v)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-7)
    program = ad.function(hvp, jit_compile=True).experimental_get_compiler_ir(x, v)(stage="python")
    if ad.get_backend() != "numpy":   # the pass runs on NumPy only: one exact program
        assert "isfinite" not in program and "return None" not in program
        return
    fast, exact = program.split("\n\n# When a guard above fails")
    assert "if not isfinite(xp.vdot(k1, k1)):" in fast and "return None" in fast
    # the exact program multiplies every zero tangent out; the fast one does not
    assert "ZerosLike" in exact and "ZerosLike" not in fast
    assert fast.count(" @ ") < exact.count(" @ ") - 2
    assert "dtanh_" in fast   # tanh's factor shared by its chain rules


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_weight_that_is_not_finite_gives_eagers_nans(bad):
    rng = np.random.default_rng(1)
    hvp = _hvp_function(_weights(rng, bad=bad))
    x, v = ad.constant(rng.standard_normal((6, 4)).astype(np.float32)), ad.constant(
        rng.standard_normal((4, 5)).astype(np.float32))
    compiled, eager = _compiled_and_eager(hvp, x, v)
    assert np.isnan(eager).any()
    np.testing.assert_array_equal(np.isnan(compiled), np.isnan(eager))
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-7, equal_nan=True)


def _overflowing():
    """An HVP whose zero tangent meets exp(b) = inf inside the program: eager gives NaN."""
    b = ad.Variable(np.array([1.0, 100.0, 2.0], np.float32), name="b")

    def hvp(k, v):
        return ad.functional.hvp(lambda k: ad.reduce_sum(ad.exp(b) * k * k), k, v)
    return hvp


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_zero_tangent_that_meets_an_overflow_inside_the_program_gives_eagers_nan():
    k, v = ad.constant([1.0, 2.0, 3.0]), ad.constant([1.0, 1.0, 1.0])
    compiled, eager = _compiled_and_eager(_overflowing(), k, v)
    assert np.isnan(eager[1]) and np.isfinite(eager[[0, 2]]).all()
    np.testing.assert_array_equal(compiled, eager)


def test_the_guards_are_what_keeps_the_nans(monkeypatch):
    # With guards that always pass, the fast program loses eager's NaNs: the test above
    # would fail if the pass skipped the zeros without checking.
    monkeypatch.setattr(compiler, "isfinite", lambda number: True)
    monkeypatch.setattr(compiler, "all_finite", lambda xp, array: True)
    rng = np.random.default_rng(1)
    hvp = _hvp_function(_weights(rng, bad=np.inf))
    x, v = ad.constant(rng.standard_normal((6, 4)).astype(np.float32)), ad.constant(
        rng.standard_normal((4, 5)).astype(np.float32))
    compiled, eager = _compiled_and_eager(hvp, x, v)
    assert np.isnan(eager).sum() == 20
    if ad.get_backend() == "numpy":
        assert not np.isnan(compiled).any()
    else:   # the strict backend compiles without the pass: every zero multiplied out
        np.testing.assert_array_equal(np.isnan(compiled), np.isnan(eager))


def test_programs_that_assign_or_draw_random_numbers_keep_every_zero():
    w = ad.Variable([1.0, 2.0], name="w")

    def step(x):
        with ad.autodiff.ForwardAccumulator(x, ad.ones_like(x)) as acc:
            y = x * w
        w.assign_add(ad.constant([0.5, 0.5]))
        return acc.jvp(y)
    f = ad.function(step, jit_compile=True)
    x = ad.constant([3.0, 4.0])
    source = f.experimental_get_compiler_ir(x)(stage="python")
    assert "all_finite" not in source
    before = w.numpy()
    np.testing.assert_array_equal(f(x).numpy(), before)   # the tangent is x's times w as read
    np.testing.assert_array_equal(w.numpy(), before + 0.5)


def test_the_checks_are_false_for_nan_inf_and_overflow():
    from autodiff.compiler.zeros import all_finite
    assert all_finite(np, np.array([1.0, -2.0], np.float32))
    assert all_finite(np, np.zeros((0, 3)))
    for bad in (np.nan, np.inf, -np.inf):
        assert not all_finite(np, np.array([1.0, bad]))
    assert not all_finite(np, np.array([3e38, 3e38], np.float32))   # conservative: exact path
    assert not all_finite(np, np.array([1 + 1j, complex(0, np.inf)]))
    # the float32/float64 check a program writes: a sum of squares, one BLAS call
    from autodiff.compiler.zeros import check_lines
    test = check_lines("a", ((2,), np.dtype("float32")))[0].split("if not ")[1].split(":  #")[0]
    assert test == "isfinite(xp.vdot(a, a))"
    for a, finite in ((np.array([1.0, -2.0], np.float32), True), (np.zeros((0,), np.float32), True),
                      (np.array([1.0, np.nan], np.float32), False),
                      (np.array([np.inf, -np.inf], np.float32), False),
                      (np.array([2e19, 1.0], np.float32), False),     # conservative: exact path
                      (np.ones((3, 4), np.float64)[:, ::2], True)):   # not contiguous: copied
        with np.errstate(over="ignore", invalid="ignore"):
            assert eval(test, {"isfinite": math.isfinite, "xp": np, "a": a}) is finite, a
    assert check_lines("a", ((2,), np.dtype("complex64")))[0].startswith("    if not all_finite(xp, a):")
    assert check_lines("a", ((2,), np.dtype("float16")))[0].startswith("    if not all_finite(xp, a):")


def test_the_programs_lesson_10_reads_line_by_line():
    """Lesson 10 compares the fast and the exact HVP programs by their lines: keep them true."""
    rng = np.random.default_rng(8)
    inputs = ad.constant(rng.standard_normal((8, 4)).astype(np.float32))
    layer = ad.layers.Dense(3, activation="tanh")
    layer(inputs)

    def loss_of_kernel(kernel):
        return ad.reduce_mean(ad.tanh(inputs @ kernel + layer.bias) ** 2)

    def hvp_of_tanh_loss(kernel, direction):
        return ad.functional.hvp(loss_of_kernel, kernel, direction)

    kernel = ad.constant(layer.kernel.numpy())
    u = ad.constant(rng.standard_normal((4, 3)).astype(np.float32))
    source = ad.function(hvp_of_tanh_loss, jit_compile=True).experimental_get_compiler_ir(
        kernel, u)(stage="python")
    if ad.get_backend() != "numpy":   # the lesson runs on NumPy; elsewhere one exact program
        assert "isfinite" not in source
        return
    fast, exact = source.split("\n\n# When a guard above fails")
    fast_lines = [line.split("  #")[0].strip() for line in fast.splitlines()]
    exact_lines = [line.split("  #")[0].strip() for line in exact.splitlines()]
    for expected in ("v0 = c0 @ kernel", "v1 = c0 @ direction", "if not isfinite(xp.vdot(v3, v3)):",
                     "return None", "dtanh_v3 = 1 - v3 * v3", "v4 = v1 * dtanh_v3",
                     "v16 = c0.T @ v15"):
        assert expected in fast_lines, f"{expected!r} not in\n{fast}"
    for expected in ("v2 = k1 @ kernel", "v7 = xp.add(v4, k6, out=v4)", "v27 = k26 * v8",
                     "v36 = k1.T @ v30", "v16 = k15 * v8", "v20 = xp.log(v19)"):
        assert expected in exact_lines, f"{expected!r} not in\n{exact}"
    for expected in ("# k1 = ZerosLike(c0) is constant",
                     "# k15 = ZerosLike(k14) is constant, computed once: float32 0.0"):
        assert expected in exact, f"{expected!r} not in\n{exact}"
    # the bias's zeros (the layer's name counts the Dense layers made before it)
    assert re.search(r"# k6 = ZerosLike\(dense\w*_bias\) is constant", exact), exact
    assert "ZerosLike" not in fast and "xp.log" not in fast
