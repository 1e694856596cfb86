"""Compiled traces (``autodiff/compiler/program.py``) compute what the graph replay computes.

Table-driven over the op registry: for every op and case, a function that
applies the op and takes its gradient is traced, written out as a program,
and run; values (forward and backward) must equal the eager ones.
"""

import zlib

import numpy as np
import pytest

import autodiff as ad
from autodiff import nest, testing
from autodiff.compiler import compile_graph
from autodiff.compiler.passes import IMPURE_PREFIXES
from autodiff.registry import REGISTRY


def _cases():
    params = []
    for name, prim in sorted(REGISTRY.items()):
        if name.startswith(IMPURE_PREFIXES):
            continue  # a new draw per run: nothing to compare
        try:
            n = len(testing.op_cases(prim))
        except ValueError:
            continue
        params += [pytest.param(name, k, id=f"{name}-case{k}") for k in range(n)]
    return params


def _value_and_gradient(prim, params):
    def f(*xs):
        floats = [x for x in xs if x.dtype.is_floating]
        with ad.GradientTape() as tape:
            tape.watch(floats)
            out = prim(*xs, **params)
            outs = [o for o in nest.flatten(out) if o.dtype.is_floating]
            total = None
            for o in outs:
                total = ad.reduce_sum(o) if total is None else total + ad.reduce_sum(o)
        grads = tape.gradient(total, floats) if (total is not None and prim.differentiable) \
            else []
        return list(nest.flatten(out)) + list(grads)
    return f


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = a.numpy(), b.numpy()
    return a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, equal_nan=True)


@pytest.mark.parametrize("name, k", _cases())
def test_compiled_program_equals_the_eager_computation(name, k):
    prim = REGISTRY[name]
    shapes, params = testing.op_cases(prim)[k]
    arrays = testing.op_inputs(prim, shapes, np.random.default_rng(zlib.crc32(name.encode()) + k))
    tensors = [ad.constant(a) for a in arrays]
    f = _value_and_gradient(prim, dict(params))
    eager = f(*tensors)
    graph = ad.function(f).get_concrete_function(*tensors).graph
    program = compile_graph(graph, "f")
    compiled = program.run(tensors)
    assert len(compiled) == len(eager)
    for i, (a, b) in enumerate(zip(eager, compiled)):
        assert _same(a, b), f"{name}: output {i}: eager {a} != compiled {b}\n{program.source}"


def test_the_source_names_the_arguments_marks_the_backward_pass_and_folds_constants():
    w = ad.Variable(np.ones((3, 2)), name="w")

    def step(x):
        with ad.GradientTape() as tape:
            loss = ad.reduce_sum(ad.tanh(x @ w) ** 2)
        return loss, tape.gradient(loss, w)

    x = ad.constant(np.ones((4, 3)))
    graph = ad.function(step).get_concrete_function(x).graph
    source = compile_graph(graph, "step", ["x"]).source
    assert source.startswith("def step(xp, x):")
    assert "w = w_variable._value" in source
    assert "v0 = x @ w\n" in source                       # ops written as a person would
    assert "# ---- the backward pass (tape.gradient) ----" in source
    assert "is constant, computed once" in source          # the seed, broadcast: folded
    before, after = source.split("the backward pass")
    assert "xp.tanh(v0" in before and "xp.square(v1)" in before
    assert "* (1 - v1 * v1)" in after                      # tanh's chain rule, inline
    assert "x.T @ " in after                               # dloss/dw = x^T (upstream)


def test_common_subexpressions_are_computed_once_and_dead_code_dropped():
    def f(x):
        unused = ad.exp(x) * 100.0  # noqa: F841 - dead code
        return ad.sin(x) * ad.sin(x) + ad.sin(x)

    x = ad.constant([0.5, 1.0])
    graph = ad.function(f).get_concrete_function(x).graph
    program = compile_graph(graph, "f", ["x"])
    assert program.source.count("sin(") == 1
    assert "exp(" not in program.source
    np.testing.assert_allclose(program.run([x]).numpy(), np.sin([0.5, 1.0]) ** 2 + np.sin([0.5, 1.0]),
                               rtol=1e-6)


def test_assignments_run_in_order_and_later_reads_see_them():
    v = ad.Variable(1.0, name="counter")

    def bump(x):
        before = v * 1.0
        v.assign_add(x)
        after = v * 1.0
        return before, after

    x = ad.constant(2.0)
    graph = ad.function(bump).get_concrete_function(x).graph
    program = compile_graph(graph, "bump", ["x"])
    before, after = program.run([x])
    assert (float(before), float(after), float(v)) == (1.0, 3.0, 3.0)
    assert program.source.count("counter = counter_variable._value") == 2


