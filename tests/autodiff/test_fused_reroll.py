"""Loop rerolling in the fused program (``autodiff/compiler/fused/reroll.py``).

A chain that repeats a pattern of ops (the trace of a Python loop) is written
as a loop over its repetitions. Every element must go through the same scalar
ops in the same order as when the chain is written out straight
(``fused.REROLL = False``): the two fused forms must agree bit for bit, and
both must equal the NumPy program (bit for bit for arithmetic; within
rounding for chains through sin, cos, exp or tanh, where numba's math library
and NumPy's differ in the last bit).

On the strict test backend and without numba the NumPy program runs: the
comparisons then hold trivially and the checks on the kernels are skipped
(``tests/autodiff/test_fused.py`` fails under CI when numba is missing).
"""

import ast
import os
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autodiff as ad
from autodiff import backend
from autodiff.compiler import fused
from autodiff.compiler.fused import reroll
from benchmarks import workloads

WITHOUT_NUMBA = bool(os.environ.get("TAPESCHOOL_WITHOUT_NUMBA"))
if WITHOUT_NUMBA:
    sys.modules["numba"] = None   # as in test_fused.py: ``import numba`` now raises ImportError

pytestmark = pytest.mark.filterwarnings("ignore:experimental_fuse=True needs numba")

# one step of a repeated pattern: f(y, k, x), k the repetition, x the input
STEPS = {
    "add": lambda y, k, x: y + 0.25,
    "mul": lambda y, k, x: y * 0.75,
    "sub": lambda y, k, x: 1.5 - y,
    "neg": lambda y, k, x: -y,
    "div": lambda y, k, x: y / (1.25 + y * y),
    "sqrt": lambda y, k, x: ad.sqrt(y * y + 0.5),
    "mulx": lambda y, k, x: y * x,                       # the same input every repetition
    "vary": lambda y, k, x: y * (1.0 + 0.001 * k),        # a constant per repetition
    "sin": lambda y, k, x: ad.sin(y),
    "cos": lambda y, k, x: ad.cos(y),
    "exp": lambda y, k, x: ad.exp(y * 0.1),
    "tanh": lambda y, k, x: ad.tanh(y),
}
ARITHMETIC = ["add", "mul", "sub", "neg", "div", "sqrt", "mulx", "vary"]


