"""``ad.function(jit_compile=True, experimental_fuse=True)`` equals the NumPy program.

The fused form (``autodiff/compiler/fused/``) runs a program's elementwise
chains as numba loops (on the NumPy backend; on the strict test backend the NumPy program runs,
and must give the same results exactly). Generated chains of ops, with their gradients, are run
both ways: arithmetic (``+ - * /``, negation, squares, square roots) must be
equal bit for bit; chains through sin, cos, exp, log or tanh within 2 ulp
(numba's math library against NumPy's SIMD code; fastmath is off).

``.ci/run`` runs this file twice: with numba (the ``[fast]`` extra; under
CI=true a missing numba fails here) and with ``TAPESCHOOL_WITHOUT_NUMBA=1``,
which hides numba: then ``experimental_fuse=True`` must warn once and give
the NumPy program's results exactly.
"""

import os
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autodiff as ad
from autodiff import backend
from autodiff.compiler import fused

WITHOUT_NUMBA = bool(os.environ.get("TAPESCHOOL_WITHOUT_NUMBA"))
if WITHOUT_NUMBA:
    sys.modules["numba"] = None   # ``import numba`` now raises ImportError

pytestmark = pytest.mark.filterwarnings("ignore:experimental_fuse=True needs numba")

ARITHMETIC = {
    "add": lambda y, c: y + c, "sub": lambda y, c: c - y, "mul": lambda y, c: y * c,
    "div": lambda y, c: y / (1.5 + y * y), "neg": lambda y, c: -y,
    "square": lambda y, c: ad.square(y) * 0.5, "sqrt": lambda y, c: ad.sqrt(y * y + c),
}
TRANSCENDENTAL = {"sin": lambda y, c: ad.sin(y), "cos": lambda y, c: ad.cos(y),
                  "exp": lambda y, c: ad.exp(y * 0.1), "log": lambda y, c: ad.log(y * y + 1.0),
                  "tanh": lambda y, c: ad.tanh(y)}


def test_numba_is_installed_unless_hidden():
    if WITHOUT_NUMBA:
        assert not fused.available()
    elif os.environ.get("CI"):
        assert fused.available(), "CI installs the [fast] extra: numba must import"
    elif not fused.available():
        pytest.skip("numba is not installed (pip install 'tapeschool[fast]')")


def _chain(names):
    def f(x, c):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for name in names:
                y = {**ARITHMETIC, **TRANSCENDENTAL}[name](y, c)
            loss = ad.reduce_sum(y * y)
        return y, loss, tape.gradient(loss, x)
    return f


def _both(names, x, c):
    numpy_program = ad.function(_chain(names), jit_compile=True)
    fused_program = ad.function(_chain(names), jit_compile=True, experimental_fuse=True)
    args = ad.constant(x), ad.constant(c)
    return [t.numpy() for t in numpy_program(*args)], [t.numpy() for t in fused_program(*args)]


@settings(max_examples=6, deadline=None)
@given(names=st.lists(st.sampled_from(sorted(ARITHMETIC)), min_size=2, max_size=8),
       dtype=st.sampled_from(["float32", "float64"]), size=st.sampled_from([1, 5, 16]),
       seed=st.integers(0, 2**16))
def test_fused_arithmetic_chains_equal_the_numpy_program_bit_for_bit(names, dtype, size, seed):
    rng = np.random.default_rng(seed)
    x, c = rng.normal(size=size).astype(dtype), rng.normal(size=()).astype(dtype)
    want, got = _both(names, x, c)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@settings(max_examples=6, deadline=None)
