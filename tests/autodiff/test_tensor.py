"""Tensor, Variable and constant: dtypes, printing, shapes and the Python operators.

Every expected value here is what TensorFlow 2 gives for the same code with
``tf.`` in place of ``ad.`` (API.md, "Values").
"""

import numpy as np
import pytest

import autodiff as ad


# ---- ad.constant: dtype rules ------------------------------------------------

def test_python_float_becomes_float32():
    assert ad.constant(1.0).dtype == ad.float32
    assert ad.constant([1.0, 2.5]).dtype == ad.float32


def test_python_int_becomes_int32():
    t = ad.constant(3)
    assert t.dtype == ad.int32
    assert t.numpy() == 3
    assert ad.constant([1, 2, 3]).dtype == ad.int32


def test_python_int_too_large_for_int32_becomes_int64():
    assert ad.constant(2**40).dtype == ad.int64


def test_python_bool_becomes_bool():
    assert ad.constant(True).dtype == ad.bool


def test_mixed_int_and_float_list_becomes_float32():
    t = ad.constant([1, 2.5])
    assert t.dtype == ad.float32
    np.testing.assert_array_equal(t.numpy(), np.array([1.0, 2.5], np.float32))


@pytest.mark.parametrize("np_dtype, ad_dtype", [
    (np.float64, ad.float64), (np.float32, ad.float32), (np.float16, ad.float16),
    (np.int64, ad.int64), (np.int32, ad.int32), (np.bool_, ad.bool)])
def test_numpy_array_keeps_its_dtype(np_dtype, ad_dtype):
    array = np.array([1, 0, 1], dtype=np_dtype)
    t = ad.constant(array)
    assert t.dtype == ad_dtype
    assert t.numpy().dtype == np_dtype
    np.testing.assert_array_equal(t.numpy(), array)


def test_numpy_scalar_keeps_its_dtype():
    # np.float64 subclasses Python float, but TensorFlow keeps float64 for it
    assert ad.constant(np.float64(2.0)).dtype == ad.float64
    assert ad.constant(np.int64(2)).dtype == ad.int64
    assert ad.constant(np.float32(2.0)).dtype == ad.float32


def test_constant_with_dtype_converts_python_int_to_float():
    t = ad.constant(1, dtype=ad.float32)
    assert t.dtype == ad.float32
    assert t.numpy() == 1.0
    assert ad.constant([1, 2], dtype=ad.float64).dtype == ad.float64


def test_constant_refuses_lossy_float_to_int_conversion():
    with pytest.raises(TypeError):
        ad.constant(1.5, dtype=ad.int32)


def test_constant_shape_fills_a_single_value():
    t = ad.constant(0, shape=[2, 3])
    assert t.shape == (2, 3)
    assert t.dtype == ad.int32
    np.testing.assert_array_equal(t.numpy(), np.zeros((2, 3), np.int32))
    np.testing.assert_array_equal(ad.constant(7.0, shape=(2,)).numpy(), [7.0, 7.0])


def test_constant_shape_reshapes_a_matching_number_of_values():
    t = ad.constant([1, 2, 3, 4, 5, 6], shape=[2, 3])
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [4, 5, 6]])


def test_constant_with_incompatible_shape_raises_type_error():
    with pytest.raises(TypeError):
        ad.constant([1.0, 2.0, 3.0], shape=[2, 2])


def test_constant_accepts_a_name():
    assert ad.constant(3.0, name="x3").numpy() == 3.0


# ---- no implicit casting -------------------------------------------------------

def test_adding_float32_and_float64_tensors_raises_invalid_argument_naming_op_and_dtypes():
    x32 = ad.constant(1.0)
    x64 = ad.constant(1.0, dtype=ad.float64)
    with pytest.raises(ad.errors.InvalidArgumentError) as info:
        x32 + x64
    message = str(info.value)
    assert "AddV2" in message
    assert "float32" in message and "float64" in message


def test_invalid_argument_error_is_a_value_error():
    assert issubclass(ad.errors.InvalidArgumentError, ValueError)
    with pytest.raises(ValueError):
        ad.constant(1.0) * ad.constant(1.0, dtype=ad.float64)


def test_int_tensor_times_float_tensor_raises():
    with pytest.raises(ad.errors.InvalidArgumentError):
        ad.constant(2) * ad.constant(2.0)


