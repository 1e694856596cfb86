"""Forward mode: ``ad.autodiff.ForwardAccumulator`` against reverse mode and finite differences.

The table tests walk ``autodiff.registry.REGISTRY`` (every differentiable op,
every declared case), so a new op is covered without touching this file:

- ``test_jvp_equals_jacobian_times_tangent``: ``acc.jvp(y)`` equals ``J v``
  with J from ``tape.jacobian`` (reverse mode), elementwise;
- ``test_jvp_rule_matches_the_double_vjp``: each explicit JVP rule agrees
  with the construction from the VJP rules, with every subset of tangents;
- ``test_jvp_of_a_gradient_matches_finite_differences``: ``check_grads``
  in ``fwd`` mode to second order, i.e. forward-over-reverse (an accumulator
  around the tape that computes a gradient) against finite differences.

Then nesting (which recorder sees which computation), Variables, and errors.
"""

import zlib
from itertools import combinations

import numpy as np
import pytest

import autodiff as ad
from autodiff import forward, nest, testing
from autodiff.registry import REGISTRY, Primitive

ForwardAccumulator = ad.autodiff.ForwardAccumulator


def _cases(predicate):
    params = []
    for name, prim in sorted(REGISTRY.items()):
        if not predicate(prim):
            continue
        try:
            n = len(testing.op_cases(prim))
        except ValueError:
            continue  # no usable cases: test_op_table's metadata test reports it
        params += [pytest.param(name, k, id=f"{name}-case{k}") for k in range(n)]
    return params


def _case(name, k):
    """(primitive, input tensors, params, a generator seeded for this case)."""
    prim = REGISTRY[name]
    shapes, params = testing.op_cases(prim)[k]
    rng = np.random.default_rng(zlib.crc32(f"fwd-{name}-case{k}".encode()))
    arrays = testing.op_inputs(prim, shapes, rng)
    return prim, [ad.constant(a) for a in arrays], dict(params), rng


def _float_outputs(out):
    return [t for t in nest.flatten(out) if t.dtype.is_floating]


# ---- the op table ---------------------------------------------------------------------

@pytest.mark.parametrize("name, k", _cases(lambda p: p.differentiable))
def test_jvp_equals_jacobian_times_tangent(name, k):
    prim, xs, params, rng = _case(name, k)
    wrt = [x for x in xs if x.dtype.is_floating]
    vs = [ad.constant(rng.standard_normal(x.shape)) for x in wrt]
    with ForwardAccumulator(wrt, vs) as acc:
        outputs = _float_outputs(prim(*xs, **params))
    tangents = acc.jvp(outputs, unconnected_gradients="zero")
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(wrt)
        again = _float_outputs(prim(*xs, **params))
    for j, (y, t) in enumerate(zip(again, tangents)):
        assert t.shape == y.shape and t.dtype == y.dtype, f"{name}: tangent {j} shape/dtype"
        expected = np.zeros(y.shape)
        for x, v, jac in zip(wrt, vs, tape.jacobian(y, wrt, unconnected_gradients="zero")):
            expected += np.tensordot(jac.numpy(), v.numpy(), axes=x.ndim)
        np.testing.assert_allclose(t.numpy(), expected, rtol=1e-10, atol=1e-10,
                                   err_msg=f"{name}: J v of output {j}")


@pytest.mark.parametrize("name, k", _cases(lambda p: p.differentiable and p.jvp is not None))
def test_jvp_rule_matches_the_double_vjp(name, k):
    prim, xs, params, rng = _case(name, k)
    outputs = nest.flatten(prim(*xs, **params))
    floats = [i for i, x in enumerate(xs) if x.dtype.is_floating]
    for n in range(1, len(floats) + 1):
        for subset in combinations(floats, n):
            tangents = [ad.constant(rng.standard_normal(x.shape)) if i in subset else None
                        for i, x in enumerate(xs)]
            by_rule = forward._output_tangents(prim, xs, outputs, params, tangents)
            by_vjp = forward._tangents_from_vjp(prim, xs, outputs, params, tangents)
            for j, (a, b) in enumerate(zip(by_rule, by_vjp)):
                if b is None or not outputs[j].dtype.is_floating:
                    continue
                assert a is not None, f"{name}: the rule gave no tangent for output {j}"
                assert a.shape == outputs[j].shape and a.dtype == outputs[j].dtype
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12,
                                           err_msg=f"{name}: tangents on inputs {subset}")


@pytest.mark.parametrize("name, k", _cases(lambda p: p.differentiable))
def test_jvp_of_a_gradient_matches_finite_differences(name, k):
    prim, xs, params, _ = _case(name, k)
    arrays = [x.numpy() for x in xs]
    testing.check_grads(lambda *a: prim(*a, **params), arrays, order=2, modes=("fwd",),
                        seed=zlib.crc32(name.encode()) + k)


