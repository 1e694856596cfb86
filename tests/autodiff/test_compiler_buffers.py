"""Buffer reuse in compiled programs: an elementwise op writes over an input that dies
there, and never over anything someone could still see.

What must never be written over: the caller's arguments, a value that is
returned, a value assigned to a Variable, a Variable's own array, and an
array that a view (a reshape, a transpose, a slice) still shares.
"""

import numpy as np

import autodiff as ad
from autodiff.compiler import compile_graph


def _program(f, *args):
    graph = ad.function(f).get_concrete_function(*args).graph
    return compile_graph(graph, "f", ["x", "y"][:len(args)])


def _eager_then_compiled(f, *args):
    eager = ad.nest.map_structure(lambda t: t.numpy().copy(), f(*args))
    program = _program(f, *args)
    compiled = ad.nest.map_structure(lambda t: t.numpy(), program.run(list(args)))
    return eager, compiled, program


def test_a_chain_of_elementwise_ops_reuses_one_array():
    def f(x):
        return ad.sin(ad.exp(x) * 2.0 + 1.0) - 3.0

    x = ad.constant(np.linspace(-1.0, 1.0, 6))
    eager, compiled, program = _eager_then_compiled(f, x)
    np.testing.assert_array_equal(compiled, eager)
    # exp makes a new array; the next four ops all write into it
    assert program.source.count("out=") == 4, program.source


def test_the_callers_arguments_and_returned_values_are_never_written_over():
    def f(x, y):
        a = x * y          # x, y: the caller's arrays
        b = a + 1.0        # a is returned below: not reusable
        return a, ad.sin(b) * 2.0

    x_np, y_np = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])
    x, y = ad.constant(x_np.copy()), ad.constant(y_np.copy())
    eager, compiled, program = _eager_then_compiled(f, x, y)
    for e, c in zip(eager, compiled):
        np.testing.assert_array_equal(c, e)
    np.testing.assert_array_equal(x.numpy(), x_np)
    np.testing.assert_array_equal(y.numpy(), y_np)
    np.testing.assert_array_equal(compiled[0], x_np * y_np)   # a kept its value


def test_an_array_shared_with_a_view_is_not_written_over():
    def f(x):
        a = ad.exp(x)                      # a fresh array ...
        flat = ad.reshape(a, [-1])         # ... and a view of it
        b = a * 2.0                        # a's last direct use
        return ad.reduce_sum(b) + ad.reduce_sum(flat * 0.0 + flat)

    x = ad.constant(np.arange(6.0).reshape(2, 3) / 10)
    eager, compiled, program = _eager_then_compiled(f, x)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12)
    np.testing.assert_allclose(compiled, 3 * np.exp(np.arange(6.0) / 10).sum(), rtol=1e-12)


def test_a_value_assigned_to_a_variable_keeps_its_value():
    v = ad.Variable(np.zeros(3), name="v")

    def f(x):
        a = ad.exp(x)
        v.assign(a)
        return a * 0.0 + v * 1.0, -(a + 1.0)

    x = ad.constant([0.0, 1.0, 2.0], dtype=ad.float64)
    program = _program(f, x)
    v.assign(np.zeros(3))
    first, second = program.run([x])
    np.testing.assert_allclose(v.numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-12)
    np.testing.assert_allclose(first.numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-12)
    np.testing.assert_allclose(second.numpy(), -(np.exp([0.0, 1.0, 2.0]) + 1), rtol=1e-12)


def test_a_variables_array_is_not_written_over_by_its_readers():
    w = ad.Variable(np.array([1.0, 2.0]), name="w")

    def f(x):
        return ad.sin(w * x) + w

    x = ad.constant([3.0, 4.0], dtype=ad.float64)
    compiled = _program(f, x).run([x])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(compiled.numpy(), np.sin([3.0, 8.0]) + [1.0, 2.0], rtol=1e-12)


def test_a_gradient_step_compiled_twice_in_a_row_gives_the_same_numbers():
    w = ad.Variable(np.array([[0.5, -0.2], [0.1, 0.3]]), name="w")

    @ad.function(jit_compile=True)
    def step(x):
        with ad.GradientTape() as tape:
            loss = ad.reduce_sum(ad.tanh(x @ w) ** 2)
        return loss, tape.gradient(loss, w)

    x = ad.constant([[1.0, 2.0], [-1.0, 0.5]], dtype=ad.float64)
    first = [t.numpy().copy() for t in step(x)]
    second = [t.numpy() for t in step(x)]
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(ad.tanh(x @ w) ** 2)
    expected = [loss.numpy(), tape.gradient(loss, w).numpy()]
    for a, b, e in zip(first, second, expected):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, e, rtol=1e-12)
