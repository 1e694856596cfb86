"""top_k, sort and argsort on ad and TF: values, positions (ties to the lower index),
gradients to second order, Jacobians, forward mode, errors; and a traced function that
must sort each call's own values.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

import autodiff as ad

from .harness import attempt, same_on_both, value_and_two_derivatives


@same_on_both
def test_top_k_values_positions_ties_and_gradients(m):
    x = m.constant([[1.0, 3.0, 2.0, 3.0, -1.0], [0.5, 0.5, 0.5, 2.0, 0.0]])
    w = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        values, indices = m.math.top_k(x, k=3)
        s = m.reduce_sum(values * values * w)
    return [values, indices, t.gradient(s, x), t.jacobian(values, x),
            m.nn.top_k(x, k=0).values, attempt(lambda: m.math.top_k(x, k=6))]


@same_on_both
def test_sort_and_argsort_both_directions_and_axes(m):
    x = m.constant([[3.0, 1.0, 2.0, 1.0], [0.0, -2.0, 5.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    out = []
    for direction in ("ASCENDING", "DESCENDING"):
        for axis in (-1, 0):
            with m.GradientTape() as t:
                t.watch(x)
                y = m.sort(x, axis=axis, direction=direction)
                s = m.reduce_sum(y * m.reshape(m.range(12.0), [3, 4]))
            out.append([y, t.gradient(s, x), m.argsort(x, axis=axis, direction=direction)])
    return out


@same_on_both
def test_sort_to_second_order_and_in_forward_mode(m):
    x = m.constant([0.3, -1.2, 2.0, 0.7], dtype=m.float64)
    two = value_and_two_derivatives(m, lambda v: m.sort(v) ** 3 * m.constant(
        [1.0, 2.0, 3.0, 4.0], dtype=m.float64), x)
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 0.0, 2.0, 0.0], dtype=m.float64)) as acc:
        y = m.math.top_k(x, k=2).values
    return two + [acc.jvp(y)]


def test_a_traced_function_sorts_each_calls_own_values():
    f = ad.function(lambda v: ad.sort(v) * ad.constant([1.0, 10.0, 100.0]))
    g = ad.function(lambda v: ad.sort(v) * ad.constant([1.0, 10.0, 100.0]), jit_compile=True)
    for values in ([3.0, 1.0, 2.0], [-5.0, 7.0, 0.0]):
        want = np.sort(values) * [1.0, 10.0, 100.0]
        np.testing.assert_allclose(f(ad.constant(values)).numpy(), want)
        np.testing.assert_allclose(g(ad.constant(values)).numpy(), want)
