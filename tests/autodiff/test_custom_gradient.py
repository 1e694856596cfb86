"""ad.custom_gradient: the guides' examples, its errors, nesting and higher order.

The examples come from the advanced autodiff guide (clip_gradients) and the
``tf.custom_gradient`` API page (log1pexp, bar, the nested caveat, the
polynomial with variables, the shuffle with stop_gradient), with ``tf.``
replaced by ``ad.`` and the documented values.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing


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


def naive_log1pexp(x):
    return ad.math.log(1 + ad.exp(x))


@ad.custom_gradient
def bar(x, y):
    def grad(upstream):
        dz_dx = y
        dz_dy = x
        return upstream * dz_dx, upstream * dz_dy
    z = x * y
    return z, grad


# ---- the guides' examples -------------------------------------------------------------

def test_clip_gradients_clips_4_to_2_as_in_the_guide():
    v = ad.Variable(2.0)
    with ad.GradientTape() as t:
        output = clip_gradients(v * v)
    assert output.numpy() == 4.0
    assert t.gradient(output, v).numpy() == pytest.approx(2.0)


def test_clip_gradients_leaves_a_short_gradient_alone():
    v = ad.Variable(0.1)
    with ad.GradientTape() as t:
        output = clip_gradients(v * v)
    # dy = 1 is clipped to 0.5 before Mul's rule: 0.5 * 2v.
    assert t.gradient(output, v).numpy() == pytest.approx(0.1)


def test_log1pexp_at_100_has_gradient_one_where_the_naive_version_gives_nan():
    x = ad.constant(100.)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = log1pexp(x)
        y_naive = naive_log1pexp(x)
    assert tape.gradient(y, x).numpy() == 1.0
    assert np.isnan(tape.gradient(y_naive, x).numpy())


def test_bar_returns_one_gradient_per_input():
    x = ad.constant(2.0, dtype=ad.float32)
    y = ad.constant(3.0, dtype=ad.float32)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = bar(x, y)
    assert z.numpy() == 6.0
    assert tape.gradient(z, x).numpy() == 3.0
    assert tape.gradient(z, y).numpy() == 2.0


weights = ad.Variable(ad.ones([2]))  # the API page's module-level trainable variable


@ad.custom_gradient
def linear_poly(x):
    poly = weights[1] * x + weights[0]

    def grad_fn(dpoly, variables):
        grad_xs = dpoly * weights[1]
        grad_vars = []
        assert variables is not None
        assert len(variables) == 1
        assert variables[0] is weights
        dy_dw = dpoly * ad.stack([x ** 1, x ** 0])
        grad_vars.append(ad.reduce_sum(ad.reshape(dy_dw, [2, -1]), axis=1))
        return grad_xs, grad_vars
    return poly, grad_fn


def test_polynomial_with_variables_gives_the_documented_gradients():
    x = ad.constant([1., 2., 3.])
    with ad.GradientTape(persistent=True) as tape:
        poly = linear_poly(x)
    np.testing.assert_array_equal(poly.numpy(), [2., 3., 4.])
    # x feeds the recorded op (recorded because the tape watches `weights`) but
    # the tape never watched x, so x gets no gradient (TensorFlow 2.21 gives None;
    # its API page watches x first). Watched, x gets [1, 1, 1].
    assert tape.gradient(poly, x) is None
    with ad.GradientTape() as tape2:
        tape2.watch(x)
        poly_watched = linear_poly(x)
    np.testing.assert_array_equal(tape2.gradient(poly_watched, x).numpy(), [1., 1., 1.])
    np.testing.assert_array_equal(tape.gradient(poly, weights).numpy(), [6., 3.])


def test_shuffle_behind_stop_gradient_uses_the_custom_gradient():
    x = ad.constant([0.3, 0.5], dtype=ad.float32)

    @ad.custom_gradient
    def test_func_with_stop_grad(x):
        res = ad.stop_gradient(ad.random.shuffle(x))

        def grad(upstream):
            return upstream  # arbitrarily defined custom gradient
        return res, grad

    with ad.GradientTape() as g:
        g.watch(x)
        res = test_func_with_stop_grad(x)
    np.testing.assert_array_equal(np.sort(res.numpy()), x.numpy())
    np.testing.assert_array_equal(g.gradient(res, x).numpy(), [1.0, 1.0])


# ---- what the tape records -------------------------------------------------------------

def test_the_call_is_recorded_as_one_op_named_after_the_function_whose_vjp_is_grad_fn():
    # TensorFlow's eager tape: record_operation(f.__name__, ...) (tests/conformance/test_claims.py)
    v = ad.Variable(2.0, name="w")
    with ad.GradientTape() as t:
        output = clip_gradients(v * v)
    assert str(t).splitlines()[1:] == ["  v0 = Mul(w, w)", "  v1 = clip_gradients(v0)"]
    record = t.records[-1]
    assert record.op_type == "clip_gradients"
    assert record.primitive.custom_fn.__name__ == "clip_gradients"
    assert record.primitive.custom_grad_fn.__name__ == "backward"
    assert record.output_ids == (output.id,)
    trace = t.backward_trace(output, v)
    assert [step.op_type for step in trace.steps] == ["clip_gradients", "Mul"]


def test_inner_ops_are_seen_by_the_tape_but_never_visited_backwards():
    # TensorFlow's tape "is still watching the forward pass": Exp, AddV2 and Log are
    # recorded, but y is the call op's output, so only that op is visited.
    x = ad.constant(1.0)
    with ad.GradientTape() as t:
        t.watch(x)
        y = log1pexp(x)
    assert [r.op_type for r in t.records] == ["Exp", "AddV2", "Log", "log1pexp"]
    trace = t.backward_trace(y, x)
    assert [step.op_type for step in trace.steps] == ["log1pexp"]


def test_the_call_ops_inputs_are_the_arguments_then_the_variables_read():
    w = ad.Variable(3.0, name="w")
    x = ad.constant(2.0)

    @ad.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * w, [dy * x]
        return w * x, grad

    with ad.GradientTape() as t:
        t.watch(x)
        y = scale(x)
    record = t.records[-1]
    assert record.op_type == "scale"
    assert record.input_ids == (x.id, w.id)
    assert record.primitive.custom_variables == (w,)
    dx, dw = t.gradient(y, [x, w])
    assert (dx.numpy(), dw.numpy()) == (3.0, 2.0)


# ---- errors ------------------------------------------------------------------------------

def test_grad_fn_without_variables_keyword_is_a_type_error_when_f_reads_variables():
    w = ad.Variable(2.0)

    @ad.custom_gradient
    def f(x):
        return x * w, lambda dy: dy * w

    with pytest.raises(TypeError, match="grad_fn must take a keyword argument `variables`"):
        f(ad.constant(1.0))


def test_wrong_number_of_variable_gradients_is_a_value_error():
    w1, w2 = ad.Variable(2.0), ad.Variable(3.0)

    @ad.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            assert [v.id for v in variables] == [w1.id, w2.id]
            return dy, [dy]  # one gradient for two variables
        return x * w1 * w2, grad

    x = ad.constant(1.0)
    with ad.GradientTape() as t:
        t.watch(x)
        y = f(x)
    with pytest.raises(ValueError, match="returned 1 variable gradient"):
        t.gradient(y, x)


def test_wrong_number_of_input_gradients_is_a_value_error():
    @ad.custom_gradient
    def f(x, y):
        return x * y, lambda dz: dz * y  # forgets the gradient for y

    x, y = ad.constant(1.0), ad.constant(2.0)
    with ad.GradientTape() as t:
        t.watch(x)
        z = f(x, y)
    with pytest.raises(ValueError, match="takes 2 input.*returned 1 gradient"):
        t.gradient(z, x)


def test_a_gradient_of_the_wrong_shape_is_a_value_error_naming_both_shapes():
    @ad.custom_gradient
    def f(x):
        return ad.reduce_sum(x), lambda dy: dy  # should be dy * ones_like(x)

    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as t:
        t.watch(x)
        y = f(x)
    with pytest.raises(ValueError, match=r"shape \(\).*shape \(2,\)"):
        t.gradient(y, x)


def test_f_must_return_a_value_and_a_grad_fn():
    @ad.custom_gradient
    def f(x):
        return x * x

    with pytest.raises(TypeError, match=r"must return \(y, grad_fn\)"):
        f(ad.constant(1.0))


# ---- several inputs and outputs, conversions ---------------------------------------------

def test_an_unused_output_gets_a_zero_upstream_gradient():
    seen = {}

    @ad.custom_gradient
    def sin_cos(x):
        def grad(d_sin, d_cos):
            seen["d_cos"] = d_cos.numpy()
            return d_sin * ad.cos(x) - d_cos * ad.sin(x)
        return (ad.sin(x), ad.cos(x)), grad

    x = ad.constant(0.5)
    with ad.GradientTape() as t:
        t.watch(x)
        s, _ = sin_cos(x)
    assert t.gradient(s, x).numpy() == pytest.approx(np.cos(0.5))
    assert seen["d_cos"] == 0.0


def test_nested_inputs_take_a_flat_list_of_gradients():
    @ad.custom_gradient
    def weighted(pair, scale):
        a, b = pair
        return (a + 2.0 * b) * scale, lambda dy: [dy * scale, 2.0 * dy * scale, dy * (a + 2 * b)]

    a, b, c = ad.constant(1.0), ad.constant(2.0), ad.constant(3.0)
    with ad.GradientTape() as t:
        t.watch([a, b, c])
        y = weighted((a, b), c)
    assert [g.numpy() for g in t.gradient(y, [a, b, c])] == [3.0, 6.0, 5.0]


def test_python_numbers_become_tensors_and_integer_inputs_get_none():
    @ad.custom_gradient
    def f(x, n):
        assert isinstance(x, ad.Tensor) and x.dtype == ad.float32
        return x * ad.cast(n, ad.float32), lambda dy: (dy * ad.cast(n, ad.float32), dy)

    n = ad.constant(3)
    with ad.GradientTape() as t:
        x = ad.constant(2.0)
        t.watch(x)
        y = f(x, n)
        z = f(1.5, n)
    assert z.numpy() == 4.5
    assert t.gradient(y, x).numpy() == 3.0


def test_a_variable_passed_as_an_argument_is_an_input_not_a_variable_read():
    v = ad.Variable(3.0)

    @ad.custom_gradient
    def double(x):
        assert x is v  # f sees the Variable itself, as in TensorFlow
        return 2.0 * x, lambda dy: 5.0 * dy  # no `variables=` needed

    with ad.GradientTape() as t:
        y = double(v)
    assert t.gradient(y, v).numpy() == 5.0


def test_custom_gradient_works_on_methods():
    class Scaler:
        factor = 4.0

        @ad.custom_gradient
        def __call__(self, x):
            return x * self.factor, lambda dy: dy * 10.0

    x = ad.constant(1.0)
    with ad.GradientTape() as t:
        t.watch(x)
        y = Scaler()(x)
    assert (y.numpy(), t.gradient(y, x).numpy()) == (4.0, 10.0)


# ---- higher order and nesting ------------------------------------------------------------

def test_second_derivative_through_a_grad_fn_that_uses_the_input():
    @ad.custom_gradient
    def square(x):
        return x * x, lambda dy: dy * 2.0 * x

    x = ad.constant(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = square(x)
        dy_dx = inner.gradient(y, x)
    assert dy_dx.numpy() == 6.0
    assert outer.gradient(dy_dx, x).numpy() == 2.0


def test_second_derivative_through_tensors_computed_inside_f():
    # grad uses e = exp(x) from the forward pass: the outer tape recorded Exp, so
    # d/dx (1 - 1/(1 + e^x)) = sigmoid'(x), as TensorFlow gives.
    x = ad.constant(1.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        dy_dx = inner.gradient(y, x)
    s = 1 / (1 + np.exp(-1.0))
    assert dy_dx.numpy() == pytest.approx(s, rel=1e-6)
    assert outer.gradient(dy_dx, x).numpy() == pytest.approx(s * (1 - s), rel=1e-6)


def test_check_grads_agrees_with_a_correct_custom_gradient_to_second_order():
    testing.check_grads(log1pexp, [np.array([-1.5, 0.0, 2.0])], order=2)
    testing.check_grads(bar, [1.5, -0.5], order=2)


def test_nested_grad_grad_fn_is_the_gradient_of_the_backward_function_not_of_x():
    @ad.custom_gradient
    def op(x):
        y = ad.sin(x)

        @ad.custom_gradient
        def grad_fn(dy):
            gdy = dy * ad.cos(x)

            def grad_grad_fn(ddy):  # not the 2nd order gradient of op w.r.t. x
                return ddy * 7.0
            return gdy, grad_grad_fn
        return y, grad_fn

    x, dy = ad.constant(0.5), ad.constant(2.0)
    with ad.GradientTape(persistent=True) as outer:
        outer.watch([x, dy])
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = op(x)
        g = inner.gradient(y, x, output_gradients=dy)
    assert g.numpy() == pytest.approx(2.0 * np.cos(0.5))
    assert outer.gradient(g, dy).numpy() == 7.0   # grad_grad_fn: d g / d dy
    assert outer.gradient(g, x) is None           # TensorFlow's documented caveat


def test_fused_backprop_wrapping_a_custom_gradient_gives_the_second_derivative():
    # The API page's op_with_fused_backprop, for y = x^3.
    @ad.custom_gradient
    def cube(x):
        y, x_grad = x ** 3, 3.0 * x ** 2

        def first_order_gradient(dy):
            @ad.custom_gradient
            def first_order_custom(unused_x):
                def second_order(ddy):
                    return ddy * 6.0 * x
                return x_grad, second_order
            return dy * first_order_custom(x)
        return y, first_order_gradient

    x = ad.constant(2.0)
    with ad.GradientTape() as t2:
        t2.watch(x)
        with ad.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        dy_dx = t1.gradient(y, x)
    assert dy_dx.numpy() == 12.0
    assert t2.gradient(dy_dx, x).numpy() == 12.0


def test_variables_read_by_a_nested_custom_gradient_reach_the_outer_one():
    w = ad.Variable(2.0)

    @ad.custom_gradient
    def inner(x):
        def grad(dy, variables=None):
            return dy * w, [dy * x]
        return x * w, grad

    @ad.custom_gradient
    def outer(x):
        def grad(dy, variables=None):
            assert [v.id for v in variables] == [w.id]
            return dy * 3.0, [dy * 100.0]
        return inner(x) + 1.0, grad

    x = ad.constant(5.0)
    with ad.GradientTape() as t:
        t.watch(x)
        y = outer(x)
    dx, dw = t.gradient(y, [x, w])
    assert (y.numpy(), dx.numpy(), dw.numpy()) == (11.0, 3.0, 100.0)


# ---- which tapes record the custom op (TensorFlow 2's rule; values checked against TF 2.21) ----

@ad.custom_gradient
def _square_nested_captured(x):
    def grad_fn(dy):
        @ad.custom_gradient
        def backward(dy):                       # x is captured, not an input
            return dy * 2.0 * x, lambda ddy: ddy * 2.0 * x
        return backward(dy)
    return x * x, grad_fn


def test_nested_custom_gradient_with_captured_x_still_has_a_second_derivative():
    # The outer tape watches x but not the seed dy, so it records the ops of
    # `backward` (dy * 2 * x), not the custom op: d2/dx2 x^2 = 2.
    x = ad.constant(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = _square_nested_captured(x)
        dy_dx = inner.gradient(y, x)
    assert float(dy_dx) == 6.0
    assert float(outer.gradient(dy_dx, x)) == 2.0


def test_a_tape_that_watches_only_a_captured_tensor_differentiates_the_ops_inside():
    c = ad.constant(2.0)

    @ad.custom_gradient
    def times_c(x):
        return x * c, lambda dy: dy * 100.0

    with ad.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = times_c(ad.constant(3.0))
    assert float(tape.gradient(y, c)) == 3.0      # through Mul, not the grad_fn
    assert [r.op_type for r in tape.records] == ["Mul", "Identity"]

    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = times_c(x)
    dx, dc = tape.gradient(y, [x, c])
    assert float(dx) == 100.0 and dc is None       # the custom op: c is not its input
    assert [r.op_type for r in tape.records] == ["Mul", "times_c"]


def test_the_seed_of_gradient_is_not_watched_by_an_outer_tape():
    x = ad.constant(2.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * x
        inner.gradient(y, x)
    assert all(r.op_type != "OnesLike" for r in outer.records)
