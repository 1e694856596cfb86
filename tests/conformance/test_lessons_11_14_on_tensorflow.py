"""What lessons 11 and 14 say about gradients, run on TensorFlow too.

Both lessons are about this toolkit's tape player, its health panel and its
training recorder, which TensorFlow has no counterpart of, so they do not
run cell by cell on TensorFlow as lesson 13 does (test_lessons_on_tensorflow.py).
What they say about the gradients themselves does hold there, and is pinned
here: each test quotes the sentence (lesson file and section), runs the
lesson's own computation on TensorFlow (``m`` is ``tf`` or ``ad``) and
asserts the claim there and here.
"""

import numpy as np
import pytest

import autodiff as ad


def _grads_none(grads):
    return [g is None for g in grads]


# ---- lesson 11, section 3 and exercises: the causes of a None gradient -------------------

def _none_causes(m):
    """Each cause of section 3 (and exercises 4 and 6): is the gradient None?"""
    out = {}
    c = m.constant(2.0)
    with m.GradientTape() as tape:
        z = c * c
    out["not_watched"] = tape.gradient(z, c)
    k = m.constant(3)
    with m.GradientTape() as tape:
        tape.watch(k)
        z = k * k
    out["integer"] = tape.gradient(z, k)
    w = m.Variable(1.5)
    with m.GradientTape() as tape:
        z = m.stop_gradient(w * w) + 1.0
    out["stop_gradient"] = tape.gradient(z, w)
    with m.GradientTape() as tape:
        h = 2.0 * w
        z = m.constant(np.exp(h.numpy())) * 3.0
    out["left_library"] = tape.gradient(z, w)
    x = m.Variable(0.7)
    with m.GradientTape() as tape:
        y = m.round(x) * 3.0
    out["round"] = tape.gradient(y, x)
    s, total = m.Variable(3.0), m.Variable(0.0)
    with m.GradientTape() as tape:
        total.assign_add(2.0 * s)
        y = total * total
    out["assign_add"] = tape.gradient(y, s)
    v = m.Variable(1.0)           # the training-loop slip: w = w - 0.1 * g
    grads = []
    for _ in range(2):
        with m.GradientTape() as tape:
            loss = v * v
        g = tape.gradient(loss, v)
        grads.append(g)
        if g is not None:
            v = v - 0.1 * g
    out["replaced_variable"] = grads
    return out


# 11_visual_debugging.py section 3 ("Not watched", "An integer", "stop_gradient on the
# path", "Leaving the library", "A Variable replaced by a Tensor": "the second gradient is
# None"), exercise 4 (round: not differentiable) and exercise 6 (assign_add: None)
@pytest.mark.filterwarnings("ignore:.*has no gradient")        # ad says so about the int32
def test_lesson11_every_cause_of_a_none_gradient_is_none_on_tensorflow(tf):
    for m in (tf, ad):
        out = _none_causes(m)
        first, second = out.pop("replaced_variable")
        assert float(first) == 2.0 and second is None, m.__name__
        assert out == dict.fromkeys(out), (m.__name__, out)


def _lesson11_numbers(m):
    w = m.Variable(2.0)
    with m.GradientTape() as tape:
        y = m.stop_gradient(w) * w
    ex3 = tape.gradient(y, w)
    x = m.Variable(2.0)
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            y = x ** 3
        dy_dx = inner.gradient(y, x)
    ex7 = outer.gradient(dy_dx, x)
    x, y = m.Variable(1.5), m.Variable(-0.5)
    with m.GradientTape() as tape:
        u = x * y + m.sin(x)
    return [float(ex3), float(ex7)] + [float(g) for g in tape.gradient(u, [x, y])]


# 11_visual_debugging.py exercise 3 (stop_gradient(w) * w at w = 2: 2.0), exercise 7 (the
# outer tape's d/dx of 3x**2 at x = 2: 12.0), section 2 (u = x y + sin x: y + cos x and x)
def test_lesson11_numbers_are_tensorflows(tf):
    expected = [2.0, 12.0, -0.5 + np.cos(1.5), 1.5]
    np.testing.assert_allclose(_lesson11_numbers(tf), expected, rtol=1e-6)
    np.testing.assert_allclose(_lesson11_numbers(ad), _lesson11_numbers(tf), rtol=1e-6)


