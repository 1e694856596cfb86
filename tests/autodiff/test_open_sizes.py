"""Gradient rules read sizes in the graph only in a trace that serves any size
(``autodiff/ops/open_sizes.py``); other traces keep their sizes as numbers, so the graphs
and compiled programs the lessons show are unchanged."""

import numpy as np
import pytest

import autodiff as ad


def _loss_grad(x):
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_mean(ad.square(ad.expand_dims(x[:, 0], 1) - x)) + ad.reduce_sum(x) / 4.0
    return tape.gradient(y, x)


def _op_types(f, x):
    return [node.op_type for node in f.get_concrete_function(x).graph.nodes]


def test_only_a_trace_with_an_open_size_reads_sizes_in_the_graph():
    x = ad.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    fixed = ad.function(_loss_grad, input_signature=[ad.TensorSpec([3, 2])])
    open_ = ad.function(_loss_grad, input_signature=[ad.TensorSpec([None, 2])])
    assert "Shape" not in _op_types(fixed, x)
    assert "Shape" in _op_types(open_, x)


@pytest.mark.parametrize("jit", [False, True])
def test_one_open_trace_gives_each_size_the_eager_gradient(jit):
    f = ad.function(_loss_grad, input_signature=[ad.TensorSpec([None, 2])], jit_compile=jit)
    rng = np.random.default_rng(3)
    for n in (3, 1, 5, 2, 8):
        x = ad.constant(rng.standard_normal((n, 2)).astype(np.float32))
        np.testing.assert_allclose(f(x).numpy(), _loss_grad(x).numpy(), rtol=1e-6, atol=1e-7)
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("jit", [False, True])
def test_dropout_in_an_open_trace_draws_what_eager_draws_at_every_size(jit):
    def drop(x):
        return ad.nn.dropout(x, 0.5, seed=4) + ad.nn.dropout(x, 0.25)

    f = ad.function(drop, input_signature=[ad.TensorSpec([None, 8])], jit_compile=jit)
    sizes = (3, 1, 6, 2)
    ad.random.set_seed(11)
    eager = [drop(ad.ones([n, 8])).numpy() for n in sizes]
    ad.random.set_seed(11)
    traced = [f(ad.ones([n, 8])).numpy() for n in sizes]
    for a, b in zip(eager, traced):
        np.testing.assert_array_equal(a, b)
    assert f.experimental_get_tracing_count() == 1
    assert "RandomUniformOf" in [node.op_type for node in
                                 f.get_concrete_function(ad.ones([2, 8])).graph.nodes]


def test_lambdas_written_in_one_multi_line_list_each_trace_once():
    # Each lambda is converted from its own line of a list that spans several lines.
    spec = [ad.TensorSpec([None, 2])]
    steps = [
        ad.function(lambda x: _loss_grad(x) * 2.0, input_signature=spec),
        ad.function(lambda x: _loss_grad(x) + 1.0, input_signature=spec),
    ]
    rng = np.random.default_rng(4)
    for n in (2, 5, 1, 3):
        x = ad.constant(rng.standard_normal((n, 2)).astype(np.float32))
        np.testing.assert_allclose(steps[0](x).numpy(), _loss_grad(x).numpy() * 2.0, rtol=1e-6)
        np.testing.assert_allclose(steps[1](x).numpy(), _loss_grad(x).numpy() + 1.0, rtol=1e-6)
    assert [s.experimental_get_tracing_count() for s in steps] == [1, 1]
