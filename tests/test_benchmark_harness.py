"""The benchmark harness's interleaving (``benchmarks/harness.py``): fair to every side."""

import itertools

import pytest

from benchmarks import harness


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_round_runs_each_callable_once(n):
    names = [f"impl{k}" for k in range(n)]
    for r in range(4 * n):
        assert sorted(harness._round_order(names, r)) == names


def test_with_three_callables_each_follows_each_other_equally_often():
    names = ["numpy", "autodiff", "jit"]
    follows = {pair: 0 for pair in itertools.permutations(names, 2)}
    for r in range(2 * len(names)):
        order = harness._round_order(names, r)
        for before, after in zip(order, order[1:]):
            follows[(before, after)] += 1
    assert set(follows.values()) == {2}, follows


def test_compare_times_every_callable_repeats_times():
    calls = {"a": 0, "b": 0}

    def counter(name):
        def run():
            calls[name] += 1
        return run

    timings = harness.compare({"a": counter("a"), "b": counter("b")}, repeats=5, warmup=2)
    assert calls == {"a": 7, "b": 7}
    assert [len(timings[k].samples) for k in "ab"] == [5, 5]
    assert all(t >= 0 for k in "ab" for t in timings[k].samples)