@given(names=st.lists(st.sampled_from(sorted({**ARITHMETIC, **TRANSCENDENTAL})),
                      min_size=2, max_size=6),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_fused_chains_through_math_functions_are_within_two_ulp(names, dtype, seed):
    rng = np.random.default_rng(seed)
    x, c = rng.normal(size=7).astype(dtype), rng.normal(size=()).astype(dtype)
    want, got = _both(names, x, c)
    y, y_fused = want[0], got[0]
    if WITHOUT_NUMBA or not set(names) & set(TRANSCENDENTAL):
        np.testing.assert_array_equal(y_fused, y)
    else:
        np.testing.assert_array_max_ulp(y_fused, y, maxulp=2 * len(names))


def test_a_long_chain_is_one_kernel_each_way_and_equal():
    # W1's chain, shortened: y = sin(y) * 1.0001 + 0.1, 40 times; loss = sum(y); dloss/dx
    def f(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(40):
                y = ad.sin(y) * 1.0001 + 0.1
            loss = ad.reduce_sum(y)
        return loss, tape.gradient(loss, x)

    x = ad.constant(np.linspace(-1, 1, 8).astype(np.float32))
    g = ad.function(f, jit_compile=True, experimental_fuse=True)
    got = [t.numpy() for t in g(x)]
    want = [t.numpy() for t in ad.function(f, jit_compile=True)(x)]
    for a, b in zip(got, want):   # 1-ulp differences of sin, multiplied along 40 steps
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=0)
    program = g.get_concrete_function(x).program()
    if WITHOUT_NUMBA or backend.get_backend() != "numpy":   # the NumPy program ran
        assert fused.for_program(program) is None
        np.testing.assert_array_equal(got[1], want[1])
        return
    form = fused.for_program(program)
    assert sorted(form.kernels) == ["_fused_0", "_fused_1"]   # forward chain, backward chain
    # the sum ends the forward kernel, so both kernels run as one numba call
    assert "Sum(xp" not in form.source and "_run_0(" in form.source
    assert form.compile_seconds > 0
    # what experimental_get_compiler_ir shows is still the NumPy program
    assert "_fused" not in g.experimental_get_compiler_ir(x)()


def test_kernels_in_a_row_run_as_one_numba_call_with_the_same_results(monkeypatch):
    # MAX_CHAIN = 6 cuts this 150-op forward chain and its backward chain into many
    # kernels; the calls in a row (nothing but kernels between them) join into one driver
    monkeypatch.setattr(fused, "MAX_CHAIN", 6)

    def f(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(30):
                y = (y * 0.75 + 0.5) / (1.0 + y * y)
            loss = ad.reduce_sum(y)
        return y, loss, tape.gradient(loss, x)

    x = ad.constant(np.linspace(-2, 2, 16).astype(np.float32))
    g = ad.function(f, jit_compile=True, experimental_fuse=True)
    got = [t.numpy() for t in g(x)]
    want = [t.numpy() for t in ad.function(f, jit_compile=True)(x)]
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    form = fused.for_program(g.get_concrete_function(x).program())
    if form is None:   # no numba, or not the NumPy backend: the NumPy program ran
        return
    assert len(form.kernels) > 10 and len(form.drivers) == 1   # the sum is in a kernel
    assert "_run_0(" in form.source and "_fused_" not in form.source
    assert not np.shares_memory(got[0], got[2])   # the gradient is not a view of y


def test_a_chain_reading_a_sums_result_equals_the_numpy_program():
    # a reduction gives a NumPy scalar, not an array: the kernel reads it all the same
    def f(x):
        s = ad.reduce_sum(x * x)
        return x * s - x * 0.5 + 1.0

    x = ad.constant(np.linspace(-1, 2, 8).astype(np.float32))
    got = ad.function(f, jit_compile=True, experimental_fuse=True)(x).numpy()
    want = ad.function(f, jit_compile=True)(x).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_kernels_pairwise_sum_is_np_sum_bit_for_bit(dtype):
    if WITHOUT_NUMBA:
        pytest.skip("numba is hidden: there is no kernel")
    if not fused.available() and not os.environ.get("CI"):   # under CI: a failure
        pytest.skip("numba is not installed (pip install 'tapeschool[fast]')")
    from autodiff.compiler.fused.kernels import _pairwise
    pairwise, rng, kind = _pairwise(), np.random.default_rng(7), np.dtype(dtype).type
    for n in list(range(1, 300)) + [1000, 4097, 100003]:
        a = (rng.normal(size=n) * 10.0 ** rng.uniform(-3, 3, size=n)).astype(dtype)
        specials = np.full(n, -0.0, dtype)
        specials[rng.integers(0, n, 2)] = rng.choice([np.inf, -np.inf, np.nan, -0.0], 2)
        for x in (a, specials):
            got = kind(0.0) + pairwise(x, 0, n, kind(-0.0))
            with np.errstate(invalid="ignore"):
                want = np.sum(x, axis=(0,), dtype=dtype)
            assert np.asarray(got, dtype).tobytes() == np.asarray(want).tobytes(), n


def test_a_sum_of_a_chain_over_every_axis_runs_in_its_kernel_and_equals_np_sum():
    def f(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = (x * 0.75 - 0.5) * x
            loss = ad.reduce_sum(y * y + 1.0)   # a sum over both axes: in the kernel
            part = ad.reduce_sum(y, axis=0)     # over one axis: NumPy's line
        return loss, part, tape.gradient(loss, x)

    x = ad.constant(np.linspace(-2, 3, 16 * 9).reshape(16, 9).astype(np.float32))
    g = ad.function(f, jit_compile=True, experimental_fuse=True)
    got = [t.numpy() for t in g(x)]
    want = [t.numpy() for t in ad.function(f, jit_compile=True)(x)]
    for a, b in zip(got, want):
        assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    form = fused.for_program(g.get_concrete_function(x).program())
    if form is not None:
        assert "axis=(0, 1)" not in form.source and "axis=(0,)" in form.source


def test_a_new_batch_size_runs_the_numpy_program_with_the_same_results():
    f = ad.function(lambda x: ad.sqrt(x * x + 1.0) * 2.0 - x, jit_compile=True,
                    experimental_fuse=True, input_signature=[ad.TensorSpec([None])])
    for n in (3, 5, 3):
        x = np.arange(n, dtype=np.float32) - 1.5
        np.testing.assert_array_equal(f(ad.constant(x)).numpy(),
                                      (np.sqrt(x * x + np.float32(1.0)) * np.float32(2.0) - x))


def test_without_numba_it_warns_once_and_runs_the_numpy_program(monkeypatch):
    def no_numba(program):
        raise ImportError("No module named 'numba'")

    monkeypatch.setattr(fused, "fuse", no_numba)
    f = ad.function(lambda x: ad.exp(x) * 3.0 + x, jit_compile=True, experimental_fuse=True)
    x = ad.constant([0.5, -1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = f(x).numpy()
        second = f(x).numpy()   # no second warning: the program remembers
    said = [w for w in caught if "needs numba" in str(w.message)]
    # on the strict test backend the NumPy program runs without asking for numba
    assert len(said) == (1 if backend.get_backend() == "numpy" else 0)
    assert all(w.category is ad.AutodiffWarning for w in said)
    want = ad.function(lambda x: ad.exp(x) * 3.0 + x, jit_compile=True)(x).numpy()
    np.testing.assert_array_equal(first, want)
    np.testing.assert_array_equal(second, want)


def test_experimental_fuse_needs_jit_compile():
    with pytest.raises(ValueError, match="pass jit_compile=True"):
        ad.function(lambda x: x, experimental_fuse=True)