def _chain(period, reps, keep_every=0):
    """``reps`` repetitions of ``period``; returns y, sum(y * y), its gradient and (when
    ``keep_every``) every ``keep_every``-th repetition's y: values read after the chain."""
    def f(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y, kept = x, []
            for k in range(reps):
                for name in period:
                    y = STEPS[name](y, k, x)
                if keep_every and k % keep_every == 3:
                    kept.append(y)
            loss = ad.reduce_sum(y * y)
        return [y, loss, tape.gradient(loss, x)] + kept
    return f


def _run(f, x, monkeypatch, **options):
    """The outputs of ``f`` compiled three ways: NumPy program, fused with rerolling,
    fused written out straight; and the rerolled form (None when the NumPy program ran)."""
    numpy_program = ad.function(f, jit_compile=True)
    rerolled = ad.function(f, jit_compile=True, experimental_fuse=True)
    straight = ad.function(f, jit_compile=True, experimental_fuse=True)
    args = (ad.constant(x),)
    want = [t.numpy() for t in numpy_program(*args)]
    got = [t.numpy() for t in rerolled(*args)]
    with monkeypatch.context() as patch:
        patch.setattr(fused, "REROLL", False)
        unrolled = [t.numpy() for t in straight(*args)] if options.get("straight", True) else got
    form = None
    if fused.available() and backend.get_backend() == "numpy":
        form = fused.for_program(rerolled.get_concrete_function(*args).program())
    return want, got, unrolled, form


def _input(dtype, size=8, seed=0):
    return np.random.default_rng(seed).uniform(0.2, 0.9, size).astype(dtype)


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.dtype == v.dtype and u.shape == v.shape
        np.testing.assert_array_equal(u, v)


def _rerolled(form):
    return sum(text.count("for r in range(") for text in form.kernels.values())


@pytest.mark.parametrize("period, reps, dtype", [
    (["add"], 1, "float32"), (["mul"], 600, "float64"), (["mul", "add"], 37, "float32"),
    (["vary", "add"], 200, "float32"), (["sub", "mulx", "div"], 50, "float64"),
    (["neg", "sqrt", "mul", "vary"], 600, "float32"), (["div", "vary"], 5, "float64"),
])
def test_rerolled_arithmetic_chains_equal_the_numpy_program_bit_for_bit(
        period, reps, dtype, monkeypatch):
    want, got, unrolled, form = _run(_chain(period, reps, keep_every=7), _input(dtype),
                                     monkeypatch, straight=reps <= 50)
    _same(got, want)
    _same(unrolled, want)
    if form is not None and reps >= 5:
        assert _rerolled(form) >= 2      # the forward chain and its gradient's
        if "vary" in period:             # the per-repetition constants: a table
            assert "_table_" in form.source


@pytest.mark.parametrize("period, reps, dtype", [
    (["sin", "mul", "add"], 150, "float32"), (["tanh", "vary"], 60, "float64"),
    (["exp", "mul", "cos", "add"], 40, "float32"), (["cos"], 300, "float64"),
])
def test_rerolled_chains_through_math_functions_equal_the_straight_kernels_bit_for_bit(
        period, reps, dtype, monkeypatch):
    want, got, unrolled, form = _run(_chain(period, reps, keep_every=5), _input(dtype),
                                     monkeypatch)
    _same(got, unrolled)
    for a, b in zip(got, want):   # numba's sin/cos/exp/tanh against NumPy's: last bits
        np.testing.assert_allclose(a, b, rtol=2e-4 if dtype == "float32" else 1e-11, atol=1e-30)
    if form is not None:
        assert _rerolled(form) >= 2


def test_w1_is_two_rerolled_kernels_equal_to_the_straight_ones(monkeypatch):
    # benchmarks/fused.py's chain: y = sin(y) * 1.0001 + 0.1, 500 times; sum; the gradient
    def w1(x):
        return workloads.w1_autodiff(ad, x, 500)

    x = np.linspace(-1.0, 1.0, 8).astype(np.float32)
    want, got, unrolled, form = _run(w1, x, monkeypatch)
    _same(got, unrolled)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=2e-5, atol=1e-44)  # the gradient is subnormal
    if form is not None:
        assert sorted(form.kernels) == ["_fused_0", "_fused_1"]
        assert _rerolled(form) == 2 and "for r in range(500)" in form.kernels["_fused_0"]


def test_a_chain_longer_than_max_chain_is_cut_around_its_loops(monkeypatch):
    # a straight prefix of 11 ops, a period of 8 ops (longer than MAX_CHAIN: written
    # straight, cut every 6 ops) and a period of 2 ops (one loop)
    monkeypatch.setattr(fused, "MAX_CHAIN", 6)

    def f(x):
        y = x
        for k in range(11):
            y = y * (0.5 + 0.01 * k) if k % 2 else y + (0.25 + 0.01 * k)
        for _ in range(4):
            y = ((((y * 0.5 + 1.0) * 0.25 - 0.5) / 1.5 + 0.75) * 2.0 - 1.0) * 0.5 + 0.125
        for _ in range(40):
            y = y * 0.99 + 0.01
        return [y]

    x = _input("float32", 16)
    want, got, unrolled, form = _run(f, x, monkeypatch)
    _same(got, want)
    _same(unrolled, want)
    if form is not None:
        assert len(form.kernels) > 3 and _rerolled(form) >= 1


@settings(max_examples=8, deadline=None)
@given(period=st.lists(st.sampled_from(ARITHMETIC), min_size=1, max_size=4),
       reps=st.integers(1, 40), dtype=st.sampled_from(["float32", "float64"]),
       keep=st.sampled_from([0, 2, 7]), seed=st.integers(0, 2**16))