def test_params_that_are_not_plain_literals_reach_the_program_as_data():
    graph = ad.function(lambda x: ad.gather(x, [2, 0])).get_concrete_function(
        ad.constant([1.0, 2.0, 3.0])).graph
    program = compile_graph(graph, "pick", ["x"])
    np.testing.assert_array_equal(program.run([ad.constant([1.0, 2.0, 3.0])]).numpy(), [3.0, 1.0])
    assert "import" not in program.source and "__" not in program.source


# ---- ad.function(jit_compile=True) ------------------------------------------------------------

def test_jit_compiled_training_step_matches_the_uncompiled_one_and_shows_its_source():
    rng = np.random.default_rng(0)
    start = rng.normal(size=(3, 2))
    x = ad.constant(rng.normal(size=(4, 3)))
    losses = {}
    for jit in (False, True):
        w = ad.Variable(start, name="w")

        @ad.function(jit_compile=jit)
        def step(x):
            with ad.GradientTape() as tape:
                loss = ad.reduce_sum(ad.tanh(x @ w) ** 2)
            w.assign_sub(0.1 * tape.gradient(loss, w))
            return loss

        losses[jit] = [float(step(x)) for _ in range(5)]
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-12)
    assert losses[True][-1] < losses[True][0]
    source = step.experimental_get_compiler_ir(x)(stage="python")
    assert source.startswith("def step(xp, x):") and "_assign(w_variable, 'sub'" in source
    assert step.experimental_get_compiler_ir(x)(stage="graph").startswith("graph(")
    with pytest.raises(ValueError, match="unknown stage 'hlo'"):
        step.experimental_get_compiler_ir(x)(stage="hlo")


def test_a_tape_outside_a_jit_compiled_function_still_differentiates_it():
    f = ad.function(lambda x: ad.sin(x) * x, jit_compile=True)
    x = ad.constant(0.5)
    assert float(f(x)) == pytest.approx(np.sin(0.5) * 0.5, rel=1e-6)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert float(tape.gradient(y, x)) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5), rel=1e-6)


def test_a_trace_that_cannot_be_compiled_runs_op_by_op_with_one_warning(monkeypatch):
    from autodiff.tracing import concrete_function as function_module

    def broken(*args, **kwargs):
        raise NotImplementedError("no code for this op")

    monkeypatch.setattr(function_module, "compile_graph", broken)
    f = ad.function(lambda x: ad.sin(x) * 2.0, jit_compile=True)
    x = ad.constant(0.5)
    with pytest.warns(ad.AutodiffWarning, match="could not be compiled.*op by op"):
        first = f(x)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = f(x)             # warned once only
    assert float(first) == float(second) == pytest.approx(2 * np.sin(0.5), rel=1e-6)
    with pytest.raises(function_module.CompileError, match="NotImplementedError"):
        f.get_concrete_function(x).program()


def test_a_compiled_trace_keyed_by_a_variable_argument_does_not_keep_it_alive():
    import gc
    import weakref

    @ad.function(jit_compile=True)
    def scaled(v, x):
        return v * x

    v = ad.Variable([1.0, 2.0])
    x = ad.constant([3.0, 4.0])
    np.testing.assert_array_equal(scaled(v, x).numpy(), [3.0, 8.0])
    assert "Variable_variable()._value" in scaled.experimental_get_compiler_ir(v, x)()
    alive = weakref.ref(v)
    del v
    gc.collect()
    assert alive() is None


def test_the_program_lesson_11_reads_line_by_line():
    """Lesson 11 (and the README) read this program's lines by name: keep them true."""
    w = ad.Variable([[0.5], [-0.25]], name="w")

    @ad.function(jit_compile=True)
    def loss_and_grad(x):
        with ad.GradientTape() as tape:
            loss = ad.reduce_sum(ad.tanh(x @ w) ** 2)
        return loss, tape.gradient(loss, w)

    source = loss_and_grad.experimental_get_compiler_ir(ad.constant([[1.0, 1.0]]))(stage="python")
    lines = [line.split("  #")[0].strip() for line in source.splitlines()]
    for expected in ("v0 = x @ w", "v1 = xp.tanh(v0, out=v0)", "v2 = xp.square(v1)",
                     "v6 = k5 * v1", "v7 = v6 * (1 - v1 * v1)", "v8 = x.T @ v7",
                     "return (v3, v8)"):
        assert expected in lines, f"{expected!r} not in\n{source}"
    assert "# k4 = Reshape(c1, shape=(1, 1)) is constant" in source
    assert "# k5 = Mul(k4, c0) is constant, computed once: float32 2.0" in source
