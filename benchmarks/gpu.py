"""The GPU benchmark: W2-W5 with the engine on a device backend, beside NumPy and PyTorch.

    python -m benchmarks.gpu                 # CuPy, when cupy.is_available()
    python -m benchmarks.gpu --json out.json --markdown out.md
    python -m benchmarks.gpu --backend strict --repeats 3   # no GPU: a smoke run

Each workload is built on the NumPy backend and on the device backend
(``ad.use_backend``); building checks the engine's result against the
hand-written NumPy one, so a device run that computes something else fails
before anything is timed. The columns, timed side by side, interleaved, in
this process:

- ``numpy``: the hand-written NumPy baseline, on the CPU (the ratios' unit);
- ``autodiff/numpy``: the engine on the CPU;
- ``autodiff/<device>`` and ``autodiff/<device> jit``: the engine on the
  device, op by op and compiled (``ad.function(jit_compile=True)``);
- ``torch/cuda``: PyTorch on the GPU (`gpu_torch.py`), checked the same way.

A device call counts until the device has finished (both CuPy and PyTorch
run asynchronously). The default workloads are small (W2 is a 784-256-256-10
MLP on 256 examples): there a step is a few hundred kernel launches of
microseconds each, and launch cost decides. ``W2-large`` (1024-2048-2048-10
on 2048 examples) is where the device should win.

The strict backend is NumPy in a wrapper that refuses implicit host copies:
its run proves this script and the device path work without a GPU; its
times say nothing about a GPU.
"""

import argparse
import json
import platform
import statistics
import sys

from benchmarks import gpu_torch, harness, workloads  # noqa: F401  (workloads fill the registry)
from benchmarks.registry import REGISTRY, GradientMismatch, check_against_numpy, load_autodiff, note

GPU_WORKLOADS = ("W2", "W3", "W4", "W5", "W5-HVP", "W5-HVP-RR", "W2-large")
LARGE_MLP = {"sizes": (1024, 2048, 2048, 10), "batch": 2048}
# Sums of 2048 float32 products that cancel: on an H200, CuPy's and PyTorch's (CPU and GPU)
# weight gradients differ from NumPy's by ~1e-5, 0.2% of the largest entry.
LARGE_TOLERANCE = {"rtol": 1e-3, "atol_scale": 1e-2}


def _build(key):
    """The workload's implementations on the active backend, checked against NumPy."""
    if key == "W2-large":
        return workloads.mlp_impls(*workloads.mlp_data(**LARGE_MLP), key=key, peers=False,
                                   **LARGE_TOLERANCE)   # PyTorch on the GPU is the column here
    return REGISTRY[key].build()


def _torch_on_gpu(key, baseline):
    """PyTorch's callable on CUDA for ``key`` (checked), or None with a note."""
    try:
        import torch
    except ImportError:
        note("torch is not installed; the torch/cuda column is skipped")
        return None
    if not torch.cuda.is_available():
        note("torch sees no CUDA device; the torch/cuda column is skipped")
        return None
    torch.backends.cuda.matmul.allow_tf32 = False   # full float32, as NumPy and CuPy
    if key == "W2-large":
        fn = gpu_torch.w2(torch, "cuda", workloads.mlp_data(**LARGE_MLP))
    else:
        fn = gpu_torch.BUILDERS[key](torch, "cuda")
    try:
        check_against_numpy(key, {"numpy": baseline, "torch/cuda": fn},
                            **(LARGE_TOLERANCE if key == "W2-large" else {}))
    except AssertionError as err:
        note(f"torch/cuda on {key} disagrees with NumPy, not timed: {err}")
        return None
    return _synchronized(fn, torch.cuda.synchronize)


def _synchronized(fn, sync):
    def run():
        result = fn()
        sync()
        return result
    return run


def _on_device(ad, name, fn):
    """``fn`` run on backend ``name``, returning only when the device is done."""
    sync = _synchronizer(name)

    def run():
        with ad.use_backend(name):
            result = fn()
        sync()
        return result

    return run


def _synchronizer(name):
    if name != "cupy":
        return lambda: None
    import cupy
    return cupy.cuda.Device().synchronize