def test_generated_arithmetic_chains_rerolled_equal_the_numpy_program(
        period, reps, dtype, keep, seed):
    f = _chain(period, reps, keep_every=keep)
    x = ad.constant(_input(dtype, 5, seed))
    want = [t.numpy() for t in ad.function(f, jit_compile=True)(x)]
    got = [t.numpy() for t in ad.function(f, jit_compile=True, experimental_fuse=True)(x)]
    _same(got, want)


def test_held_rows_never_reach_python_and_threads_do_not_share_them():
    # the forward values the gradient reads live in rows the program holds between calls;
    # what a call hands back is new, and concurrent calls each get their own results
    f = _chain(["sin", "mul", "add"], 60, keep_every=9)
    g = ad.function(f, jit_compile=True, experimental_fuse=True)
    inputs = [_input("float32", 8, seed) for seed in range(4)]
    want = [[t.numpy().copy() for t in g(ad.constant(x))] for x in inputs]
    again = [[t.numpy() for t in g(ad.constant(x))] for x in inputs]
    for a, b in zip(want, again):
        _same(a, b)
    first = [t.numpy() for t in g(ad.constant(inputs[0]))]
    g(ad.constant(inputs[1]))
    _same(first, want[0])                  # not overwritten by the next call
    errors = []

    def work(k):
        for _ in range(20):
            got = [t.numpy() for t in g(ad.constant(inputs[k]))]
            if not all(np.array_equal(a, b) for a, b in zip(got, want[k])):
                errors.append(k)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    form = fused.for_program(g.get_concrete_function(ad.constant(inputs[0])).program()) \
        if fused.available() and backend.get_backend() == "numpy" else None
    if form is not None:
        assert "_keep" in form.source and "_keep[" not in form.source


# ---- the plan itself --------------------------------------------------------------------

def _ops(lines):
    """``[(target, expr, spec)]`` from lines ``"v1 = np.sin(v0)"``."""
    spec = ((8,), np.dtype(np.float32))
    return [(line.split(" = ")[0], ast.parse(line.split(" = ")[1], mode="eval").body, spec)
            for line in lines]


def _w1_ops(steps):
    lines, y = [], "x"
    for k in range(steps):
        lines += [f"s{k} = np.sin({y})", f"m{k} = s{k} * c0", f"a{k} = m{k} + c1"]
        y = f"a{k}"
    return lines


def test_plan_finds_the_period_the_carry_and_the_invariant_operands():
    segments, used = reroll.plan(_ops(_w1_ops(50)), lambda ref: None, budget=120)
    assert used == 150 and len(segments) == 1
    loop = segments[0]
    assert isinstance(loop, reroll.Loop) and (loop.period, loop.count) == (3, 50)
    assert loop.carries == {2: ("name", "x")} and loop.varying == []
    assert [ast.unparse(e) for e in loop.body] == ["np.sin(@h2)", "@b0 * c0", "@b1 + c1"]


def test_plan_ends_a_loop_where_an_operand_cannot_be_indexed_by_the_repetition():
    # repetition k reads g<k>: rows of one pack at even offsets, then one that is not
    lines = [f"t{k} = {'t' + str(k - 1) if k else 'x'} * g{k}" for k in range(12)]
    rows = {f"g{k}": ("row", "_pack_0", 8 * k if k < 9 else 1000) for k in range(12)}
    segments, used = reroll.plan(_ops(lines), lambda ref: rows.get(ref[1]), budget=120)
    assert used == 12
    assert isinstance(segments[0], reroll.Loop) and segments[0].count == 9
    assert isinstance(segments[1], reroll.Straight) and len(segments[1].ops) == 3


def test_plan_without_rerolling_cuts_every_budget_ops():
    ops = _ops(_w1_ops(10))
    segments, used = reroll.plan(ops, lambda ref: None, budget=12, reroll=False)
    assert used == 12 and [type(s) for s in segments] == [reroll.Straight]
