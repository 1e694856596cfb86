"""The examples of TensorFlow's autodiff guides, run with ``tf.`` replaced by ``ad.``.

Sources: the seeds in ``shared/seeds`` (the advanced autodiff guide, a
GradientTape tutorial, the old eager "automatic differentiation" tutorial)
and TensorFlow's basic "Introduction to gradients and automatic
differentiation" guide. Where an old guide printed something TensorFlow 2 no
longer does, the test expects TensorFlow 2's answer and says so.
Custom gradients, Jacobians and saved models are tested elsewhere.
"""

import math
import warnings

import numpy as np
import pytest

import autodiff as ad


class TinyDense:
    """A hand-made ``Dense`` layer (``ad.layers`` comes later): relu(x @ kernel + bias)."""

    def __init__(self, kernel, bias, activation=None):
        self.kernel = ad.Variable(np.asarray(kernel, np.float32), name="kernel")
        self.bias = ad.Variable(np.asarray(bias, np.float32), name="bias")
        self.activation = activation

    @property
    def trainable_variables(self):
        return [self.kernel, self.bias]

    def __call__(self, x):
        y = ad.matmul(x, self.kernel) + self.bias
        return y if self.activation is None else self.activation(y)


# ---- Introduction to gradients: computing gradients -------------------------------

def test_intro_gradient_of_x_squared_at_three():
    x = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        y = x ** 2
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0


def _w_b_loss():
    w = ad.Variable(np.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]], np.float32), name="w")
    b = ad.Variable(ad.zeros(2, dtype=ad.float32), name="b")
    x = [[1.0, 2.0, 3.0]]
    with ad.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = ad.reduce_mean(y ** 2)
    return tape, w, b, loss


def _expected_w_b_grads():
    x = np.array([[1.0, 2.0, 3.0]])
    w = np.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]])
    y = x @ w
    dy = 2 * y / y.size
    return x.T @ dy, dy.sum(axis=0)


def test_intro_gradient_with_respect_to_a_list_of_variables():
    tape, w, b, loss = _w_b_loss()
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    assert dl_dw.shape == w.shape == (3, 2)
    assert dl_db.shape == b.shape == (2,)
    expected_w, expected_b = _expected_w_b_grads()
    np.testing.assert_allclose(dl_dw.numpy(), expected_w, rtol=1e-5)
    np.testing.assert_allclose(dl_db.numpy(), expected_b, rtol=1e-5)


def test_intro_gradient_with_respect_to_a_dict_of_variables():
    tape, w, b, loss = _w_b_loss()
    grad = tape.gradient(loss, {"w": w, "b": b})
    expected_w, expected_b = _expected_w_b_grads()
    np.testing.assert_allclose(grad["w"].numpy(), expected_w, rtol=1e-5)
    np.testing.assert_allclose(grad["b"].numpy(), expected_b, rtol=1e-5)


def test_intro_gradients_with_respect_to_a_model():
    kernel = np.array([[0.1, -0.2], [0.3, -0.1], [-0.1, -0.3]], np.float32)
    layer = TinyDense(kernel, [0.05, 0.0], activation=ad.nn.relu)
    x = ad.constant([[1.0, 2.0, 3.0]])
    with ad.GradientTape() as tape:
        y = layer(x)
        loss = ad.reduce_mean(y ** 2)
    grad = tape.gradient(loss, layer.trainable_variables)

    xs = np.array([[1.0, 2.0, 3.0]])
    z = xs @ kernel.astype(np.float64) + [0.05, 0.0]
    dz = 2 * np.maximum(z, 0) / z.size * (z > 0)      # the second unit is off: relu'(<0) = 0
    assert [g.shape for g in grad] == [(3, 2), (2,)]
    np.testing.assert_allclose(grad[0].numpy(), xs.T @ dz, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grad[1].numpy(), dz.sum(axis=0), rtol=1e-5, atol=1e-7)
    assert np.all(grad[0].numpy()[:, 1] == 0.0)


# ---- Introduction to gradients: controlling what the tape watches ---------------

