"""Constant powers to high order: every derivative of ``x ** c`` stays recorded.

TensorFlow's Pow gradient is ``grad * y * pow(x, y - 1)`` for every exponent,
so the third derivative of ``x ** 2`` is a tensor (0, and NaN at x = 0,
where it meets ``0 * 0 ** -1``), never None. Each test body is one function
of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import same_on_both

_EXPONENTS = (0.0, 1.0, 2.0, 3.0, -1.0, 0.5, -2.0)


def _derivatives(m, x, c, order):
    """[d1, ..., d_order] of sum(x ** c), each level's gradient recorded by the tapes around it."""
    tapes = [m.GradientTape(persistent=True) for _ in range(order)]
    for t in tapes:
        t.__enter__()
        t.watch(x)
    y = x ** c
    results = []
    for k in range(order - 1, -1, -1):
        tapes[k].__exit__(None, None, None)
        y = tapes[k].gradient(y, x) if y is not None else None
        results.append(y)
    return results


@same_on_both
def test_four_derivatives_of_constant_powers_at_zero_and_away_from_it(m):
    x = m.constant([0.0, 1.0, -1.5, 2.0], dtype=m.float64)
    return [_derivatives(m, x, c, 4) for c in _EXPONENTS if c != 0.5] + \
        [_derivatives(m, m.constant([0.0, 1.0, 2.25], dtype=m.float64), 0.5, 3)]


@same_on_both
def test_float32_powers_and_their_values(m):
    x = m.constant([0.0, -0.0, 3.0, -2.0, np.inf, -np.inf, np.nan, 1e-30])
    return [x ** c for c in (0.0, 1.0, 2.0, -1.0, 0.5)] + [_derivatives(m, x, 2.0, 3)]


@same_on_both
def test_forward_mode_through_a_square_to_second_order(m):
    x = m.constant([0.0, 1.0, -3.0])
    v = m.constant([1.0, 0.5, 2.0])
    with m.autodiff.ForwardAccumulator(x, v) as outer:
        with m.autodiff.ForwardAccumulator(x, v) as inner:
            y = x ** 2.0
        first = inner.jvp(y)
    return [y, first, outer.jvp(first)]
