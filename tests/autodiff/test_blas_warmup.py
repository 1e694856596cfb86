"""The compiler's once-per-process BLAS warm-up (``autodiff/compiler/blas_warmup.py``)
changes no value: a compiled LSTM training step gives the same loss and weights, bit for
bit, in a fresh process with the warm-up and in one without it
(``TAPESCHOOL_WITHOUT_BLAS_WARMUP=1``); the warm-up is made on the first compiled run on
NumPy, once, and not on another backend."""

import json
import os
import pathlib
import subprocess
import sys

import autodiff

ROOT = pathlib.Path(autodiff.__file__).resolve().parent.parent

# Runs in a fresh process; prints JSON: the warm-up's state before and after each
# call, and the hex bytes of the losses and the weights after three compiled steps.
SCRIPT = r"""
import json, sys
import numpy as np
import autodiff as ad
from autodiff.compiler import blas_warmup
from benchmarks.workloads_training import train_step

backend = sys.argv[1]
states = [blas_warmup.state()]
with ad.use_backend(backend):
    rng = np.random.default_rng(7)
    x = ad.constant(rng.standard_normal((8, 5, 3)).astype(np.float32))
    y = ad.constant(rng.integers(0, 4, 8).astype(np.int32))
    model = ad.keras.Sequential([ad.keras.Input((5, 3)), ad.keras.layers.LSTM(6),
                                 ad.keras.layers.Dense(4)])
    model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.3
                       for w in model.get_weights()])
    optimizer = ad.keras.optimizers.Adam(1e-2)
    step = ad.function(train_step(ad, model, optimizer), jit_compile=True)   # the T3 step

    losses = []
    for _ in range(3):
        losses.append(ad.to_backend(step(x, y), "numpy").numpy().tobytes().hex())
        states.append(blas_warmup.state())
    weights = [np.asarray(w).tobytes().hex() for w in model.get_weights()]
print(json.dumps({"states": states, "losses": losses, "weights": weights}))
"""


def _run(backend, warmup):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TAPESCHOOL_WITHOUT_BLAS_WARMUP", None)
    if not warmup:
        env["TAPESCHOOL_WITHOUT_BLAS_WARMUP"] = "1"
    done = subprocess.run([sys.executable, "-c", SCRIPT, backend], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_warmup_changes_no_loss_or_weight_bit_for_bit(engine_backend):
    warm, cold = _run(engine_backend, warmup=True), _run(engine_backend, warmup=False)
    assert len(warm["weights"]) == 5
    assert warm["losses"] == cold["losses"]
    assert warm["weights"] == cold["weights"]
    assert len(set(warm["losses"])) == 3   # the steps trained: three different losses
    assert cold["states"] == ["off"] * 4
    if engine_backend == "numpy":   # made on the first compiled run, once
        assert warm["states"] == ["pending", "done", "done", "done"]
    else:                           # never on another backend
        assert warm["states"] == ["pending"] * 4
