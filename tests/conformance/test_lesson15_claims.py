"""Lesson 15's sentences about TensorFlow, run on TensorFlow (and the same code on ad).

Each test quotes the sentence it pins (notebooks/src/15_memory_and_per_example_gradients.py,
by section). The lesson's memory counts use ``ad.debugging.tape_memory``, which TensorFlow
has no counterpart of; what the lesson says TensorFlow does is about values, gradients,
errors and how often a function runs, and that is what is checked here.
"""

import numpy as np
import pytest

import autodiff as ad


def _deep(m, checkpoint, runs):
    """Section 3's 40 layers in 4 blocks (smaller: a batch of 16), on ``m``."""
    rng = np.random.default_rng(0)
    x = m.constant(rng.normal(size=(16, 8)).astype(np.float32))
    ws = [m.Variable(rng.normal(size=(8, 8)).astype(np.float32) * 0.4) for _ in range(40)]

    def make_block(weights):
        def block(h):
            runs.append(1)
            for w in weights:
                h = m.tanh(h @ w)
            return h
        return block

    blocks = [make_block(ws[10 * k:10 * k + 10]) for k in range(4)]
    if checkpoint:
        blocks = [m.recompute_grad(b) for b in blocks]
    with m.GradientTape() as tape:
        h = x
        for b in blocks:
            h = b(h)
        loss = m.reduce_mean(m.square(h))
    before = len(runs)
    grads = tape.gradient(loss, ws)
    return loss, grads, before, len(runs) - before


# §3 "`ad.recompute_grad(f)` does exactly that; it is TensorFlow's `tf.recompute_grad`";
# "Identical: the backward pass ran the same ops on the same numbers"; "A block reads its
# weights as Variables; they still get gradients (`recompute_grad` hands them to its
# gradient function, as TensorFlow's does)"; "TensorFlow's `recompute_grad` runs the
# function a second time in the backward pass too."
def test_claim_recompute_grad_same_gradients_for_variables_and_one_more_run_per_block(tf):
    for m in (tf, ad):
        plain_loss, plain_grads, _, plain_runs = _deep(m, False, [])
        loss, grads, forward_runs, backward_runs = _deep(m, True, [])
        assert float(loss) == float(plain_loss)
        for a, b in zip(grads, plain_grads):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-9)
        assert (plain_runs, forward_runs, backward_runs) == (0, 4, 4), m.__name__
    tf_grads, ad_grads = _deep(tf, True, [])[1], _deep(ad, True, [])[1]
    for a, b in zip(ad_grads, tf_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-7)


def _captured(m):
    scale = m.constant(1.5)
    scaled = m.recompute_grad(lambda h: m.tanh(h) * scale)
    z = m.constant([0.5, -1.0])
    with m.GradientTape() as tape:
        tape.watch([z, scale])
        y = m.reduce_sum(scaled(z))
    return tape.gradient(y, [z, scale])


# §3 teaching moment "a tensor that the function merely uses from outside (not an argument,
# not a Variable) has no path to the result. Its gradient is `None`, on TensorFlow as here";
# exercise 5 (the same with `bias`); "Pass such a tensor as an argument ... and it gets its
# gradient."
def test_claim_recompute_grad_a_captured_tensor_gets_none_an_argument_does_not(tf):
    for m in (tf, ad):
        dz, dscale = _captured(m)
        assert dscale is None, m.__name__
        np.testing.assert_allclose(dz.numpy(), 1.5 * (1 - np.tanh([0.5, -1.0]) ** 2), rtol=1e-6)
        scale = m.constant(1.5)
        with m.GradientTape() as tape:
            tape.watch(scale)
            y = m.recompute_grad(lambda h, s: m.tanh(h) * s)(m.constant([0.5, -1.0]), scale)
        np.testing.assert_allclose(float(tape.gradient(y, scale)), np.tanh(0.5) + np.tanh(-1.0),
                                   rtol=1e-6)


def _example_data(m):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 3)).astype(np.float32)
    Y = (X @ np.array([1.0, -2.0, 0.5], np.float32))
    Y[5] += 4.0
    return m.constant(X), m.constant(Y), m.Variable([1.1, -1.9, 0.4])


