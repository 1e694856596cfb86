"""A step's scalars on host 0-d NumPy arrays (``raw_scalars``, ``schedules.raw_rate``)
are the floats the ops give, bit for bit: the learning rate of every built-in schedule,
Adam's bias-corrected ``alpha``, at many step counts and in every float dtype; and the
ops still run (and are seen) whenever a tape records the step."""

import numpy as np
import pytest

import autodiff as ad
from autodiff.models.optimizers import base, schedules

S = ad.optimizers.schedules
SCHEDULES = {
    "float": lambda: 0.05,
    "exponential": lambda: S.ExponentialDecay(1e-3, 100, 0.96),
    "exponential_staircase": lambda: S.ExponentialDecay(0.1, 7, 0.5, staircase=True),
    "inverse_time": lambda: S.InverseTimeDecay(0.3, 10, 0.7),
    "cosine": lambda: S.CosineDecay(1e-3, 1000, alpha=0.1),
    "cosine_warmup": lambda: S.CosineDecay(1e-4, 500, warmup_target=1e-2, warmup_steps=50),
}
STEPS = [0, 1, 2, 3, 6, 7, 49, 50, 51, 99, 100, 101, 499, 550, 999, 1000, 1001, 123457,
         2 ** 24 - 1, 2 ** 24, 2 ** 24 + 1, 10 ** 9]


def _bits(value):
    value = np.asarray(value)
    return value.dtype, value.tobytes()


def _both(optimizer, variable, it):
    """(raw, ops): the step's rate and scalars computed each way at iteration ``it``."""
    optimizer.iterations.assign(it)
    assert base.raw_scalars(variable)
    raw_rate = optimizer._step_rate(True)
    raw = optimizer._step_scalars(raw_rate, variable)
    with ad.GradientTape():   # a recording tape: the ops run, as it must see them
        assert not base.raw_scalars(variable)
        ops_rate = optimizer._step_rate(False)
        ops = optimizer._step_scalars(ops_rate, variable)
    return (raw_rate, raw), (ops_rate, ops)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("make", [
    lambda rate: ad.optimizers.Adam(rate),
    lambda rate: ad.optimizers.Adam(rate, beta_1=0.5, beta_2=0.75),
    lambda rate: ad.optimizers.SGD(rate, momentum=0.9),
    lambda rate: ad.optimizers.Lion(rate)], ids=["adam", "adam_betas", "sgd", "lion"])
def test_raw_step_scalars_equal_the_ops_bit_for_bit(make, schedule, dtype):
    optimizer = make(SCHEDULES[schedule]())
    variable = ad.Variable(np.zeros(3, dtype))
    if not isinstance(variable._value, np.ndarray):   # the strict (device) backend: ops only
        assert not base.raw_scalars(variable)
        return
    for it in STEPS:
        (raw_rate, raw), (ops_rate, ops) = _both(optimizer, variable, it)
        if isinstance(optimizer._learning_rate, schedules.LearningRateSchedule):
            assert isinstance(raw_rate, np.ndarray), "the built-in schedule ran on arrays"
            assert _bits(raw_rate) == _bits(ops_rate.numpy()), (schedule, it)
        assert sorted(raw) == sorted(ops)
        for name in raw:
            assert isinstance(raw[name], (np.ndarray, np.generic))
            assert _bits(raw[name]) == _bits(ops[name]), (schedule, dtype, it, name)


def test_a_schedule_of_ones_own_runs_its_ops():
    class Halving(S.ExponentialDecay):   # a subclass: its own __call__, never the raw form
        def __call__(self, step):
            return super().__call__(step) / 2.0

    schedule = Halving(0.1, 10, 0.5)
    assert schedules.raw_rate(schedule, np.asarray(10)) is None
    assert schedules.raw_rate(S.ExponentialDecay(0.1, 10, 0.5), np.asarray(10)) == \
        np.float32(0.05)
    optimizer = ad.optimizers.SGD(schedule)
    w = ad.Variable([1.0])
    optimizer.apply_gradients([(ad.constant([1.0]), w)])   # 1 - 0.1 / 2 at step 0
    np.testing.assert_array_equal(w.numpy(), np.float32([1.0]) - np.float32(0.05))


def test_a_recorded_step_and_an_unrecorded_one_end_equal():
    """The same Adam steps, one run with a tape recording around each (ops), one not (raw
    scalars): weights and slots equal bit for bit."""
    rng = np.random.default_rng(5)
    grads = [rng.normal(size=(4, 3)).astype(np.float32) for _ in range(12)]

    def train(recorded):
        w = ad.Variable(np.ones((4, 3), np.float32))
        optimizer = ad.optimizers.AdamW(S.CosineDecay(1e-2, 8, warmup_target=0.1,
                                                      warmup_steps=3), weight_decay=0.1)
        for g in grads:
            if recorded:
                with ad.GradientTape():
                    optimizer.apply_gradients([(ad.constant(g), w)])
            else:
                optimizer.apply_gradients([(ad.constant(g), w)])
        return [v.numpy() for v in [w] + optimizer.variables]

    for a, b in zip(train(True), train(False)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("recorded", [False, True], ids=["unrecorded", "recorded"])
def test_an_int_initial_rate_is_refused_as_the_ops_refuse_it(recorded):
    """An int rate cannot meet a float decay in the ops; the raw form
    must not promote it quietly and train with rate 1.0, then 0.0."""
    optimizer = ad.optimizers.SGD(S.ExponentialDecay(1, decay_steps=10, decay_rate=0.5))
    w = ad.Variable([1.0, 2.0])
    assert schedules.raw_rate(optimizer._learning_rate, np.asarray(0)) is None
    with pytest.raises(ad.errors.InvalidArgumentError, match="Pow"):
        if recorded:
            with ad.GradientTape():
                optimizer.apply_gradients([(ad.constant([1.0, 1.0]), w)])
        else:
            optimizer.apply_gradients([(ad.constant([1.0, 1.0]), w)])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("alpha", [np.float64(0.05), np.float32(0.05), 0.05, 0],
                         ids=["np_float64", "np_float32", "float", "int"])
def test_a_cosine_alpha_of_any_type_gives_the_ops_rate(alpha):
    """A NumPy float64 ``alpha`` stays float64 in NumPy arithmetic but is converted to the
    rate's dtype by the ops: every step's rate is still the ops' bits."""
    optimizer = ad.optimizers.SGD(S.CosineDecay(0.1, 1000, alpha=alpha))
    variable = ad.Variable(np.zeros(3, np.float32))
    if not isinstance(variable._value, np.ndarray):   # the strict (device) backend: ops only
        return
    for it in STEPS + list(range(2, 40)):
        (raw_rate, _), (ops_rate, _) = _both(optimizer, variable, it)
        assert _bits(raw_rate) == _bits(ops_rate.numpy()), (alpha, it)
