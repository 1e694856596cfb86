"""Inverse and hyperbolic trigonometry, atan2, and the zero-safe tf.math ops, on ad and TF.

Values at the edges of each domain (where the derivative is inf or NaN), first and
second derivatives with zero and non-zero cotangents, forward mode, broadcasting.
Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import same_on_both, value_and_two_derivatives

_INSIDE = [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]
_UNARY = {"asin": _INSIDE, "acos": _INSIDE, "atan": [-3.0, 0.0, 2.0, np.inf],
          "sinh": [-2.0, 0.0, 1.0], "cosh": [-2.0, 0.0, 1.0], "asinh": [-2.0, 0.0, 1.0],
          "acosh": [0.5, 1.0, 2.0, 3.0], "atanh": _INSIDE, "erfc": [-1.0, 0.0, 0.5, 3.0],
          "log_sigmoid": [-100.0, -1.0, 0.0, 2.0, 100.0]}


@same_on_both
def test_unary_values_and_two_derivatives(m):
    out = []
    for name, points in _UNARY.items():
        x = m.constant(points, dtype=m.float64)
        out.append(value_and_two_derivatives(m, getattr(m.math, name), x))
    return out


@same_on_both
def test_unary_forward_mode(m):
    out = []
    for name, points in _UNARY.items():
        x = m.constant(points)
        with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
            y = getattr(m.math, name)(x)
        out.append(acc.jvp(y))
    return out


@same_on_both
def test_atan2_all_quadrants_the_origin_and_broadcasting(m):
    y = m.constant([[1.0, -1.0, 0.0, 0.0, -0.0]], dtype=m.float64)
    x = m.constant([[1.0], [-1.0], [0.0]], dtype=m.float64)
    with m.GradientTape(persistent=True) as t:
        t.watch([y, x])
        z = m.math.atan2(y, x)
        s = m.reduce_sum(z * m.constant([[1.0, 2.0, 3.0, 4.0, 5.0]], dtype=m.float64))
    return [z, t.gradient(s, [y, x])]


_SAFE = ("xlogy", "xdivy", "divide_no_nan", "multiply_no_nan")


@same_on_both
def test_zero_safe_values_and_gradients_at_zeros(m):
    x = m.constant([0.0, 0.0, 2.0, -1.5, np.inf, np.nan, 0.0], dtype=m.float64)
    y = m.constant([0.0, 3.0, 0.0, 2.0, 0.0, 0.0, -0.0], dtype=m.float64)
    out = []
    for name in _SAFE:
        f = getattr(m.math, name)
        with m.GradientTape() as outer:
            outer.watch([x, y])
            with m.GradientTape() as inner:
                inner.watch([x, y])
                z = f(x, y)
            gx, gy = inner.gradient(z, [x, y])
            s = m.reduce_sum(gx) + m.reduce_sum(gy)
        out.append([z, gx, gy, outer.gradient(s, [x, y])])
    return out


@same_on_both
def test_zero_safe_ops_broadcast_and_reduce_their_gradients(m):
    x = m.constant([[0.0], [1.5]])
    y = m.constant([2.0, 0.0, 0.5])
    out = []
    for name in _SAFE:
        with m.GradientTape() as t:
            t.watch([x, y])
            z = getattr(m.math, name)(x, y)
        out.append([z, t.gradient(z, [x, y])])
    return out


@same_on_both
def test_predicates_and_softsign_first_order(m):
    x = m.constant([np.nan, np.inf, -np.inf, 0.0, -2.5])
    preds = [m.math.is_nan(x), m.math.is_inf(x), m.math.is_finite(x)]
    v = m.constant([-3.0, 0.0, 0.5, 10.0])
    with m.GradientTape() as t:
        t.watch(v)
        y = m.nn.softsign(v)
    return preds + [y, t.gradient(y, v), m.math.softsign(v)]
