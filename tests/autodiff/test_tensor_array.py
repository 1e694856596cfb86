"""``ad.TensorArray`` (``autodiff/control_flow/tensor_array.py``) on every backend.

Eagerly an array is a list of tensors, inside ``ad.function`` one buffer
tensor; both must give the same values, and derivatives that agree with
float64 central finite differences (reverse and forward mode, second order).
TensorFlow's side is ``tests/conformance/test_conf_tensor_array.py``.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.testing import check_grads


def fill_and_stack(x):
    """write in an AutoGraph loop, read back the previous element, stack."""
    ta = ad.TensorArray(x.dtype, size=0, dynamic_size=True).write(0, x[0])
    for i in ad.range(1, ad.shape(x)[0]):
        ta = ta.write(i, ta.read(i - 1) * ad.sin(x[i]) + x[i])
    return ta.stack()


def rows_through_while_loop(x):
    """an array of rows carried by ad.while_loop, then concat and gather."""
    n = ad.shape(x)[0]
    ta = ad.TensorArray(x.dtype, size=n, element_shape=[2])

    def body(i, ta):
        return i + 1, ta.write(i, ad.stack([x[i] * x[i], ad.exp(x[i])]))

    _, ta = ad.while_loop(lambda i, ta: i < n, body, (ad.constant(0), ta))
    return ta.concat() + ad.reduce_sum(ta.gather([n - 1, 0]))


def unstack_scatter(x):
    """unstack, scatter over part of a larger array (unwritten rows read as zeros), read."""
    n = ad.shape(x)[0]
    rows = ad.TensorArray(x.dtype, size=n).unstack(ad.tanh(x))
    wide = ad.TensorArray(x.dtype, size=n + 2).scatter(ad.range(n) + 1, x * rows.stack())
    return wide.stack() * rows.read(n - 1)


PROGRAMS = [fill_and_stack, rows_through_while_loop, unstack_scatter]
INPUT = np.array([0.3, -0.8, 1.2, 0.5])


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_eager_traced_and_compiled_give_the_same_values(program, engine_backend):
    traced = ad.function(program, input_signature=[ad.TensorSpec([None], ad.float64)])
    compiled = ad.function(program, input_signature=[ad.TensorSpec([None], ad.float64)],
                           jit_compile=True)
    for n in (4, 2, 3):
        x = ad.constant(INPUT[:n])
        want = program(x).numpy()
        np.testing.assert_allclose(traced(x).numpy(), want, rtol=1e-12)
        np.testing.assert_allclose(compiled(x).numpy(), want, rtol=1e-12)
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_derivatives_agree_with_finite_differences_eager_and_traced(program):
    check_grads(program, [INPUT], order=2, modes=("rev", "fwd"))
    check_grads(ad.function(program), [INPUT], order=2, modes=("rev", "fwd"))


def test_the_readme_example_fills_an_array_in_one_trace_for_every_size():
    @ad.function(input_signature=[ad.TensorSpec([None], ad.float32)])
    def doubled(x):
        ta = ad.TensorArray(ad.float32, size=0, dynamic_size=True)
        for i in ad.range(ad.shape(x)[0]):
            ta = ta.write(i, x[i] * 2.0)
        return ta.stack()

    for n in (3, 5, 0):   # a trace at size 0 would run x[0] (loop bodies trace once)
        x = np.arange(n, dtype=np.float32)
        got = doubled(ad.constant(x))
        assert got.dtype == ad.float32 and got.shape == (n,)
        np.testing.assert_array_equal(got.numpy(), x * 2.0)
    assert doubled.experimental_get_tracing_count() == 1


def test_a_traced_write_past_a_fixed_end_raises_on_the_host_and_is_dropped_on_a_device(
        engine_backend):
    @ad.function(input_signature=[ad.TensorSpec([None], ad.float32)])
    def last_at_size(x):
        return ad.TensorArray(ad.float32, size=3).write(ad.shape(x)[0] - 1, 1.0).stack()

    np.testing.assert_array_equal(last_at_size(ad.zeros([2])).numpy(), [0.0, 1.0, 0.0])
    if engine_backend == "numpy":
        with pytest.raises(ad.errors.InvalidArgumentError, match="not in"):
            last_at_size(ad.zeros([4]))
    else:   # as the engine's traced gather and scatter do on a device: no copy to check
        np.testing.assert_array_equal(last_at_size(ad.zeros([4])).numpy(), [0.0, 0.0, 0.0])


def test_eager_errors_name_the_index_the_size_and_the_dtypes():
    ta = ad.TensorArray(ad.float32, size=2)
    with pytest.raises(ad.errors.OutOfRangeError, match="index 2 .* size is: 2"):
        ta.write(2, 1.0)
    with pytest.raises(ad.errors.InvalidArgumentError, match="float32 .* float64"):
        ta.write(0, ad.constant(1.0, ad.float64))
    with pytest.raises(ValueError, match=r"\(\(3,\)\), expected \(\(2,\)\)"):
        ta.write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="element shape"):
        ad.TensorArray(ad.float32, size=2).read(1)


def test_a_tensor_array_carried_through_a_python_while_inside_a_function_keeps_its_writes():
    @ad.function
    def squares(n):
        ta = ad.TensorArray(ad.int32, size=0, dynamic_size=True)
        i = ad.constant(0)
        while i < n:
            ta = ta.write(i, i * i)
            i += 1
        return ta.stack(), ta.size()

    values, size = squares(ad.constant(4))
    np.testing.assert_array_equal(values.numpy(), [0, 1, 4, 9])
    assert int(size) == 4 and values.dtype == ad.int32
    values, size = squares(ad.constant(6))
    np.testing.assert_array_equal(values.numpy(), [0, 1, 4, 9, 16, 25])
    assert squares.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("jit", [False, True])
def test_an_array_written_under_a_tensor_if_is_carried(jit):
    @ad.function(jit_compile=jit)
    def odd_ones(x):
        ta = ad.TensorArray(ad.float32, size=2)
        if ad.reduce_sum(x) > 0:
            ta = ta.write(0, x)     # the else branch leaves it unwritten: zeros of x's shape
        return ta.stack()

    np.testing.assert_array_equal(odd_ones(ad.constant([1.0, 2.0])).numpy(), [[1, 2], [0, 0]])
    np.testing.assert_array_equal(odd_ones(ad.constant([-1.0, 0.0])).numpy(), [[0, 0], [0, 0]])
    assert odd_ones.experimental_get_tracing_count() == 1