def test_every_rule_in_the_tables_is_attached():
    for name, rule in forward.JVP_RULES.items():
        assert REGISTRY[name].jvp is not None, name


# ---- what a JVP is ----------------------------------------------------------------------

def test_jvp_of_a_composite_matches_the_analytic_derivative():
    x = ad.constant([0.5, 1.0, 2.0], dtype=ad.float64)
    v = ad.constant([1.0, -2.0, 0.5], dtype=ad.float64)
    with ForwardAccumulator(x, v) as acc:
        y = ad.exp(ad.sin(x)) / x
    xn, vn = x.numpy(), v.numpy()
    expected = (np.exp(np.sin(xn)) * np.cos(xn) / xn - np.exp(np.sin(xn)) / xn ** 2) * vn
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-12)


def test_jvp_of_a_primal_is_its_tangent_and_unconnected_is_none_or_zero():
    x, other = ad.constant([1.0, 2.0]), ad.constant([3.0, 4.0])
    with ForwardAccumulator(x, [0.5, 0.25]) as acc:
        z = other * 2.0
    np.testing.assert_array_equal(acc.jvp(x).numpy(), [0.5, 0.25])
    assert acc.jvp(z) is None
    np.testing.assert_array_equal(acc.jvp(z, unconnected_gradients="zero").numpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="unconnected_gradients"):
        acc.jvp(z, unconnected_gradients="sometimes")


def test_nested_primals_and_targets():
    a, b = ad.constant(2.0), ad.constant(3.0)
    with ForwardAccumulator({"a": a, "b": b}, {"a": 1.0, "b": 10.0}) as acc:
        out = {"prod": a * b, "pair": [a + b, ad.sin(a)]}
    jvps = acc.jvp(out)
    assert float(jvps["prod"]) == pytest.approx(3.0 + 20.0)
    assert float(jvps["pair"][0]) == pytest.approx(11.0)
    assert float(jvps["pair"][1]) == pytest.approx(np.cos(2.0))


def test_a_variable_primal_carries_its_tangent_to_every_read():
    w = ad.Variable([1.0, 2.0])
    with ForwardAccumulator(w, [1.0, 1.0]) as acc:
        y = ad.reduce_sum(w * w)
        w.assign([3.0, 4.0])
        z = ad.reduce_sum(w)          # a read after assign still carries the tangent
    assert float(acc.jvp(y)) == pytest.approx(6.0)
    assert float(acc.jvp(z)) == pytest.approx(2.0)
    np.testing.assert_array_equal(acc.jvp(w).numpy(), [1.0, 1.0])


def test_stop_gradient_and_integer_results_carry_no_tangent():
    x = ad.constant([1.0, -2.0])
    with ForwardAccumulator(x, [1.0, 1.0]) as acc:
        stopped = ad.stop_gradient(x) * 3.0
        index = ad.argmax(x)
        rounded = ad.round(x)
    assert acc.jvp(stopped) is None and acc.jvp(index) is None and acc.jvp(rounded) is None


def test_ops_after_exit_are_not_tracked_and_reentry_after_exit_resumes():
    x = ad.constant(2.0)
    acc = ForwardAccumulator(x, 1.0)
    with acc:
        y = x * x
    z = y * 3.0
    assert acc.jvp(z) is None
    with acc:
        w = y * 3.0
    assert float(acc.jvp(w)) == pytest.approx(12.0)


def test_an_op_without_a_jvp_rule_uses_its_vjp():
    cube = Primitive("TestCube", lambda xp, x: x ** 3, (lambda g, ans, x: g * 3.0 * x * x,),
                     register=False, doc="d/dx x^3 = 3x^2")
    x = ad.constant([1.0, 2.0])
    with ForwardAccumulator(x, [1.0, 0.5]) as acc:
        y = cube(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3.0, 6.0])


def test_an_op_without_any_gradient_raises_lookup_error_naming_it():
    mystery = Primitive("TestMystery", lambda xp, x: x + 1, None, register=False, doc="none")
    x = ad.constant(1.0)
    with pytest.raises(LookupError, match="TestMystery"):
        with ForwardAccumulator(x, 1.0):
            mystery(x)


# ---- nesting -------------------------------------------------------------------------------

def test_forward_over_reverse_gives_the_hessian_vector_product():
    v = ad.Variable([1.0, 2.0])
    with ForwardAccumulator(v, ad.constant([1.0, 0.0])) as acc:
        with ad.GradientTape() as tape:
            y = ad.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])   # the TF docstring's


def test_forward_over_reverse_hvp_matches_finite_differences_of_gradients(rng):
    w1, w2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x0, v = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))

    def gradient(x_value):
        x = ad.constant(x_value)
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_mean(ad.tanh(ad.matmul(ad.tanh(ad.matmul(x, w1)), w2)) ** 2)
        return tape.gradient(y, x), x

    x = ad.constant(x0)
    with ForwardAccumulator(x, v) as acc:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_mean(ad.tanh(ad.matmul(ad.tanh(ad.matmul(x, w1)), w2)) ** 2)
        g = tape.gradient(y, x)
    eps = 1e-6
    fd = (gradient(x0 + eps * v)[0].numpy() - gradient(x0 - eps * v)[0].numpy()) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(g).numpy(), fd, rtol=1e-6, atol=1e-9)