def _x0_to_x3():
    x0 = ad.Variable(3.0, name="x0")                    # a trainable variable
    x1 = ad.Variable(3.0, name="x1", trainable=False)   # not trainable
    x2 = ad.Variable(2.0, name="x2") + 1.0              # a variable plus a tensor is a tensor
    x3 = ad.constant(3.0, name="x3")                    # not a variable
    return x0, x1, x2, x3


def test_only_the_trainable_variable_is_watched_by_default():
    x0, x1, x2, x3 = _x0_to_x3()
    with ad.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2) + (x3 ** 2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0
    assert grad[1:] == [None, None, None]
    assert [var.name for var in tape.watched_variables()] == ["x0:0"]


def test_watching_the_others_gives_every_gradient():
    x0, x1, x2, x3 = _x0_to_x3()
    with ad.GradientTape() as tape:
        tape.watch([x1, x2, x3])
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2) + (x3 ** 2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert [g.numpy() for g in grad] == [6.0, 6.0, 6.0, 6.0]


def test_watch_a_constant():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x ** 2
    assert tape.gradient(y, x).numpy() == 6.0


def test_disable_automatic_tracking_with_persistent_tape():
    variable_a = ad.Variable(3.0, name="x1")
    variable_b = ad.Variable(2.0, name="x2")
    with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(variable_a)
        y = variable_a ** 2
        z = variable_b ** 3
    assert tape.gradient(y, variable_a).numpy() == 6.0
    assert tape.gradient(z, variable_b) is None


def test_disable_automatic_tracking_watching_one_of_two_variables():
    x0 = ad.Variable(0.0)
    x1 = ad.Variable(10.0)
    with ad.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = ad.math.sin(x0)
        y1 = ad.nn.softplus(x1)
        y = y0 + y1
        ys = ad.reduce_sum(y)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})
    assert grad["x0"] is None
    assert grad["x1"].numpy() == pytest.approx(1 / (1 + math.exp(-10.0)), rel=1e-6)


# ---- intermediate results, persistence, nesting ----------------------------------------

def test_gradient_with_respect_to_an_intermediate_result():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0


def test_persistent_tape_on_a_vector():
    x = ad.constant([1, 3.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [4.0, 108.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 6.0])


def test_persistent_tape_first_derivative_of_x_to_the_fourth():
    x = ad.Variable(3.0)
    with ad.GradientTape(persistent=True) as persistent_tape:
        persistent_tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = persistent_tape.gradient(z, x)
    dy_dx = persistent_tape.gradient(y, x)
    assert dz_dx.numpy() == 108.0
    assert dy_dx.numpy() == 6.0


def test_nested_gradient_of_x_squared():
    x = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        with ad.GradientTape() as tape2:
            tape2.watch(x)
            y = x * x
        dy_dx = tape2.gradient(y, x)
    d2y_d2x = tape.gradient(dy_dx, x)
    assert dy_dx.numpy() == 6.0
    assert d2y_d2x.numpy() == 2.0


def test_reduce_sum_then_square_on_a_persistent_tape():
    x = ad.ones((2, 2))
    with ad.GradientTape(persistent=True) as t:
        t.watch(x)
        y = ad.reduce_sum(x)
        z = ad.multiply(y, y)
    dz_dy = t.gradient(z, y)
    assert dz_dy.numpy() == 8.0
    dz_dx = t.gradient(z, x)
    for i in [0, 1]:
        for j in [0, 1]:
            assert dz_dx[i][j].numpy() == 8.0


# ---- gradients of non-scalar targets ---------------------------------------------------------

def test_gradient_of_a_dict_of_targets_is_the_sum():
    x = ad.Variable(2.0)
    with ad.GradientTape(persistent=True) as tape:
        y0 = x ** 2
        y1 = 1 / x
    assert tape.gradient({"y0": y0, "y1": y1}, x).numpy() == 3.75


def test_gradient_of_a_vector_target_is_the_gradient_of_its_sum():
    x = ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = x * [3.0, 4.0]
    assert tape.gradient(y, x).numpy() == 7.0


def test_elementwise_gradient_of_sigmoid_over_linspace():
    x = ad.linspace(-10.0, 10.0, 200 + 1)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.nn.sigmoid(x)
    dy_dx = tape.gradient(y, x)
    assert dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-np.linspace(-10.0, 10.0, 201)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-4, atol=1e-7)


