"""Optimizers and learning-rate schedules step for step against Keras 3 (TensorFlow 2.21).

The same initial weights and the same gradients go to a Keras optimizer and
to ours for several steps; the weights must agree to float32 rounding. Ours
also runs inside ``ad.function`` and compiled, and must land on Keras' weights
there too: that is the point of keeping the step counter and the learning
rate in Variables (``autodiff/models/optimizers/``), with clipping and weight
decay as Keras 3 applies them (clip first, then decay, then the step).
"""

import numpy as np
import pytest

import autodiff as ad

STEPS = 8

SCHEDULES = {
    "exponential": ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3,
                                             decay_rate=0.5)),
    "exponential_staircase": ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3,
                                                       decay_rate=0.5, staircase=True)),
    "cosine": ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=5, alpha=0.2)),
    "cosine_warmup": ("CosineDecay", dict(initial_learning_rate=0.01, decay_steps=4, alpha=0.1,
                                          warmup_target=0.1, warmup_steps=3)),
    "piecewise": ("PiecewiseConstantDecay", dict(boundaries=[2, 5], values=[0.1, 0.05, 0.01])),
    "inverse_time": ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2,
                                              decay_rate=0.7)),
    "inverse_time_staircase": ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=3,
                                                        decay_rate=0.5, staircase=True)),
}

OPTIMIZERS = {
    "sgd": ("SGD", dict()),
    "nesterov": ("SGD", dict(momentum=0.8, nesterov=True)),
    "adam": ("Adam", dict()),
    "adamw": ("AdamW", dict(weight_decay=0.2)),
    "rmsprop": ("RMSprop", dict()),
    "rmsprop_centered_momentum": ("RMSprop", dict(rho=0.8, momentum=0.5, centered=True)),
    "adagrad": ("Adagrad", dict(initial_accumulator_value=0.2)),
    "lion": ("Lion", dict(beta_1=0.8)),
    "adam_amsgrad": ("Adam", dict(amsgrad=True, beta_2=0.9)),
    "adam_clipnorm": ("Adam", dict(clipnorm=0.5)),
    "adam_global_clipnorm": ("Adam", dict(global_clipnorm=0.7)),
    "adam_weight_decay": ("Adam", dict(weight_decay=0.1)),
    "sgd_clipvalue_momentum": ("SGD", dict(clipvalue=0.3, momentum=0.5)),
}


def _schedule(module, key):
    name, kwargs = SCHEDULES[key]
    return getattr(module.optimizers.schedules, name)(**kwargs)


@pytest.mark.parametrize("key", sorted(SCHEDULES))
def test_schedule_values_equal_keras(tf, key):
    ours, theirs = _schedule(ad, key), _schedule(tf.keras, key)
    for step in range(12):
        want = float(theirs(tf.constant(step, tf.int64)))
        got = float(ours(ad.constant(step, dtype=ad.int64)))
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9), (key, step)


def _run_ours(optimizer, rate, start, grads, mode):
    name, kwargs = OPTIMIZERS[optimizer]
    variables = [ad.Variable(s) for s in start]
    opt = getattr(ad.optimizers, name)(learning_rate=rate, **kwargs)

    def step(*g):
        opt.apply_gradients(zip(g, variables))

    if mode != "eager":
        step = ad.function(step, jit_compile=mode == "jit")
    for g in grads:
        step(*[ad.constant(a) for a in g])
    return [v.numpy() for v in variables], int(opt.iterations.numpy())


@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
@pytest.mark.parametrize("rate", ["float", *sorted(SCHEDULES)])
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_optimizer_with_schedule_equals_keras_for_several_steps(tf, optimizer, rate, mode):
    rng = np.random.default_rng(len(optimizer) * 31 + len(rate))
    start = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 2), (2,))]
    grads = [[rng.standard_normal(s.shape).astype(np.float32) for s in start]
             for _ in range(STEPS)]
    name, kwargs = OPTIMIZERS[optimizer]
    tf_vars = [tf.Variable(s) for s in start]
    tf_rate = 0.05 if rate == "float" else _schedule(tf.keras, rate)
    tf_opt = getattr(tf.keras.optimizers, name)(learning_rate=tf_rate, **kwargs)
    for g in grads:
        tf_opt.apply_gradients(zip([tf.constant(a) for a in g], tf_vars))
    ours, iterations = _run_ours(optimizer, 0.05 if rate == "float" else _schedule(ad, rate),
                                 start, grads, mode)
    for a, t in zip(ours, tf_vars):
        np.testing.assert_allclose(a, t.numpy(), rtol=2e-6, atol=1e-7)
    assert iterations == int(tf_opt.iterations.numpy()) == STEPS


def test_learning_rate_is_a_variable_that_can_be_set_as_in_keras(tf):
    # keras.optimizers.Adam(0.1).learning_rate is a float32 Variable; setting a float assigns it.
    for module in (tf.keras, ad):
        opt = module.optimizers.Adam(0.1)
        assert float(opt.learning_rate.numpy()) == pytest.approx(0.1)
        assert getattr(opt.learning_rate.dtype, "name", opt.learning_rate.dtype) == "float32"
        opt.learning_rate = 0.5
        assert float(opt.learning_rate.numpy()) == 0.5
        assert any(v is opt.learning_rate for v in opt.variables)


def test_a_scheduled_rate_cannot_be_set_in_keras_or_here(tf):
    for module in (tf.keras, ad):
        opt = module.optimizers.SGD(_schedule(module, "exponential"))
        with pytest.raises(TypeError, match="not settable"):
            opt.learning_rate = 0.3


def test_a_callable_rate_takes_no_arguments_in_keras_and_here(tf):
    for m, optimizers in ((tf, tf.keras.optimizers), (ad, ad.optimizers)):
        w = m.Variable([1.0])
        optimizers.SGD(lambda: 0.25).apply_gradients([(m.constant([2.0]), w)])
        np.testing.assert_allclose(w.numpy(), [0.5])
        with pytest.raises(TypeError, match="step"):   # a schedule-like function is not called so
            optimizers.SGD(lambda step: 0.25).apply_gradients([(m.constant([2.0]), w)])


def test_keras_arguments_not_implemented_here_are_refused_by_name(tf):
    with pytest.raises(NotImplementedError, match="use_ema"):
        ad.optimizers.Adam(use_ema=True)
    with pytest.raises(NotImplementedError, match="gradient_accumulation_steps"):
        ad.optimizers.SGD(gradient_accumulation_steps=2)
    tf.keras.optimizers.Adam(use_ema=True)          # Keras has them: only here they are refused
    for module in (tf.keras, ad):
        with pytest.raises(ValueError):
            module.optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0)
