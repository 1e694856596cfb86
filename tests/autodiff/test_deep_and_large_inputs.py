"""Inputs at the edges of size: sources nested hundreds deep, a Jacobian larger than the process may map.

Both used to fail with untyped errors (a RecursionError from flattening the
sources, NumPy's MemoryError after seconds of work under ``ulimit -v``).
"""

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import autodiff as ad


def _nested(leaf, depth):
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def _unnest(value):
    depth = 0
    while isinstance(value, list):
        (value,) = value
        depth += 1
    return depth, value


@pytest.mark.parametrize("depth", [500, 5000])
def test_gradient_with_sources_nested_hundreds_deep_keeps_their_structure(depth):
    # TensorFlow answers at 500 levels; the structure comes back as it went in.
    x = ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = x * x
    got_depth, grad = _unnest(tape.gradient(y, _nested(x, depth)))
    assert got_depth == depth
    assert float(grad) == 4.0


def test_jacobian_beyond_the_address_space_limit_is_refused_up_front(engine_backend):
    if engine_backend != "numpy":
        pytest.skip("ulimit -v limits host memory: checked on the host backend")
    pytest.importorskip("resource")
    child = textwrap.dedent("""
        import resource, time
        import autodiff as ad
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (mapped + (1 << 30), resource.RLIM_INFINITY))
        x = ad.constant(ad.zeros([16384], dtype=ad.float64))   # a (16384, 16384) float64 result: 2 GiB
        start = time.perf_counter()
        try:
            with ad.GradientTape() as tape:
                tape.watch(x)
                y = x * 2.0
            tape.jacobian(y, x)
        except ad.errors.ResourceExhaustedError as err:
            print("refused", round(time.perf_counter() - start, 3), err)
        except MemoryError as err:
            print("untyped", type(err).__name__, err)
    """)
    result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    verdict, seconds, *message = result.stdout.split()
    assert verdict == "refused", result.stdout
    assert float(seconds) < 1.0
    assert "GiB" in " ".join(message) and "address-space limit" in " ".join(message)