def test_multiply_python_int_and_python_float_raises_naming_int32_and_float32():
    with pytest.raises(TypeError) as info:  # as TensorFlow: 3.0 cannot become an int32
        ad.multiply(1, 3.0)
    message = str(info.value)
    assert "Mul" in message
    assert "int32" in message and "float32" in message


@pytest.mark.parametrize("dtype", [ad.float16, ad.float32, ad.float64])
def test_python_scalar_takes_the_float_tensors_dtype(dtype):
    x = ad.constant([1.0, 2.0], dtype=dtype)
    for result in (x + 1, 1 + x, x * 2, 2 * x, x - 1.5, 1.5 - x, x / 2, x ** 2):
        assert result.dtype == dtype
    np.testing.assert_allclose((x + 1).numpy(), [2.0, 3.0])


def test_python_int_takes_an_int64_tensors_dtype():
    x = ad.constant(np.array([1, 2], np.int64))
    assert (x * 3).dtype == ad.int64
    np.testing.assert_array_equal((x * 3).numpy(), [3, 6])


def test_multiply_python_int_by_float_tensor_gives_float32():
    x = ad.constant(3.0)
    result = ad.multiply(1, x)
    assert result.dtype == ad.float32
    assert result.numpy() == 3.0


# ---- printing -------------------------------------------------------------------

def test_print_of_scalar_tensor():
    assert str(ad.constant(6.0)) == "ad.Tensor(6.0, shape=(), dtype=float32)"


def test_repr_of_scalar_tensor():
    assert repr(ad.constant(6.0)) == "<ad.Tensor: shape=(), dtype=float32, numpy=6.0>"


def test_print_and_repr_of_vector_tensor():
    t = ad.constant([1.0, 2.0])
    assert str(t) == "ad.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert repr(t) == "<ad.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"


def test_print_of_int_tensor():
    assert str(ad.constant(3)) == "ad.Tensor(3, shape=(), dtype=int32)"


def test_print_of_matrix_starts_the_values_on_a_new_line():
    t = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    assert str(t) == "ad.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"


def test_dtype_prints_as_tensorflow_does():
    assert str(ad.float32) == "<dtype: 'float32'>"
    assert ad.float32.name == "float32"


# ---- shapes ---------------------------------------------------------------------------

def test_tensor_shape_equals_tuples_and_lists():
    t = ad.constant(np.zeros((7, 10), np.float32))
    assert t.shape == (7, 10)
    assert t.shape == [7, 10]
    assert t.shape != (7, 11)
    assert t.shape != [10, 7]
    assert t.shape[0] == 7
    assert t.ndim == 2
    assert ad.constant(1.0).shape == ()
    assert ad.constant(1.0).shape == []


def test_tensor_shape_as_list():
    assert ad.constant(np.zeros((2, 3))).shape.as_list() == [2, 3]


# ---- operators give NumPy's values ------------------------------------------------------

A = np.array([[1.0, -2.0], [3.0, 4.5]], np.float32)
B = np.array([[0.5, 2.0], [-1.0, 3.0]], np.float32)


@pytest.mark.parametrize("name, op", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("matmul", lambda a, b: a @ b),
    ("pow", lambda a, b: abs(a) ** b)])
def test_binary_operator_matches_numpy(name, op):
    got = op(ad.constant(A), ad.constant(B))
    assert isinstance(got, ad.Tensor)
    assert got.dtype == ad.float32
    np.testing.assert_allclose(got.numpy(), op(A, B), rtol=1e-6)


@pytest.mark.parametrize("op", [
    lambda a: a + 2, lambda a: 2 + a, lambda a: a - 2, lambda a: 2 - a, lambda a: a * 2,
    lambda a: 2 * a, lambda a: a / 2, lambda a: 2 / a, lambda a: a ** 2, lambda a: 2 ** a,
    lambda a: -a, lambda a: abs(a)])
def test_operator_with_python_scalar_matches_numpy(op):
    got = op(ad.constant(A))
    assert got.dtype == ad.float32
    np.testing.assert_allclose(got.numpy(), op(A), rtol=1e-6)


@pytest.mark.parametrize("op", [
    lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b,
    lambda a, b: a == b, lambda a, b: a != b])
def test_comparison_matches_numpy(op):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([2.0, 2.0, 2.0], np.float32)
    got = op(ad.constant(a), ad.constant(b))
    assert got.dtype == ad.bool
    np.testing.assert_array_equal(got.numpy(), op(a, b))


