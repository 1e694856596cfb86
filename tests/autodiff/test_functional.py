"""``ad.functional``: grad, value_and_grad, jacobian, hessian, hvp, jvp, vjp, tape_hessian.

Each is checked against its analytic value and against the tape it is
built on; the Hessian of a quadratic is its matrix, and ``hvp`` equals
``hessian @ v``.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing

F = ad.functional


def f64(value):
    return ad.constant(np.asarray(value, dtype=np.float64))


def sin_x(x):
    return ad.reduce_sum(ad.sin(x) * x)


# ---- grad and value_and_grad ------------------------------------------------------------

def test_grad_matches_the_analytic_derivative_and_the_tape():
    x = f64([0.5, 1.0, -2.0])
    xn = x.numpy()
    np.testing.assert_allclose(F.grad(sin_x)(x).numpy(), np.cos(xn) * xn + np.sin(xn))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = sin_x(x)
    np.testing.assert_array_equal(F.grad(sin_x)(x).numpy(), tape.gradient(y, x).numpy())


def test_grad_with_several_argnums_returns_a_tuple_and_zeros_for_unused_arguments():
    g = F.grad(lambda x, y, z: x * x * y, argnums=(0, 1, 2))(3.0, 2.0, 5.0)
    assert isinstance(g, tuple) and [float(t) for t in g] == [12.0, 9.0, 0.0]
    assert F.grad(lambda x, y: x * x * y, argnums=1)(3.0, 2.0).numpy() == 9.0


def test_nested_grad_gives_higher_derivatives():
    x = f64(0.7)
    assert float(F.grad(F.grad(ad.sin))(x)) == pytest.approx(-np.sin(0.7))
    assert float(F.grad(F.grad(F.grad(ad.sin)))(x)) == pytest.approx(-np.cos(0.7))


def test_grad_of_nested_arguments_variables_and_keyword_arguments():
    params = {"w": ad.Variable([1.0, 2.0]), "b": ad.constant(0.5)}

    def loss(p, x, scale=1.0):
        return scale * ad.reduce_sum((p["w"] * x + p["b"]) ** 2)

    x = ad.constant([1.0, -1.0])
    g = F.grad(loss)(params, x, scale=2.0)
    r = params["w"].numpy() * x.numpy() + 0.5           # [1.5, -1.5]
    np.testing.assert_allclose(g["w"].numpy(), 4.0 * r * x.numpy())
    assert float(g["b"]) == pytest.approx(4.0 * r.sum())


def test_value_and_grad_and_has_aux():
    value, dx = F.value_and_grad(lambda x: ad.reduce_sum(x * x))(ad.constant([1.0, 2.0]))
    assert float(value) == 5.0 and dx.numpy().tolist() == [2.0, 4.0]
    (value, aux), dx = F.value_and_grad(lambda x: (x * x, "note"), has_aux=True)(3.0)
    assert float(value) == 9.0 and aux == "note" and float(dx) == 6.0
    dx, aux = F.grad(lambda x: (x * x, {"x": x}), has_aux=True)(3.0)
    assert float(dx) == 6.0 and float(aux["x"]) == 3.0


def test_grad_refuses_non_scalar_outputs_and_integer_arguments():
    with pytest.raises(TypeError, match="scalar"):
        F.grad(lambda x: x * 2.0)(ad.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="int32"):
        F.grad(lambda n: ad.cast(n, ad.float32))(ad.constant(3))
    with pytest.raises(ValueError, match="argnums"):
        F.grad(ad.sin, argnums=2)(1.0)


# ---- jacobian ------------------------------------------------------------------------------

def test_jacobian_of_a_linear_map_is_its_matrix(rng):
    a = f64(rng.standard_normal((3, 4)))
    j = F.jacobian(lambda x: ad.matmul(a, x))(f64(np.ones((4, 1))))
    assert j.shape == (3, 1, 4, 1)
    np.testing.assert_allclose(np.reshape(j.numpy(), (3, 4)), a.numpy())


def test_jacobian_matches_finite_differences_for_several_arguments_and_outputs(rng):
    x, y = rng.uniform(0.5, 1.5, size=(2, 3)), rng.uniform(0.5, 1.5, size=(3,))

    def f(a, b):
        return {"ratio": ad.sin(a) / b, "total": ad.reduce_sum(a * b, axis=1)}

    jac = F.jacobian(f, argnums=(0, 1))(f64(x), f64(y))
    for key in ("ratio", "total"):
        numeric = testing.numerical_jacobian(lambda a, b: f(a, b)[key], [x, y])
        for got, expected in zip(jac[key], numeric):
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-8)


# ---- hessian, hvp and the tape's Hessian ----------------------------------------------------------

def test_hessian_of_a_quadratic_is_its_matrix(rng):
    m = rng.standard_normal((4, 4))
    a = f64(m + m.T)
    h = F.hessian(lambda x: 0.5 * ad.reduce_sum(x * ad.matmul(a, x)))(f64(np.ones((4, 1))))
    np.testing.assert_allclose(np.reshape(h.numpy(), (4, 4)), a.numpy(), rtol=1e-12)


def test_hessian_of_several_arguments_returns_nested_blocks():
    x, y = f64([1.0, 2.0]), f64([3.0, 4.0])
    (hxx, hxy), (hyx, hyy) = F.hessian(
        lambda x, y: ad.reduce_sum(x * x * y) + ad.reduce_sum(ad.sin(y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(hxx.numpy(), np.diag(2 * y.numpy()))
    np.testing.assert_allclose(hxy.numpy(), np.diag(2 * x.numpy()))
    np.testing.assert_allclose(hyx.numpy(), np.diag(2 * x.numpy()))
    np.testing.assert_allclose(hyy.numpy(), np.diag(-np.sin(y.numpy())))


def test_hessian_blocks_without_a_path_are_zeros():
    (hxx, hxy), (hyx, hyy) = F.hessian(lambda x, y: ad.reduce_sum(x ** 3.0) + y,
                                       argnums=(0, 1))(f64([1.0, 2.0]), f64(5.0))
    np.testing.assert_allclose(hxx.numpy(), np.diag([6.0, 12.0]))
    assert hxy.shape == (2,) and hyx.shape == (2,) and hyy.shape == ()
    assert not hxy.numpy().any() and not hyx.numpy().any() and float(hyy) == 0.0


def test_hessian_matches_finite_differences_of_the_gradient(rng):
    w = f64(rng.standard_normal((3, 2)))
    x0 = rng.standard_normal((4, 3))

    def loss(x):
        return ad.reduce_mean(ad.tanh(ad.matmul(x, w)) ** 2)

    h = F.hessian(loss)(f64(x0))
    numeric, = testing.numerical_jacobian(lambda x: F.grad(loss)(x), [x0])
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6, atol=1e-9)


def test_hvp_equals_hessian_times_v(rng):
    w = f64(rng.standard_normal((3, 2)))
    x, v = f64(rng.standard_normal((4, 3))), f64(rng.standard_normal((4, 3)))

    def loss(x):
        return ad.reduce_sum(ad.sigmoid(ad.matmul(x, w)) ** 2) + ad.reduce_sum(ad.exp(x) * x)

    h = F.hessian(loss)(x).numpy()
    np.testing.assert_allclose(F.hvp(loss, x, v).numpy(),
                               np.tensordot(h, v.numpy(), axes=2), rtol=1e-10)


def test_hvp_of_several_arguments_sums_the_blocks():
    g = lambda x, y: ad.reduce_sum(x * x * y) + ad.reduce_sum(ad.sin(y))  # noqa: E731
    x, y = f64([1.0, 2.0]), f64([3.0, 4.0])
    hx, hy = F.hvp(g, (x, y), ([1.0, 0.0], [0.0, 1.0]))
    np.testing.assert_allclose(hx.numpy(), [6.0, 4.0])            # H_xx vx + H_xy vy
    np.testing.assert_allclose(hy.numpy(), [2.0, -np.sin(4.0)])    # H_yx vx + H_yy vy


def test_tape_hessian_on_a_variable_recorded_by_the_user():
    w = ad.Variable([[1.0, -2.0], [0.5, 3.0]], dtype=ad.float64)
    x = f64([[1.0, 2.0]])
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(ad.tanh(ad.matmul(x, w)) ** 2)
    h = F.tape_hessian(tape, loss, w)
    assert h.shape == (2, 2, 2, 2)
    numeric, = testing.numerical_jacobian(
        lambda k: F.grad(lambda k: ad.reduce_sum(ad.tanh(ad.matmul(x, k)) ** 2))(k), [w.numpy()])
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6, atol=1e-9)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(loss, w)                 # the tape counts as used


def test_tape_hessian_newton_step_solves_a_quadratic(rng):
    m = rng.standard_normal((3, 3))
    a, b = f64(m @ m.T + 3 * np.eye(3)), f64(rng.standard_normal((3, 1)))
    x = ad.Variable(np.zeros((3, 1)))
    with ad.GradientTape(persistent=True) as tape:
        loss = 0.5 * ad.reduce_sum(x * ad.matmul(a, x)) - ad.reduce_sum(b * x)
    g = tape.gradient(loss, x)
    h = F.tape_hessian(tape, loss, x)
    step = np.linalg.solve(np.reshape(h.numpy(), (3, 3)), np.reshape(g.numpy(), (3,)))
    np.testing.assert_allclose(x.numpy()[:, 0] - step, np.linalg.solve(a.numpy(), b.numpy())[:, 0])


def test_tape_hessian_unconnected_blocks_are_none_or_zeros():
    x, y = f64([1.0, 2.0]), f64(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        loss = ad.reduce_sum(x * x)
    (hxx, hxy), (hyx, hyy) = F.tape_hessian(tape, loss, [x, y])
    np.testing.assert_allclose(hxx.numpy(), 2 * np.eye(2))
    assert hxy is None and hyx is None and hyy is None
    (_, hxy), (hyx, hyy) = F.tape_hessian(tape, loss, [x, y], unconnected_gradients="zero")
    assert hxy.shape == (2,) and hyx.shape == (2,) and float(hyy) == 0.0


# ---- forward mode and vjp --------------------------------------------------------------------

def test_jvp_returns_the_value_and_j_v(rng):
    a = f64(rng.standard_normal((3, 4)))
    x, v = f64(rng.standard_normal((4, 2))), f64(rng.standard_normal((4, 2)))
    f = lambda x: ad.tanh(ad.matmul(a, x))  # noqa: E731
    out, tangent = F.jvp(f, (x,), (v,))
    np.testing.assert_allclose(out.numpy(), np.tanh(a.numpy() @ x.numpy()))
    j = F.jacobian(f)(x).numpy()
    np.testing.assert_allclose(tangent.numpy(), np.tensordot(j, v.numpy(), axes=2), rtol=1e-12)
    _, unconnected = F.jvp(lambda x: a * 2.0, x, v)
    assert unconnected.shape == (3, 4) and not unconnected.numpy().any()


def test_vjp_returns_the_value_and_a_reusable_transpose(rng):
    x, y = f64(rng.standard_normal(3)), f64(rng.standard_normal(3))
    out, vjp_fn = F.vjp(lambda x, y: x * ad.sin(y), x, y)
    np.testing.assert_allclose(out.numpy(), x.numpy() * np.sin(y.numpy()))
    for u in (f64([1.0, 0.0, 0.0]), f64(rng.standard_normal(3))):
        dx, dy = vjp_fn(u)
        np.testing.assert_allclose(dx.numpy(), u.numpy() * np.sin(y.numpy()))
        np.testing.assert_allclose(dy.numpy(), u.numpy() * x.numpy() * np.cos(y.numpy()))
    out, vjp_fn, aux = F.vjp(lambda x: (x * 2.0, "aux"), x, has_aux=True)
    assert aux == "aux" and vjp_fn(f64(np.ones(3)))[0].numpy().tolist() == [2.0, 2.0, 2.0]


def test_jvp_and_vjp_agree_through_the_transpose_identity(rng):
    # <u, J v> == <J^T u, v>
    x = f64(rng.uniform(0.5, 1.5, size=(2, 3)))
    v, u = f64(rng.standard_normal((2, 3))), f64(rng.standard_normal(3))
    f = lambda x: ad.reduce_prod(x, axis=0) / ad.reduce_sum(x * x, axis=0)  # noqa: E731
    _, jv = F.jvp(f, x, v)
    _, vjp_fn = F.vjp(f, x)
    assert float(ad.reduce_sum(u * jv)) == pytest.approx(float(ad.reduce_sum(vjp_fn(u)[0] * v)))


def test_the_top_level_keeps_tensorflow_names_only():
    assert not hasattr(ad, "hessian") and not hasattr(ad, "hvp") and not hasattr(ad, "vjp")
    assert ad.gradients_function is F.gradients_function and ad.gradients is F.gradients


def test_gradients_function_differentiates_one_object_passed_twice_as_two_arguments():
    # TensorFlow's old eager API copied repeated arguments: d(x*y)/dx = y, not x + y.
    x = ad.constant(1.0)
    dx, dy = ad.gradients_function(lambda a, b: a * b)(x, x)
    assert float(dx) == 1.0 and float(dy) == 1.0
    x = ad.constant(3.0)
    assert [float(g) for g in ad.gradients_function(lambda a, b: a * b * b)(x, x)] == [9.0, 18.0]
