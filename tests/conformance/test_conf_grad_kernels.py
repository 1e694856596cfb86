"""SqrtGrad, RsqrtGrad, ReciprocalGrad (FINDINGS F2): 0 where the cotangent is 0, and
their own derivatives, in Jacobians, second order and forward mode, on ad and TF.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import same_on_both

_FNS = ("sqrt", "rsqrt", "reciprocal")


def _f(m, name):
    return {"sqrt": m.sqrt, "rsqrt": m.math.rsqrt, "reciprocal": m.math.reciprocal}[name]


@same_on_both
def test_jacobians_at_singular_points_have_zero_off_diagonals(m):
    x = m.constant([0.0, -1.0, 4.0, np.inf, np.nan])
    out = []
    for name in _FNS:
        with m.GradientTape(persistent=True) as t:
            t.watch(x)
            y = _f(m, name)(x)
            yb = _f(m, name)(m.reshape(x, [1, 5]))
        out.append([t.jacobian(y, x), t.batch_jacobian(yb, m.reshape(x, [1, 5]))])
    return out


@same_on_both
def test_second_derivatives_with_zero_and_nonzero_cotangents(m):
    x = m.constant([0.0, -1.0, 0.25, 4.0], dtype=m.float64)
    dy = m.constant([0.0, 0.0, 1.0, 0.0], dtype=m.float64)
    out = []
    for name in _FNS:
        with m.GradientTape() as outer:
            outer.watch([x, dy])
            with m.GradientTape() as inner:
                inner.watch(x)
                y = _f(m, name)(x)
            g = inner.gradient(y, x, output_gradients=dy)
            s = m.reduce_sum(g * m.constant([1.0, 2.0, 3.0, 4.0], dtype=m.float64))
        out.append([g, outer.gradient(s, [x, dy])])
    return out


@same_on_both
def test_forward_mode_and_forward_over_reverse(m):
    x = m.constant([0.0, 1.0, 4.0, -1.0])
    v = m.constant([0.0, 1.0, 0.5, 0.0])
    out = []
    for name in _FNS:
        with m.autodiff.ForwardAccumulator(x, v) as acc:
            y = _f(m, name)(x)
            with m.GradientTape() as t:
                t.watch(x)
                z = _f(m, name)(x)
            g = t.gradient(z, x)
        out.append([acc.jvp(y), acc.jvp(g)])
    return out
