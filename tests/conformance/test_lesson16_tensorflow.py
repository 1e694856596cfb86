"""Lesson 16's tape side, run on TensorFlow too.

Lesson 16 (notebooks/src/16_pytorch_and_jax.py) sets the tape, "autodiff
(TensorFlow's names)", beside PyTorch and JAX, and its summary table speaks
for TensorFlow as much as for ``ad``. tests/compare/test_lesson16_pytorch_jax.py
runs its PyTorch and JAX code; here each behaviour the lesson shows on the tape
runs on TensorFlow and on ``ad``, and the two must agree. The comment above
each test quotes the lesson.
"""

import numpy as np
import pytest

import autodiff as ad


def _numpy(t):
    return None if t is None else np.asarray(t.numpy()).tolist()


# §2 "A non-persistent tape answers one `gradient` call and then frees its records" (a
# RuntimeError on the second call); table row "a second gradient from one record:
# persistent=True".
@pytest.mark.parametrize("persistent", [False, True])
def test_second_gradient_call_needs_a_persistent_tape(tf, persistent):
    def second_call(m):
        x = m.Variable(2.0)
        with m.GradientTape(persistent=persistent) as tape:
            y = x ** 3 + m.sin(x)
        first = float(tape.gradient(y, x).numpy())
        try:
            return first, float(tape.gradient(y, x).numpy())
        except RuntimeError:
            return first, "RuntimeError"

    on_tf, on_ad = second_call(tf), second_call(ad)
    assert on_tf[0] == pytest.approx(on_ad[0], rel=1e-6)
    assert on_tf[0] == pytest.approx(12 + np.cos(2.0), rel=1e-6)
    if persistent:
        assert on_tf[1] == pytest.approx(on_ad[1], rel=1e-6) and on_tf[1] == on_tf[0]
    else:
        assert on_tf[1] == on_ad[1] == "RuntimeError"


# §3 "On the tape it is `None` (or zeros, if you ask for them with
# `unconnected_gradients`)"; exercise 2 "the tape keeps TensorFlow's convention for a
# source the target never used" ([8.0, None]).
def test_unused_source_is_none_or_zeros_on_request(tf):
    def grads(m, **kwargs):
        x, z = m.Variable(3.0), m.Variable(5.0)
        with m.GradientTape() as tape:
            y = x * x
        return [_numpy(g) for g in tape.gradient(y, [x, z], **kwargs)]

    assert grads(tf) == grads(ad) == [6.0, None]
    assert grads(tf, unconnected_gradients="zero") == grads(ad, unconnected_gradients="zero") \
        == [6.0, 0.0]


# §3 "`y = x * stop_gradient(x)` at x = 3" (3.0), and "nothing inside `stop_recording()`
# leaves a record on the tape".
def test_stop_gradient_and_stop_recording(tf):
    def run(m):
        x = m.Variable(3.0)
        with m.GradientTape(persistent=True) as tape:
            y = x * m.stop_gradient(x)
            with tape.stop_recording():
                z = x * x
        return _numpy(tape.gradient(y, x)), _numpy(tape.gradient(z, x))

    assert run(tf) == run(ad) == (3.0, None)


# §4 "If the inner `gradient` call runs *after* the outer tape has stopped, the outer tape
# never saw it and answers `None`" (inside: 4.0 12.0; outside: 4.0 None).
@pytest.mark.parametrize("inside", [True, False])
def test_inner_gradient_recorded_only_inside_the_outer_tape(tf, inside):
    def run(m):
        x = m.constant(1.0)
        with m.GradientTape() as outer:
            outer.watch(x)
            with m.GradientTape() as inner:
                inner.watch(x)
                y = x ** 4
            if inside:
                dy = inner.gradient(y, x)
        if not inside:
            dy = inner.gradient(y, x)
        return _numpy(dy), _numpy(outer.gradient(dy, x))

    assert run(tf) == run(ad) == ((4.0, 12.0) if inside else (4.0, None))


