"""Custom gradients inside ad.function: traced once, right on every call, to every order.

A custom-gradient call becomes an ``IdentityN`` node whose VJP runs the
traced ``grad_fn`` (see ``autodiff/tracing/graph_custom_gradient.py``); these tests
check that it uses each call's values, not the trace's, and that it agrees
with the eager ``ad.custom_gradient`` for several outputs, variables,
nesting, second derivatives and Jacobians.
"""

import numpy as np
import pytest

import autodiff as ad


@ad.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return ad.clip_by_norm(dy, 0.5)
    return y, backward


@ad.custom_gradient
def log1pexp(x):
    e = ad.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return ad.math.log(1 + e), grad


def test_guide_clip_gradients_inside_a_traced_function():
    f = ad.function(lambda x: clip_gradients(x))
    v = ad.Variable(2.0)
    for _ in range(2):
        with ad.GradientTape() as t:
            output = f(v * v)
        assert t.gradient(output, v).numpy() == 2.0


def test_custom_gradient_values_come_from_each_call_not_from_the_trace():
    f = ad.function(log1pexp)
    for value, expected in [(0.0, 0.5), (100.0, 1.0), (-2.0, 1 / (1 + np.exp(2.0)))]:
        x = ad.constant(value)
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1
    node = f.concrete_functions[0].graph.nodes[-1]
    assert node.op_type == "IdentityN" and node.custom.graph is not None


def test_second_derivative_through_a_traced_custom_gradient_matches_eager():
    def second(fn, value):
        x = ad.constant(value)
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                y = fn(x)
            dy = inner.gradient(y, x)
        return outer.gradient(dy, x).numpy()

    traced = ad.function(log1pexp)
    for value in (0.0, 1.5):
        np.testing.assert_allclose(second(traced, value), second(log1pexp, value), rtol=1e-6)


def test_custom_gradient_reading_variables_inside_a_traced_function():
    w = ad.Variable(2.0)

    @ad.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            return dy * w * 10.0, [dy * x]
        return x * w, grad

    f = ad.function(scaled)
    for value in (3.0, 4.0):
        x = ad.constant(value)
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        dx, dw = tape.gradient(y, [x, w])
        assert dx.numpy() == 20.0 and dw.numpy() == value


def test_a_grad_fn_that_cannot_be_traced_fails_only_when_differentiated():
    @ad.custom_gradient
    def odd(x):
        def grad(dy):
            raise NotImplementedError("no backward here")
        return x * 1.0, grad

    f = ad.function(odd)
    x = ad.constant(1.0)
    assert f(x).numpy() == 1.0
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with pytest.raises(LookupError, match="could not be traced.*no backward here"):
        tape.gradient(y, x)


def test_custom_gradient_with_two_outputs_one_unused_matches_eager():
    @ad.custom_gradient
    def two(x, y):
        def grad(da, db):   # an unused output's upstream gradient arrives as zeros
            return da * 2.0 + db * 3.0, da * 5.0
        return (x * y, x + y), grad

    traced = ad.function(two)
    for fn in (two, traced, traced):
        x, y = ad.constant(1.0), ad.constant(2.0)
        with ad.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            a, b = fn(x, y)
        assert [g.numpy() for g in tape.gradient(a, [x, y])] == [2.0, 5.0]
        assert [g.numpy() for g in tape.gradient(b, [x, y])] == [3.0, 0.0]


@ad.custom_gradient
def cube(x):
    def first(dy):
        @ad.custom_gradient
        def first_custom(unused_x):
            def second(ddy):   # TensorFlow: the gradient of `first`, used as is
                return ddy * 600.0 * x
            return 3.0 * x * x, second
        return dy * first_custom(x)
    return x * x * x, first


def second_derivative(fn, value):
    x = ad.constant(value)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        dy = inner.gradient(y, x)
    return dy.numpy(), outer.gradient(dy, x).numpy()


def test_nested_custom_gradients_inside_a_traced_function_match_eager():
    traced = ad.function(cube)
    for value in (2.0, 3.0):
        assert second_derivative(traced, value) == second_derivative(cube, value) == \
            (3 * value ** 2, 600 * value)
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.skipif(not hasattr(ad.GradientTape, "jacobian"), reason="jacobian lands with issue 4")
def test_jacobian_through_a_traced_custom_gradient_goes_row_by_row():
    @ad.custom_gradient
    def double_grad(x):
        return ad.sin(x), lambda dy: dy * 2.0

    f = ad.function(double_grad)
    x = ad.constant([0.1, 0.2, 0.3])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), 2.0 * np.eye(3))
