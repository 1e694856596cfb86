"""Op gradients at special points, creation ops, dtype rules and op errors, on ad and TF.

Each test body is one function of the module ``m`` (see ``harness.py``).
"""

import numpy as np

from .harness import attempt, same_on_both, value_and_two_derivatives




@same_on_both
def test_kinks_first_derivative_at_zero(m):
    x = m.constant([0.0, -1.0, 2.0, 6.0])
    fns = [m.nn.relu, m.abs, m.nn.relu6, lambda v: m.nn.leaky_relu(v, 0.2), m.nn.elu,
           lambda v: m.maximum(v, 0.0), lambda v: m.minimum(v, 0.0),
           lambda v: m.clip_by_value(v, 0.0, 2.0)]
    out = []
    for f in fns:
        with m.GradientTape() as t:
            t.watch(x)
            y = f(x)
        out.append(t.gradient(y, x))
    return out


@same_on_both
def test_relu_second_derivative(m):
    # divergence (4)
    return value_and_two_derivatives(m, m.nn.relu, m.constant([1.0, -1.0, 0.0]))


@same_on_both
def test_relu6_second_derivative(m):
    # divergence (4)
    return value_and_two_derivatives(m, m.nn.relu6, m.constant([1.0, -1.0, 7.0]))


@same_on_both
def test_leaky_relu_second_derivative(m):
    # divergence (4)
    return value_and_two_derivatives(m, lambda v: m.nn.leaky_relu(v, 0.3), m.constant([1.0, -1.0]))


@same_on_both
def test_exclusive_cumprod_second_derivative(m):
    # divergence (4)
    return value_and_two_derivatives(m, lambda v: m.math.cumprod(v, exclusive=True), m.constant([2.0, 3.0, 4.0]))


@same_on_both
def test_smooth_nn_second_derivatives(m):
    x = m.constant([-1.5, 0.0, 0.5], dtype=m.float64)
    fns = [m.nn.elu, m.nn.selu, m.nn.softplus, m.nn.sigmoid, m.nn.tanh, m.nn.gelu,
           lambda v: m.nn.gelu(v, approximate=True), m.nn.softmax, m.nn.log_softmax]
    return [value_and_two_derivatives(m, f, x) for f in fns]


