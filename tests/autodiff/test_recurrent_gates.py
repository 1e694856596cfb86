"""The fused recurrent gates' gradient ops skip a ``d_act`` known to be zeros
(``act_zero=True``, autodiff/ops/recurrent.py): only in a trace, only for a constant zero,
with the same numbers as the general path; a second derivative through ``act`` still
takes the general path."""

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import recurrent

RNG = np.random.default_rng(3)


def _t(*shape, scale=1.0):
    return ad.constant((RNG.standard_normal(shape) * scale).astype(np.float32))


GRAD_OPS = {   # name: (gradient op, its inputs with a zero d_act)
    "lstm": lambda: (recurrent.LSTM_GATES_GRAD,
                     [*recurrent.LSTM_GATES(_t(4, 12, scale=30.0), _t(4, 3))[2:], _t(4, 3),
                      _t(4, 3), _t(4, 3), ad.zeros([4, 12]), ad.zeros([4, 3])]),
    "gru": lambda: (recurrent.GRU_GATES_GRAD,
                    [recurrent.GRU_GATES(_t(4, 9, scale=30.0), _t(4, 9), _t(4, 3))[1],
                     _t(4, 9), _t(4, 3), _t(4, 3), ad.zeros([4, 9])]),
}


@pytest.mark.parametrize("kind", sorted(GRAD_OPS))
def test_act_zero_gives_the_general_paths_numbers(kind):
    op, inputs = GRAD_OPS[kind]()   # scale 30: saturated gates among them
    general = op(*inputs)
    skipped = op(*inputs, act_zero=True)
    for a, b in zip(general, skipped):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("layer", ["LSTM", "GRU"])
def test_a_compiled_step_skips_the_zero_act_cotangent_and_equals_eager(layer):
    cell = getattr(ad.keras.layers, layer)(5)
    x = _t(3, 4, 2)

    def grads(x):
        with ad.GradientTape() as tape:
            loss = ad.reduce_sum(cell(x) ** 2)
        return tape.gradient(loss, cell.trainable_variables)

    eager = grads(x)
    compiled = ad.function(grads, jit_compile=True)
    got = compiled(x)
    source = compiled.experimental_get_compiler_ir(x)(stage="python")
    op = {"LSTM": "LSTMGatesGrad", "GRU": "GRUGatesGrad"}[layer]
    lines = [line for line in source.splitlines() if f"= {op}(" in line]
    assert len(lines) in (4, 8)   # 4 time steps (and again in an exact twin, if any)
    assert all("act_zero=True" in line for line in lines)
    for c, e in zip(got, eager):
        np.testing.assert_array_equal(c.numpy(), e.numpy())


@pytest.mark.parametrize("layer", ["LSTM", "GRU"])
def test_a_second_derivative_through_act_takes_the_general_path(layer):
    """The outer tape sends a traced cotangent into ``act``: no act_zero there, even when
    it is zeros on the call that traced (v = 0), and the Hessian-vector products of later
    calls equal eager's."""
    cell = getattr(ad.keras.layers, layer)(3)
    x = _t(2, 3, 2)

    def hvp(x, v):
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                loss = ad.reduce_sum(ad.tanh(cell(x)))
            g = inner.gradient(loss, x)
            gv = ad.reduce_sum(g * v)
        return outer.gradient(gv, x)

    traced = ad.function(hvp)
    zero = ad.zeros([2, 3, 2])
    np.testing.assert_array_equal(traced(x, zero).numpy(), hvp(x, zero).numpy())
    for _ in range(2):
        v = _t(2, 3, 2)
        eager = hvp(x, v).numpy()
        assert np.abs(eager).max() > 1e-3
        np.testing.assert_allclose(traced(x, v).numpy(), eager, rtol=1e-5, atol=1e-6)
    flags = [node.params.get("act_zero", False)
             for node in traced.get_concrete_function(x, zero).graph.nodes
             if node.op_type.endswith("GatesGrad")]
    assert True in flags and False in flags   # the inner gradient skips; the outer does not