# §6 "a tape, asked for the gradient of a **vector** target, differentiates its sum"; the
# vjp with u = [1, 0, 1] is [2, 0, 6]; the jvp of x**3 at 2 with v = 0.5 is (8, 6).
def test_vector_target_vjp_and_jvp(tf):
    def run(m):
        x = m.constant([1.0, 2.0, 3.0])
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
        summed = _numpy(tape.gradient(y, x))
        ones = _numpy(tape.gradient(y, x, output_gradients=m.ones([3])))
        vjp = _numpy(tape.gradient(y, x, output_gradients=m.constant([1.0, 0.0, 1.0])))
        s = m.constant(2.0)
        with m.autodiff.ForwardAccumulator(s, m.constant(0.5)) as acc:
            cube = s ** 3
        return summed, ones, vjp, _numpy(cube), _numpy(acc.jvp(cube))

    expected = ([2.0, 4.0, 6.0], [2.0, 4.0, 6.0], [2.0, 0.0, 6.0], 8.0, 6.0)
    assert run(tf) == run(ad) == expected


# §5 per-example gradients: "the Jacobian of the **vector** of per-example losses with
# respect to the weights", shape (4, 3).
def test_per_example_gradients_as_a_jacobian(tf):
    def run(m):
        w = m.Variable([1.0, -1.0, 0.5])
        xs = m.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3) / 10)
        ys = m.constant([0.0, 1.0, 2.0, 3.0])
        with m.GradientTape() as tape:
            losses = (m.linalg.matvec(xs, w) - ys) ** 2
        return tape.jacobian(losses, w).numpy()

    on_tf, on_ad = run(tf), run(ad)
    assert on_tf.shape == on_ad.shape == (4, 3)
    np.testing.assert_allclose(on_ad, on_tf, rtol=1e-6)


# The appendix: clip_gradient with `custom_gradient`: "dy/dx would be 12", the clipped
# gradient is 1.0.
def test_clip_gradient_custom_gradient(tf):
    def run(m):
        @m.custom_gradient
        def clip_gradient(x):
            def grad(upstream):
                return m.clip_by_value(upstream, -1.0, 1.0)
            return m.identity(x), grad

        x = m.constant(2.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = clip_gradient(x) ** 3
        return _numpy(tape.gradient(y, x))

    assert run(tf) == run(ad) == 1.0


# The appendix: "`autodiff` has `ad.recompute_grad(f)` (TensorFlow's `tf.recompute_grad`) ... a
# counter shows that `block` runs twice: once going forward, once more when `gradient`
# reaches its record" (calls: 2, dy/dx: 0.3600).
def test_recompute_grad_runs_the_block_twice_with_the_same_gradient(tf):
    def run(m):
        calls = []

        def block(x):
            calls.append(1)
            return m.sin(m.sin(x))

        x = m.constant(1.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.recompute_grad(block)(x)
        after_forward = len(calls)
        gradient = float(tape.gradient(y, x).numpy())
        return after_forward, len(calls), f"{gradient:.4f}"

    assert run(tf) == run(ad) == (1, 2, "0.3600")


# §5 "`tape.jacobian` gets them ... and `ad.vectorized_map` (lesson 15) from a function of
# one example" (the same numbers as the Jacobian's rows, on TensorFlow as here).
def test_vectorized_map_of_a_per_example_gradient(tf):
    def run(m):
        w = m.Variable([1.0, -1.0, 0.5])
        xs = m.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3) / 10)
        ys = m.constant([0.0, 1.0, 2.0, 3.0])

        def gradient_of_one(example):
            x, y = example
            with m.GradientTape() as tape:
                loss = (m.reduce_sum(x * w) - y) ** 2
            return tape.gradient(loss, w)

        return m.vectorized_map(gradient_of_one, (xs, ys)).numpy()

    on_tf, on_ad = run(tf), run(ad)
    assert on_tf.shape == on_ad.shape == (4, 3)
    np.testing.assert_allclose(on_ad, on_tf, rtol=1e-6, atol=1e-7)
