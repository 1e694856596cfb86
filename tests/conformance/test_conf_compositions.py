"""TensorFlow's composed functions on ad and TF: tensordot, l2_normalize, bias_add,
clip_by_global_norm, matvec, adjoint, reduce_any/reduce_all, rank, math.truediv and
math.log_softmax: values, gradients to second order, edge cases (zero norms, infinite
norms, None entries) and bad arguments (by error family).

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import attempt, same_on_both, value_and_two_derivatives


@same_on_both
def test_tensordot_axes_forms_and_gradients(m):
    a = m.constant(np.arange(24.0).reshape(2, 3, 4) / 10)
    b = m.constant(np.arange(12.0).reshape(4, 3) / 10)
    out = []
    for axes in (1, [[2], [0]], [[1, 2], [1, 0]], 0):
        with m.GradientTape() as t:
            t.watch([a, b])
            y = m.tensordot(a, b, axes=axes)
        out.append([y, t.gradient(y, [a, b])])
    out.append(attempt(lambda: m.tensordot(a, b, axes=[[0], [0]])))
    return out


@same_on_both
def test_l2_normalize_including_a_zero_vector_to_second_order(m):
    x = m.constant([[3.0, 4.0], [0.0, 0.0], [1e-8, 0.0]], dtype=m.float64)
    out = [value_and_two_derivatives(m, lambda v: m.math.l2_normalize(v, axis=1), x),
           value_and_two_derivatives(m, lambda v: m.nn.l2_normalize(v), x)]
    return out + [m.nn.l2_normalize(x, axis=0, epsilon=1e-2)]


@same_on_both
def test_bias_add_and_its_errors(m):
    value = m.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    bias = m.constant([1.0, -1.0, 0.5])
    with m.GradientTape() as t:
        t.watch([value, bias])
        y = m.nn.bias_add(value, bias) ** 2
    return [y, t.gradient(y, [value, bias]),
            attempt(lambda: m.nn.bias_add(value, m.constant([1.0, 2.0])))]


@same_on_both
def test_clip_by_global_norm_clips_passes_none_and_spreads_nan(m):
    a, b = m.constant([3.0, 4.0]), m.constant([[12.0]])
    with m.GradientTape() as t:
        t.watch([a, b])
        clipped, norm = m.clip_by_global_norm([a, None, b], 6.5)
        s = m.reduce_sum(clipped[0] * m.constant([1.0, 2.0])) + m.reduce_sum(clipped[2])
    short, short_norm = m.clip_by_global_norm([a], 100.0)
    bad, bad_norm = m.clip_by_global_norm([m.constant([np.inf, 1.0])], 1.0)
    return [clipped[0], clipped[1] is None, clipped[2], norm, t.gradient(s, [a, b]),
            short, short_norm, bad, bad_norm, m.linalg.global_norm([a, b])]


@same_on_both
def test_matvec_adjoint_and_their_gradients(m):
    a = m.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3) / 4)
    v = m.constant([1.0, -2.0, 0.5])
    w = m.constant([1.0, 3.0])
    with m.GradientTape() as t:
        t.watch([a, v, w])
        y = m.linalg.matvec(a, v)
        z = m.linalg.matvec(a, w, transpose_a=True)
        s = m.reduce_sum(y * y) + m.reduce_sum(m.linalg.adjoint(a) * 2.0) + m.reduce_sum(z)
    return [y, z, t.gradient(s, [a, v, w]), m.linalg.adjoint(m.constant([[1 + 2j, 3j]]))]


@same_on_both
def test_bool_reductions_rank_truediv_and_log_softmax(m):
    c = m.constant([[True, False], [True, True]])
    x = m.constant([[1.0, 2.0], [0.5, -1.0]])
    return [m.reduce_any(c), m.reduce_all(c, axis=1), m.math.reduce_any(c, axis=0, keepdims=True),
            m.math.reduce_all(c), m.rank(x), m.rank(m.constant(1.0)),
            m.math.truediv(x, m.constant(4.0)), m.math.log_softmax(x),
            attempt(lambda: m.reduce_any(x))]
