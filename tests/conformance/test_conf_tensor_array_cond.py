"""A TensorArray written under an ``if`` on a tensor, against TensorFlow 2: ``ad.cond``
and AutoGraph's ``if`` carry it as its buffer (``autodiff/control_flow/branch_arrays.py``),
in both branches or in one only, inside a loop or not; values and gradients from one trace
for every sign pattern, compiled == traced."""

import numpy as np
import pytest

import autodiff as ad


def _both_branches(m, x):
    ta = m.TensorArray(m.float32, size=4)
    for i in m.range(4):
        if x[i] > 0:
            ta = ta.write(i, x[i] * 2.0)
        else:
            ta = ta.write(i, -x[i])
    return ta.stack()


def _one_branch(m, x):   # unwritten elements read as zeros (element shape learnt from writes)
    ta = m.TensorArray(m.float32, size=4)
    for i in m.range(4):
        if x[i] > 0:
            ta = ta.write(i, x[i] * x[i])
    return ta.stack()


def _cond_of_arrays(m, x):
    ta = m.TensorArray(m.float32, size=2, element_shape=[4])
    ta = m.cond(m.reduce_sum(x) > 0, lambda: ta.write(0, x).write(1, x * 2.0),
                lambda: ta.write(1, m.sin(x)))
    return ta.stack()


def _array_made_in_a_branch(m, x):
    made = m.cond(x[0] > 0, lambda: m.TensorArray(m.float32, size=2).write(0, x).write(1, -x),
                  lambda: m.TensorArray(m.float32, size=2).unstack(m.stack([x * x, x])))
    return made.stack()


PROGRAMS = [_both_branches, _one_branch, _cond_of_arrays, _array_made_in_a_branch]
INPUTS = [[1.5, -2.0, 0.5, -1.0], [-1.0, 2.0, 3.0, 0.25], [-1.0, -2.0, -3.0, 0.5]]


def _run(m, f, x):
    x = m.constant(np.asarray(x, np.float32))
    with m.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        loss = m.reduce_sum(y * y * y)
    return y.numpy(), tape.gradient(loss, x).numpy()


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_an_if_carries_a_tensor_array_as_tensorflow(tf, program):
    ours = ad.function(lambda x: program(ad, x))
    compiled = ad.function(lambda x: program(ad, x), jit_compile=True)
    theirs = tf.function(lambda x: program(tf, x))
    for x in INPUTS:
        (y, g), (ty, tg), (cy, cg) = _run(ad, ours, x), _run(tf, theirs, x), \
            _run(ad, compiled, x)
        np.testing.assert_allclose(y, ty, rtol=1e-6)
        np.testing.assert_allclose(g, tg, rtol=1e-5)
        np.testing.assert_array_equal(cy, y)
        np.testing.assert_array_equal(cg, g)
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1


def test_a_branch_path_that_never_reads_the_input_gives_none_here_zeros_in_tensorflow(tf):
    """README, "Where this project differs": the outer tape sees the ops of the branches
    taken, so with no write taken x is not connected (None); TensorFlow's If/While nodes
    take x as an input and give zeros."""
    x = [-1.0, -2.0, -3.0, -0.5]
    ours = ad.function(lambda x: _one_branch(ad, x))
    theirs = tf.function(lambda x: _one_branch(tf, x))
    xa, xt = ad.constant(np.asarray(x, np.float32)), tf.constant(np.asarray(x, np.float32))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(xa)
        ours_loss = ad.reduce_sum(ours(xa))
    with tf.GradientTape() as their_tape:
        their_tape.watch(xt)
        their_loss = tf.reduce_sum(theirs(xt))
    assert tape.gradient(ours_loss, xa) is None
    np.testing.assert_array_equal(their_tape.gradient(their_loss, xt).numpy(), np.zeros(4))
    np.testing.assert_array_equal(tape.gradient(ours_loss, xa,
                                                unconnected_gradients="zero").numpy(), np.zeros(4))
