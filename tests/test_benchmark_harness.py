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


def test_gpu_ratios_are_medians_of_per_round_ratios_with_their_spread():
    from benchmarks import gpu
    summary = gpu.ratios({"numpy": (1.0, 2.0, 4.0), "device": (2.0, 2.0, 4.0)})
    assert summary["numpy"] == {"median_s": 2.0, "ratio": 1.0, "spread": [1.0, 1.0]}
    # rounds: 2/1, 2/2, 4/4 -> the median ratio is 1, not median(device) / median(numpy)
    assert summary["device"] == {"median_s": 2.0, "ratio": 1.0, "spread": [1.0, 2.0]}


def test_gpu_benchmark_runs_checked_on_the_strict_backend(tmp_path):
    import json

    from benchmarks import gpu
    out, table = tmp_path / "gpu.json", tmp_path / "gpu.md"
    assert gpu.main(["--backend", "strict", "--only", "W2,W5-HVP", "--repeats", "2",
                     "--warmup", "0", "--json", str(out), "--markdown", str(table)]) == 0
    results = json.loads(out.read_text())["results"]
    assert list(results) == ["W2", "W5-HVP"]
    for summary in results.values():
        assert {"numpy", "autodiff/numpy", "autodiff/strict", "autodiff/strict jit"} <= set(summary)
        assert summary["numpy"]["ratio"] == 1.0
        assert all(s["ratio"] > 0 and s["spread"][0] <= s["ratio"] <= s["spread"][1]
                   for s in summary.values())
    lines = table.read_text().splitlines()
    assert lines[0].startswith("| workload | numpy (ms) | autodiff/numpy | autodiff/strict |")
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| W2", "| W5-HVP"]


def test_compare_records_cpu_time_and_the_range_of_every_round():
    import time

    timings = harness.compare({"busy": lambda: sum(range(20000)),
                               "asleep": lambda: time.sleep(0.002)}, repeats=4, warmup=0)
    for timing in timings.values():
        assert len(timing.cpu_samples) == len(timing.samples) == 4
        assert timing.min <= timing.median <= timing.max
    # sleeping takes wall time and almost no CPU time
    assert timings["asleep"].cpu_median < 0.5 * timings["asleep"].median


def test_a_workload_without_numpy_divides_by_its_baseline_and_judges_its_column():
    from benchmarks import run
    from benchmarks.registry import Workload

    calls = {"tf": lambda: time_sink(2), "jit": lambda: time_sink(1), "autodiff": lambda: None}
    workload = Workload("T0", "a step", "time", "ms", 1e3, "jit <= 1.0x tf",
                        lambda tf, jit: jit <= tf, lambda: calls, baseline="tf", judged="jit")
    args = run.parse_args(["--repeats", "3", "--warmup", "0"])
    row = run.run_workload(workload, args)
    figures = row["figures"]
    assert row["baseline"] == "tf" and "tf" not in row["ratios"]
    assert row["ratios"]["jit"] == figures["jit"]["median"] / figures["tf"]["median"]
    assert row["ratios_tf"]["tf"] == 1.0
    assert row["meets_target"] == (figures["jit"]["median"] <= figures["tf"]["median"])
    assert "a step" in run.format_table({"T0": row}) and "x tf" in run.format_ranges({"T0": row})


def time_sink(milliseconds):
    import time
    end = time.perf_counter() + milliseconds / 1000
    while time.perf_counter() < end:
        pass


def test_blas_warmup_flag_follows_the_environment_and_says_which_state_ran(monkeypatch):
    from benchmarks import run

    monkeypatch.delenv("TAPESCHOOL_WITHOUT_BLAS_WARMUP", raising=False)
    assert run.parse_args([]).blas_warmup == "on"
    assert run.parse_args(["--blas-warmup", "off"]).blas_warmup == "off"
    monkeypatch.setenv("TAPESCHOOL_WITHOUT_BLAS_WARMUP", "1")
    assert run.parse_args([]).blas_warmup == "off"
    run.set_blas_warmup("on")   # what a re-exec or autodiff's import then reads
    assert "TAPESCHOOL_WITHOUT_BLAS_WARMUP" not in run.os.environ
    run.set_blas_warmup("off")
    assert run.os.environ["TAPESCHOOL_WITHOUT_BLAS_WARMUP"] == "1"
    assert run.WARMUP_STATES["off"].startswith("off") and "384x384" in run.WARMUP_STATES["on"]
    assert run.describe_run(run.parse_args(["--blas-warmup", "on"]))["blas_warmup"] == "on"
