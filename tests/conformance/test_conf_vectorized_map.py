"""``vectorized_map`` on ad and on TensorFlow: results, nests, per-example gradients, errors.

TensorFlow vectorizes ``fn`` (pfor); ad loops over the examples. The results must
not tell them apart; how many times ``fn`` runs does (the lesson says so, and
test_lesson15_claims.py pins it).
"""

import numpy as np

from .harness import same_on_both

X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)


@same_on_both
def test_vectorized_map_over_rows_and_to_scalars(m):
    x = m.constant(X)
    return [m.vectorized_map(lambda r: r * 2.0, x),
            m.vectorized_map(lambda r: m.reduce_sum(r), x),
            m.vectorized_map(lambda r: [r, r * 2], x)]


@same_on_both
def test_vectorized_map_nested_elems(m):
    x = m.constant(X)
    return [m.vectorized_map(lambda e: (e[0] + e[1], e[0]), (x, x)),
            m.vectorized_map(lambda d: {"s": d["a"] * d["b"]},
                             {"a": x, "b": m.constant([1.0, 2.0, 3.0])})]


@same_on_both
def test_vectorized_map_per_example_gradients(m):
    w = m.Variable([0.5, -1.0])

    def per_example(row):
        with m.GradientTape() as tape:
            loss = m.reduce_sum(m.sin(row * w))
        return tape.gradient(loss, w)

    return m.vectorized_map(per_example, m.constant(X))


@same_on_both
def test_vectorized_map_per_example_jacobians(m):
    def jacobian(row):
        with m.GradientTape() as tape:
            tape.watch(row)
            y = m.sin(row) * row[0]
        return tape.jacobian(y, row)

    return m.vectorized_map(jacobian, m.constant(X))


@same_on_both
def test_vectorized_map_gradients_flow_through(m):
    w = m.Variable([0.5, -1.0])
    x = m.constant(X)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.reduce_sum(m.vectorized_map(lambda r: m.sin(r) * w, x))
    return tape.gradient(y, [x, w])


@same_on_both
def test_vectorized_map_second_derivative(m):
    x = m.constant(X)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = m.reduce_sum(m.vectorized_map(lambda r: m.sin(r) * r, x))
        g = inner.gradient(y, x)
    return [g, outer.gradient(g, x)]


@same_on_both
def test_vectorized_map_dtypes_variables_arrays_constants_and_none(m):
    v = m.Variable(X[:2])
    return [m.vectorized_map(lambda e: e * 2, np.arange(3.0)),
            m.vectorized_map(lambda e: e * 2, m.constant([1, 2])),
            m.vectorized_map(lambda r: r * 2, v),
            m.vectorized_map(lambda e: 1.0, m.constant(X)),
            m.vectorized_map(lambda e: None, m.constant(X))]


@same_on_both
def test_vectorized_map_zero_examples(m):
    out = m.vectorized_map(lambda e: (m.reduce_sum(e), e), m.zeros([0, 2]))
    return [out, [tuple(t.shape) for t in out]]


@same_on_both
def test_vectorized_map_inside_a_traced_function(m):
    return m.function(lambda x: m.vectorized_map(lambda r: m.sin(r) * 2.0, x))(m.constant(X))


@same_on_both
def test_vectorized_map_of_a_scalar_raises(m):
    return m.vectorized_map(lambda e: e, m.constant(3.0))


@same_on_both
def test_vectorized_map_of_a_list_of_numbers_raises(m):
    return m.vectorized_map(lambda e: e, [1.0, 2.0])


@same_on_both
def test_vectorized_map_different_leading_dimensions_raises(m):
    return m.vectorized_map(lambda e: e[0] + e[1][0], (m.constant(X), m.constant([1.0, 2.0])))


@same_on_both
def test_vectorized_map_fn_not_callable_raises(m):
    return m.vectorized_map(3, m.constant(X))