def test_reverse_over_forward_a_tape_outside_records_the_tangent_computation():
    x = ad.constant([0.5, 1.5], dtype=ad.float64)
    v = ad.constant([1.0, 2.0], dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(x)
        with ForwardAccumulator(x, v) as acc:
            y = ad.reduce_sum(ad.sin(x) * x)
        jv = acc.jvp(y)                   # sum((cos x * x + sin x) * v)
    hv = tape.gradient(jv, x)             # H v: (2 cos x - x sin x) * v
    xn, vn = x.numpy(), v.numpy()
    np.testing.assert_allclose(hv.numpy(), (2 * np.cos(xn) - xn * np.sin(xn)) * vn, rtol=1e-12)


def test_a_tape_inside_the_accumulator_does_not_record_its_tangents():
    x = ad.constant([0.5, 1.5])
    with ForwardAccumulator(x, [1.0, 1.0]):
        with ad.GradientTape() as inner:
            inner.watch(x)
            ad.sin(x) * x
    assert [r.op_type for r in inner.records] == ["Sin", "Mul"]
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ForwardAccumulator(x, [1.0, 1.0]):
            ad.sin(x) * x
    assert len(outer.records) > 2          # the tangents' ops: cos(x) * v, ...


def test_the_accumulator_does_not_see_its_own_tangent_computations():
    x = ad.constant(2.0)
    with ForwardAccumulator(x, 1.0) as acc:
        y = ad.sin(x)
    assert acc.jvp(acc.jvp(y)) is None     # cos(x) * 1 was computed while paused


def test_forward_over_forward_gives_a_second_directional_derivative():
    x = ad.constant([0.3, 1.1], dtype=ad.float64)
    with ForwardAccumulator(x, ad.constant([1.0, 2.0], dtype=ad.float64)) as outer:
        with ForwardAccumulator(x, ad.constant([3.0, 0.5], dtype=ad.float64)) as inner:
            y = ad.sin(x)
        jv = inner.jvp(y)
    np.testing.assert_allclose(outer.jvp(jv).numpy(), -np.sin(x.numpy()) * [3.0, 1.0])


def test_fallback_jvps_compose_with_outer_tapes():
    # Maximum has no explicit rule: its tangent comes from the double VJP, whose
    # ops an outer tape records like any others.
    x = ad.constant([0.5, -1.0], dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(x)
        with ForwardAccumulator(x, ad.constant([2.0, 3.0], dtype=ad.float64)) as acc:
            y = ad.reduce_sum(ad.maximum(x * x, 0.5) * x)
        jv = acc.jvp(y)
    # at 0.5 the max is the constant (f = 0.5 x); at -1 it is x^2 (f = x^3)
    assert float(jv) == pytest.approx(0.5 * 2.0 + 3 * 1.0 * 3.0)
    np.testing.assert_allclose(tape.gradient(jv, x).numpy(), [0.0, 6 * -1.0 * 3.0])


# ---- errors ----------------------------------------------------------------------------------

def test_reentering_a_recording_accumulator_raises():
    x = ad.constant(1.0)
    acc = ForwardAccumulator(x, 1.0)
    with acc:
        with pytest.raises(ValueError, match="already recording"):
            acc.__enter__()


def test_naming_a_primal_twice_raises():
    x, w = ad.constant(1.0), ad.Variable(2.0)
    with pytest.raises(ValueError, match="more than once"):
        ForwardAccumulator([x, x], [1.0, 2.0])
    with pytest.raises(ValueError, match="more than once"):
        ForwardAccumulator([w, w], [1.0, 2.0])


def test_tangent_shape_dtype_and_structure_must_match_the_primals():
    x = ad.constant([1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(2,\)"):
        ForwardAccumulator(x, [1.0, 2.0, 3.0])
    with pytest.raises(ad.errors.InvalidArgumentError, match="float64.*float32"):
        ForwardAccumulator(x, ad.constant([1.0, 2.0], dtype=ad.float64))
    with pytest.raises(ValueError, match="structure"):
        ForwardAccumulator([x], [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="Tensor or Variable"):
        ForwardAccumulator(1.0, 1.0)


def test_an_integer_primal_warns_and_gets_no_tangent():
    n = ad.constant([1, 2])
    with pytest.warns(ad.AutodiffWarning, match="floating"):
        acc = ForwardAccumulator(n, [1, 1])
    assert acc.jvp(n) is None


def test_the_namespace_mirrors_tf_autodiff():
    assert ad.autodiff.GradientTape is ad.GradientTape
    assert ad.autodiff.ForwardAccumulator is forward.ForwardAccumulator
