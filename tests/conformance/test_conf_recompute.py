"""``recompute_grad`` on ad and on TensorFlow: values, gradients, variables, order, errors.

How often the function runs (once more, in the backward pass) is pinned with the lesson's
sentence in test_lesson15_claims.py.

Where ad deliberately differs (forward mode, and a second derivative through a tape
that also watches a Variable the function reads: TensorFlow raises
NotImplementedError, ad gives the plain function's derivative) the difference is
asserted in test_conf_documented_differences.py.
"""

import numpy as np

from .harness import same_on_both, value_and_two_derivatives


def _block(m, depth=4):
    def block(x):
        for _ in range(depth):
            x = m.tanh(x) * 1.5 + m.sin(x)
        return x
    return block


def _value_and_gradient(m, f, x):
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.reduce_sum(f(x))
    return [y, tape.gradient(y, x)]


@same_on_both
def test_recompute_grad_values_and_gradients_equal_the_plain_function(m):
    x = m.constant(np.linspace(-2.0, 2.0, 7, dtype=np.float32))
    return [_value_and_gradient(m, _block(m), x),
            _value_and_gradient(m, m.recompute_grad(_block(m)), x)]


@same_on_both
def test_recompute_grad_gradients_for_variables_read_inside(m):
    w = m.Variable([[0.5, -1.0], [2.0, 0.25]])
    b = m.Variable([0.1, -0.2])
    layer = m.recompute_grad(lambda x: m.tanh(m.matmul(x, w) + b))
    x = m.constant([[1.0, 2.0], [3.0, -1.0]])
    with m.GradientTape() as tape:
        y = m.reduce_sum(layer(x) ** 2)
    return [y, tape.gradient(y, [x, w, b]), [v.name for v in tape.watched_variables()]]


@same_on_both
def test_recompute_grad_a_captured_constant_gets_none(m):
    c = m.constant(2.0)
    f = m.recompute_grad(lambda x: x * c)
    x = m.constant(3.0)
    with m.GradientTape() as tape:
        tape.watch([x, c])
        y = f(x)
    return tape.gradient(y, [x, c])


@same_on_both
def test_recompute_grad_second_derivative_through_nested_tapes(m):
    return value_and_two_derivatives(m, m.recompute_grad(lambda x: m.reduce_sum(m.sin(x) * x)),
                                     m.constant([1.0, 2.0]))


@same_on_both
def test_recompute_grad_second_derivative_with_a_variable_the_outer_tape_ignores(m):
    v = m.Variable([0.5, 3.0])
    f = m.recompute_grad(lambda x: m.reduce_sum(m.sin(x * v)))
    x = m.constant([1.0, 2.0])
    with m.GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return [g, outer.gradient(g, x)]


@same_on_both
def test_recompute_grad_persistent_tape_jacobian_batch_jacobian_output_gradients(m):
    f = m.recompute_grad(lambda x: m.sin(x) * x[:, :1])
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    return [tape.gradient(y, x), tape.gradient(y, x, output_gradients=m.ones_like(y) * 2.0),
            tape.jacobian(y, x), tape.batch_jacobian(y, x)]


@same_on_both
def test_recompute_grad_nested_arguments_keywords_integers_and_two_outputs(m):
    f = m.recompute_grad(lambda d, n, scale=1.0: (d["a"] * d["b"] * scale,
                                                  m.sin(d["a"]) * m.cast(n, m.float32)))
    a, b = m.constant([1.0, 2.0]), m.constant([3.0, 4.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y, z = f({"a": a, "b": b}, m.constant(5), scale=2.0)
    return [y, z, tape.gradient([y, z], [a, b]), tape.gradient(y, [a, b])]


@same_on_both
def test_recompute_grad_python_number_argument_and_variable(m):
    v = m.Variable([0.5, 3.0])
    f = m.recompute_grad(lambda x: m.reduce_sum(m.sin(x * v)))
    with m.GradientTape() as tape:
        y = f(2.0)
    return [y, tape.gradient(y, v)]


@same_on_both
def test_recompute_grad_inside_a_traced_function(m):
    v = m.Variable([0.5, 3.0])
    f = m.recompute_grad(lambda x: m.reduce_sum(m.sin(x * v) * x))

    @m.function
    def step(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return [y, tape.gradient(y, [x, v])]

    return step(m.constant([1.0, 2.0]))


@same_on_both
def test_recompute_grad_keeps_the_function_name(m):
    def block(x):
        return x
    return m.recompute_grad(block).__name__


@same_on_both
def test_recompute_grad_of_something_not_callable_raises_by_its_first_call(m):
    # TypeError on both; ad refuses at decoration, TensorFlow at the first call.
    return m.recompute_grad(3)(m.constant(1.0))