def measure(key, device, repeats, warmup):
    """Samples (seconds) per column for one workload."""
    ad = load_autodiff()
    on_numpy = _build(key)
    with ad.use_backend(device):
        on_device = _build(key)  # builds on the device and checks it against NumPy
    columns = {
        "numpy": on_numpy["numpy"],
        "autodiff/numpy": on_numpy["autodiff"],
        f"autodiff/{device}": _on_device(ad, device, on_device["autodiff"]),
        f"autodiff/{device} jit": _on_device(ad, device, on_device["jit"]),
    }
    torch_fn = _torch_on_gpu(key, on_numpy["numpy"])
    if torch_fn is not None:
        columns["torch/cuda"] = torch_fn
    timings = harness.compare(columns, repeats=repeats, warmup=warmup)
    return {name: t.samples for name, t in timings.items()}


def ratios(samples):
    """Per column: the median time and the median ratio to NumPy with its spread.

    Calls are interleaved, so round ``i`` of each column ran under the same
    conditions; the ratio is taken per round, then summarized (median, and
    the 10th-90th percentile range as the spread).
    """
    base = samples["numpy"]
    summary = {}
    for name, times in samples.items():
        per_round = sorted(t / b for t, b in zip(times, base))
        low = per_round[len(per_round) // 10]
        high = per_round[-1 - len(per_round) // 10]
        summary[name] = {"median_s": statistics.median(times),
                         "ratio": statistics.median(per_round), "spread": [low, high]}
    return summary


def machine():
    """What ran the benchmark: host, Python, NumPy, CuPy, PyTorch and the GPU, where present."""
    import numpy
    info = {"python": platform.python_version(), "numpy": numpy.__version__,
            "cpu_count": __import__("os").cpu_count()}
    try:
        import cupy
        info["cupy"] = cupy.__version__
        info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        info["gpu"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception:  # noqa: BLE001 - a machine facts line, never fatal
        pass
    try:
        import torch
        info["torch"] = torch.__version__
    except ImportError:
        pass
    return info


def table(results, device):
    """The results as a Markdown table: median time of the baseline, ratios with spreads."""
    columns = [c for c in ("autodiff/numpy", f"autodiff/{device}", f"autodiff/{device} jit",
                           "torch/cuda") if any(c in r for r in results.values())]
    lines = ["| workload | numpy (ms) | " + " | ".join(columns) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in columns) + " |"]
    for key, summary in results.items():
        cells = []
        for c in columns:
            s = summary.get(c)
            cells.append("-" if s is None else
                         f"{s['ratio']:.2f}x ({s['spread'][0]:.2f}-{s['spread'][1]:.2f})")
        lines.append(f"| {key} | {summary['numpy']['median_s'] * 1e3:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cupy", help="device backend: cupy (default) or strict")
    parser.add_argument("--only", default=",".join(GPU_WORKLOADS), help="comma-separated workloads")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", help="write machine facts, samples and ratios here")
    parser.add_argument("--markdown", help="write the table here")
    args = parser.parse_args(argv)
    ad = load_autodiff()
    if args.backend not in ad.backend.available_backends():
        print(f"backend {args.backend!r} is not available here "
              f"(available: {', '.join(ad.backend.available_backends())}); "
              f"for CuPy: pip install -e '.[gpu]' on a machine with a GPU")
        return 1
    facts = machine()
    print(" ".join(f"{k}={v}" for k, v in facts.items()), flush=True)
    results, samples, failed = {}, {}, []
    keys = args.only.split(",")
    for index, key in enumerate(keys, 1):
        repeats = max(5, args.repeats // 3) if key == "W2-large" else args.repeats
        print(f"[{index}/{len(keys)}] {key}: building, checking, timing {repeats} rounds...",
              flush=True)
        try:
            samples[key] = measure(key, args.backend, repeats, args.warmup)
        except GradientMismatch as err:   # that row is void; the others still stand
            print(f"  {key} not timed: {err}", flush=True)
            failed.append(key)
            continue
        results[key] = ratios(samples[key])
        print(f"  {key}: " + ", ".join(f"{name} {s['ratio']:.2f}x"
                                       for name, s in results[key].items()), flush=True)
    text = table(results, args.backend)
    print("Ratios to the NumPy baseline (median of per-round ratios; 10th-90th percentile):")
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": facts, "results": results, "samples": samples,
                       "not_timed": failed}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if failed:
        print(f"not timed (the device's answer differed from NumPy's): {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