@same_on_both
def test_max_ties_split_and_maximum_ties_go_first(m):
    x = m.constant([3.0, 1.0, 3.0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        a = m.reduce_max(x)
        b = m.maximum(x, m.constant([3.0, 0.0, 4.0]))
        c = m.minimum(x, m.constant([3.0, 2.0, 2.0]))
    return [t.gradient(a, x), t.gradient(b, x), t.gradient(c, x)]


@same_on_both
def test_fill_gradient(m):
    # divergence (3)
    v = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(v)
        y = m.fill([2, 3], v) * m.constant([1.0, 2.0, 3.0])
    return t.gradient(y, v)


@same_on_both
def test_linspace_gradient(m):
    # divergence (3)
    a, b = m.constant(0.0), m.constant(1.0)
    with m.GradientTape() as t:
        t.watch([a, b])
        y = m.linspace(a, b, 5) * m.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    return t.gradient(y, [a, b])


@same_on_both
def test_empty_reductions(m):
    # divergence (6)
    x = m.zeros([2, 0])

    def value_and_gradient(f):
        with m.GradientTape() as t:
            t.watch(x)
            y = f(x, axis=1)
        return [y, t.gradient(y, x)]

    return [attempt(lambda: value_and_gradient(f))
            for f in (m.reduce_sum, m.reduce_max, m.reduce_min, m.reduce_prod, m.reduce_mean,
                      m.reduce_logsumexp)]


@same_on_both
def test_empty_softmax_and_where(m):
    # divergence (6)
    x = m.zeros([0, 3])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        s = m.nn.softmax(x)
        w = m.where(x > 0.0, x, -x)
    return [s, w, t.gradient(s, x), t.gradient(w, x)]


@same_on_both
def test_softmax_over_an_empty_axis(m):
    # divergence (6)
    x = m.zeros([2, 0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        s, ls = m.nn.softmax(x), m.nn.log_softmax(x)
    return [s, ls, t.gradient(s, x), t.gradient(ls, x)]


@same_on_both
def test_where_gradient_with_nan_in_unused_branch(m):
    x = m.constant([-1.0, 4.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.where(x > 0.0, m.sqrt(x), m.zeros_like(x))
    return [y, t.gradient(y, x)]


@same_on_both
def test_nan_and_inf_propagate_through_gradients(m):
    x = m.constant([np.nan, np.inf, -np.inf, 0.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.math.exp(x) + m.nn.relu(x) + m.sqrt(m.abs(x))
    return [y, t.gradient(y, x)]


@same_on_both
def test_round_and_floor_have_no_gradient(m):
    x = m.constant([1.4, 2.6])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        r, f = m.round(x), m.floor(x)
    return [t.gradient(r, x), t.gradient(f, x)]


@same_on_both
def test_python_scalar_takes_partner_dtype(m):
    x = m.constant([1.0, 2.0], dtype=m.float64)
    return [x * 2, 3.0 + x, m.constant(1), m.constant(1.5), m.constant(np.float64(2.0))]


@same_on_both
def test_mixed_float_dtypes_raises(m):
    return m.constant(1.0) + m.constant(1.0, dtype=m.float64)


@same_on_both
def test_multiply_int_and_float_python_values_raises(m):
    # divergence (10)
    return m.multiply(1, 3.0)


@same_on_both
def test_integer_floordiv_by_zero_raises(m):
    # divergence (10)
    return m.math.floordiv(m.constant([3]), m.constant([0]))


@same_on_both
def test_integer_floormod_by_zero_raises(m):
    # divergence (10)
    return m.math.floormod(m.constant([3]), m.constant([0]))


@same_on_both
def test_transpose_bad_perm_raises(m):
    # divergence (10)
    return m.transpose(m.ones([2, 3]), [0, 0])


@same_on_both
def test_sin_of_int32_raises(m):
    # divergence (10)
    return m.math.sin(m.constant(1))


@same_on_both
def test_matmul_shape_mismatch_raises(m):
    return m.matmul(m.ones([2, 3]), m.ones([2, 3]))


@same_on_both
def test_reshape_bad_size_raises(m):
    return m.reshape(m.ones([2, 3]), [4, 2])


@same_on_both
def test_broadcast_incompatible_raises(m):
    return m.ones([2, 3]) + m.ones([4])


@same_on_both
def test_gradient_of_broadcast_operands_is_summed_back(m):
    a, b = m.constant([[1.0], [2.0]]), m.constant([3.0, 4.0, 5.0])
    with m.GradientTape() as t:
        t.watch([a, b])
        y = a * b - m.broadcast_to(b, [2, 3])
    return t.gradient(y, [a, b])


@same_on_both
def test_linalg_gradients(m):
    a = m.constant([[4.0, 1.0], [1.0, 3.0]], dtype=m.float64)
    b = m.constant([[1.0], [2.0]], dtype=m.float64)
    with m.GradientTape(persistent=True) as t:
        t.watch([a, b])
        outs = [m.linalg.det(a), m.linalg.inv(a), m.linalg.solve(a, b), m.linalg.cholesky(a),
                m.linalg.slogdet(a)[1], m.linalg.trace(a)]
    return [[o, t.gradient(o, [a, b])] for o in outs]


@same_on_both
def test_zero_cotangent_at_singular_points_gives_zero(m):
    # FINDINGS F2: TensorFlow's Sqrt/Rsqrt/Reciprocal gradients are 0 where the
    # incoming cotangent is 0, even where the local derivative is inf or NaN
    x = m.constant([0.0, -1.0, np.inf])
    out = []
    for f in (m.sqrt, m.math.rsqrt, m.math.reciprocal):
        with m.GradientTape() as t:
            t.watch(x)
            y = f(x)
        out.append(t.gradient(y, x, output_gradients=m.zeros([3])))
    return out


@same_on_both
def test_relu6_vjp_multiplies_by_its_mask(m):
    # FINDINGS F4: an inf cotangent where relu6 is flat gives inf * 0 = NaN in TF
    x = m.constant([0.0, -1.0, 7.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.math.log(m.nn.relu6(x) - m.constant([0.0, 0.0, 6.0, 0.0]))
    return t.gradient(y, x)


# A value of a type no tensor can hold: ValueError on both (autodiff/dtypes.py's comment).
@same_on_both
def test_sin_of_none_raises(m):
    return m.sin(None)


@same_on_both
def test_constant_of_an_object_raises(m):
    return m.constant(object())


@same_on_both
def test_einsum_diagonal_second_order_ignores_nan_off_the_diagonal(m):
    # 'bxby' reads only the entries whose two b's agree: a NaN elsewhere gets a
    # NaN first-order gradient of its own (square's 2 * NaN * 0) and must not
    # leak into the other operand's second derivative (the generator's seed 111010).
    v = np.arange(16, dtype=np.float64).reshape(2, 2, 2, 2) / 8 - 1
    v[0, 1, 1, 0] = np.nan
    v1 = m.Variable(v)
    e = m.Variable(np.linspace(-1.0, 1.5, 16).reshape(2, 2, 2, 2))
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            y = m.einsum('bxby,bxby->bxy', m.square(v1), e)
        g = inner.gradient(y, [v1, e])
        total = m.reduce_sum(g[0]) + m.reduce_sum(g[1])
    return [y, g, outer.gradient(total, [v1, e])]