def _three_ways(m):
    X, Y, w = _example_data(m)
    loop = []
    for b in range(8):
        with m.GradientTape() as tape:
            loss = (m.reduce_sum(X[b] * w) - Y[b]) ** 2
        loop.append(tape.gradient(loss, w))
    copies = m.tile(w[None, :], [8, 1])
    with m.GradientTape() as tape:
        tape.watch(copies)
        losses = (m.reduce_sum(X * copies, axis=1, keepdims=True) - Y[:, None]) ** 2
    by_batch_jacobian = tape.batch_jacobian(losses, copies)[:, 0, :]
    calls = []

    def grad_of_one(example):
        calls.append(1)
        x_b, y_b = example
        with m.GradientTape() as tape:
            loss = (m.reduce_sum(x_b * w) - y_b) ** 2
        return tape.gradient(loss, w)

    by_map = m.vectorized_map(grad_of_one, (X, Y))
    with m.GradientTape() as tape:
        mean_loss = m.reduce_mean((m.reduce_sum(X * w, axis=1) - Y) ** 2)
    return m.stack(loop), by_batch_jacobian, by_map, len(calls), tape.gradient(mean_loss, w)


# §4 "TensorFlow's `tf.vectorized_map` gives the same numbers but calls `grad_of_one` only
# **once**, to trace it, and then runs its ops on the whole batch together"; "Eight: here
# `vectorized_map` is a loop"; the summary "(a loop here, vectorized in TensorFlow)";
# "all three agree"; the mean of the per-example gradients is the batch gradient.
def test_claim_per_example_gradients_three_ways_and_how_often_fn_runs(tf):
    tf_results, ad_results = _three_ways(tf), _three_ways(ad)
    assert tf_results[3] == 1 and ad_results[3] == 8
    for results in (tf_results, ad_results):
        loop, by_batch_jacobian, by_map, _, batch_gradient = results
        np.testing.assert_allclose(by_batch_jacobian.numpy(), loop.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(by_map.numpy(), loop.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(batch_gradient.numpy(), np.mean(loop.numpy(), axis=0),
                                   rtol=1e-5, atol=1e-6)
        assert int(np.argmax(np.linalg.norm(loop.numpy(), axis=1))) == 5
    for a, b in zip(ad_results, tf_results):
        if not isinstance(a, int):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


# §4 "It needs a target of rank 2 or more, so the losses stay a column, `(8, 1)` (TensorFlow
# refuses a `(8,)` target the same way)."
def test_claim_batch_jacobian_refuses_a_rank_one_target(tf):
    for m in (tf, ad):
        copies = m.ones([8, 3])
        with m.GradientTape() as tape:
            tape.watch(copies)
            losses = m.reduce_sum(copies * copies, axis=1)
        with pytest.raises(ValueError):
            tape.batch_jacobian(losses, copies)


# Exercise 6: per-example clipping with clip_by_norm inside vectorized_map gives [0.6, 0.8];
# exercise 4: the shape of per-example kernel gradients (here with the same Dense layer on
# both libraries' Keras).
def test_claim_clipped_per_example_gradients_and_their_shape(tf):
    for m in (tf, ad):
        examples = m.constant([[3.0, 4.0], [0.6, 0.8]])
        weights = m.Variable([0.0, 0.0])

        def clipped(x_b, m=m, weights=weights):
            with m.GradientTape() as tape:
                loss = m.reduce_sum(x_b * weights)
            return m.clip_by_norm(tape.gradient(loss, weights), 1.0)

        mean = m.reduce_mean(m.vectorized_map(clipped, examples), axis=0)
        np.testing.assert_allclose(mean.numpy(), [0.6, 0.8], rtol=1e-6)
        kernel = m.Variable(np.ones((3, 5), np.float32))

        def kernel_grad(x_b, m=m, kernel=kernel):
            with m.GradientTape() as tape:
                loss = m.reduce_sum(m.matmul(x_b[None, :], kernel) ** 2)
            return tape.gradient(loss, kernel)

        assert tuple(m.vectorized_map(kernel_grad, m.ones([8, 3])).shape) == (8, 3, 5)
