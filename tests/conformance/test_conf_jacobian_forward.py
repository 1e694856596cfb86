"""Jacobians, batch Jacobians and forward mode, run on ad and on TensorFlow.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

from .harness import same_on_both


@same_on_both
def test_jacobian_vector_target_vector_source(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.math.sin(x) * x[0]
    return t.jacobian(y, x)


@same_on_both
def test_jacobian_matrix_target_and_nested_sources(m):
    w = m.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    b = m.Variable([0.5, -0.5])
    x = m.constant([[1.0, -1.0, 2.0]])
    with m.GradientTape() as t:
        y = m.nn.tanh(m.matmul(x, w) + b)
    return t.jacobian(y, {"w": w, "b": b})


@same_on_both
def test_jacobian_unconnected_none_and_zero(m):
    x, z = m.Variable([1.0, 2.0]), m.Variable([3.0, 4.0, 5.0])
    with m.GradientTape(persistent=True) as t:
        y = x * x
    return [t.jacobian(y, z), t.jacobian(y, z, unconnected_gradients="zero")]


@same_on_both
def test_jacobian_of_scalar_target(m):
    x = m.constant([[1.0, 2.0]], dtype=m.float64)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reduce_sum(x * x)
    return t.jacobian(y, x)


@same_on_both
def test_jacobian_without_pfor_on_persistent_tape(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        y = m.stack([x[0] * x[1], x[1] ** 3])
    return t.jacobian(y, x, experimental_use_pfor=False)


@same_on_both
def test_batch_jacobian_per_example(m):
    x = m.constant([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.concat([x * x, m.math.sin(x[:, :1])], axis=1)
    return t.batch_jacobian(y, x)


@same_on_both
def test_batch_jacobian_unconnected_is_zeros(m):
    x, z = m.constant([[1.0], [2.0]]), m.constant([[3.0, 4.0], [5.0, 6.0]])
    with m.GradientTape() as t:
        t.watch([x, z])
        y = x * 2.0
    return t.batch_jacobian(y, z)


@same_on_both
def test_batch_jacobian_rank1_target_raises(m):
    # divergence (7)
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reduce_sum(x, axis=1)
    return t.batch_jacobian(y, x)


@same_on_both
def test_batch_jacobian_rank1_source_raises(m):
    # divergence (7)
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reshape(x * x, [2, 1])
    return t.batch_jacobian(y, x)


@same_on_both
def test_batch_jacobian_batch_size_mismatch_raises(m):
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reshape(x, [1, 4])
    return t.batch_jacobian(y, x)


@same_on_both
def test_forward_accumulator_jvp(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 0.0, -1.0])) as acc:
        y = m.reduce_sum(m.math.exp(x) * x)
        z = x * 2.0
    return [acc.jvp(y), acc.jvp([z, {"k": y}])]


@same_on_both
def test_forward_accumulator_unconnected(m):
    x, c = m.constant(1.0), m.constant(2.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = c * 3.0
    return [acc.jvp(y), acc.jvp(y, unconnected_gradients="zero")]


@same_on_both
def test_forward_accumulator_variable_primal(m):
    v = m.Variable([1.0, 2.0])
    with m.autodiff.ForwardAccumulator(v, m.constant([0.5, 0.5])) as acc:
        y = m.reduce_prod(v * v)
    return acc.jvp(y)


@same_on_both
def test_forward_accumulator_same_primal_twice_raises(m):
    x = m.constant(1.0)
    return m.autodiff.ForwardAccumulator([x, x], [m.constant(1.0), m.constant(2.0)])


@same_on_both
def test_forward_over_reverse_hessian_vector_product(m):
    x = m.constant([1.0, 2.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, -1.0])) as acc:
        with m.GradientTape() as t:
            t.watch(x)
            y = m.reduce_sum(x * x * x) + x[0] * x[1]
        g = t.gradient(y, x)
    return [g, acc.jvp(g)]


@same_on_both
def test_tape_inside_accumulator_does_not_see_tangents(m):
    x = m.constant(2.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        with m.GradientTape() as t:
            t.watch(x)
            y = x * x * x
        jvp = acc.jvp(y)
    return [jvp, t.gradient(y, x)]


@same_on_both
def test_reverse_over_forward(m):
    x = m.constant(1.5)
    with m.GradientTape() as t:
        t.watch(x)
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
            y = m.math.sin(x) * x
        jvp = acc.jvp(y)
    return [jvp, t.gradient(jvp, x)]


@same_on_both
def test_forward_mode_through_sign_is_zero(m):
    # divergence (4)
    x = m.constant([1.0, -1.0, 0.0])
    with m.autodiff.ForwardAccumulator(x, m.ones([3])) as acc:
        y = m.sign(x)
    return acc.jvp(y)


@same_on_both
def test_forward_mode_unstack_size_one_axis(m):
    # divergence (5)
    x = m.constant([[1.0, 2.0]])
    with m.autodiff.ForwardAccumulator(x, m.ones([1, 2])) as acc:
        parts = m.unstack(x, axis=0)
    return acc.jvp(parts)


@same_on_both
def test_forward_mode_of_custom_gradient_function(m):
    @m.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad

    x = m.constant(2.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = cube(x)
    return [y, acc.jvp(y)]


@same_on_both
def test_forward_accumulator_entered_again_after_exit(m):
    x = m.constant(1.0)
    acc = m.autodiff.ForwardAccumulator(x, m.constant(1.0))
    with acc:
        pass
    with acc:
        y = x * 5.0
    return acc.jvp(y)


@same_on_both
def test_forward_accumulator_entered_while_active_raises(m):
    x = m.constant(1.0)
    acc = m.autodiff.ForwardAccumulator(x, m.constant(1.0))
    with acc:
        with acc:
            pass


@same_on_both
def test_jacobian_without_pfor_on_non_persistent_tape_raises(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.jacobian(y, x, experimental_use_pfor=False)


@same_on_both
def test_gradient_inside_its_own_recording_context(m):
    x = m.constant(3.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        g = t.gradient(y, x)  # TF warns; the tape records the backward ops
        h = t.gradient(g, x)
    return [g, h]


@same_on_both
def test_forward_over_reverse_zero_tangent_meeting_inf_is_nan(m):
    # exp(100) overflows float32 and meets a zero tangent inside the backward pass:
    # element 1 of the HVP is 0 * inf = NaN, not inf (autodiff/compiler/zeros.py keeps this).
    # Backs lesson 10's "TensorFlow gives the same NaN" (the lesson's cell, on both).
    b = m.Variable([1.0, 100.0, 2.0])
    k = m.constant([1.0, 2.0, 3.0])
    with m.autodiff.ForwardAccumulator(k, m.constant([1.0, 1.0, 1.0])) as acc:
        with m.GradientTape() as tape:
            tape.watch(k)
            loss = m.reduce_sum(m.exp(b) * k * k)
        grad = tape.gradient(loss, k)
    return acc.jvp(grad)
