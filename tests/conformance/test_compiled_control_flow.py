"""Control flow compiled (``jit_compile=True``) equals the same trace run op by op, bit for bit.

The compiler writes ``If``, ``Case``, ``While``, ``Scan``, ``MapFn``, ``Foldl`` and
``Foldr`` nodes as Python ``if``/``while``/``for`` statements calling their compiled
branches and bodies (``autodiff/compiler/control_flow.py``). Random programs that use
the control-flow ops of ``program_ops_control_flow.py`` (TensorFlow only generates them)
run three ways: eagerly, traced op by op, and compiled. The compiled values and
gradients must be the traced ones exactly (NaN where NaN), and the forward value the
eager one exactly; staged, a gradient that is None eagerly is zeros traced, as in
``tf.function``, so gradients are compared with the trace. A tape outside the compiled
function must get eager's gradient exactly.
"""

import warnings

import numpy as np
import pytest

import autodiff as ad
from autodiff.tape import AutodiffWarning

from . import programs
from .program_ops_control_flow import OPS as CONTROL_FLOW_OPS
from .test_compiled_programs import _program, _same

SEEDS = range(700_000, 700_060)


def _exactly(a, b, where):
    _same(a, b, where, exact=True)


def _specs(tf, op):
    for seed in SEEDS:
        spec = programs.generate(tf, seed, must_use=op)
        if spec["mode"] != "batch_jacobian" and any(o["op"] == op for o in spec["ops"]):
            yield spec


@pytest.mark.parametrize("op", sorted(CONTROL_FLOW_OPS))
def test_compiled_control_flow_equals_the_trace_bit_for_bit(tf, op):
    checked = 0
    for spec in _specs(tf, op):
        xs = [ad.constant(programs.input_array(inp, spec["dtype"])) for inp in spec["inputs"]]
        run = _program(spec)
        traced, compiled = ad.function(run), ad.function(run, jit_compile=True)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", AutodiffWarning)   # no falling back op by op
            try:
                eager = run(*xs)
            except ValueError as err:
                with pytest.raises(type(err)):
                    compiled(*xs)
                continue
            want, got, again = traced(*xs), compiled(*xs), compiled(*xs)
        where = f"{op}, seed {spec['seed']} ({spec['mode']})"
        _exactly(want, got, where)
        _exactly(want, again, where + " (second call)")
        _exactly(eager[0], got[0], where + " (the value, eager)")
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("op", sorted(CONTROL_FLOW_OPS))
def test_a_tape_outside_a_compiled_control_flow_gets_eagers_gradient(tf, op):
    checked = 0
    for spec in _specs(tf, op):
        xs = [ad.constant(programs.input_array(inp, spec["dtype"])) for inp in spec["inputs"]]

        def forward(*values):
            return programs.forward(ad, spec, values)
        compiled = ad.function(forward, jit_compile=True)
        results = []
        with np.errstate(all="ignore"):
            for fn in (forward, compiled):
                with ad.GradientTape() as tape:
                    tape.watch(xs)
                    y = fn(*xs)
                results.append([y, tape.gradient(y, xs)])
        _exactly(results[0], results[1], f"{op}, seed {spec['seed']}")
        checked += 1
        if checked == 10:
            break
    assert checked == 10


def test_the_compiled_program_writes_branches_and_loops_as_python():
    @ad.function(jit_compile=True)
    def f(x, n):
        y = ad.cond(ad.reduce_sum(x) > 0, lambda: x * 2.0, lambda: -x)
        return ad.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 0.5),
                             (ad.constant(0), y), maximum_iterations=5)[1]

    x = ad.constant([1.0, -3.0])
    source = f.experimental_get_compiler_ir(x, ad.constant(2))(stage="python")
    assert "    if _host(v1):  # If: the branch is chosen on every call" in source
    assert "def f_true_fn(xp, a0):" in source and "def f_body(xp, a0, a1):" in source
    assert "while iteration < " in source
    with warnings.catch_warnings():
        warnings.simplefilter("error", AutodiffWarning)
        # x sums to -2: -x; -x sums to 2: 2 * -x; then halved n times, at most 5
        for n, halvings in ((0, 0), (2, 2), (9, 5)):
            np.testing.assert_array_equal(f(x, ad.constant(n)).numpy(),
                                          np.array([-1.0, 3.0]) / 2 ** halvings)
            np.testing.assert_array_equal(f(-x, ad.constant(n)).numpy(),
                                          np.array([-2.0, 6.0]) / 2 ** halvings)
