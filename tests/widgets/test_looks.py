"""look_many (many values at once) gives what _inspect gives one value at a time:
the same previews, NaN/Inf checks, norms and sums of squares, bit for bit."""

import numpy as np
import pytest

import autodiff as ad
from autodiff.tensor import ArraySpec
from widgets.player.data.looks import MAX_DATA, _inspect, _preview_of, float_previews, look_many

TRICKY = [6.0, -0.0, 1e5, -3.0, 0.25, np.nan, -np.inf, 99999.0, 1e-7, 12345.0, 123456.0,
          -1e-5, np.inf, 0.0, 2.5e10, -7.0, 1.0, 2.0, 3.0, 4.0]


def _values():
    rng = np.random.default_rng(7)
    big = MAX_DATA + 1
    values = []
    for dtype in (np.float16, np.float32, np.float64):
        for start in range(len(TRICKY) - 4):          # every run of 4 tricky numbers first
            a = rng.normal(size=big).astype(dtype)
            a[:4] = np.array(TRICKY[start:start + 4], dtype=dtype)
            values.append(a.reshape(5, 13))
        values.append(np.full((3, 40), 2.0, dtype=dtype))            # whole numbers only
        values.append(rng.normal(size=(8, 16)).astype(dtype) * 1e3)
    values += [np.full(100, 1e200), np.array([1e200] * 99 + [np.inf]),   # float64 dot overflows
               np.array([3e38] * 80, dtype=np.float32),                  # float32 dot overflows
               np.array([np.nan] + [1.0] * 99, dtype=np.float32),
               rng.normal(size=MAX_DATA).astype(np.float32),             # small: keeps its data
               np.array([[1.0, -2.0, 3.0, 0.5], [7.0, 8.0, -0.0, 1e5]]),    # as nested lists
               np.array([np.nan, 1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32),  # small, no data
               np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float16),
               np.array([1.0, 2.0, 3.0, 4.0]),                            # four: no '…'
               np.array([1.0, np.nan, 2.0]), np.float32(6.0), np.array(2.5),
               np.arange(100), np.arange(3), np.array([True, False] * 40),
               (rng.normal(size=70) + 1j * rng.normal(size=70)), np.zeros((0, 3), np.float32)]
    tensors = [ad.constant(v) for v in values]
    tensors.insert(3, None)
    placeholder = ad.constant(np.ones((10, 10), np.float32))
    placeholder._value = ArraySpec((10, 10), np.dtype(np.float32))
    tensors.insert(7, placeholder)
    return tensors


@pytest.mark.parametrize("which", ["none", "all", "alternate"])
def test_look_many_gives_inspect_for_every_value(which):
    tensors = _values()
    norms = {"none": None, "all": [True] * len(tensors),
             "alternate": [k % 2 == 0 for k in range(len(tensors))]}[which]
    got = look_many(tensors, norms)
    assert len(got) == len(tensors)
    for k, (tensor, look) in enumerate(zip(tensors, got)):
        want = _inspect(tensor, bool(norms and norms[k]))
        assert look[0] == want[0], k
        assert look[1] is want[1] or look[1] == want[1], k
        for a, b in zip(look[2:], want[2:]):     # norm, sum of squares: the same bits
            if b is None:
                assert a is None, k
            else:
                assert np.array(a).tobytes() == np.array(b).tobytes(), k
    checked = [look for look in got if look[0] is not None and look[0]["preview"]]
    assert any(look[1] for look in checked) and not all(look[1] for look in checked)


def test_float_previews_write_what_a_preview_of_one_value_writes():
    heads = np.array(TRICKY, dtype=np.float64)
    shown = float_previews(heads)
    assert shown == [_preview_of(np.append(heads[k:k + 4], 1.0)) for k in range(0, len(heads), 4)]
    assert shown[0] == "[6.0, 0.0, 1e+05, -3.0, …]"
    assert float_previews(np.zeros(0)) == []


def test_without_checks_the_values_are_the_same_and_big_floats_are_not_checked():
    tensors = _values()
    for tensor, fast, full in zip(tensors, look_many(tensors, checks=False), look_many(tensors)):
        assert fast[0] == full[0]
        value = None if tensor is None else tensor._value
        unchecked = hasattr(value, "dtype") and value.dtype.kind == "f" and \
            not isinstance(value, ArraySpec) and value.size > MAX_DATA
        assert fast[1] is None if unchecked else fast[1] == full[1]
