"""Property tests over the registry: every op, random shapes, dtypes and values.

For each registered op type, hypothesis draws a case from the op's table
and then either keeps its shapes, draws broadcast-compatible ones, or draws
unrelated ones (zero-size axes and scalars included); a dtype (float32,
float64, int32, int64, bool, occasionally a mix); and values that include
NaN, infinities, signed zeros and huge numbers. Calling the op must then

- return exactly what its NumPy forward returns (same shape, dtype and
  values, NaN equal to NaN), keeping a floating input's dtype, or
- raise a documented error: ``InvalidArgumentError``, ``TypeError`` or
  ``ValueError``; never AttributeError, KeyError, ZeroDivisionError, ...

and, for a differentiable op on floating inputs, ``gradient`` must give
each input a gradient of its own shape and dtype (or raise a documented
error). Every example runs under an alarm, so a hang fails instead of
blocking the suite.
"""

import signal
import warnings
from contextlib import contextmanager
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autodiff as ad
from autodiff import backend, nest, testing
from autodiff.errors import InvalidArgumentError
from autodiff.registry import REGISTRY

DOCUMENTED_ERRORS = (InvalidArgumentError, TypeError, ValueError)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-30]
HANG_SECONDS = 10


class Hang(Exception):
    """An op call ran past HANG_SECONDS."""


@contextmanager
def _alarm(seconds):
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def ring(signum, frame):
        raise Hang(f"the op call did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _elements(dtype):
    if dtype == np.bool_:
        return st.booleans()
    if np.issubdtype(dtype, np.integer):
        return st.integers(-4, 4)
    width = 32 if dtype == np.float32 else 64
    return st.one_of(st.floats(-3, 3, width=width), st.sampled_from(SPECIAL),
                     st.floats(width=width))


@st.composite
def _shapes(draw, case_shapes):
    """The case's own shapes, broadcast-compatible ones, or unrelated ones."""
    n = len(case_shapes)
    mode = draw(st.sampled_from(["case", "broadcastable", "unrelated"]))
    if mode == "case" or n == 0:
        return True, tuple(tuple(s) for s in case_shapes)
    if mode == "broadcastable":
        drawn = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3,
                                                       min_side=0, max_side=3))
        return False, drawn.input_shapes
    return False, tuple(draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
                        for _ in range(n))


@st.composite
def _call(draw, prim):
    """(input arrays, params, whether the shapes are the case's own) for one call."""
    shapes, params = draw(st.sampled_from(testing.op_cases(prim)))
    if getattr(prim, "make_inputs", None) is not None:
        # Structured inputs (indices, SPD matrices): keep them, vary float dtype and specials.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        arrays = testing.op_inputs(prim, shapes, rng)
        dtype = draw(st.sampled_from([np.float32, np.float64]))
        out = []
        for a in arrays:
            if a.dtype.kind == "f":
                a = a.astype(dtype)
                if a.size and draw(st.booleans()):
                    a.flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from(SPECIAL))
            out.append(a)
        return out, params, True
    own_shapes, shapes = draw(_shapes(shapes))
    dtype = draw(st.sampled_from(DTYPES))
    mixed = draw(st.integers(0, 9)) == 0  # sometimes inputs disagree: an error is expected
    arrays = []
    for shape in shapes:
        dt = draw(st.sampled_from(DTYPES)) if mixed else dtype
        arrays.append(draw(hnp.arrays(dt, shape, elements=_elements(dt))))
    return arrays, params, own_shapes


def _reference(prim, arrays, params):
    """The NumPy forward's outputs, or the exception it raised."""
    try:
        out = prim.forward(np, *[a.copy() for a in arrays], **params)
    except Exception as err:  # noqa: BLE001 - the reference may fail any way it likes
        return err
    outs = [out] if prim.n_outputs == 1 else list(out)  # None: a variable number
    return [np.asarray(o) for o in outs]


