"""The rest of tf.math a guide reader uses (complex parts, squared_difference, add_n,
spread statistics, reverse): values and gradients to second order, on ad and TF.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import attempt, same_on_both


def _grad2(m, f, x):
    """[f(x), f'(x), f''(x)] for a sum of f's outputs, through two nested tapes."""
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
            loss = m.reduce_sum(y * y)
        g = inner.gradient(loss, x)
    return [y, g, outer.gradient(g, x)]


@same_on_both
def test_real_imag_conj_values_and_gradients(m):
    z = m.constant([1.0 + 2.0j, -0.5 + 0.25j], dtype=m.complex128)
    r = m.constant([1.5, -2.0])
    out = [m.math.real(z), m.math.imag(z), m.math.conj(z),
           m.math.real(r), m.math.imag(r), m.math.conj(r)]
    for f in (m.math.real, m.math.imag):
        with m.GradientTape() as t:
            t.watch(z)
            y = m.reduce_sum(f(z) * f(z))
        out.append(t.gradient(y, z))
    with m.GradientTape() as t:
        t.watch(z)
        y = m.math.real(m.math.conj(z) * m.constant([2.0 + 1.0j, 1.0j], dtype=m.complex128))
    out.append(t.gradient(y, z))
    return out


@same_on_both
def test_squared_difference_to_second_order(m):
    x = m.constant([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], dtype=m.float64)
    y = m.constant([0.5, 1.0, -1.5], dtype=m.float64)
    out = _grad2(m, lambda v: m.math.squared_difference(v, y), x)
    with m.GradientTape() as t:
        t.watch(y)
        s = m.reduce_sum(m.math.squared_difference(x, y))
    out.append(t.gradient(s, y))
    return out


@same_on_both
def test_add_n_values_gradients_and_errors(m):
    a, b, c = m.constant([1.0, 2.0]), m.constant([3.0, -4.0]), m.constant([0.5, 0.5])
    with m.GradientTape() as t:
        t.watch([a, b, c])
        y = m.add_n([a, b, a * c])
        s = m.reduce_sum(y * y)
    return [y, m.math.add_n([a]), t.gradient(s, [a, b, c]),
            attempt(lambda: m.add_n([a, m.constant([1.0, 2.0, 3.0])])),
            attempt(lambda: m.add_n([]))]


@same_on_both
def test_reduce_variance_and_std_to_second_order(m):
    x = m.constant([[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]], dtype=m.float64)
    out = []
    for f in (m.math.reduce_variance, m.math.reduce_std):
        for axis, keepdims in ((None, False), (1, False), (0, True), ([-1, 0], False)):
            out.append(_grad2(m, lambda v: f(v, axis=axis, keepdims=keepdims), x))
    out.append(m.math.reduce_variance(m.constant([1.0 + 1.0j, 2.0 - 1.0j], dtype=m.complex128)))
    out.append(attempt(lambda: m.math.reduce_variance(m.constant([1, 2, 3]))))
    return out


@same_on_both
def test_reduce_std_of_a_constant_row_has_nan_gradient(m):
    # a row with no spread: sqrt'(0) = inf, times the zero deviations, is NaN in both
    x = m.constant([[2.0, 2.0], [1.0, 3.0]])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.math.reduce_std(x, axis=1)
    return [y, t.gradient(y, x)]


@same_on_both
def test_reduce_euclidean_norm_to_second_order(m):
    x = m.constant([[3.0, -4.0, 1.0], [0.5, 2.0, -1.0]], dtype=m.float64)
    out = []
    for axis, keepdims in ((None, False), (1, False), (0, True), ([0, 1], True)):
        out.append(_grad2(m, lambda v: m.math.reduce_euclidean_norm(v, axis=axis,
                                                                    keepdims=keepdims), x))
    with m.GradientTape() as t:  # at 0: 0 / (0 / g) is NaN in TF's rule
        z = m.zeros([2])
        t.watch(z)
        n = m.math.reduce_euclidean_norm(z)
    out.append([n, t.gradient(n, z)])
    return out


@same_on_both
def test_reverse_values_gradients_and_errors(m):
    x = m.constant(np.arange(12.0).reshape(2, 3, 2))
    w = m.constant(np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2))
    out = [m.reverse(x, axis=[0]), m.reverse(x, axis=[-1, 1]), m.reverse(x, axis=[])]
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reduce_sum(m.reverse(x, axis=[1, 2]) * w)
    out.append(t.gradient(y, x))
    out.append(attempt(lambda: m.reverse(x, axis=[3])))
    out.append(attempt(lambda: m.reverse(x, axis=[1, -2])))
    return out


@same_on_both
def test_new_ops_in_forward_mode_and_jacobians(m):
    x = m.constant([[3.0, -4.0], [1.0, 2.0]], dtype=m.float64)
    v = m.constant([[0.5, 1.0], [-1.0, 0.25]], dtype=m.float64)
    fns = [lambda a: m.reverse(a, axis=[1]), lambda a: m.math.squared_difference(a, 1.5),
           lambda a: m.add_n([a, a * a]), lambda a: m.math.reduce_euclidean_norm(a, axis=1),
           lambda a: m.math.reduce_variance(a, axis=0), lambda a: m.math.reduce_std(a)]
    out = []
    for f in fns:
        with m.autodiff.ForwardAccumulator(x, v) as acc:
            y = f(x)
        with m.GradientTape() as t:
            t.watch(x)
            y2 = f(x)
        out.append([acc.jvp(y), t.jacobian(y2, x)])
    return out