def test_gradient_of_x_squared_over_linspace():
    x = ad.linspace(-2.0, 2.0, 9)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x ** 2
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * np.linspace(-2.0, 2.0, 9),
                               rtol=1e-6)


# ---- control flow ------------------------------------------------------------------------------

@pytest.mark.parametrize("x_value, expected_v0, expected_v1", [(1.0, 1.0, None), (-1.0, None, 4.0)])
def test_control_flow_differentiates_the_branch_that_ran(x_value, expected_v0, expected_v1):
    x = ad.constant(x_value)
    v0 = ad.Variable(2.0)
    v1 = ad.Variable(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1 ** 2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert (None if dv0 is None else dv0.numpy()) == expected_v0
    assert (None if dv1 is None else dv1.numpy()) == expected_v1
    assert tape.gradient(result, x) is None


def test_python_loop_records_each_iteration():
    def f(x, y):
        output = 1
        for _ in range(int(y)):
            output = ad.multiply(output, x)
        return output

    x = ad.constant(4.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x, 3)
    assert y.numpy() == 64.0
    assert tape.gradient(y, x).numpy() == 48.0


# ---- cases where gradient returns None ------------------------------------------------------

def test_none_when_the_target_does_not_depend_on_the_source():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None


def test_none_after_a_variable_is_replaced_by_a_tensor():
    x = ad.Variable(2.0)
    seen = []
    for _epoch in range(2):
        with ad.GradientTape() as tape:
            y = x + 1
        g = tape.gradient(y, x)
        seen.append((isinstance(x, ad.Variable), None if g is None else g.numpy()))
        x = x + 1    # this should be x.assign_add(1)
    assert seen == [(True, 1.0), (False, None)]


def test_none_after_calculations_outside_the_library():
    x = ad.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=ad.float32)
    with ad.GradientTape() as tape:
        x2 = x ** 2
        if ad.get_backend() == "strict":   # a device array: NumPy may not read it implicitly
            with pytest.raises(TypeError, match="Implicit conversion"):
                np.mean(x2, axis=0)
            x2 = x2.numpy()
        y = np.mean(x2, axis=0)       # NumPy, not the library
        y = ad.reduce_mean(y, axis=0)
    assert y.numpy() == pytest.approx(7.5)
    assert tape.gradient(y, x) is None


def test_none_through_an_integer():
    x = ad.constant(10)
    with pytest.warns(ad.AutodiffWarning):
        with ad.GradientTape() as g:
            g.watch(x)
            y = x * x
    with pytest.warns(ad.AutodiffWarning):
        assert g.gradient(y, x) is None
    assert y.numpy() == 100


def test_none_through_a_stateful_assign():
    x0 = ad.Variable(3.0)
    x1 = ad.Variable(0.0)
    with ad.GradientTape() as tape:
        x1.assign_add(x0)      # x1 = x1 + x0, not recorded
        y = x1 ** 2            # y = (x1 + x0) ** 2
    assert tape.gradient(y, x0) is None


