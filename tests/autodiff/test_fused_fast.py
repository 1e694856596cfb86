"""The fused program's one-call function (``autodiff/compiler/fused/fast.py``).

From its second call on, ``ad.function(f, jit_compile=True, experimental_fuse=True)``
runs one generated Python function for the traced shapes, which calls numba's
compiled function directly. Every call here is compared with the NumPy program
(``jit_compile=True`` alone) bit for bit; then each kind of call the function
was not written for (another layout, a read-only array, a Variable, a tape
recording, another backend, a guard that fails) must take the ordinary path and
give the ordinary results, and the trace cache and retrace counts must be what
they were without it.
"""

import concurrent.futures
import os
import sys

import numpy as np
import pytest

import autodiff as ad
from autodiff import backend, nest
from autodiff.compiler import fused
from benchmarks import workloads

if os.environ.get("TAPESCHOOL_WITHOUT_NUMBA"):
    sys.modules["numba"] = None

pytestmark = pytest.mark.filterwarnings("ignore:experimental_fuse=True needs numba")


def _fuses():
    return fused.available() and backend.get_backend() == "numpy"


def _needs_numba():
    if backend.get_backend() != "numpy":
        pytest.skip("the fused form runs on the NumPy backend only")
    if not fused.available() and not os.environ.get("CI"):
        pytest.skip("numba is not installed (pip install 'tapeschool[fast]')")
    if os.environ.get("TAPESCHOOL_WITHOUT_NUMBA"):
        pytest.skip("numba is hidden")


def chain(x):
    return workloads.w1_autodiff(ad, x, 20)   # W1's chain, 20 steps: (loss, dloss/dx)