def _same(first, second):
    return len(first) == len(second) and all(
        a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        for a, b in zip(first, second))


# Ops computed through a matrix factorization: their rounding grows with the condition
# number, so a GPU's LU or Cholesky agrees with LAPACK's to about sqrt(eps), not to ulps.
FACTORIZING_OPS = {"MatrixDeterminant", "LogMatrixDeterminant", "MatrixInverse", "MatrixSolve",
                   "Cholesky"}


# Ops whose NumPy forward picks a faster formulation than the other backends run
# (ops/conv_kernels.py, ops/pool_kernels.py): the same sums in another order, so on
# every other backend they agree with NumPy's answer to rounding, not bit for bit.
REORDERED_OPS = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "AvgPool"}


def _assert_matches_numpy(value, want, err_msg, factorized=False, reordered=False):
    """Bit for bit on the host backends; within a few ulps on a GPU.

    CUDA's transcendental functions (sin, erf, tanh, ...) and its linear
    algebra are accurate to an ulp or two but not NumPy's bits, and the GPU
    may flush subnormals to zero: there, floats must agree to 4 ulps of the
    value, or to one ulp of 1 near zero (erfc's tail, a flushed subnormal);
    results of a factorization to sqrt(eps) (``FACTORIZING_OPS``).
    """
    if reordered and backend.get_backend() != "numpy" and want.dtype.kind in "fc":
        eps = np.finfo(want.dtype).eps
        finite = np.abs(want[np.isfinite(want)])
        scale = float(finite.max()) if finite.size else 1.0
        np.testing.assert_allclose(value, want, rtol=64 * eps, atol=64 * eps * max(scale, 1.0),
                                   equal_nan=True, err_msg=err_msg)
        return
    if backend.get_backend() in ("numpy", "strict") or want.dtype.kind not in "fc":
        np.testing.assert_array_equal(value, want, err_msg=err_msg)
        return
    eps = np.finfo(want.dtype).eps
    rtol = np.sqrt(eps) if factorized else 4 * eps
    np.testing.assert_allclose(value, want, rtol=rtol, atol=eps, equal_nan=True, err_msg=err_msg)


def _as_a_gpu_may_read_them(prim, arrays, params, values, expected):
    """On a GPU, NumPy's answer for the inputs as CUDA may read them, where that one matches.

    CuPy's CUDA kernels flush subnormal float
    inputs to zero, so ``1e-45 * inf`` is NaN there, not inf; and CuPy's
    division reads -0.0 as +0.0 (``1 / -0.0`` is +inf). The answer for the
    inputs so read is accepted when it is the one the device gave; otherwise
    NumPy's answer for the inputs as given stands. The host backends always
    keep the latter.
    """
    floats = [a for a in arrays if a.dtype.kind == "f"]
    if backend.get_backend() in ("numpy", "strict") or not any(
            np.any(np.abs(a) < np.finfo(a.dtype).tiny) for a in floats):
        return expected
    read = [np.where(np.abs(a) < np.finfo(a.dtype).tiny, np.zeros((), a.dtype), a)
            if a.dtype.kind == "f" else a for a in arrays]
    again = _reference(prim, read, params)
    if isinstance(again, Exception) or len(again) != len(values):
        return expected
    try:
        for value, want in zip(values, again):
            _assert_matches_numpy(value, want, "", factorized=prim.name in FACTORIZING_OPS)
    except AssertionError:
        return expected
    return again