def test_zeros_instead_of_none_for_unconnected_gradients():
    x = ad.Variable([2.0, 2.0])
    y = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        z = y ** 2
    g = tape.gradient(z, x, unconnected_gradients=ad.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


# ---- Advanced autodiff: controlling the recording ----------------------------------------------

def test_advanced_stop_recording():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    with ad.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None


def test_advanced_reset():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    reset = True
    with ad.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None


def test_advanced_stop_gradient():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    with ad.GradientTape() as t:
        y_sq = y ** 2
        z = x ** 2 + ad.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None


def test_advanced_multiple_tapes():
    x0 = ad.constant(0.0)
    x1 = ad.constant(0.0)
    with ad.GradientTape() as tape0, ad.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = ad.math.sin(x0)
        y1 = ad.nn.sigmoid(x1)
        y = y0 + y1
        ys = ad.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0     # cos(0)
    assert tape1.gradient(ys, x1).numpy() == 0.25    # sigmoid(0) * (1 - sigmoid(0))


def test_advanced_higher_order_gradients():
    x = ad.Variable(1.0)
    with ad.GradientTape() as t2:
        with ad.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0


def test_input_gradient_regularization():
    rng = np.random.default_rng(0)
    x = ad.constant(rng.normal(size=(7, 5)).astype(np.float32))
    layer = TinyDense(rng.normal(size=(5, 10)) * 0.5, rng.normal(size=10) * 0.1,
                      activation=ad.nn.relu)
    with ad.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input.
        with ad.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = ad.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)                                   # 1. the input gradient
        g1_mag = ad.sqrt(ad.reduce_sum(g1 * g1))                   # 2. its magnitude
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)       # 3. d magnitude / d model
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
    assert y.shape == (7, 10)

    # The same by hand: y = relu(x W + b), out = sum(y^2), g1 = 2 y W^T.
    xs = x.numpy().astype(np.float64)
    w = layer.kernel.numpy().astype(np.float64)
    b = layer.bias.numpy().astype(np.float64)
    z = xs @ w + b
    mask = (z > 0).astype(np.float64)
    ys = z * mask
    g1_np = 2 * ys @ w.T
    np.testing.assert_allclose(g1.numpy(), g1_np, rtol=1e-4, atol=1e-5)
    unit = g1_np / np.linalg.norm(g1_np)
    d_w = 2 * xs.T @ ((unit @ w) * mask) + 2 * unit.T @ ys
    d_b = 2 * ((unit @ w) * mask).sum(axis=0)
    np.testing.assert_allclose(dg1_mag[0].numpy(), d_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dg1_mag[1].numpy(), d_b, rtol=1e-4, atol=1e-5)


# ---- the old eager tutorial (seed 004) --------------------------------------------------------

def test_gradients_function_of_square_of_sin():
    def f(x):
        return ad.square(ad.sin(x))

    assert f(math.pi / 2).numpy() == 1.0
    grad_f = ad.gradients_function(f)
    assert ad.abs(grad_f(math.pi / 2)[0]).numpy() < 1e-7


def test_gradients_function_differentiates_as_many_times_as_you_like():
    def f(x):
        return ad.square(ad.sin(x))

    def grad(f):
        return lambda x: ad.gradients_function(f)(x)[0]

    x = ad.linspace(-2 * math.pi, 2 * math.pi, 100)
    xs = np.linspace(-2 * np.pi, 2 * np.pi, 100).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(f(x).numpy(), np.sin(xs) ** 2, atol=1e-5)
    np.testing.assert_allclose(grad(f)(x).numpy(), np.sin(2 * xs), atol=1e-5)
    np.testing.assert_allclose(grad(grad(f))(x).numpy(), 2 * np.cos(2 * xs), atol=1e-4)
    np.testing.assert_allclose(grad(grad(grad(f)))(x).numpy(), -4 * np.sin(2 * xs), atol=1e-4)


def test_gradients_function_through_control_flow():
    def f(x, y):
        output = 1
        for _ in range(int(y)):
            output = ad.multiply(output, x)
        return output

    def g(x, y):
        return ad.gradients_function(f)(x, y)[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.AutodiffWarning)   # y is an int32 argument
        # TensorFlow 2 refuses f(3.0, 2) itself (int32 1 times float32 3.0); the
        # gradient function converts 3.0 to a tensor first, so 1 takes its dtype.
        assert f(ad.constant(3.0), 2).numpy() == 9.0
        assert g(3.0, 2).numpy() == 6.0
        assert f(ad.constant(4.0), 3).numpy() == 64.0
        assert g(4.0, 3).numpy() == 48.0


def test_old_nested_example_with_a_constant_has_no_second_derivative_in_tf2():
    # The old tutorial printed 6.0; in TensorFlow 2 the outer tape never
    # watched x (only the inner one did), so its gradient is None.
    x = ad.constant(1.0)
    with ad.GradientTape() as t:
        with ad.GradientTape() as t2:
            t2.watch(x)
            y = x * x * x
        dy_dx = t2.gradient(y, x)
    d2y_dx2 = t.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0
    assert d2y_dx2 is None


def test_old_nested_example_gives_six_once_the_outer_tape_watches():
    x = ad.constant(1.0)
    with ad.GradientTape() as t:
        t.watch(x)
        with ad.GradientTape() as t2:
            t2.watch(x)
            y = x * x * x
        dy_dx = t2.gradient(y, x)
    assert t.gradient(dy_dx, x).numpy() == 6.0
