"""The strict backend's arrays behave like a device library's: no implicit way to NumPy.

If one of these passed silently, the engine suite on the strict backend
would prove nothing: each refusal below is what catches a stray ``np.``
call or a hidden copy to the host on a machine with no GPU.
"""

import numpy as np
import pytest

from autodiff import _strict as sx

IMPLICIT = "Implicit conversion to a NumPy array is not allowed"


@pytest.fixture
def a():
    return sx.asarray(np.array([1.0, -2.0, 3.0], dtype=np.float32))


@pytest.mark.parametrize("convert", [np.asarray, np.array, lambda a: a.__array__(),
                                     lambda a: np.asarray(a, dtype=np.float64)])
def test_implicit_conversion_to_numpy_raises_type_error(a, convert):
    with pytest.raises(TypeError, match=IMPLICIT):
        convert(a)


@pytest.mark.parametrize("call", [np.sin, np.sum, lambda a: np.reshape(a, (3, 1)),
                                  lambda a: np.concatenate([a, a]),
                                  lambda a: np.where(a > 0, a, 0)])
def test_numpy_functions_on_a_strict_array_raise_type_error(a, call):
    with pytest.raises(TypeError):
        call(a)


@pytest.mark.parametrize("mix", [lambda a, h: a + h, lambda a, h: h + a, lambda a, h: a * h,
                                 lambda a, h: h @ a, lambda a, h: sx.maximum(a, h),
                                 lambda a, h: sx.where(a > 0, a, h), lambda a, h: sx.stack([a, h])])
def test_mixing_with_a_numpy_array_raises_type_error(a, mix):
    with pytest.raises(TypeError):
        mix(a, np.ones(3, dtype=np.float32))


@pytest.mark.parametrize("convert", [float, int, bool, complex, lambda a: range(a)])
def test_python_numbers_need_an_explicit_item(convert):
    scalar = sx.asarray(np.float32(2.0))
    with pytest.raises(TypeError, match=r"\.item\(\)"):
        convert(scalar)
    assert scalar.item() == 2.0


def test_get_copies_to_the_host(a):
    host = a.get()
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, [1.0, -2.0, 3.0])
    host[0] = 99.0
    assert a.get()[0] == 1.0


def test_asarray_copies_a_host_array_to_the_device():
    host = np.array([1.0, 2.0])
    device = sx.asarray(host)
    host[0] = 99.0
    assert type(device) is sx.StrictArray
    assert device.get()[0] == 1.0


def test_python_and_numpy_scalars_are_fine_operands(a):
    np.testing.assert_array_equal((2 * a + np.float32(1.0) - a / 2.0).get(), [2.5, -2.0, 5.5])
    assert (np.float32(2.0) * a).dtype == np.float32


def test_reductions_return_zero_d_device_arrays_not_numpy_scalars(a):
    total = sx.sum(a)
    assert type(total) is sx.StrictArray and total.shape == ()
    assert type(a[0]) is sx.StrictArray
    assert all(type(row) is sx.StrictArray for row in a)


def test_indexing_and_setitem_stay_on_the_device(a):
    out = sx.zeros((2, 3), dtype=np.float32)
    out[sx.arange(2), sx.asarray([0, 2])] = 5.0
    out[1] = a
    np.testing.assert_array_equal(out.get(), [[5.0, 0.0, 0.0], [1.0, -2.0, 3.0]])
    np.testing.assert_array_equal(a[sx.asarray([2, 0])].get(), [3.0, 1.0])
    with pytest.raises(TypeError):
        out[0] = np.ones(3)   # a host array written into device memory


def test_add_at_scatters_on_the_device():
    out = sx.zeros(3)
    sx.add.at(out, sx.asarray([0, 0, 2]), sx.asarray([1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(out.get(), [3.0, 0.0, 5.0])
    with pytest.raises(TypeError):
        sx.add.at(np.zeros(3), np.array([0]), 1.0)


def test_in_place_operators_write_in_place(a):
    alias = a
    a += 1.0
    assert alias is a
    np.testing.assert_array_equal(alias.get(), [2.0, -1.0, 4.0])


def test_no_transfers_forbids_even_explicit_copies(a):
    with sx.no_transfers():
        b = sx.sin(a) * 2   # device work is fine
        with pytest.raises(TypeError, match="no_transfers"):
            b.get()
        with pytest.raises(TypeError, match="no_transfers"):
            b[0].item()
    assert b.get().shape == (3,)


def test_the_namespace_lacks_what_it_does_not_mirror():
    with pytest.raises(AttributeError):
        sx.fft   # a forward needing it must add it here, knowing CuPy has it
