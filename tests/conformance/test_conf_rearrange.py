"""roll, meshgrid and gather_nd on ad and TF: values, gradients (repeated indices add up),
Jacobians (the vectorized backward pass), forward mode and bad arguments (by error family).

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import attempt, same_on_both


@same_on_both
def test_roll_values_gradients_and_jacobian(m):
    x = m.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4) / 4)
    w = m.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
    out = []
    for shift, axis in ((1, 0), (-2, 1), ([1, 2], [0, 1]), ([1, 1], [1, 1]), (5, 1), (5, -1)):
        with m.GradientTape(persistent=True) as t:
            t.watch(x)
            y = m.roll(x, shift=shift, axis=axis)
            s = m.reduce_sum(y * w)
        # (TensorFlow's vectorized jacobian rolls the wrong axis for a negative one:
        # FINDINGS, "Not counted"; its gradient is right)
        out.append([y, t.gradient(s, x)] + ([t.jacobian(y, x)] if axis != -1 else []))
    out.append(attempt(lambda: m.roll(x, shift=[1, 2], axis=[0])))
    return out


@same_on_both
def test_meshgrid_both_indexings_and_gradients(m):
    a, b = m.constant([1.0, 2.0, 3.0]), m.constant([-1.0, 0.5])
    out = []
    for indexing in ("xy", "ij"):
        with m.GradientTape() as t:
            t.watch([a, b])
            gx, gy = m.meshgrid(a, b, indexing=indexing)
            s = m.reduce_sum(gx * gx * gy)
        out.append([gx, gy, t.gradient(s, [a, b])])
    c = m.constant([0.0, 1.0])
    out.append(m.meshgrid(a, b, c))
    return out


@same_on_both
def test_gather_nd_elements_slices_repeats_and_errors(m):
    p = m.constant(np.arange(24.0, dtype=np.float32).reshape(2, 3, 4))
    out = []
    for idx in ([[1, 2, 3], [0, 0, 0], [1, 2, 3]], [[1, 0], [0, 2]], [[1]], [[[0, 1]], [[1, 1]]]):
        with m.GradientTape() as t:
            t.watch(p)
            y = m.gather_nd(p, idx)
            s = m.reduce_sum(y * y)
        out.append([y, t.gradient(s, p)])
    with m.autodiff.ForwardAccumulator(p, m.ones_like(p)) as acc:
        y = m.gather_nd(p, [[0, 1], [1, 2]])
    out.append(acc.jvp(y))
    out.append(attempt(lambda: m.gather_nd(p, [[0, 3]])))
    return out
