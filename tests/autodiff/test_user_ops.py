"""User-defined ops: ad.primitive, ad.RegisterGradient, ad.no_gradient.

Every test defines its ops through the ``define`` fixture, which removes
them from the global registries afterwards (the op table walks the
registry, and an op type can be registered only once).
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing, user_ops


@pytest.fixture
def define():
    """``define(op_type)`` gives a fresh name for this test; all are forgotten afterwards."""
    names = []

    def fresh(op_type):
        names.append(op_type)
        return op_type

    yield fresh
    for name in names:
        user_ops._forget(name)


def _my_cube(define):
    @ad.primitive(define("MyCube"))
    def my_cube(xp, x):
        """d/dx x^3 = 3 x^2"""
        return x * x * x

    @ad.RegisterGradient("MyCube")
    def _my_cube_grad(op, grad):
        x = op.inputs[0]
        return grad * 3.0 * x * x

    return my_cube


def test_a_user_op_runs_on_tensors_and_python_numbers(define):
    my_cube = _my_cube(define)
    np.testing.assert_array_equal(my_cube(ad.constant([1.0, 2.0])).numpy(), [1.0, 8.0])
    assert my_cube(3.0).numpy() == 27.0
    assert my_cube.primitive.name == "MyCube" and my_cube.__name__ == "my_cube"


def test_registered_gradient_is_used_by_the_tape_and_named_in_its_printout(define):
    my_cube = _my_cube(define)
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = my_cube(x)
    assert str(tape).splitlines()[1] == "  v1 = MyCube(v0)"
    assert tape.gradient(y, x).numpy() == 12.0


def test_registered_gradient_differentiates_again_to_second_order(define):
    my_cube = _my_cube(define)
    x = ad.constant(2.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = my_cube(x)
        dy_dx = inner.gradient(y, x)
    assert outer.gradient(dy_dx, x).numpy() == 12.0   # 6x


def test_check_grads_passes_for_a_user_op_to_second_order(define):
    my_cube = _my_cube(define)
    testing.check_grads(my_cube, [np.array([[-1.5, 0.3, 2.0], [0.7, -0.2, 1.1]])], order=2)
    testing.check_grads(lambda x: ad.sin(my_cube(x)) * x, [0.8], order=3)


def test_gradient_function_sees_the_op_inputs_outputs_and_attrs(define):
    seen = {}

    @ad.primitive(define("MyScale"))
    def my_scale(xp, x, factor=1.0):
        return factor * x

    @ad.RegisterGradient("MyScale")
    def _my_scale_grad(op, grad):
        seen.update(type=op.type, name=op.name, factor=op.get_attr("factor"),
                    inputs=[t.numpy() for t in op.inputs], outputs=[t.numpy() for t in op.outputs])
        with pytest.raises(ValueError, match="has no attr named 'bogus'"):
            op.get_attr("bogus")
        return grad * op.get_attr("factor")

    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = my_scale(x, factor=5.0)
    assert tape.gradient(y, x).numpy() == 5.0
    assert seen == dict(type="MyScale", name="MyScale", factor=5.0, inputs=[2.0], outputs=[10.0])


def test_two_inputs_one_gradient_each_checked_to_second_order(define):
    @ad.primitive(define("MyHypot"))
    def my_hypot(xp, x, y):
        return xp.sqrt(x * x + y * y)

    @ad.RegisterGradient("MyHypot")
    def _my_hypot_grad(op, grad):
        x, y = op.inputs
        r = op.outputs[0]
        return [grad * x / r, grad * y / r]

    testing.check_grads(my_hypot, [np.array([1.0, -2.0]), np.array([0.5, 1.5])], order=2)


def test_several_outputs_one_upstream_gradient_each_zero_when_unused(define):
    @ad.primitive(define("MySinCos"), n_outputs=2)
    def my_sin_cos(xp, x):
        return xp.sin(x), xp.cos(x)

    @ad.RegisterGradient("MySinCos")
    def _my_sin_cos_grad(op, d_sin, d_cos):
        x = op.inputs[0]
        return d_sin * ad.cos(x) - d_cos * ad.sin(x)

    x = ad.constant(0.5)
    with ad.GradientTape() as tape:
        tape.watch(x)
        s, _ = my_sin_cos(x)
    assert tape.gradient(s, x).numpy() == pytest.approx(np.cos(0.5))
    testing.check_grads(lambda x: my_sin_cos(x)[0] * my_sin_cos(x)[1], [0.3], order=2)


def test_a_gradient_may_be_registered_before_its_op_is_defined(define):
    @ad.RegisterGradient(define("MyLaterOp"))
    def _grad(op, grad):
        return grad * 2.0

    @ad.primitive("MyLaterOp")
    def my_later_op(xp, x):
        return 2.0 * x

    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = my_later_op(x)
    assert tape.gradient(y, x).numpy() == 2.0


def test_integer_inputs_get_no_gradient(define):
    @ad.primitive(define("MyShift"), dtype_args=())
    def my_shift(xp, x, n):
        return x + n.astype(x.dtype)

    @ad.RegisterGradient("MyShift")
    def _grad(op, grad):
        return grad, grad

    x = ad.constant(1.0)
    n = ad.constant(3)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = my_shift(x, n)
    with pytest.warns(ad.AutodiffWarning, match="has no gradient"):
        dx, dn = tape.gradient(y, [x, n])
    assert dx.numpy() == 1.0 and dn is None


# ---- registration errors -----------------------------------------------------------------

def test_registering_two_gradients_for_one_op_type_is_a_key_error(define):
    _my_cube(define)
    with pytest.raises(KeyError, match="op type 'MyCube' already has a gradient"):
        @ad.RegisterGradient("MyCube")
        def _again(op, grad):
            return grad


def test_registering_a_gradient_for_a_built_in_op_is_a_key_error():
    with pytest.raises(KeyError, match="op type 'Sin' already has a gradient"):
        ad.RegisterGradient("Sin")(lambda op, grad: grad)
    assert ad.registry.REGISTRY["Sin"].vjp[0].__name__ != "vjp"  # the built-in rule is kept


def test_defining_an_op_type_that_exists_is_a_key_error():
    with pytest.raises(KeyError, match="Mul"):
        ad.primitive("Mul")(lambda xp, x, y: x * y)


def test_op_type_must_be_a_string():
    with pytest.raises(TypeError, match="op_type must be a string"):
        ad.RegisterGradient(3)
    with pytest.raises(TypeError, match="op_type must be a string"):
        ad.no_gradient(None)


def test_wrong_number_of_gradients_is_a_value_error_naming_the_op(define):
    @ad.primitive(define("MyMul"))
    def my_mul(xp, x, y):
        return x * y

    @ad.RegisterGradient("MyMul")
    def _grad(op, grad):
        return grad * op.inputs[1]  # one gradient for two inputs

    x, y = ad.constant(2.0), ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        z = my_mul(x, y)
    with pytest.raises(ValueError, match="Num gradients 1 generated for op MyMul do not match "
                                         "num inputs 2"):
        tape.gradient(z, x)


# ---- ops without a gradient --------------------------------------------------------------

def test_an_op_without_a_gradient_raises_lookup_error_naming_its_type(define):
    @ad.primitive(define("MyOpNoGradYet"))
    def my_op(xp, x):
        return 2.0 * x

    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = my_op(x) * x
    with pytest.raises(LookupError) as info:
        tape.gradient(y, x)
    assert str(info.value) == ("No gradient defined for operation 'MyOpNoGradYet' "
                               "(op type: MyOpNoGradYet)")


def test_no_gradient_makes_the_gradient_none(define):
    @ad.primitive(define("MyRound"))
    def my_round(xp, x):
        return xp.round(x)

    ad.no_gradient("MyRound")
    x = ad.constant(1.3)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = my_round(x)
        z = my_round(x) + x
    assert y.numpy() == 1.0
    assert tape.gradient(y, x) is None
    assert tape.gradient(z, x).numpy() == 1.0
    with pytest.raises(KeyError, match="op type 'MyRound' already has a gradient"):
        ad.RegisterGradient("MyRound")(lambda op, grad: grad)


def test_a_failing_forward_is_an_invalid_argument_error_naming_the_op(define):
    @ad.primitive(define("MyDot"))
    def my_dot(xp, x, y):
        return xp.dot(x, y)

    with pytest.raises(ad.errors.InvalidArgumentError, match="MyDot"):
        my_dot(ad.constant([1.0, 2.0]), ad.constant([1.0, 2.0, 3.0]))


def test_user_ops_are_not_batch_aware_unless_declared(define):
    my_cube = _my_cube(define)

    @ad.primitive(define("MyBatchReady"), batch_aware=True)
    def my_batch_ready(xp, x):
        return x

    assert my_cube.primitive.batch_aware is False
    assert my_batch_ready.primitive.batch_aware is True
