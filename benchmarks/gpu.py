"""The GPU benchmark: W2-W5 with the engine on a device backend, beside NumPy.

    python -m benchmarks.gpu                 # CuPy, when cupy.is_available()
    python -m benchmarks.gpu --backend strict --repeats 3   # no GPU: a smoke run

Each workload is built twice: on the NumPy backend and on the device backend
(``ad.use_backend``). Building checks the engine's result against the
hand-written NumPy one, so a device run that computes something else fails
before anything is timed. Then the hand-written NumPy baseline, the engine
on NumPy and the engine on the device are timed side by side, interleaved,
in this process; a device call counts until the device has finished
(CuPy runs asynchronously). Ratios are to the NumPy baseline.

The strict backend is NumPy in a wrapper that refuses implicit host copies:
its run proves this script and the device path work without a GPU; its
times say nothing about a GPU. PyTorch on the GPU is not measured yet.
"""

import argparse
import sys

from benchmarks import harness, workloads  # noqa: F401  (workloads fill the registry)
from benchmarks.registry import REGISTRY, load_autodiff

GPU_WORKLOADS = ("W2", "W3", "W4", "W5", "W5-HVP", "W5-HVP-RR")


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
    """Medians (seconds) for NumPy, the engine on NumPy and the engine on ``device``."""
    ad = load_autodiff()
    workload = REGISTRY[key]
    on_numpy = workload.build()
    with ad.use_backend(device):
        on_device = workload.build()  # builds on the device and checks it against NumPy
    timings = harness.compare({
        "numpy": on_numpy["numpy"],
        "autodiff/numpy": on_numpy["autodiff"],
        f"autodiff/{device}": _on_device(ad, device, on_device["autodiff"]),
    }, repeats=repeats, warmup=warmup)
    return {name: t.median for name, t in timings.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cupy", help="device backend: cupy (default) or strict")
    parser.add_argument("--only", default=",".join(GPU_WORKLOADS), help="comma-separated workloads")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    ad = load_autodiff()
    if args.backend not in ad.backend.available_backends():
        print(f"backend {args.backend!r} is not available here "
              f"(available: {', '.join(ad.backend.available_backends())}); "
              f"for CuPy: pip install -e '.[gpu]' on a machine with a GPU")
        return 1
    device = f"autodiff/{args.backend}"
    print(f"{'workload':<12} {'numpy':>11} {'autodiff/numpy':>15} {device:>16} "
          f"{'ratio numpy':>12} {'ratio ' + args.backend:>13}")
    for key in args.only.split(","):
        m = measure(key, args.backend, args.repeats, args.warmup)
        base = m["numpy"]
        print(f"{key:<12} {base * 1e3:>9.3f}ms {m['autodiff/numpy'] * 1e3:>13.3f}ms "
              f"{m[device] * 1e3:>14.3f}ms {m['autodiff/numpy'] / base:>11.2f}x "
              f"{m[device] / base:>12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
