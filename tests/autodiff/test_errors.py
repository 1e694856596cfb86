"""Bad input gets the error TensorFlow 2 raises, with a message that names the op.

API.md, "Errors": ``ad.errors.InvalidArgumentError`` (a ValueError) for bad
shapes, dtypes and arguments to ops, naming the op type and what was wrong;
TypeError where TensorFlow raises TypeError.
"""

import numpy as np
import pytest

import autodiff as ad


def _mentions_shape(message, shape):
    """Whether ``message`` shows ``shape`` as a tuple ``(2, 3)`` or a list ``[2, 3]``."""
    return str(tuple(shape)) in message or str(list(shape)) in message


def _raises_invalid_argument(fn):
    with pytest.raises(ad.errors.InvalidArgumentError) as info:
        fn()
    assert isinstance(info.value, ValueError)
    return str(info.value)


# ---- dtypes ------------------------------------------------------------------------

@pytest.mark.parametrize("op_type, fn", [
    ("AddV2", lambda a, b: a + b), ("Sub", lambda a, b: a - b), ("Mul", lambda a, b: a * b),
    ("RealDiv", lambda a, b: a / b)])
def test_float32_with_float64_names_the_op_and_both_dtypes(op_type, fn):
    message = _raises_invalid_argument(
        lambda: fn(ad.constant([1.0, 2.0]), ad.constant([1.0, 2.0], dtype=ad.float64)))
    assert op_type in message
    assert "float32" in message and "float64" in message


def test_int32_with_float32_tensor_names_both_dtypes():
    message = _raises_invalid_argument(lambda: ad.add(ad.constant(1), ad.constant(1.0)))
    assert "AddV2" in message
    assert "int32" in message and "float32" in message


def test_multiply_python_int_by_python_float_is_refused():
    # TensorFlow converts 1 to int32, then fails to convert 3.0 to int32: a TypeError
    with pytest.raises(TypeError) as info:
        ad.multiply(1, 3.0)
    message = str(info.value)
    assert "Mul" in message
    assert "int32" in message and "float32" in message


def test_matmul_with_mixed_dtypes_names_matmul_and_both_dtypes():
    a = ad.ones([2, 2])
    b = ad.ones([2, 2], dtype=ad.float64)
    message = _raises_invalid_argument(lambda: ad.matmul(a, b))
    assert "MatMul" in message
    assert "float32" in message and "float64" in message


def test_python_float_with_int_tensor_is_a_type_error():
    # TensorFlow: "Cannot convert 2.5 to EagerTensor of dtype int32"
    with pytest.raises(TypeError):
        ad.constant(3) * 2.5


def test_cast_to_an_unknown_dtype_is_a_type_error():
    with pytest.raises(TypeError):
        ad.cast(ad.constant(1.0), "not-a-dtype")


# ---- shapes --------------------------------------------------------------------------

def test_adding_incompatible_shapes_names_add_and_both_shapes():
    message = _raises_invalid_argument(
        lambda: ad.constant([1.0, 2.0]) + ad.constant([1.0, 2.0, 3.0]))
    assert "AddV2" in message
    assert _mentions_shape(message, (2,)) and _mentions_shape(message, (3,))


def test_multiplying_incompatible_matrices_names_mul_and_both_shapes():
    message = _raises_invalid_argument(lambda: ad.ones([2, 3]) * ad.ones([3, 2]))
    assert "Mul" in message
    assert _mentions_shape(message, (2, 3)) and _mentions_shape(message, (3, 2))


def test_matmul_size_mismatch_names_matmul_and_both_shapes():
    message = _raises_invalid_argument(lambda: ad.matmul(ad.ones([2, 3]), ad.ones([4, 5])))
    assert "MatMul" in message
    assert _mentions_shape(message, (2, 3)) and _mentions_shape(message, (4, 5))


def test_matmul_operator_size_mismatch_names_matmul():
    message = _raises_invalid_argument(lambda: ad.ones([2, 3]) @ ad.ones([2, 3]))
    assert "MatMul" in message


def test_matmul_of_vectors_names_matmul():
    message = _raises_invalid_argument(lambda: ad.matmul(ad.ones([3]), ad.ones([3])))
    assert "MatMul" in message


def test_reshape_to_a_different_size_names_reshape():
    message = _raises_invalid_argument(lambda: ad.reshape(ad.ones([6]), [4, 2]))
    assert "Reshape" in message
    assert "6" in message


def test_transpose_with_a_bad_permutation_names_transpose():
    message = _raises_invalid_argument(lambda: ad.transpose(ad.ones([2, 3]), [0, 0]))
    assert "Transpose" in message


