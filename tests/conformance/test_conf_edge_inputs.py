"""Edge inputs TensorFlow answers (issue 25, item 7): each was an error in ad before.

Batched ``gather_nd``; a Python number beside a float64 (or float16) tensor
in every binary op; windows larger than the input (an empty result); an empty
literal as ``where``'s condition; ``constant([], dtype=int64)``; matmul over a
zero-size axis; a batched ``gather`` on indices computed inside
``m.function``; and the names ``linalg.l2_normalize``, ``nn.convolution``,
``nn.pool``, ``nn.max_pool``, ``nn.avg_pool``, ``nn.max_pool1d`` and
``nn.avg_pool1d``. ``test_generated.py`` draws the whole family (its ops are in
``program_ops_indexing.py`` and ``program_ops_nn.py``). Each case is one
function of ``m`` (``harness.py``).
"""

import inspect

import numpy as np
import pytest

import autodiff as ad

from .harness import attempt, same_on_both


def _derivatives(m, f, x):
    """[f(x), gradient, second derivative (of the summed gradient), forward-mode JVP]."""
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
            s = m.reduce_sum(y * y)
        g = inner.gradient(s, x)
    h = outer.gradient(m.reduce_sum(g), x)
    with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
        z = f(x)
    return [y, g, h, acc.jvp(z)]


P = np.arange(24.0).reshape(2, 3, 4) / 7


# ---- gather_nd and gather with batch_dims ----------------------------------------------
@same_on_both
def test_gather_nd_with_batch_dims(m):
    out = [m.gather_nd([[0.068]], [[[0]]], batch_dims=1)]
    p = m.constant(P)
    for idx, b in (([[[0, 1], [2, 3]], [[1, 1], [0, 0]]], 1), ([[1], [2]], 1),
                   (np.array([[[0], [3]], [[1], [1]], [[2], [0]]] * 2).reshape(2, 3, 2, 1), 2),
                   (np.zeros((2, 0, 1), np.int32), 1)):
        out += _derivatives(m, lambda x: m.gather_nd(x, idx, batch_dims=b), p)
    with m.GradientTape() as tape:
        tape.watch(p)
        y = m.gather_nd(p, [[[0, 1]], [[2, 3]]], batch_dims=1)
    out.append(tape.jacobian(y, p))
    return out


@same_on_both
def test_gather_nd_bad_batch_dims_and_indices(m):
    p = m.constant(P)
    return [attempt(lambda: m.gather_nd(p, [[[0]], [[1]]], batch_dims=-1)),
            attempt(lambda: m.gather_nd(p, [[0], [1]], batch_dims=2)),
            attempt(lambda: m.gather_nd(p, np.zeros((3, 1), np.int32), batch_dims=1)),
            attempt(lambda: m.gather_nd(p, np.zeros((2, 4), np.int32), batch_dims=1)),
            attempt(lambda: m.gather_nd(p, [[[3]], [[0]]], batch_dims=1)),
            attempt(lambda: m.gather_nd(p, [[0.5]])),
            attempt(lambda: m.gather_nd(p, [])),
            attempt(lambda: m.gather(p, [])),
            attempt(lambda: m.gather(p, [[0, 3], [1, 1]], axis=2, batch_dims=-1))]


@same_on_both
def test_a_batched_gather_of_indices_computed_inside_a_function(m):
    weights = m.constant([1.0, 2.0, 3.0, 4.0], dtype=m.float64)

    @m.function(autograph=False)
    def sorted_rows(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.gather(x, m.argsort(x, axis=-1), axis=1, batch_dims=1)
            s = m.reduce_sum(y * weights)
        return y, tape.gradient(s, x)

    @m.function(autograph=False)
    def pick(p, i):
        return m.gather(p, i, axis=2, batch_dims=1)

    xs = np.array([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.7, 0.1]])
    out = [sorted_rows(m.constant(xs)), sorted_rows(m.constant(xs[::-1].copy()))]
    i = m.constant([[[0, 3], [1, 1]], [[2, 2], [3, 0]]])
    out += _derivatives(m, lambda p: pick(p, i), m.constant(P))
    out.append(attempt(lambda: pick(m.constant(P), m.constant([[[4]], [[0]]]))))
    return out