def _is_random(prim, arrays, params, first, tries=5):
    """Whether the NumPy forward gives different values on a rerun (a random op)."""
    for _ in range(tries):
        again = _reference(prim, arrays, params)
        if isinstance(again, Exception) or not _same(first, again):
            return True
    return False


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(max_examples=20, deadline=timedelta(seconds=5), derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate, Phase.shrink],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(data=st.data())
def test_op_matches_numpy_or_raises_a_documented_error(name, data):
    prim = REGISTRY[name]
    try:
        testing.op_cases(prim)
    except ValueError:
        pytest.skip(f"{name} declares no cases (reported by the metadata test)")
    arrays, params, own_shapes = data.draw(_call(prim), label="inputs, params, own shapes")
    described = [f"{a.dtype}{a.shape}" for a in arrays]
    with warnings.catch_warnings(), np.errstate(all="ignore"), _alarm(HANG_SECONDS):
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = _reference(prim, arrays, params)
        try:
            result = prim(*[ad.constant(a) for a in arrays], **params)
        except DOCUMENTED_ERRORS:
            return
        except Exception as err:
            pytest.fail(f"{name}{tuple(described)} {params}: raised {type(err).__name__}: {err} "
                        f"(only InvalidArgumentError, TypeError or ValueError are documented)")
        if getattr(prim, "host_checks", None) and backend.get_backend() != "numpy" and (
                isinstance(expected, Exception)
                or not all(np.isfinite(a).all() for a in arrays if a.dtype.kind in "fc")):
            # a check that reads values on the host (a device backend skips it), or a
            # non-finite matrix, which a device turns into NaN (tests/autodiff/test_device_semantics)
            return
        assert not isinstance(expected, Exception), \
            f"{name}: the op returned a result where its NumPy forward raised {expected!r}"
        outputs = nest.flatten(result)
        assert len(outputs) == len(expected), \
            f"{name}: {len(outputs)} outputs, NumPy gives {len(expected)}"
        values = [backend.to_numpy(got._value) for got in outputs]   # explicit: any backend
        for value, want in zip(values, expected):
            assert value.shape == want.shape and value.dtype == want.dtype, (
                f"{name}{tuple(described)}: got {value.dtype}{value.shape}, "
                f"NumPy gives {want.dtype}{want.shape}")
        if not _same(values, expected) and not _is_random(prim, arrays, params, expected):
            expected = _as_a_gpu_may_read_them(prim, arrays, params, values, expected)
            for value, want in zip(values, expected):
                _assert_matches_numpy(value, want, err_msg=f"{name}{tuple(described)}",
                                      factorized=name in FACTORIZING_OPS,
                                      reordered=name in REORDERED_OPS)
        float_dtypes = {a.dtype for a in arrays if a.dtype.kind == "f"}
        if len(float_dtypes) == 1 and "dtype" not in params:
            (dtype,) = float_dtypes
            for got in outputs:
                assert got._value.dtype.kind != "f" or got._value.dtype == dtype, (
                    f"{name}{tuple(described)}: a {dtype} input gave a {got._value.dtype} output; "
                    f"ops keep their input's float dtype")
        # Params such as paddings or multiples are written for the case's shapes; with other
        # shapes NumPy may still broadcast them, which the public wrappers rule out first.
        if prim.differentiable and float_dtypes and all(a.dtype.kind == "f" for a in arrays) \
                and (own_shapes or not params):
            _check_gradient_shapes(prim, arrays, params, described)


def _check_gradient_shapes(prim, arrays, params, described):
    tensors = [ad.constant(a) for a in arrays]
    try:
        with ad.GradientTape() as tape:
            tape.watch(tensors)
            outputs = [t for t in nest.flatten(prim(*tensors, **params)) if t.dtype.is_floating]
        grads = tape.gradient(outputs, tensors) if outputs else [None] * len(tensors)
    except DOCUMENTED_ERRORS:
        return
    except Exception as err:
        pytest.fail(f"{prim.name}{tuple(described)}: gradient raised {type(err).__name__}: {err}")
    for i, (x, g) in enumerate(zip(tensors, grads)):
        if g is not None:
            assert tuple(g.shape) == tuple(x.shape) and g.dtype == x.dtype, (
                f"{prim.name}{tuple(described)}: the gradient of input {i} is "
                f"{g.dtype.name}{tuple(g.shape)}, expected {x.dtype.name}{tuple(x.shape)}")