def _equal(got, want):
    got, want = nest.flatten(got), nest.flatten(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        if type(b) is not ad.Tensor:
            assert a == b
            continue
        assert type(a) is ad.Tensor and type(a._value) is type(b._value)
        assert a._value.dtype == b._value.dtype and a._value.shape == b._value.shape
        assert backend.to_numpy(a._value).tobytes() == backend.to_numpy(b._value).tobytes()


def _pair(f, **kwargs):
    return (ad.function(f, jit_compile=True, experimental_fuse=True, **kwargs),
            ad.function(f, jit_compile=True, **kwargs))


def _ordinary(fuse, *args):
    """What the ordinary fused path gives (``Program.run``, ``Fused.call``, the dispatchers)."""
    return fuse.get_concrete_function(*args).program().run(list(args), fuse=True)


def test_later_calls_run_the_one_call_function_with_the_same_bits():
    _needs_numba()
    fuse, numpy_program = _pair(chain)
    x = ad.constant(np.linspace(-1, 1, 8).astype(np.float32))
    first = fuse(x)                       # the ordinary path; it makes the function
    concrete = fuse.get_concrete_function(x)
    assert callable(concrete._fast)
    second = fuse(x)                      # found by the trace: ConcreteFunction._run
    assert fuse._fast is concrete._fast
    x2 = ad.constant(np.linspace(-2, 1, 8).astype(np.float32))
    third = fuse(x2)                      # straight from Function.__call__
    _equal(second, first)
    _equal(third, _ordinary(fuse, x2))
    for got, want in ((second, numpy_program(x)), (third, numpy_program(x2))):
        for a, b in zip(got, want):   # sin and cos: numba's, not NumPy's (last bits)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
    assert fuse.experimental_get_tracing_count() == 1
    form = fused.for_program(concrete.program())
    # numba's compiled driver for these types, without its dispatcher; outputs as Tensors
    assert "_run_0_entry(x, " in form.fast_source and "return (Tensor(" in form.fast_source
    assert "x.strides != (4,)" in form.fast_source
    # every output is a new array on every call
    assert not np.shares_memory(second[1]._value, third[1]._value)
    assert "_fused" not in fuse.experimental_get_compiler_ir(x)()


@pytest.mark.parametrize("make", [
    lambda x: x[::2],                                       # strides (8,): not NumPy's own
    lambda x: np.frombuffer(x[:8].tobytes(), np.float32),  # read-only
    lambda x: np.frombuffer(b"\0" + x[:8].tobytes(), np.float32, 8, 1),   # not aligned
], ids=["strided", "read_only", "unaligned"])
def test_an_array_of_another_layout_gives_the_numpy_programs_bits(make):
    if backend.get_backend() != "numpy":
        pytest.skip("NumPy layouts: the strict backend's arrays have none to vary")
    fuse, numpy_program = _pair(chain)
    values = np.linspace(-1, 1, 16).astype(np.float32)
    x = ad.constant(values[:8].copy())
    fuse(x), fuse(x)
    odd = ad.constant(values)
    odd._value = make(values)
    assert odd._value.shape == (8,)
    _equal(fuse(odd), _ordinary(fuse, ad.constant(odd._value.copy())))
    _equal(fuse(x), _ordinary(fuse, x))


def test_other_arguments_take_the_ordinary_path():
    fuse, numpy_program = _pair(lambda x, y: ad.sqrt(x * x + 1.0) * y + 1.0)
    x, y = ad.constant(np.float32([0.5, 1.0, 2.0])), ad.constant(np.float32([3.0, 4.0, 5.0]))
    _equal(fuse(x, y), numpy_program(x, y))
    _equal(fuse(x, y), numpy_program(x, y))
    # a Variable is traced by reference: a second trace, as without the fused form
    v = ad.Variable(np.float32([1.0, 1.0, 1.0]))
    _equal(fuse(x, v), numpy_program(x, v))
    _equal(fuse(x, y=y), numpy_program(x, y=y))        # a keyword: the same trace
    x64 = ad.constant(np.float64([0.5, 1.0, 2.0]))
    _equal(fuse(x64, x64), numpy_program(x64, x64))     # another dtype: another trace
    _equal(fuse(x, y), numpy_program(x, y))
    assert fuse.experimental_get_tracing_count() == numpy_program.experimental_get_tracing_count()
    with pytest.raises(TypeError):
        fuse(x)
    with pytest.raises(TypeError):
        fuse(x, y, x)


def test_a_recording_tape_sees_the_ops():
    fuse, numpy_program = _pair(lambda x: ad.reduce_sum(ad.square(x) * x + 1.0))
    x = ad.constant(np.float32([0.5, 1.0, 2.0]))
    fuse(x), fuse(x)

    def gradient(f):
        with ad.GradientTape() as tape:
            tape.watch(x)
            return tape.gradient(f(x), x)

    gradients = gradient(fuse), gradient(numpy_program)
    assert gradients[0] is not None
    _equal(gradients[0], gradients[1])
    np.testing.assert_allclose(gradients[0].numpy(), 3 * x.numpy() ** 2, rtol=1e-6)
    _equal(fuse(x), numpy_program(x))


def test_output_structures_are_kept():
    def f(x):
        y = ad.sqrt(x) * 2.0 + 1.0
        return {"y": y, "pair": [y * y, (x - y,)], "n": 3}

    fuse, numpy_program = _pair(f)
    x = ad.constant(np.float32([0.5, 1.0, 2.0]))
    for _ in range(3):
        got, want = fuse(x), numpy_program(x)
        assert got.keys() == want.keys() and got["n"] == 3
        _equal(got, want)
    single, plain = _pair(lambda x: [x / (x + 2.0) * 0.5 - x, (x * x + 1.0,)])
    for _ in range(3):
        got = single(x)
        assert type(got) is list and type(got[1]) is tuple
        _equal(got, plain(x))


def _outcome(f, *args):
    try:
        return f(*args)
    except Exception as err:  # noqa: BLE001 - compared below
        return f"{type(err).__name__}: {err}"


def test_on_another_backend_it_does_what_the_numpy_program_does():
    if backend.get_backend() != "numpy":
        pytest.skip("the one-call function exists on the NumPy backend only")
    fuse, numpy_program = _pair(lambda x: ad.sqrt(x * x + 1.0) * 2.0 - x)
    x = ad.constant(np.float32([0.5, -1.0, 2.0]))
    _equal(fuse(x), numpy_program(x))
    _equal(fuse(x), numpy_program(x))
    with ad.use_backend("strict"):   # the program runs on the strict module's functions
        got, want = _outcome(fuse, x), _outcome(numpy_program, x)
    if isinstance(want, str):
        assert got == want
    else:
        _equal(got, want)
    _equal(fuse(x), numpy_program(x))


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_failing_guard_runs_the_exact_program():
    b = ad.Variable(np.array([1.0, 2.0, 2.0], np.float32), name="b")

    def hvp(k, v):
        return ad.functional.hvp(lambda k: ad.reduce_sum(b * k * k * k + k), k, v)

    fuse, numpy_program = _pair(hvp)
    k, v = ad.constant([1.0, 2.0, 3.0]), ad.constant([1.0, 1.0, 1.0])
    for value in ([1.0, 2.0, 2.0], [1.0, np.inf, 2.0], [1.0, 2.0, 2.0]):
        b.assign(np.array(value, np.float32))
        want, eager = numpy_program(k, v), hvp(k, v)
        got = fuse(k, v)
        _equal(got, want)
        np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(eager.numpy()))
    if _fuses():
        form = fused.for_program(fuse.get_concrete_function(k, v).program())
        assert "isfinite(xp.vdot(k, k)):\n        return None" in form.source
        assert "isfinite(xp.vdot(k, k)):\n        return _numpy_program(k, v)" in form.fast_source


def test_the_cache_and_the_retrace_warning_are_unchanged():
    fuse, numpy_program = _pair(lambda x: (x * x - 2.0) * 3.0 - 1.0)
    xs = [ad.constant(np.ones(n, np.float32)) for n in (2, 3, 2, 3, 2)]
    for x in xs:
        _equal(fuse(x), numpy_program(x))
    assert fuse.experimental_get_tracing_count() == 2
    assert [c.structured_input_signature for c in fuse.concrete_functions] == \
        [c.structured_input_signature for c in numpy_program.concrete_functions]
    assert list(fuse._recent) == list(numpy_program._recent)


def test_threads_calling_at_once_get_their_own_results():
    fuse, numpy_program = _pair(chain)
    inputs = [ad.constant(np.linspace(-1, 1, 8).astype(np.float32) * (k + 1)) for k in range(4)]
    wants = [_ordinary(fuse, x) for x in inputs]
    fuse(inputs[0])

    def work(k):
        return [fuse(inputs[k]) for _ in range(20)]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    for k, calls in enumerate(results):
        for got in calls:
            _equal(got, wants[k])
