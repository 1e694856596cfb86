"""ad.function and ad.TensorSpec: tracing once per signature, replaying, differentiating.

A traced function must differentiate exactly like the eager function it
came from (first and higher order, Jacobians, variables, custom gradients),
because running its graph replays the same primitive ops on the tapes.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import tape as tape_module


def _tensors(*values):
    return [ad.constant(np.asarray(v, np.float32)) for v in values]


# ---- tracing and retracing -----------------------------------------------------

def test_traces_once_per_shape_dtype_and_python_value():
    calls = []

    @ad.function
    def f(x, power):
        calls.append(power)  # a Python side effect: runs only while tracing
        return x ** power

    x = ad.constant([1.0, 2.0])
    np.testing.assert_allclose(f(x, 2).numpy(), [1.0, 4.0])
    np.testing.assert_allclose(f(ad.constant([3.0, 4.0]), 2).numpy(), [9.0, 16.0])
    assert f.experimental_get_tracing_count() == 1 and calls == [2]
    f(x, 3)                                               # a new Python value
    f(ad.constant([1.0, 2.0, 3.0]), 2)                    # a new shape
    f(ad.constant([1.0, 2.0], dtype=ad.float64), 2)       # a new dtype
    assert f.experimental_get_tracing_count() == 4 and calls == [2, 3, 2, 2]
    assert len(f.concrete_functions) == 4


def test_input_signature_checks_and_converts_arguments():
    @ad.function(input_signature=[ad.TensorSpec([2]), ad.TensorSpec([], ad.float64)])
    def f(x, scale):
        return x * ad.cast(scale, ad.float32)

    np.testing.assert_allclose(f([1.0, 2.0], 3.0).numpy(), [3.0, 6.0])  # lists, numbers convert
    np.testing.assert_allclose(f(ad.constant([1.0, 1.0]), scale=2.0).numpy(), [2.0, 2.0])
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match=r"argument 'x' has shape \(3,\).*TensorSpec"):
        f([1.0, 2.0, 3.0], 1.0)
    with pytest.raises(TypeError, match="argument 'scale' has dtype float32"):
        f([1.0, 2.0], ad.constant(1.0))
    with pytest.raises(TypeError, match="takes 2 argument"):
        f([1.0, 2.0], 1.0, 5.0)
    with pytest.raises(TypeError, match="missing required argument 'scale'"):
        f([1.0, 2.0])


def test_input_signature_must_hold_tensor_specs():
    with pytest.raises(TypeError, match="TensorSpec"):
        ad.function(lambda x: x, input_signature=[[2, 3]])


def test_unknown_sizes_share_one_trace_unless_the_trace_depends_on_the_size():
    f = ad.function(lambda x: ad.reduce_sum(x), input_signature=[ad.TensorSpec([None])])
    assert f([1.0, 2.0]).numpy() == 3.0 and f([1.0, 2.0, 3.0]).numpy() == 6.0
    assert f([1.0] * 7).numpy() == 7.0
    assert f.experimental_get_tracing_count() == 1   # as in TensorFlow
    concrete = f.get_concrete_function()
    assert concrete.structured_input_signature == {"list": [
        {"list": [{"tensor": [[None], "float32"]}]}, {"dict": []}]}
    assert concrete(ad.ones([11])).numpy() == 11.0
    with pytest.raises(TypeError, match="argument 'x' has shape"):
        f(ad.ones([2, 2]))
    # A size read into the trace (x.shape[0] is a Python int) makes the graphs differ: one
    # trace per size, never the first size's answer for another.
    mean = ad.function(lambda x: ad.reduce_sum(x) / x.shape[0],
                       input_signature=[ad.TensorSpec([None])])
    assert [float(mean(ad.ones([n]) * n)) for n in (2, 4, 5)] == [2.0, 4.0, 5.0]
    assert mean.experimental_get_tracing_count() == 3


def test_tensor_spec_basics():
    spec = ad.TensorSpec([None, 3], name="x")
    assert spec.shape == [None, 3] and spec.dtype == ad.float32
    assert spec.is_compatible_with(ad.zeros([5, 3]))
    assert not spec.is_compatible_with(ad.zeros([5, 4]))
    assert not spec.is_compatible_with(ad.zeros([5, 3], dtype=ad.float64))
    assert ad.TensorSpec(None).is_compatible_with(ad.zeros([1, 2, 3]))
    assert repr(ad.TensorSpec(None)) == "TensorSpec(shape=<unknown>, dtype=ad.float32, name=None)"
    assert ad.TensorSpec.from_tensor(ad.zeros([2])) == ad.TensorSpec([2])


def test_graph_prints_its_ops_and_captures():
    w = ad.Variable(2.0, name="w")
    f = ad.function(lambda x: ad.sin(x) * w)
    text = str(f.get_concrete_function(ad.constant(1.0)).graph)
    assert text.splitlines()[1:] == ["  n0 = Sin(a0)", "  n1 = Mul(n0, w)", "  return n1"]
    assert "w:0" in text.splitlines()[0]


def test_get_concrete_function_from_specs_traces_without_running_a_call():
    f = ad.function(lambda x: x * 2.0)
    concrete = f.get_concrete_function(ad.TensorSpec([3]))
    assert concrete.graph.arg_specs == [((3,), ad.float32)]
    np.testing.assert_allclose(concrete(ad.constant([1.0, 2.0, 3.0])).numpy(), [2.0, 4.0, 6.0])
    assert f.experimental_get_tracing_count() == 1


def test_nested_structures_and_python_outputs():
    @ad.function
    def f(pair, table):
        return {"sum": pair[0] + pair[1], "scaled": table["x"] * 2.0, "note": "ok"}

    out = f((ad.constant(1.0), ad.constant(2.0)), {"x": ad.constant(3.0)})
    assert out["sum"].numpy() == 3.0 and out["scaled"].numpy() == 6.0 and out["note"] == "ok"


def test_random_ops_draw_fresh_numbers_on_every_call():
    f = ad.function(lambda: ad.random.normal([3]))
    assert not np.array_equal(f().numpy(), f().numpy())
    assert f.experimental_get_tracing_count() == 1


def test_nested_functions_and_a_failing_trace_leave_no_recorder_behind():
    inner = ad.function(lambda x: ad.exp(x))
    outer = ad.function(lambda x: inner(x) * 2.0)
    np.testing.assert_allclose(outer(ad.constant(0.0)).numpy(), 2.0)
    assert [n.op_type for n in outer.concrete_functions[0].graph.nodes] == ["Exp", "Mul"]

    @ad.function
    def broken(x):
        raise RuntimeError("boom")

    with ad.GradientTape() as tape:
        with pytest.raises(RuntimeError, match="boom"):
            broken(ad.constant(1.0))
        assert tape_module.active[-1] is tape


# ---- differentiating traced functions -------------------------------------------------

def _model(x, w, b):
    return ad.reduce_sum(ad.tanh(ad.matmul(x, w) + b) ** 2)


def test_traced_function_gradients_equal_eager_ones():
    x, w0, b0 = _tensors([[0.5, -1.0], [2.0, 0.3]], [[0.1, 0.2], [0.3, -0.4]], [0.5, -0.5])
    w, b = ad.Variable(w0), ad.Variable(b0)
    traced = ad.function(lambda x: _model(x, w, b))
    results = []
    for f in (lambda x: _model(x, w, b), traced, traced):   # eager, trace, replay
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        results.append([y] + tape.gradient(y, [x, w, b]))
    for got in results[1:]:
        for a, e in zip(got, results[0]):
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-6)


def test_tapes_see_the_replayed_ops_not_the_tracing():
    f = ad.function(lambda x: ad.sin(x) * 2.0)
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)             # traced and run inside the tape
    assert [r.op_type for r in tape.records] == ["Sin", "Mul"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * np.cos(1.0), rtol=1e-6)


def test_second_derivative_and_jacobian_through_a_traced_function():
    f = ad.function(lambda x: x * x * x)
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), [6.0, 12.0])
    if hasattr(ad.GradientTape, "jacobian"):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag([3.0, 12.0]))


def test_gradient_computed_inside_a_traced_function():
    @ad.function
    def slope(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x ** 3
        return tape.gradient(y, x)

    assert slope(ad.constant(2.0)).numpy() == 12.0
    assert slope(ad.constant(3.0)).numpy() == 27.0   # replayed: no Python ran


def test_variables_are_captured_by_reference_and_watched():
    v = ad.Variable(3.0)
    f = ad.function(lambda x: v * x)
    x = ad.constant(2.0)
    assert f(x).numpy() == 6.0
    v.assign(5.0)
    assert f(x).numpy() == 10.0
    with ad.GradientTape() as tape:
        y = f(x)
    assert tape.gradient(y, v).numpy() == 2.0
    assert f.experimental_get_tracing_count() == 1


def test_captured_constant_watched_outside_gets_its_gradient():
    c = ad.constant(3.0)
    f = ad.function(lambda x: x * c)
    with ad.GradientTape() as tape:
        tape.watch(c)
        y = f(ad.constant(2.0))
    assert tape.gradient(y, c).numpy() == 2.0


def test_module_methods_bind_per_instance():
    class Scale(ad.Module):
        def __init__(self, factor):
            super().__init__()
            self.factor = ad.Variable(factor)

        @ad.function(input_signature=[ad.TensorSpec([])])
        def __call__(self, x):
            return x * self.factor

    two, three = Scale(2.0), Scale(3.0)
    assert two(4.0).numpy() == 8.0 and three(4.0).numpy() == 12.0
    assert two.__call__ is two.__call__
    assert two.__call__.experimental_get_tracing_count() == 1
    with ad.GradientTape() as tape:
        y = three(4.0)
    assert tape.gradient(y, three.trainable_variables)[0].numpy() == 4.0
    assert [v.name for v in two.variables] == ["Variable:0"]   # bookkeeping is not walked


# ---- graphs keep only what the outputs need; layers inside traced functions -----------

def test_ops_whose_results_are_thrown_away_are_pruned():
    @ad.function
    def f(x):
        ad.exp(x) * ad.constant(5.0)     # computed, then dropped
        return ad.sin(x)

    graph = f.get_concrete_function(ad.constant(1.0)).graph
    assert [n.op_type for n in graph.nodes] == ["Sin"] and graph.constants == []


def test_a_layer_built_inside_a_traced_function_does_not_redraw_its_initializer():
    layer = ad.layers.Dense(3, activation="relu")
    f = ad.function(lambda x: layer(x))
    x = ad.random.normal([2, 4])
    y = f(x)
    assert [n.op_type for n in f.concrete_functions[0].graph.nodes] == ["MatMul", "AddV2", "Relu"]
    np.testing.assert_allclose(y.numpy(), layer(x).numpy(), rtol=1e-6)
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(f(x))
    assert [g.shape for g in tape.gradient(loss, layer.trainable_variables)] == [(4, 3), (3,)]


def test_functions_bind_on_classes_with_slots():
    class Slotted:
        __slots__ = ("scale", "__weakref__")

        def __init__(self, scale):
            self.scale = scale

        @ad.function
        def apply(self, x):
            return x * self.scale

    a, b = Slotted(2.0), Slotted(3.0)
    assert a.apply(ad.constant(1.0)).numpy() == 2.0 and b.apply(ad.constant(1.0)).numpy() == 3.0
    assert a.apply is a.apply and a.apply.experimental_get_tracing_count() == 1


# ---- assignments inside traced functions ------------------------------------------

def test_assign_inside_a_traced_function_runs_once_per_call_and_not_while_tracing():
    counter = ad.Variable(0.0)

    @ad.function
    def step():
        counter.assign_add(1.0)
        return counter.read_value() * 2.0

    step.get_concrete_function()          # tracing alone changes nothing (as in TensorFlow)
    assert counter.numpy() == 0.0
    assert step().numpy() == 2.0          # reads after the assign see the new value
    assert step().numpy() == 4.0
    assert counter.numpy() == 2.0
    assert "AssignVariableOp" in [node.op_type for node in
                                  step.get_concrete_function().graph.nodes]


def test_batch_normalization_moving_statistics_update_in_a_traced_function():
    x = ad.constant(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32) + 5.0)
    eager, traced = ad.layers.BatchNormalization(), ad.layers.BatchNormalization()
    train_step = ad.function(lambda inputs: traced(inputs, training=True))
    for _ in range(3):
        eager(x, training=True)
        train_step(x)
    np.testing.assert_allclose(traced.moving_mean.numpy(), eager.moving_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(traced.moving_variance.numpy(), eager.moving_variance.numpy(),
                               rtol=1e-6)
    assert traced.moving_mean.numpy()[0] > 0.1  # three updates toward a mean near 5
