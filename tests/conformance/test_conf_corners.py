"""Corners of the tape API and of a few ops, run on ad and on TensorFlow.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import attempt, same_on_both


@same_on_both
def test_gradient_of_source_with_respect_to_itself(m):
    v, x = m.Variable([1.0, 2.0]), m.constant(3.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        w = v + 0.0
    return [t.gradient(x, x), t.gradient(w, v), t.gradient(v, v)]


@same_on_both
def test_same_source_twice_and_same_target_twice(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient([y, y], [x, x])


@same_on_both
def test_output_gradients_for_a_list_of_targets(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        a, b = x * 2.0, m.reduce_sum(x * x)
    return t.gradient([a, b], x, output_gradients=[m.constant([1.0, -1.0]), m.constant(0.5)])


@same_on_both
def test_integer_source_with_zero_unconnected_gives_integer_zeros(m):
    # FINDINGS F9
    x = m.constant([1, 2])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * 2
    return t.gradient(y, x, unconnected_gradients="zero")


@same_on_both
def test_cast_to_int_ends_the_path(m):
    x = m.constant([1.5, 2.5])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.cast(m.cast(x, m.int32), m.float32) * x
    return t.gradient(y, x)


@same_on_both
def test_cast_between_floats_keeps_source_dtype(m):
    x = m.constant([1.5, 2.5], dtype=m.float64)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.cast(x, m.float32) ** 2
    return t.gradient(y, x)


@same_on_both
def test_tensor_made_under_stop_recording_is_unconnected(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        with t.stop_recording():
            h = x * 3.0
        y = h * x
    return t.gradient(y, [x, h])


@same_on_both
def test_persistent_tape_after_exit_keeps_old_records_only(m):
    x = m.Variable(2.0)
    with m.GradientTape(persistent=True) as t:
        y = x * x
    z = y * x  # not recorded: the tape has exited
    return [t.gradient(y, x), t.gradient(z, x)]


@same_on_both
def test_forward_over_forward_second_derivative(m):
    x = m.constant(0.5)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as outer:
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as inner:
            y = m.math.sin(x) * x
        d1 = inner.jvp(y)
    return [d1, outer.jvp(d1)]


@same_on_both
def test_custom_gradient_returning_none_for_an_input(m):
    @m.custom_gradient
    def f(a, b):
        def grad(dy):
            return dy * b, None
        return a * b, grad

    a, b = m.constant(2.0), m.constant(3.0)
    with m.GradientTape() as t:
        t.watch([a, b])
        y = f(a, b)
    return t.gradient(y, [a, b])


@same_on_both
def test_norm_and_clip_by_norm_gradients_including_zero_vector(m):
    x, z = m.constant([3.0, 4.0]), m.zeros([2])
    with m.GradientTape(persistent=True) as t:
        t.watch([x, z])
        n, nz = m.norm(x), m.norm(z)
        c = m.clip_by_norm(x, 2.0)
    return [n, t.gradient(n, x), nz, t.gradient(nz, z), c, t.gradient(c, x)]


@same_on_both
def test_softmax_with_minus_inf_logits(m):
    x = m.constant([[0.0, -np.inf, 1.0]])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        s = m.nn.softmax(x)
        ls = m.nn.log_softmax(x)
    return [s, ls, t.gradient(s * m.constant([1.0, 2.0, 3.0]), x), t.gradient(ls, x)]


@same_on_both
def test_cumsum_and_cumprod_variants(m):
    x = m.constant([1.0, 2.0, 3.0])
    out = []
    for f in (m.math.cumsum, m.math.cumprod):
        for exclusive in (False, True):
            for reverse in (False, True):
                with m.GradientTape() as t:
                    t.watch(x)
                    y = f(x, exclusive=exclusive, reverse=reverse) * m.constant([1.0, -2.0, 3.0])
                out.append([y, t.gradient(y, x)])
    return out


@same_on_both
def test_l2_loss_and_reduce_logsumexp_gradients(m):
    x = m.constant([[1.0, 2.0], [3.0, -1.0]], dtype=m.float64)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        a, b = m.nn.l2_loss(x), m.reduce_logsumexp(x, axis=1)
    return [a, t.gradient(a, x), b, t.gradient(b, x)]


@same_on_both
def test_pow_gradients_at_zero_base_and_negative_base(m):
    x, p = m.constant([0.0, -2.0, 2.0]), m.constant([2.0, 3.0, 0.5])
    with m.GradientTape() as t:
        t.watch([x, p])
        y = m.pow(x, p)
    return [y, t.gradient(y, [x, p])]


@same_on_both
def test_watch_a_nested_structure(m):
    a, b = m.constant(1.0), m.constant([2.0, 3.0])
    with m.GradientTape() as t:
        t.watch({"a": a, "rest": [b]})
        y = a * m.reduce_sum(b)
    return t.gradient(y, {"a": a, "b": b})


@same_on_both
def test_jacobian_of_gather_and_where(m):
    x = m.constant([1.0, -2.0, 3.0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        g = m.gather(x, [2, 0, 2])
        w = m.where(x > 0.0, x * x, -x)
    return [t.jacobian(g, x), t.jacobian(w, x)]


@same_on_both
def test_pow_of_minus_inf_to_a_half(m):
    # FINDINGS F10: C's pow(-inf, 0.5) is +inf; NumPy's is NaN
    x = m.constant([-np.inf, np.inf, 4.0], dtype=m.float64)
    return m.pow(x, 0.5)


@same_on_both
def test_signed_zero_through_elu_selu_relu(m):
    # FINDINGS F12: 1 / f(-0.0) tells the sign of the zero f returns
    x = m.constant([-0.0], dtype=m.float64)
    return [1.0 / f(x) for f in (m.nn.elu, m.nn.selu, m.nn.relu, m.nn.relu6)]


@same_on_both
def test_reduce_mean_of_empty_in_forward_mode(m):
    # divergence (6), forward mode
    x = m.zeros([0])
    with m.autodiff.ForwardAccumulator(x, m.zeros([0])) as acc:
        y = m.reduce_mean(x)
    return [y, acc.jvp(y)]



@same_on_both
def test_linalg_of_a_nan_matrix_is_refused_by_inv_solve_and_the_det_gradient(m):
    # FINDINGS F5: TensorFlow's LU kernels refuse a zero or NaN pivot; det itself does not
    a = m.constant([[np.nan]])
    with m.GradientTape() as t:
        t.watch(a)
        y = m.linalg.det(a)
    return [y, attempt(lambda: t.gradient(y, a)), attempt(lambda: m.linalg.inv(a)),
            attempt(lambda: m.linalg.solve(a, m.ones([1, 1]))),
            attempt(lambda: m.linalg.inv(m.constant([[1.0, 2.0], [2.0, 4.0]]))),
            m.linalg.inv(m.constant([[np.inf, 0.0], [0.0, 1.0]])),
            list(m.linalg.slogdet(m.constant([[np.nan, 0.0], [0.0, 1.0]])))]


@same_on_both
def test_floormod_of_floats_keeps_the_sign_of_a_zero_from_x(m):
    # TensorFlow's FloorMod is fmod, then + y where the signs differ: a zero keeps x's sign
    x = m.constant([-1.0, 1.0, -2.0, 2.0, -0.0, 0.0, 3.0, -3.0, -1.0, 5.5])
    y = m.constant([1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.5, 1.5, np.inf, -2.0])
    return [1.0 / m.math.floormod(x[:8], y[:8]), m.math.floormod(x, y)]


@same_on_both
def test_reduce_mean_of_nothing_is_nan_without_a_warning(m):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "Mean of empty slice" would fail here
        return [m.reduce_mean(m.zeros([0])), m.reduce_mean(m.zeros([2, 0]), axis=1),
                m.reduce_mean(m.zeros([2, 0]), axis=0)]


@same_on_both
def test_truth_value_of_a_tensor_of_two_elements_raises(m):
    # TensorFlow hands NumPy's ValueError on (a TypeError here once)
    return bool(m.constant([1.0, 2.0]) > 0)


@same_on_both
def test_tensor_in_a_list_of_tensors_of_two_elements_raises(m):
    x = m.constant([1.0, 2.0])
    return x in [m.constant([3.0, 4.0])]


@same_on_both
def test_truth_value_of_one_element_tensors(m):
    return [bool(m.constant([2.0]) > 1), bool(m.constant([[0]])), bool(m.constant(0.5))]
