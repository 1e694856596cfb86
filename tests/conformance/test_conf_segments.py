"""unsorted_segment_sum and segment_sum on ad and TF: sums, dropped (negative) ids,
gradients (gathered back) to second order, Jacobians, errors; and a traced function that
uses each call's ids.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

import autodiff as ad

from .harness import attempt, same_on_both


@same_on_both
def test_unsorted_segment_sum_values_gradients_and_dropped_ids(m):
    data = m.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3) / 4)
    out = []
    for ids, n in (([1, 0, 1, 3], 4), ([2, -1, 2, 0], 3), ([[0, 1], [1, 0]], 2)):
        d = m.reshape(data, [2, 2, 3]) if np.ndim(ids) == 2 else data
        with m.GradientTape(persistent=True) as t:
            t.watch(d)
            y = m.math.unsorted_segment_sum(d, ids, n)
            s = m.reduce_sum(y * y)
        out.append([y, t.gradient(s, d), t.jacobian(y, d)])
    out.append(attempt(lambda: m.math.unsorted_segment_sum(data, [0, 1, 5, 0], 3)))
    return out


@same_on_both
def test_segment_sum_and_its_errors(m):
    data = m.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    with m.GradientTape() as t:
        t.watch(data)
        y = m.math.segment_sum(data, [0, 0, 2, 2])
        s = m.reduce_sum(y * m.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    return [y, t.gradient(s, data), attempt(lambda: m.math.segment_sum(data, [1, 0, 2, 2]))]


def test_a_traced_function_sums_by_each_calls_ids():
    data = ad.constant([1.0, 2.0, 3.0])
    f = ad.function(lambda ids: ad.math.unsorted_segment_sum(data, ids, 2))
    np.testing.assert_array_equal(f(ad.constant([0, 1, 1])).numpy(), [1.0, 5.0])
    np.testing.assert_array_equal(f(ad.constant([1, 1, -1])).numpy(), [0.0, 3.0])