def _frozen_layer_grads(m, kernels):
    """Section 4's slip: stop_gradient on d0's output; the gradients of d0, d1, out."""
    data = m.constant(np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32))
    (k0, b0), (k1, b1), (k2, b2) = [(m.Variable(k), m.Variable(b)) for k, b in kernels]
    with m.GradientTape() as tape:
        h = m.stop_gradient(m.tanh(m.matmul(data, k0) + b0))
        h = m.tanh(m.matmul(h, k1) + b1)
        loss = m.reduce_mean((m.matmul(h, k2) + b2) ** 2)
    return tape.gradient(loss, [k0, b0, k1, b1, k2, b2])


# 11_visual_debugging.py section 4: "a `stop_gradient` meant for the data was put one layer
# too late, on `d0`'s output": d0's variables get None, the others a gradient
def test_lesson11_a_stop_gradient_one_layer_too_late_leaves_that_layer_none(tf):
    rng = np.random.default_rng(1)
    kernels = [(rng.normal(size=s).astype(np.float32), np.zeros(s[1], np.float32))
               for s in ((3, 4), (4, 4), (4, 1))]
    tf_grads = _frozen_layer_grads(tf, kernels)
    assert _grads_none(tf_grads) == [True, True, False, False, False, False]
    ad_grads = _frozen_layer_grads(ad, kernels)
    assert _grads_none(ad_grads) == _grads_none(tf_grads)
    for t, a in zip(tf_grads[2:], ad_grads[2:]):
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-5, atol=1e-7)


# ---- lesson 14 ------------------------------------------------------------------------

def _rnn_state_norms(m, gain, steps=200, hidden=16, seed=0):
    """Section 2's unrolled RNN: ||dloss/dh_t|| for every step t (float64)."""
    rng = np.random.default_rng(seed)
    W = m.Variable((rng.normal(size=(hidden, hidden)) * gain / np.sqrt(hidden)).astype(np.float32))
    U = m.Variable((rng.normal(size=(2, hidden)) * 0.5).astype(np.float32))
    b = m.Variable(np.zeros((1, hidden), np.float32))
    xs = [m.constant(rng.normal(size=(1, 2)).astype(np.float32)) for _ in range(steps)]
    states = []
    with m.GradientTape() as tape:
        h = m.zeros((1, hidden))
        for x in xs:
            h = m.tanh(m.matmul(h, W) + m.matmul(x, U) + b)
            states.append(h)
        loss = m.reduce_sum(h)
    with np.errstate(over="ignore"):
        return np.array([np.linalg.norm(g.numpy().astype(np.float64))
                         for g in tape.gradient(loss, states)])


# 14_debugging_real_models.py section 2: "In float32, what is the gradient at the very first
# step?" -> 0.0; "Teaching moment: vanished means zero. The smallest positive float32 is
# about 1.4e-45 ... the first seventy steps of this network get no signal", and "TensorFlow's
# CPU kernels flush every subnormal number (below about 1.2e-38) to 0, so there this
# network's gradient is exactly 0 from about step 90 back"; with gain 3 "going back 200
# steps, the norm grew more than a million times"
def test_lesson14_a_float32_rnn_gradient_vanishes_to_exactly_zero_and_explodes(tf):
    tiny = float(np.finfo(np.float32).tiny)                  # 1.18e-38, the smallest normal
    small = {m.__name__: _rnn_state_norms(m, 0.5) for m in (tf, ad)}
    zero_from = {}
    for name, norms in small.items():
        assert norms[0] == 0.0 and norms[199] > 1.0, name
        zero_from[name] = max(t for t, n in enumerate(norms) if n == 0.0)
        assert all(n == 0.0 for n in norms[:zero_from[name] + 1])
    assert 60 <= zero_from["autodiff"] <= 80                 # "the first seventy steps"
    assert 85 <= zero_from["tensorflow"] <= 97               # "from about step 90 back"
    assert small["tensorflow"][small["tensorflow"] > 0].min() >= tiny     # flushed
    assert small["autodiff"][small["autodiff"] > 0].min() < 1e-44         # kept, as NumPy
    np.testing.assert_allclose(small["autodiff"][150:], small["tensorflow"][150:], rtol=1e-3)
    for m in (tf, ad):
        large = _rnn_state_norms(m, 3.0)
        assert large[0] > 1e6 * large[199], m.__name__


