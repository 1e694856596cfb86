"""The generated programs, compiled (``ad.function(jit_compile=True)``), equal eager ad.

TensorFlow only generates the programs here (their shapes are checked by it);
both sides of every comparison are ad: the program run eagerly, and the same
program traced with its inputs as arguments and run as compiled Python
(``autodiff/compiler/program.py``). Values, dtypes and None-ness must agree.
"""

import numpy as np
import pytest

import autodiff as ad

from . import programs
from .program_ops_control_flow import OPS as CONTROL_FLOW_OPS

SEEDS = range(500_000, 500_300)
# Control-flow ops are left out here: staged, a loop or branch node connects each input it
# reads, so a gradient that is None eagerly (a loop over no elements) is zeros traced, as
# TensorFlow's tf.function gives where its eager mode gives None. test_conf_control_flow.py
# compares the staged ops with tf.function instead.
OP_NAMES = sorted(set(programs.OPS) - set(CONTROL_FLOW_OPS))


def _program(spec):
    """The spec as a function of its input tensors (every input watched)."""
    def run(*xs):
        mode = spec["mode"]
        if mode == "jvp":
            tangents = [ad.constant(programs.input_array(inp, spec["dtype"], "tangent"))
                        for inp in spec["inputs"] if inp["kind"] != "constant"]
            primals = [x for inp, x in zip(spec["inputs"], xs) if inp["kind"] != "constant"]
            with ad.autodiff.ForwardAccumulator(primals, tangents) as acc:
                y = programs.forward(ad, spec, xs)
            return [y, acc.jvp(y)]
        with ad.GradientTape(persistent=True) as outer:
            outer.watch(list(xs))
            with ad.GradientTape(persistent=True) as tape:
                tape.watch(list(xs))
                y = programs.forward(ad, spec, xs)
            grads = tape.gradient(y, list(xs))
            total = None
            for g in grads:
                if g is not None:
                    total = ad.reduce_sum(g) if total is None else total + ad.reduce_sum(g)
        if mode == "jacobian":
            return [y, tape.jacobian(y, list(xs))]
        if mode == "grad2" and total is not None:
            return [y, grads, outer.gradient(total, list(xs))]
        return [y, grads]
    return run


def _same(a, b, where, exact=False):
    """Equal structure, None-ness, dtypes and shapes; values within 1e-6, or bit for bit
    (NaN where NaN) when ``exact``."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for k, (u, v) in enumerate(zip(a, b)):
            _same(u, v, f"{where}[{k}]", exact)
        return
    if a is None or b is None:
        assert a is None and b is None, f"{where}: eager {a} vs compiled {b}"
        return
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape), where
    if exact:
        assert np.array_equal(a.numpy(), b.numpy(), equal_nan=True), \
            f"{where}: {a.numpy()} vs {b.numpy()}"
        return
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-6, equal_nan=True,
                               err_msg=where)


@pytest.mark.parametrize("chunk", range(3))
def test_generated_programs_compiled_equal_eager(tf, chunk):
    seeds = [s for s in SEEDS if s % 3 == chunk]
    checked = 0
    for seed in seeds:
        spec = programs.generate(tf, seed, op_names=OP_NAMES)
        if spec["mode"] == "batch_jacobian":
            continue
        xs = [ad.constant(programs.input_array(inp, spec["dtype"])) for inp in spec["inputs"]]
        run = _program(spec)
        compiled = ad.function(run, jit_compile=True)
        with np.errstate(all="ignore"):
            try:
                eager = run(*xs)
            except ValueError as err:   # e.g. inverting a NaN matrix: the same error compiled
                with pytest.raises(type(err)):
                    compiled(*xs)
                continue
            got = compiled(*xs)
            again = compiled(*xs)       # the second call runs the cached program
        _same(eager, got, f"seed {seed}")
        _same(eager, again, f"seed {seed} (second call)")
        checked += 1
    assert checked >= len(seeds) // 2


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_compiled_programs_keep_eagers_nans_when_an_input_is_not_finite(tf, bad):
    # The compiled program skips forward mode's zero tangents behind finiteness checks
    # (autodiff/compiler/zeros.py); with an inf or a NaN in any input, each output must still be
    # eager's, NaN for NaN. Forward mode and second order, where those zeros live.
    checked = 0
    # more seeds than above: programs on zero-size tensors, or through windows TensorFlow
    # cannot take a second derivative of, are plain gradients (programs.generate)
    for seed in range(SEEDS.start, SEEDS.stop + 100):
        spec = programs.generate(tf, seed, op_names=OP_NAMES)
        if spec["mode"] not in ("jvp", "grad2"):
            continue
        run = _program(spec)
        compiled = ad.function(run, jit_compile=True)
        for k in range(len(spec["inputs"])):
            arrays = [programs.input_array(inp, spec["dtype"]).copy() for inp in spec["inputs"]]
            if arrays[k].size == 0:
                continue
            arrays[k].flat[0] = bad
            xs = [ad.constant(a) for a in arrays]
            with np.errstate(all="ignore"):
                try:
                    eager = run(*xs)
                except ValueError:   # e.g. inverting a NaN matrix; covered above
                    continue
                _same(eager, compiled(*xs), f"seed {seed}, input {k} = {bad}")
            checked += 1
    assert checked >= 100