# ---- a Python number beside a tensor takes its dtype, in every binary op -----------------
BINARY = ["add", "subtract", "multiply", "divide", "truediv", "maximum", "minimum", "pow",
          "math.floordiv", "math.floormod", "math.atan2", "math.xlogy", "math.xdivy",
          "math.divide_no_nan", "math.multiply_no_nan", "math.squared_difference",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
# TensorFlow's Python wrappers of these convert x alone first, so a number on the left
# stays float32 there and meets a float64 y: refused (README, deliberate differences)
NUMBER_FIRST_REFUSED_BY_TF = {"add", "truediv", "math.multiply_no_nan"}


def _fn(m, path):
    for part in path.split("."):
        m = getattr(m, part)
    return m


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_a_python_number_beside_a_tensor_in_every_binary_op(tf, dtype):
    from .harness import compare

    def case(m):
        out = []
        x = m.constant([0.5, -1.25, 2.0], dtype=dtype)
        for name in BINARY:
            for number in (1.79, 2, 0):
                for args in ((number, x), (x, number))[name in NUMBER_FIRST_REFUSED_BY_TF:]:
                    with m.GradientTape() as tape:
                        tape.watch(x)
                        y = _fn(m, name)(*args)
                    out.append([y, tape.gradient(y, x) if y.dtype.is_floating else None])
        out.append(m.where([True, False, True], 1.5, x))
        out.append(m.where([True, False, True], x, 2))
        return out

    got, want, diffs = compare(case, tf)
    assert not diffs, "\n".join(diffs)


@same_on_both
def test_two_python_operands_convert_together(m):
    return [m.add(1.5, 2), m.maximum(1.5, 2), m.math.atan2(1.5, 2), m.less(1.5, 2),
            m.add([1.5], [2]), m.divide(1, 2), m.math.divide_no_nan(1, 2),
            attempt(lambda: m.multiply(1, 3.0)), attempt(lambda: m.pow(2, 0.5))]


@same_on_both
def test_the_atan2_repros(m):
    x = m.constant([0.5, -2.0, 0.0], dtype=m.float64)
    return [_derivatives(m, lambda t: m.math.atan2(1.79, t), x),
            _derivatives(m, lambda t: m.math.atan2(t, 0.5), x)]


# ---- windows larger than the input --------------------------------------------------------
@same_on_both
def test_windows_larger_than_the_input_give_empty_results(m):
    x = m.ones([1, 3, 2, 1])
    out = []
    for f in (lambda t: m.nn.avg_pool2d(t, [1, 3], 1, "VALID"),
              lambda t: m.nn.avg_pool2d(t, 5, 2, "VALID"),
              lambda t: m.nn.avg_pool1d(t[0], 3, 1, "VALID"),
              lambda t: m.nn.conv2d(t, m.ones([1, 3, 1, 2]), 1, "VALID"),
              lambda t: m.nn.conv1d(t[0], m.ones([3, 1, 1]), 1, "VALID")):
        with m.GradientTape() as tape:   # (the input's gradient: TensorFlow's filter
            tape.watch(x)                # gradient of an empty conv is uninitialized)
            y = f(x)
        out += [y, tape.gradient(y, x)]
    out.append(m.nn.max_pool2d(x, [1, 3], 1, "VALID"))   # (its gradient too)
    out.append(m.nn.max_pool2d(m.zeros([1, 0, 3, 1]), 2, 1, "SAME"))
    out.append(m.nn.conv2d(m.zeros([0, 3, 3, 1]), m.ones([2, 2, 1, 2]), 2, "SAME"))
    out.append(m.nn.conv2d(m.ones([1, 3, 3, 2]), m.ones([2, 2, 2, 0]), 1, "VALID"))
    return out


@same_on_both
def test_windows_that_overhang_by_a_stride_or_more_are_errors(m):
    return [attempt(lambda: m.nn.avg_pool2d(m.ones([1, 2, 2, 1]), 4, 1, "VALID")),
            attempt(lambda: m.nn.max_pool1d(m.ones([1, 2, 1]), 4, 1, "VALID")),
            attempt(lambda: m.nn.conv2d(m.ones([1, 2, 2, 1]), m.ones([4, 4, 1, 1]), 1, "VALID")),
            attempt(lambda: m.nn.conv2d(m.ones([1, 5, 5, 0]), m.ones([2, 2, 0, 1]), 1, "VALID")),
            attempt(lambda: m.nn.avg_pool2d(m.zeros([1, 0, 3, 1]), 2, 1, "VALID"))]


# ---- empty literals and zero-size axes ------------------------------------------------------
@same_on_both
def test_an_empty_literal_condition_in_where(m):
    return [m.where([[], [], [], []], m.zeros((4, 0)), m.zeros((1, 0))), m.where([[], []]),
            m.add(m.zeros([0], dtype=m.int32), [])]


@same_on_both
def test_an_empty_constant_takes_the_dtype_asked_for(m):
    return [m.constant([], dtype=m.int64), m.constant([[]], dtype=m.bool)]


@same_on_both
def test_matmul_over_a_zero_size_axis(m):
    out = [m.matmul(m.zeros((3, 3, 2, 0)), m.zeros((0, 2)))]
    for a, b in (((2, 0), (0, 3)), ((0, 2, 3), (3, 2)), ((2, 3), (3, 0))):
        x, y = m.ones(a, dtype=m.float64), m.ones(b, dtype=m.float64)
        with m.GradientTape() as tape:
            tape.watch([x, y])
            z = m.matmul(x, y)
        out += [z, tape.gradient(z, [x, y])]
    return out


# ---- the new names ------------------------------------------------------------------------
X4 = (np.arange(30.0).reshape(1, 6, 5, 1) * 0.37) % 2.3 - 1.1   # no ties within a window
F2 = np.linspace(-1.0, 1.0, 12).reshape(2, 2, 1, 3)
F1 = np.linspace(-1.0, 1.0, 6).reshape(2, 1, 3)


@same_on_both
def test_the_new_pooling_names(m):
    x4, x3 = m.constant(X4), m.constant(X4[0])
    out = []
    for f, x in ((lambda t: m.nn.pool(t, [2, 3], "MAX", strides=[1, 2], padding="SAME"), x4),
                 (lambda t: m.nn.pool(t, [2, 2], "AVG", padding="VALID", dilations=[2, 2]), x4),
                 (lambda t: m.nn.pool(t, [2, 2], "MAX", dilations=[2, 1]), x4),
                 (lambda t: m.nn.pool(t, [3], "AVG", strides=[2], padding="SAME"), x3),
                 (lambda t: m.nn.max_pool(t, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"), x4),
                 (lambda t: m.nn.avg_pool(t, 3, 2, "SAME"), x4),
                 (lambda t: m.nn.max_pool(t, 2, 2, "SAME"), x3),
                 (lambda t: m.nn.avg_pool(t, [2], [1], "VALID"), x3),
                 (lambda t: m.nn.max_pool1d(t, [1, 2, 1], [1, 2, 1], "VALID"), x3),
                 (lambda t: m.nn.avg_pool1d(t, 3, 1, "SAME"), x3)):
        out += _derivatives(m, f, x)
    return out


@same_on_both
def test_the_new_convolution_and_l2_normalize_names(m):
    x4, x3 = m.constant(X4), m.constant(X4[0])
    f2, f1 = m.constant(F2), m.constant(F1)
    out = []
    for f, x in ((lambda t: m.nn.convolution(t, f2), x4),
                 (lambda t: m.nn.convolution(t, f2, strides=2, padding="SAME"), x4),
                 (lambda t: m.nn.convolution(t, f1, strides=[2], padding="SAME"), x3),
                 (lambda t: m.nn.convolution(t, f1, data_format="NWC"), x3),
                 (lambda t: m.linalg.l2_normalize(t, axis=1), x4)):
        out += _derivatives(m, f, x)
    # dilated: values only (TensorFlow's CPU gradient kernels refuse dilations)
    out.append(m.nn.convolution(x3, f1, dilations=2))
    out.append(m.nn.convolution(x4, f2, dilations=[2, 1], padding="SAME"))
    return out


@same_on_both
def test_bad_arguments_to_the_new_names(m):
    x4, x3 = m.constant(X4), m.constant(X4[0])
    return [attempt(lambda: m.nn.pool(x4, [2, 2], "SUM")),
            attempt(lambda: m.nn.pool(x4, [2], "AVG")),
            attempt(lambda: m.nn.pool(x4, [2, 2], "AVG", strides=[2, 2], dilations=[2, 2])),
            attempt(lambda: m.nn.pool(x4, [2, 2], "MAX", padding="SAME", dilations=[2, 2])),
            attempt(lambda: m.nn.max_pool1d(x4, 2, 1, "VALID")),
            attempt(lambda: m.nn.avg_pool(m.zeros([1, 4, 1], dtype=m.int32), 2, 1, "VALID")),
            attempt(lambda: m.nn.avg_pool1d(x3, 2, 1, "VALID", data_format="NCW")),
            attempt(lambda: m.nn.convolution(x3, m.zeros([2, 2, 1, 1]))),
            attempt(lambda: m.nn.convolution(x3, m.constant(F1), padding=[[0, 0]] * 3)),
            attempt(lambda: m.nn.convolution(x3, m.constant(F1), strides=2, dilations=2)),
            m.nn.max_pool(m.zeros([1, 4, 1], dtype=m.int32), 2, 1, "VALID")]


@pytest.mark.parametrize("name", ["linalg.l2_normalize", "nn.convolution", "nn.pool",
                                  "nn.max_pool", "nn.avg_pool", "nn.max_pool1d", "nn.avg_pool1d"])
def test_the_new_names_take_tensorflows_arguments(tf, name):
    def params(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
    assert params(_fn(ad, name)) == params(_fn(tf, name))


# ---- smaller differences the generator found on the way -------------------------------------
@same_on_both
def test_integer_inputs_that_tensorflow_casts(m):
    return [m.nn.leaky_relu(m.constant([1, -2])),
            m.math.divide_no_nan(m.constant([1, -2]), m.constant([0, 2])),
            m.math.divide_no_nan(m.constant([1, -2], m.int64), m.constant([0, 2], m.int64)),
            m.math.unsorted_segment_sum(m.constant([1.0, 2.0, 5.0]),
                                        m.constant([0, -1, 0], dtype=m.int64), 2)]


@same_on_both
def test_selu_of_a_tiny_negative_float32(m):
    # exp(x) - 1 rounds to 0 in float32: the value is 0 and the gradient takes the x >= 0 branch
    x = m.constant([-1.9868215517249155e-08, -0.0, -1.0, 0.0])
    return _derivatives(m, m.nn.selu, x)


# ---- what a GPU answered differently (issue 26): floordiv, relu at -0.0, int powers ----
@same_on_both
def test_floordiv_of_floats_at_infinities_and_signed_zeros(m):
    x = m.constant([-5.0, np.inf, -7.0, 0.0, 5.0, np.nan, 1.0])
    y = m.constant([np.inf, 1.0, 2.0, -3.0, 0.0, 1.0, -np.inf])
    q = m.math.floordiv(x, y)
    return [q, m.math.sign(q) * 0.0 + m.cast(m.math.is_finite(q), m.float32),
            m.constant(np.signbit(q.numpy()).astype(np.float32))]


@same_on_both
def test_relu_of_signed_zero_and_integer_negative_powers(m):
    r = m.nn.relu(m.constant([-0.0, -1.0, 0.0, 3.0]))
    return [r, m.constant(np.signbit(r.numpy()).astype(np.float32)),
            attempt(lambda: m.pow(m.constant([2, 3]), m.constant([1, -1]))),
            attempt(lambda: m.sign(m.constant([True, False]))),
            attempt(lambda: m.argmax(m.zeros([0, 0]), axis=0)), m.argmax(m.zeros([0, 3]), axis=1)]


@same_on_both
def test_linspace_of_integer_ends_is_float64(m):
    return [m.linspace(0, 10, 5), m.linspace(m.constant(-3), m.constant(4), 3),
            m.linspace(np.int64(1), 2, 4)]