def _broken_step(m, weights, fixed):
    """Section 3's broken MLP on the glitch row: the loss and the six gradients."""
    rng = np.random.default_rng(0)
    points = rng.normal(size=(64, 2)).astype(np.float32)
    labels = rng.integers(0, 2, 64).astype(np.int32)
    points[0], labels[0] = (300.0, 300.0), 0
    x, y = m.constant(points), m.constant(labels)
    variables = [m.Variable(w) for w in weights]
    k1, b1, k2, b2, k3, b3 = variables
    with m.GradientTape() as tape:
        h = m.nn.relu(m.matmul(x, k1) + b1)
        h = m.maximum(h, 0.0) if fixed else m.constant(np.maximum(h.numpy(), 0.0))
        h = m.nn.relu(m.matmul(h, k2) + b2)
        logits = m.matmul(h, k3) + b3
        if fixed:
            loss = m.reduce_mean(m.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        else:
            onehot = m.one_hot(y, 2)
            loss = -m.reduce_mean(m.reduce_sum(onehot * m.math.log(m.nn.softmax(logits)), axis=1))
    return loss, tape.gradient(loss, variables), m.nn.softmax(logits).numpy()[0]


# 14_debugging_real_models.py section 3: "float32's softmax rounds the other class's
# probability to exactly 0. `log(0)` is `-inf`, and `0 * -inf` is `nan`": a nan loss, "four
# gradients full of `nan`, two that are `None`" (the NumPy line cuts hidden1 off); "The
# fix": with ad.maximum and sparse_softmax_cross_entropy_with_logits (log-softmax, "never
# log(0)") every gradient is finite and none is None
def test_lesson14_the_broken_step_is_nan_and_none_on_tensorflow_and_the_fix_is_finite(tf):
    rng = np.random.default_rng(3)
    shapes = ((2, 16), (16,), (16, 16), (16,), (16, 2), (2,))
    weights = [(rng.normal(size=s) * 0.5).astype(np.float32) for s in shapes]
    results = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in (tf, ad):
            loss, grads, glitch = _broken_step(m, weights, fixed=False)
            assert np.isnan(float(loss)) and list(glitch).count(0.0) == 1, m.__name__
            assert _grads_none(grads) == [True, True, False, False, False, False], m.__name__
            assert all(np.isnan(g.numpy()).any() for g in grads[2:]), m.__name__
            loss, grads, _ = _broken_step(m, weights, fixed=True)
            assert all(g is not None and np.all(np.isfinite(g.numpy())) for g in grads)
            results[m.__name__] = (float(loss), [g.numpy() for g in grads])
    assert results["autodiff"][0] == pytest.approx(results["tensorflow"][0], rel=1e-5)
    for a, t in zip(results["autodiff"][1], results["tensorflow"][1]):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-6)


# 14_debugging_real_models.py section 4: "Keras's default (Glorot uniform, as
# `ad.keras.layers.Dense` uses too) gives a 16 x 16 kernel a standard deviation of 0.25"
def test_lesson14_dense_kernels_start_glorot_uniform_with_std_a_quarter_at_16_by_16(tf):
    tf_dense = tf.keras.layers.Dense(16)
    tf_dense.build((None, 16))
    assert type(tf_dense.kernel_initializer).__name__ == "GlorotUniform"
    limit = np.sqrt(6.0 / (16 + 16))
    assert limit / np.sqrt(3.0) == pytest.approx(0.25)        # a uniform's std: limit / sqrt(3)

    def ad_kernel(seed):
        ad.random.set_seed(seed)
        dense = ad.keras.layers.Dense(16)
        dense(ad.zeros((1, 16)))
        return dense.kernel.numpy()

    samples = {"tensorflow": [tf.keras.initializers.GlorotUniform(seed=s)((16, 16)).numpy()
                              for s in range(100)],
               "autodiff": [ad_kernel(s) for s in range(100)]}
    for name, kernels in samples.items():
        values = np.concatenate([k.ravel() for k in kernels])
        assert np.abs(values).max() <= limit, name
        assert np.std(values) == pytest.approx(0.25, rel=0.02), name


# 14_debugging_real_models.py exercises 2 (0.5 h three times: 0.125), 3 (d/dp log p at 0:
# inf) and 4 (stop_gradient on the first layer's output: its kernel's gradient is None)
def test_lesson14_exercise_answers_hold_on_tensorflow(tf):
    for m in (tf, ad):
        h0 = m.Variable(1.0)
        with m.GradientTape() as tape:
            h = h0
            for _ in range(3):
                h = 0.5 * h
        assert float(tape.gradient(h, h0)) == 0.125
        p = m.Variable(0.0)
        with np.errstate(divide="ignore"), m.GradientTape() as tape:
            y = m.math.log(p)
        assert float(tape.gradient(y, p)) == np.inf
        k = m.Variable(np.ones((2, 3), np.float32))
        with m.GradientTape() as tape:
            loss = m.reduce_sum(m.stop_gradient(m.matmul(m.ones((1, 2)), k)) * 2.0)
        assert tape.gradient(loss, k) is None, m.__name__
