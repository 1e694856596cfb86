"""``ad.vectorized_map``: fn per example, results stacked, gradients through it.

The same cases on TensorFlow are in tests/conformance/test_conf_vectorized_map.py.
"""

import numpy as np
import pytest

import autodiff as ad

X = np.arange(6.0, dtype=np.float32).reshape(3, 2)


def test_maps_over_the_leading_axis_and_stacks():
    out = ad.vectorized_map(lambda row: ad.reduce_sum(row * row), ad.constant(X))
    np.testing.assert_allclose(out.numpy(), (X * X).sum(axis=1))


def test_nested_elems_and_nested_results():
    elems = {"a": ad.constant(X), "b": ad.constant([1.0, 2.0, 3.0])}
    out = ad.vectorized_map(lambda e: (e["a"] * e["b"], [e["b"]]), elems)
    np.testing.assert_allclose(out[0].numpy(), X * [[1.0], [2.0], [3.0]])
    assert isinstance(out[1], list) and out[1][0].shape == (3,)


def test_per_example_gradients_equal_a_loop_of_tapes():
    w = ad.Variable([0.5, -1.0])

    def grad_of_one(x):
        with ad.GradientTape() as tape:
            loss = ad.reduce_sum(ad.sin(x * w))
        return tape.gradient(loss, w)

    mapped = ad.vectorized_map(grad_of_one, ad.constant(X))
    looped = [grad_of_one(ad.constant(row)).numpy() for row in X]
    np.testing.assert_allclose(mapped.numpy(), looped)
    np.testing.assert_allclose(mapped.numpy(), np.cos(X * [0.5, -1.0]) * X, rtol=1e-6)


def test_gradients_flow_back_to_elems_and_to_variables_read_inside():
    w = ad.Variable([2.0, 3.0])
    x = ad.constant(X)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_sum(ad.vectorized_map(lambda row: ad.sin(row) * w, x))
    dx, dw = tape.gradient(y, [x, w])
    np.testing.assert_allclose(dx.numpy(), np.cos(X) * [2.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(dw.numpy(), np.sin(X).sum(axis=0), rtol=1e-6)


def test_elems_may_be_a_variable_or_an_array():
    v = ad.Variable(X)
    with ad.GradientTape() as tape:
        y = ad.reduce_sum(ad.vectorized_map(lambda row: row * row, v))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), 2 * X)
    out = ad.vectorized_map(lambda e: e * 2, np.arange(3.0))
    assert out.dtype == ad.float64 and out.numpy().tolist() == [0.0, 2.0, 4.0]


def test_python_numbers_become_tensors_and_none_stays_none():
    assert ad.vectorized_map(lambda e: 1.0, ad.constant(X)).numpy().tolist() == [1.0] * 3
    assert ad.vectorized_map(lambda e: None, ad.constant(X)) is None


def test_fn_runs_once_per_example():
    calls = []
    ad.vectorized_map(lambda e: calls.append(1) or e, ad.ones([5, 2]))
    assert len(calls) == 5


def test_zero_examples_give_empty_results_of_the_right_shape():
    out = ad.vectorized_map(lambda e: (ad.reduce_sum(e), e), ad.zeros([0, 2]))
    assert out[0].shape == (0,) and out[1].shape == (0, 2)
    assert ad.tape.thread_state.active == []


def test_second_derivative_through_the_map():
    x = ad.constant(X)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = ad.reduce_sum(ad.vectorized_map(ad.sin, x))
        g = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), -np.sin(X), rtol=1e-6)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_inside_a_traced_function(jit_compile):
    f = ad.function(lambda x: ad.vectorized_map(lambda r: ad.sin(r) * 2.0, x),
                    jit_compile=jit_compile)
    np.testing.assert_allclose(f(ad.constant(X)).numpy(), np.sin(X) * 2.0, rtol=1e-6)


def test_a_scalar_has_no_axis_to_map_over():
    with pytest.raises(IndexError, match="leading axis"):
        ad.vectorized_map(lambda e: e, ad.constant(3.0))
    with pytest.raises(IndexError, match="structure of scalars"):
        ad.vectorized_map(lambda e: e, [1.0, 2.0])


def test_different_leading_dimensions_are_refused():
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"\[3, 2\]"):
        ad.vectorized_map(lambda e: e[0], (ad.constant(X), ad.constant([1.0, 2.0])))


def test_fn_must_be_callable():
    with pytest.raises(TypeError, match="fn must be callable"):
        ad.vectorized_map(3, ad.constant(X))


def test_results_of_different_shapes_are_refused():
    with pytest.raises(ad.errors.InvalidArgumentError):
        ad.vectorized_map(lambda e: ad.ones([int(e[0]) + 1]), ad.constant(X))
