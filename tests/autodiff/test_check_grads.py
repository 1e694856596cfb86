"""check_grads itself: it must pass correct derivatives and catch wrong ones.

A gradient checker that cannot fail is worse than none, so most tests here
build a one-off Primitive (``register=False``) with a deliberately wrong VJP
and assert that the report names the order, the argument and the mismatch.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing
from autodiff.ops.elementwise import cos
from autodiff.registry import Primitive


def _sin_with_rule(rule):
    return Primitive("TestSin", lambda xp, x: xp.sin(x), (rule,), register=False,
                     doc="a sine with a rule under test")


RIGHT_SIN = _sin_with_rule(lambda g, ans, x: g * cos(x))
WRONG_SIN = _sin_with_rule(lambda g, ans, x: g * cos(x) * 1.1)           # 10% too large
IGNORES_G = _sin_with_rule(lambda g, ans, x: cos(x))                     # forgets the cotangent
WRONG_SHAPE = _sin_with_rule(lambda g, ans, x: ad.reduce_sum(g * cos(x)))  # scalar for a vector
# Right first derivative, wrong second: the rule's own derivative is off, because
# stop_gradient hides cos(x)'s dependence on x from an outer tape.
WRONG_SECOND = _sin_with_rule(lambda g, ans, x: g * ad.stop_gradient(cos(x)))


# ---- correct functions pass ----------------------------------------------------------

@pytest.mark.parametrize("order", [1, 2, 3])
def test_correct_composite_functions_pass(order, rng):
    x = rng.uniform(0.5, 1.5, size=(2, 3))
    y = rng.uniform(0.5, 1.5, size=(3,))
    testing.check_grads(lambda a, b: ad.sin(a) * ad.exp(b) / (a + b), [x, y], order=order)
    testing.check_grads(lambda a: ad.reduce_sum(ad.tanh(a) ** 2, axis=1), [x], order=order)
    testing.check_grads(lambda a, b: ad.matmul(a, ad.reshape(b, (3, 1))), [x, y], order=order)


def test_a_correct_one_off_primitive_passes_to_third_order():
    testing.check_grads(RIGHT_SIN, [np.array([0.3, -1.2, 2.0])], order=3)


def test_python_numbers_and_scalars_are_arguments():
    testing.check_grads(lambda x, y: x * x * y, [1.5, -2.0], order=3)
    testing.check_grads(ad.sin, 0.7, order=2)


def test_nested_outputs_are_all_checked():
    testing.check_grads(lambda x: {"s": ad.sin(x), "pair": (x * x, ad.exp(x))},
                        [np.array([0.1, 0.2])], order=2)


def test_integer_arguments_are_held_fixed():
    mask = np.array([True, False, True])
    testing.check_grads(lambda x, m: ad.where(m, ad.sin(x), x * x), [np.ones(3), mask], order=2)


def test_zero_size_arguments_pass():
    testing.check_grads(ad.sin, [np.zeros((0, 3))], order=2)


def test_an_output_that_does_not_depend_on_the_input_passes():
    testing.check_grads(lambda x, y: ad.sin(y), [1.0, 2.0], order=2)


# ---- wrong derivatives fail, with a report -------------------------------------------

def test_a_wrong_first_derivative_is_caught_and_reported():
    with pytest.raises(AssertionError) as info:
        testing.check_grads(WRONG_SIN, [np.array([[0.5, 1.0], [0.2, -0.3]])], order=1)
    message = str(info.value)
    assert "first derivative" in message
    assert "argument 0" in message and "shape (2, 2)" in message
    assert "mismatch: absolute" in message and "relative" in message
    assert "worst element" in message
    assert "tape <u, J v> = " in message and "finite differences = " in message


def test_the_report_gives_the_true_relative_error():
    with pytest.raises(AssertionError, match=r"relative (0\.0909|0\.1)"):
        testing.check_grads(lambda x: WRONG_SIN(x), [0.5], order=1)


def test_a_rule_that_ignores_its_cotangent_is_caught():
    with pytest.raises(AssertionError, match="first derivative"):
        testing.check_grads(IGNORES_G, [np.array([0.5, 1.0])], order=1)


def test_a_wrong_second_derivative_is_caught_at_order_two():
    testing.check_grads(WRONG_SECOND, [np.array([0.5, 1.0])], order=1)
    with pytest.raises(AssertionError, match="order-2 derivative") as info:
        testing.check_grads(WRONG_SECOND, [np.array([0.5, 1.0])], order=2)
    assert "mismatch: absolute" in str(info.value)


def test_the_failing_argument_is_named():
    def f(x, y):
        return x * WRONG_SIN(y)

    with pytest.raises(AssertionError) as info:
        testing.check_grads(f, [np.array([1.0, 2.0]), np.array([0.3, 0.4])], order=1)
    message = str(info.value)
    assert "argument 1: shape (2,)" in message
    assert "argument 0:" not in message


def test_a_gradient_of_the_wrong_shape_is_reported_with_both_shapes():
    with pytest.raises(AssertionError) as info:
        testing.check_grads(WRONG_SHAPE, [np.array([0.5, 1.0, 1.5])], order=1)
    message = str(info.value)
    assert "shape ()" in message and "shape (3,)" in message


def test_a_nan_gradient_fails():
    nan_rule = _sin_with_rule(lambda g, ans, x: g * cos(x) * np.nan)
    with pytest.raises(AssertionError, match="first derivative"):
        testing.check_grads(nan_rule, [0.5], order=1)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="modes"):
        testing.check_grads(ad.sin, [1.0], modes=("sideways",))
    with pytest.raises(ValueError, match="order"):
        testing.check_grads(ad.sin, [1.0], order=0)


# ---- numerical_jacobian --------------------------------------------------------------

def test_numerical_jacobian_of_an_elementwise_function_is_diagonal():
    x = np.array([0.1, 0.7, 1.3])
    jacobian, = testing.numerical_jacobian(ad.sin, [x])
    np.testing.assert_allclose(jacobian, np.diag(np.cos(x)), atol=1e-8)


def test_numerical_jacobian_shapes_are_output_then_input(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ja, jb = testing.numerical_jacobian(ad.matmul, [a, b])
    assert ja.shape == (2, 4, 2, 3) and jb.shape == (2, 4, 3, 4)
    np.testing.assert_allclose(ja[1, 2, 1, :], b[:, 2], atol=1e-8)


# ---- the helpers the op table uses --------------------------------------------------

def test_op_inputs_respect_signed_domains(rng):
    prim = Primitive("TestDomain", lambda xp, x, y: x / y, (None, None), register=False,
                     domain=((-1.0, 1.0), ((0.5, 2.0), "signs")))
    x, y = testing.op_inputs(prim, ((50,), (50,)), rng)
    assert x.dtype == np.float64 and np.all(np.abs(x) <= 1.0)
    assert np.all((np.abs(y) >= 0.5) & (np.abs(y) <= 2.0))
    assert np.any(y < 0) and np.any(y > 0)


def test_op_cases_default_by_arity():
    unary = Primitive("TestUnary", lambda xp, x: x, (None,), register=False)
    binary = Primitive("TestBinary", lambda xp, x, y: x + y, (None, None), register=False)
    assert [shapes for shapes, _ in testing.op_cases(unary)] == [((),), ((3,),), ((2, 3),)]
    assert ((2, 3), (3,)) in [shapes for shapes, _ in testing.op_cases(binary)]


# ---- forward mode ---------------------------------------------------------------------

def test_forward_mode_checks_jvps_when_forward_mode_exists(rng):
    pytest.importorskip("autodiff.forward")
    x, y = rng.uniform(0.5, 1.5, size=3), rng.uniform(0.5, 1.5, size=(2, 3))
    testing.check_grads(lambda a, b: ad.sin(a) * b, [x, y], order=2, modes=("rev", "fwd"))
    with pytest.raises(AssertionError, match="fwd mode"):
        testing.check_grads(WRONG_SIN, [x], order=1, modes=("fwd",))