def test_comparison_with_python_scalar():
    np.testing.assert_array_equal((ad.constant([1.0, 3.0]) > 2).numpy(), [False, True])
    assert bool(ad.constant(1.0) > 0.0)


@pytest.mark.parametrize("key", [
    0, -1, (0, 1), (1, -1), slice(1, None), slice(None, None, -1),
    (slice(None), 0), (Ellipsis, 1), (slice(0, 1), slice(1, 2))])
def test_indexing_and_slicing_match_numpy(key):
    got = ad.constant(A)[key]
    np.testing.assert_array_equal(got.numpy(), A[key])
    assert got.shape == A[key].shape


def test_chained_indexing():
    t = ad.constant(A)
    assert t[1][0].numpy() == 3.0


def test_tensor_is_immutable():
    t = ad.constant([1.0, 2.0])
    with pytest.raises(TypeError):
        t[0] = 5.0


def test_float_of_scalar_tensor():
    value = float(ad.constant(2.5))
    assert type(value) is float
    assert value == 2.5
    assert int(ad.constant(7)) == 7


def test_float_of_non_scalar_tensor_raises_type_error():
    with pytest.raises(TypeError):
        float(ad.constant([1.0, 2.0]))


def test_numpy_returns_a_copy_with_the_tensors_values():
    t = ad.constant([1.0, 2.0])
    array = t.numpy()
    assert isinstance(array, np.ndarray)
    array[0] = 99.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_numpy_of_scalar_is_a_numpy_scalar():
    value = ad.constant(6.0).numpy()
    assert value == 6.0
    assert np.ndim(value) == 0
    assert value.dtype == np.float32


def test_cast_changes_dtype():
    t = ad.cast(ad.constant([1.7, -2.3]), ad.int32)
    assert t.dtype == ad.int32
    np.testing.assert_array_equal(t.numpy(), [1, -2])
    assert ad.cast(ad.constant(1), ad.float64).dtype == ad.float64


# ---- Variable --------------------------------------------------------------------------------

def test_variable_name_gets_tensorflow_suffix():
    assert ad.Variable(3.0, name="x0").name == "x0:0"
    assert ad.Variable(3.0).name == "Variable:0"


def test_variable_value_dtype_and_shape():
    v = ad.Variable([[1.0, 2.0]])
    assert v.dtype == ad.float32
    assert v.shape == (1, 2)
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0]])
    assert ad.Variable(1).dtype == ad.int32
    assert ad.Variable(1.0, dtype=ad.float64).dtype == ad.float64


def test_variable_trainable_defaults_to_true():
    assert ad.Variable(1.0).trainable is True
    assert ad.Variable(1.0, trainable=False).trainable is False


def test_variable_assign():
    v = ad.Variable([1.0, 2.0])
    v.assign([5.0, 6.0])
    np.testing.assert_array_equal(v.numpy(), [5.0, 6.0])


def test_variable_assign_add_and_assign_sub():
    v = ad.Variable(1.0)
    v.assign_add(2.0)
    assert v.numpy() == 3.0
    v.assign_sub(0.5)
    assert v.numpy() == 2.5
    v.assign_add(ad.constant(1.0))
    assert v.numpy() == 3.5


def test_variable_assign_keeps_dtype():
    v = ad.Variable(1.0, dtype=ad.float64)
    v.assign(2)
    assert v.dtype == ad.float64
    assert v.numpy() == 2.0


def test_variable_assign_with_wrong_shape_raises():
    v = ad.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_earlier_reads_of_a_variable_keep_their_value_after_assign():
    v = ad.Variable(1.0)
    doubled = v * 2
    v.assign(10.0)
    assert doubled.numpy() == 2.0
    assert (v * 2).numpy() == 20.0


def test_variable_in_arithmetic_gives_a_plain_tensor():
    v = ad.Variable(2.0)
    result = v + 1.0
    assert isinstance(result, ad.Tensor)
    assert not isinstance(result, ad.Variable)
    assert result.numpy() == 3.0


def test_variable_operators_match_numpy():
    v = ad.Variable(A)
    np.testing.assert_allclose((v @ v).numpy(), A @ A, rtol=1e-6)
    np.testing.assert_allclose((v * v - v).numpy(), A * A - A, rtol=1e-6)
    np.testing.assert_array_equal(v[0].numpy(), A[0])


def test_variable_from_a_tensor():
    v = ad.Variable(ad.constant([1.0, 2.0]))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    assert v.dtype == ad.float32
