"""The player's tooltip statistics: many_stats (a block of tensors at a time) gives
what value_stats gives one tensor at a time, and both bin as np.histogram does."""

import numpy as np
import pytest

import autodiff as ad
from widgets.player.data import statistics
from widgets.player.data.statistics import many_stats, value_stats


def _tensors():
    rng = np.random.default_rng(3)
    values = [np.full((3, 4), 3.0),                              # constant: hi = lo + 1
              np.array([0.0, 1.0, 1.0, 2.0, np.nan]),             # a NaN: one at a time
              np.array([1.0, -np.inf, 2.0]),
              np.array([-1e308, 0.0, 1e308]),                     # hi - lo overflows
              np.arange(12).reshape(3, 4),                        # integers
              np.arange(40) * 0.1,                                # values on the edges
              np.array([2.5]), np.zeros((0, 3))]
    for k in range(40):
        a = rng.normal(size=(4, 8)) * 10.0 ** (k % 7 - 3)
        values.append(a.astype(np.float32) if k % 2 else np.round(a * 4) / 4)
    return [ad.constant(v) for v in values]


@pytest.mark.parametrize("chunk", [1, 70, 1 << 21])
def test_many_stats_gives_value_stats_for_every_tensor(chunk, monkeypatch):
    monkeypatch.setattr(statistics, "CHUNK", chunk)
    tensors = _tensors()
    got = many_stats(tensors)
    assert len(got) == len(tensors)
    for tensor, stats in zip(tensors, got):
        want = value_stats(tensor)
        if want is None:
            assert stats is None
            continue
        # the mean: float64 sums here, NumPy's own mean there (4 digits kept)
        assert stats["mean"] == pytest.approx(want.pop("mean"), rel=2e-3, abs=1e-12)
        stats = dict(stats)
        stats.pop("mean")
        assert repr(stats) == repr(want)   # repr: -0.0 and 0.0 differ on the page


def test_a_signed_zero_at_the_min_or_max_is_written_as_value_stats_writes_it():
    # NumPy's min/max of a float32 row holding 0.0 and -0.0 may return either, and
    # another one than the row's float64 copy gives: the page must show value_stats' one
    rng = np.random.default_rng(0)
    tensors = []
    for n in (5, 8, 16, 33, 100, 1000, 5000):
        for trial in range(8):
            a = np.abs(rng.normal(size=n)) + 1
            first, second = rng.choice(n, size=2, replace=False)
            a[first], a[second] = 0.0, -0.0
            a = -a if trial % 2 else a          # the zeros at the max, then at the min
            tensors += [ad.constant(a.astype(np.float32)), ad.constant(a)]
    for tensor, stats in zip(tensors, many_stats(tensors)):
        want = value_stats(tensor)
        assert (repr(stats["min"]), repr(stats["max"])) == (repr(want["min"]),
                                                            repr(want["max"]))


def test_value_stats_bins_as_np_histogram():
    for tensor in _tensors()[5:]:
        values = tensor.numpy().reshape(-1)
        if values.size == 0:
            continue
        lo, hi = values.min(), values.max()
        want = np.histogram(values, 8, range=(lo, hi if hi > lo else lo + 1))[0].tolist()
        assert many_stats([tensor])[0]["hist"] == value_stats(tensor)["hist"] == want


@pytest.mark.parametrize("chunk", [70, 1 << 18])
def test_a_float32_block_gives_what_its_float64_copy_gives(chunk, monkeypatch):
    # float32 blocks are compared and reduced as float32 (sums in float64): every
    # number of every tensor's stats must be the float64 block's, bit for bit.
    monkeypatch.setattr(statistics, "CHUNK", chunk)
    rng = np.random.default_rng(11)
    values = [np.arange(40) * 0.1, np.full(9, 3.0), np.array([1.0, 1.0 + 2.0 ** -20, 2.0]),
              np.array([-3e38, 0.0, 3e38])]
    for size in (5, 64, 100, 4096, 8193, 20000):
        for k in range(4):
            a = rng.normal(size=size) * 10.0 ** (k - 2)
            values.append(np.round(a * 8) / 8 if k % 2 else a)     # many values on the edges
    ones = np.ones(4096)
    ones[:2] = 2.0 ** 24, -(2.0 ** 24)     # a float32 sum loses 511 of the ones
    values.append(ones)
    # each edge of np.histogram's (float64, most not a float32) with the float32 numbers
    # on either side of it: x >= edge must not be asked as x >= float32(edge)
    lo, hi = 0.0, float(np.float32(0.3))
    edges = np.arange(9.0) * ((hi - lo) / 8) + lo
    near = edges.astype(np.float32)
    values.append(np.concatenate([near, np.nextafter(near, np.float32(1)),
                                  np.nextafter(near, np.float32(-1))]).clip(lo, hi))
    single = [ad.constant(v.astype(np.float32)) for v in values]
    double = [ad.constant(v.astype(np.float32).astype(np.float64)) for v in values]
    got, want = many_stats(single), many_stats(double)
    assert got == want
    assert np.histogram(single[0].numpy(), 8)[0].tolist() == got[0]["hist"]


@pytest.mark.parametrize("size", [65535, 65536, 70001])
def test_counts_at_the_width_of_their_counter(size):
    # a row of fewer than 2**16 numbers is counted in uint16, a longer one in intp:
    # a count of all 65,535 numbers (each at or above the first edges) must not wrap
    rng = np.random.default_rng(size)
    a = np.ones(size)
    a[:3] = 0.0, 0.5, 0.75
    b = rng.normal(size=size)
    for values in (a, b, a.astype(np.float32), b.astype(np.float32)):
        tensor = ad.constant(values)
        got = many_stats([tensor, tensor])
        want = np.histogram(values, 8, range=(values.min(), values.max()))[0].tolist()
        assert got[0]["hist"] == got[1]["hist"] == value_stats(tensor)["hist"] == want
        assert sum(want) == size