@pytest.mark.parametrize("fn, op_type, axis", [
    (ad.reduce_sum, "Sum", 2), (ad.reduce_mean, "Mean", -3), (ad.reduce_max, "Max", 5),
    (ad.reduce_min, "Min", 2)])
def test_reduction_axis_out_of_range_names_the_op(fn, op_type, axis):
    message = _raises_invalid_argument(lambda: fn(ad.ones([2, 3]), axis=axis))
    assert op_type in message
    assert str(axis) in message


def test_constant_with_incompatible_shape_is_a_type_error():
    with pytest.raises(TypeError):
        ad.constant([1.0, 2.0, 3.0], shape=[2, 2])


def test_assigning_a_wrong_shape_to_a_variable_is_a_value_error():
    v = ad.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        v.assign(ad.constant([[1.0, 2.0]]))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_float_of_a_vector_is_a_type_error():
    with pytest.raises(TypeError):
        float(ad.constant([1.0, 2.0]))


# ---- tapes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("not_a_tensor", [3.0, "x", [1.0, 2.0], np.ones(2)])
def test_watching_a_non_tensor_is_a_value_error(not_a_tensor):
    with ad.GradientTape() as tape:
        with pytest.raises(ValueError):
            tape.watch(not_a_tensor)


def test_target_of_none_is_a_type_error():
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
    with pytest.raises(TypeError):
        tape.gradient(None, x)


def test_unknown_unconnected_gradients_is_a_value_error():
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        tape.gradient(y, x, unconnected_gradients="sometimes")


def test_second_gradient_on_a_non_persistent_tape_is_a_runtime_error():
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_gradients_outside_a_tape_is_a_runtime_error():
    with pytest.raises(RuntimeError):
        ad.gradients(ad.constant(1.0), ad.constant(1.0))


# ---- an op with no gradient registered ---------------------------------------------------

def _my_op_no_grad():
    return ad.Primitive("MyOpNoGrad", lambda xp, x: x * 2, None, register=False)


def test_differentiating_through_an_op_without_gradient_raises_lookup_error_naming_it():
    my_op = _my_op_no_grad()
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = my_op(x)
        z = ad.reduce_sum(y * y)
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    with pytest.raises(LookupError) as info:
        tape.gradient(z, x)
    assert "MyOpNoGrad" in str(info.value)


def test_op_without_gradient_off_the_path_does_not_raise():
    my_op = _my_op_no_grad()
    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        unused = my_op(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0
    assert unused.numpy() == 6.0


def test_op_without_gradient_behind_stop_gradient_does_not_raise():
    my_op = _my_op_no_grad()
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * ad.stop_gradient(my_op(x))
    assert tape.gradient(y, x).numpy() == 6.0


def test_unregistered_one_off_op_is_not_in_the_registry():
    _my_op_no_grad()
    from autodiff.registry import REGISTRY
    assert "MyOpNoGrad" not in REGISTRY


def test_registering_two_primitives_with_one_name_raises_key_error():
    with pytest.raises(KeyError):
        ad.Primitive("Mul", lambda xp, x, y: x * y, None)


# ---- arguments of the tape's entry points --------------------------------------------------

@pytest.mark.parametrize("bad,error", [(0, ValueError), (-3, ValueError), ("a", TypeError),
                                       (1.5, TypeError)])
def test_jacobian_parallel_iterations_must_be_a_positive_int(bad, error):
    x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(error, match="jacobian: parallel_iterations"):
        tape.jacobian(y, x, parallel_iterations=bad)
    with pytest.raises(error, match="batch_jacobian: parallel_iterations"):
        tape.batch_jacobian(y, x, parallel_iterations=bad)


@pytest.mark.parametrize("params,error,message", [
    ([5], ValueError, "params names argument 5"),
    ("a", TypeError, "list of argument positions"),
    ([0.5], TypeError, "must hold ints"),
])
def test_gradients_function_checks_params(params, error, message):
    with pytest.raises(error, match=message):
        ad.gradients_function(lambda a: a * a, params=params)(ad.constant(1.0))


def test_gradients_function_and_custom_gradient_need_a_callable():
    with pytest.raises(TypeError, match="gradients_function: f must be callable"):
        ad.gradients_function(3)
    with pytest.raises(TypeError, match="custom_gradient decorates a function"):
        ad.custom_gradient(3)


@pytest.mark.parametrize("shape", ["bad", [1.5], ["a", 2]])
def test_tensor_spec_names_itself_and_the_bad_shape(shape):
    with pytest.raises(TypeError, match=r"TensorSpec: shape must be a list of ints"):
        ad.TensorSpec(shape)
