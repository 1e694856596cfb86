"""Edge inputs TensorFlow answers (issue 25, item 7), checked against known values.

Each group was an error here before: batched ``gather_nd``; a Python number
beside a float64 tensor in ``atan2`` (and now, by one conversion, in every
binary op); pooling and convolution windows larger than the input (an empty
result); an empty literal as ``where``'s condition; matmul over a zero-size
axis; ``gather`` with ``batch_dims`` on indices computed inside
``ad.function``; and TensorFlow names that were missing (``nn.convolution``,
``nn.pool``, ``nn.max_pool``, ...). ``tests/conformance/test_conf_edge_inputs.py``
runs the same cases on TensorFlow.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing
from autodiff.errors import InvalidArgumentError
from autodiff.ops.elementwise import BINARY_CASES
from autodiff.registry import REGISTRY


def _gather_nd_reference(params, indices, batch_dims):
    """TensorFlow's definition, one batch row at a time."""
    if batch_dims == 0:
        return params[tuple(np.moveaxis(indices, -1, 0))]
    return np.stack([_gather_nd_reference(p, i, batch_dims - 1)
                     for p, i in zip(params, indices)])


# ---- gather_nd with batch_dims -------------------------------------------------------
def test_gather_nd_with_batch_dims_gives_tensorflows_answer_to_the_repro():
    got = ad.gather_nd([[0.068]], [[[0]]], batch_dims=1)
    assert got.dtype == ad.float32 and got.shape == (1, 1)
    np.testing.assert_array_equal(got.numpy(), np.array([[0.068]], np.float32))


@pytest.mark.parametrize("params_shape, indices, batch_dims", [
    ((2, 3, 4), [[[0, 1], [2, 3]], [[1, 1], [0, 0]]], 1),
    ((2, 3, 4), [[1], [2]], 1),
    ((2, 3, 4), [[[0], [3]], [[1], [1]], [[2], [0]]] * 2, 2),
    ((2, 3), [[[2], [0], [2]], [[1], [1], [0]]], 1),
    ((2, 3, 4), [[[1, 2, 3]], [[0, 0, 0]]], 0),
])
def test_gather_nd_matches_the_batchwise_definition_and_its_second_derivative(
        params_shape, indices, batch_dims):
    idx = np.asarray(indices)
    if batch_dims == 2:
        idx = idx.reshape(2, 3, 2, 1)
    params = np.arange(np.prod(params_shape), dtype=np.float64).reshape(params_shape) / 7
    got = ad.gather_nd(ad.constant(params), idx, batch_dims=batch_dims)
    np.testing.assert_array_equal(got.numpy(), _gather_nd_reference(params, idx, batch_dims))
    testing.check_grads(lambda p: ad.gather_nd(p, idx, batch_dims=batch_dims) ** 2, [params],
                        order=2, modes=("rev", "fwd"))


def test_gather_nd_gradient_adds_repeated_rows_back():
    p = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    with ad.GradientTape() as tape:
        tape.watch(p)
        y = ad.gather_nd(p, [[1], [1]], batch_dims=1)       # p[0, 1], p[1, 1]
    np.testing.assert_array_equal(tape.gradient(y, p).numpy(), [[0.0, 1.0], [0.0, 1.0]])


def test_gather_nd_with_no_index_columns_takes_all_of_each_row():
    p = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    got = ad.gather_nd(p, np.zeros((2, 3, 0), np.int32), batch_dims=1)
    assert got.shape == (2, 3, 2)
    np.testing.assert_array_equal(got.numpy()[:, 1], [[1.0, 2.0], [3.0, 4.0]])


def test_gather_nd_of_empty_indices_and_empty_params_is_empty():
    def empty(*shape):
        return np.zeros(shape, np.int32)

    assert ad.gather_nd(ad.zeros([2, 3, 4]), empty(2, 0, 1), batch_dims=1).shape == (2, 0, 4)
    assert ad.gather_nd(ad.zeros([0, 3]), empty(0, 2, 1), batch_dims=1).shape == (0, 2)


@pytest.mark.parametrize("call, words", [
    (lambda p: ad.gather_nd(p, [[[0]], [[1]]], batch_dims=-1), ["GatherNd", "batch_dims=-1"]),
    (lambda p: ad.gather_nd(p, [[0], [1]], batch_dims=2), ["GatherNd", "batch_dims=2", "(2, 1)"]),
    (lambda p: ad.gather_nd(p, np.zeros((3, 1), np.int32), batch_dims=1),
     ["GatherNd", "(2, 3, 4)", "(3, 1)", "batch_dims=1"]),
    (lambda p: ad.gather_nd(p, np.zeros((2, 3), np.int32), batch_dims=1),
     ["GatherNd", "3 indices", "(2, 3, 4)"]),
    (lambda p: ad.gather_nd(p, [[[3]], [[0]]], batch_dims=1), ["GatherNd", "axis 1 has size 3"]),
    (lambda p: ad.gather_nd(p, [[0.5]]), ["GatherNd", "indices", "int32 or int64", "float"]),
    (lambda p: ad.gather_nd(p, []), ["GatherNd", "indices", "(0,)"]),
    (lambda p: ad.gather(p, [], axis=1), ["GatherV2", "indices", "(0,)"]),
])
def test_bad_gather_arguments_name_the_op_the_argument_and_the_shapes(call, words):
    with pytest.raises(InvalidArgumentError) as info:
        call(ad.zeros([2, 3, 4]))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


# ---- gather with batch_dims on indices computed inside ad.function -------------------------
def _sorted_rows(x):
    return ad.gather(x, ad.argsort(x, axis=-1), axis=1, batch_dims=1)


@pytest.mark.parametrize("jit", [False, True])
def test_a_traced_batched_gather_reads_each_calls_indices_and_has_a_gradient(jit):
    weights = ad.constant([1.0, 2.0, 3.0, 4.0], dtype=ad.float64)

    @ad.function(jit_compile=jit)
    def f(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = _sorted_rows(x)
            s = ad.reduce_sum(y * weights)
        return y, tape.gradient(s, x)

    xs = np.array([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.7, 0.1]])
    for value in (xs, xs[::-1].copy()):
        y, g = f(ad.constant(value))
        np.testing.assert_array_equal(y.numpy(), np.sort(value, axis=-1))
        # the weight of each element is 1 + its rank in its row
        np.testing.assert_array_equal(g.numpy(), np.argsort(np.argsort(value, axis=-1)) + 1.0)


def test_a_traced_batched_gather_records_gathertake_and_has_second_derivatives():
    traced = ad.function(lambda x, i: ad.gather(x, i, axis=2, batch_dims=1))
    x = np.arange(24.0).reshape(2, 3, 4) / 5
    i = ad.constant([[[0, 3], [1, 1]], [[2, 2], [3, 0]]])
    want = np.stack([x[b][:, np.asarray(i.numpy())[b]] for b in range(2)])
    np.testing.assert_array_equal(traced(ad.constant(x), i).numpy(), want)
    graph = traced.get_concrete_function(ad.constant(x), i).graph
    assert "GatherTake" in [node.op_type for node in graph.nodes]
    testing.check_grads(lambda t: traced(t, i) ** 2, [x], order=2, modes=("rev", "fwd"))


def test_a_traced_batched_gather_checks_the_batch_axes():
    traced = ad.function(lambda x, i: ad.gather(x, i, axis=1, batch_dims=1))
    with pytest.raises(InvalidArgumentError, match=r"GatherV2: params shape \(2, 3\) and indices "
                                                   r"shape \(3, 1\) must agree"):
        traced(ad.zeros([2, 3]), ad.constant([[0], [1], [2]]))


# ---- a Python number takes its partner's dtype, in every binary op -------------------------
BINARY_FUNCTIONS = {
    "add": ad.add, "subtract": ad.subtract, "multiply": ad.multiply, "divide": ad.divide,
    "truediv": ad.math.truediv, "floordiv": ad.math.floordiv, "floormod": ad.math.floormod,
    "pow": ad.pow, "maximum": ad.maximum, "minimum": ad.minimum, "atan2": ad.math.atan2,
    "xlogy": ad.math.xlogy, "xdivy": ad.math.xdivy, "divide_no_nan": ad.math.divide_no_nan,
    "multiply_no_nan": ad.math.multiply_no_nan,
    "squared_difference": ad.math.squared_difference, "equal": ad.equal,
    "not_equal": ad.not_equal, "less": ad.less, "less_equal": ad.less_equal,
    "greater": ad.greater, "greater_equal": ad.greater_equal,
    "where": lambda x, y: ad.where([True, False], x, y),
}
_NUMPY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "truediv": np.divide, "maximum": np.maximum, "minimum": np.minimum, "pow": np.power,
          "atan2": np.arctan2, "less": np.less, "equal": np.equal}


@pytest.mark.parametrize("dtype", ["float64", "float16"])
@pytest.mark.parametrize("number", [1.79, 2])
@pytest.mark.parametrize("name", sorted(BINARY_FUNCTIONS))
def test_a_python_number_beside_a_tensor_takes_its_dtype_on_either_side(name, number, dtype):
    fn = BINARY_FUNCTIONS[name]
    x = np.array([0.5, 1.25], dtype=dtype)
    for args in ((number, ad.constant(x)), (ad.constant(x), number)):
        got = fn(*args)
        assert got.dtype.name in (dtype, "bool"), (name, args, got.dtype)
        if name in _NUMPY:
            want = _NUMPY[name](*[a.numpy() if isinstance(a, ad.Tensor) else a for a in args])
            np.testing.assert_allclose(got.numpy(), want,
                                       rtol=1e-3 if dtype == "float16" else 1e-12)


def test_the_atan2_repro_gives_float64_and_its_gradient():
    x = ad.constant([0.5, -2.0], dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.math.atan2(1.79, x)
    assert y.dtype == ad.float64
    np.testing.assert_allclose(y.numpy(), np.arctan2(1.79, [0.5, -2.0]), rtol=1e-15)
    # d/dx atan2(y, x) = -y / (x^2 + y^2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               -1.79 / (np.array([0.5, -2.0]) ** 2 + 1.79 ** 2))
    assert ad.math.atan2(x, 0.5).dtype == ad.float64


def test_every_binary_elementwise_op_type_is_reached_by_a_tested_function(monkeypatch):
    binary = {name: prim for name, prim in REGISTRY.items() if prim.cases is BINARY_CASES}
    reached = set()
    for name, prim in binary.items():   # note each forward that runs (bools are not recorded)
        monkeypatch.setattr(prim, "forward", lambda *a, _f=prim.forward, _n=name, **k:
                            reached.add(_n) or _f(*a, **k))
    x = ad.constant([0.5, 1.25], dtype=ad.float64)
    for fn in BINARY_FUNCTIONS.values():
        fn(x, 2.0)
    assert set(binary) - {"LogicalAnd", "LogicalOr"} <= reached, set(binary) - reached


@pytest.mark.parametrize("call, dtype, value", [
    (lambda: ad.add(1.5, 2), "float32", 3.5),                 # 2 follows 1.5
    (lambda: ad.math.atan2(1.5, 2), "float32", np.arctan2(1.5, 2)),
    (lambda: ad.maximum(1.5, 2), "float32", 2.0),
    (lambda: ad.less(1.5, 2), "bool", True),
    (lambda: ad.math.divide_no_nan(ad.constant([1, -2]), ad.constant([0, 2])), "float64",
     [0.0, -1.0]),
    (lambda: ad.add(ad.zeros([0], dtype=ad.int32), []), "int32", np.zeros(0)),
])
def test_two_operands_convert_together_as_in_tensorflow(call, dtype, value):
    got = call()
    assert got.dtype.name == dtype
    np.testing.assert_allclose(np.asarray(got.numpy(), dtype=float), value, rtol=1e-6)


def test_a_python_int_and_float_still_refuse_to_meet_naming_the_op_and_dtypes():
    with pytest.raises(TypeError, match="Mul.*3.0.*int32"):
        ad.multiply(1, 3.0)
    with pytest.raises(TypeError, match="RealDiv.*2.5.*int32"):
        ad.divide(1, 2.5)


# ---- windows larger than the input: empty results, as TensorFlow's output sizes --------
@pytest.mark.parametrize("pool", [ad.nn.avg_pool2d, ad.nn.max_pool2d])
def test_a_valid_window_wider_than_the_input_gives_an_empty_result_and_zero_gradient(pool):
    x = ad.ones([1, 3, 2, 1])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = pool(x, [1, 3], 1, "VALID")
    assert y.shape == (1, 3, 0, 1)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.zeros((1, 3, 2, 1)))


@pytest.mark.parametrize("call, shape", [
    (lambda: ad.nn.avg_pool2d(ad.ones([1, 2, 2, 1]), 5, 2, "VALID"), (1, 0, 0, 1)),  # -1/2 -> 0
    (lambda: ad.nn.conv2d(ad.ones([1, 2, 2, 1]), ad.ones([3, 3, 1, 2]), 1, "VALID"), (1, 0, 0, 2)),
    (lambda: ad.nn.conv2d(ad.ones([1, 3, 3, 2]), ad.ones([2, 2, 2, 0]), 1, "VALID"), (1, 2, 2, 0)),
    (lambda: ad.nn.conv2d(ad.zeros([0, 3, 3, 1]), ad.ones([2, 2, 1, 2]), 2, "SAME"), (0, 2, 2, 2)),
    (lambda: ad.nn.conv1d(ad.ones([1, 2, 1]), ad.ones([3, 1, 1]), 1, "VALID"), (1, 0, 1)),
    (lambda: ad.nn.max_pool2d(ad.zeros([1, 0, 3, 1]), 2, 1, "SAME"), (1, 0, 3, 1)),
    (lambda: ad.nn.avg_pool1d(ad.ones([1, 2, 1]), 3, 1, "VALID"), (1, 0, 1)),
])
def test_empty_window_outputs_have_tensorflows_shapes(call, shape):
    assert call().shape == shape


@pytest.mark.parametrize("call, op", [
    (lambda: ad.nn.avg_pool2d(ad.ones([1, 2, 2, 1]), 4, 1, "VALID"), "AvgPool"),
    (lambda: ad.nn.max_pool1d(ad.ones([1, 2, 1]), 4, 1, "VALID"), "MaxPool"),
    (lambda: ad.nn.conv2d(ad.ones([1, 2, 2, 1]), ad.ones([4, 4, 1, 1]), 1, "VALID"), "Conv2D"),
    (lambda: ad.nn.conv2d(ad.ones([1, 5, 5, 0]), ad.ones([2, 2, 0, 1]), 1, "VALID"), "Conv2D"),
])
def test_a_window_that_overhangs_by_a_stride_or_more_is_refused_naming_the_op(call, op):
    with pytest.raises(InvalidArgumentError, match=rf"{op}: .*shape"):
        call()


def test_empty_convolutions_and_pools_have_second_derivatives():
    x = np.ones((1, 2, 4, 1))
    testing.check_grads(lambda t, w: ad.nn.conv2d(t, w, 1, "VALID"), [x, np.ones((3, 2, 1, 2))],
                        order=2)
    testing.check_grads(lambda t: ad.nn.avg_pool2d(t, 3, 1, "VALID"), [x], order=2)


# ---- the new tf.nn names, on the 2-D ops ---------------------------------------------------
X4 = np.arange(1.0, 31.0).reshape(1, 6, 5, 1) / 10
X4_UNTIED = X4 + np.arange(30).reshape(1, 6, 5, 1) * 1e-3   # no ties within a max window


def F2():   # filters, made under the backend the test runs on
    return ad.ones([2, 2, 1, 3], dtype=ad.float64)


def F1():
    return ad.ones([2, 1, 3], dtype=ad.float64)


def test_pool_with_dilations_averages_spaced_cells():
    got = ad.nn.pool(ad.constant(X4 * 10), [2, 2], "AVG", padding="VALID", dilations=[2, 2])
    assert got.shape == (1, 4, 3, 1)
    np.testing.assert_allclose(got.numpy()[0, 0, :, 0], [7.0, 8.0, 9.0])    # TensorFlow's numbers
    testing.check_grads(lambda t: ad.nn.pool(t, [2, 2], "MAX", dilations=[2, 1]), [X4_UNTIED],
                        order=2)


@pytest.mark.parametrize("new, old", [
    (lambda t: ad.nn.pool(t, [2, 3], "MAX", strides=[1, 2], padding="SAME"),
     lambda t: ad.nn.max_pool2d(t, [2, 3], [1, 2], "SAME")),
    (lambda t: ad.nn.avg_pool(t, [1, 2, 2, 1], 2, "VALID"),
     lambda t: ad.nn.avg_pool2d(t, 2, 2, "VALID")),
    (lambda t: ad.nn.max_pool(t, 3, 1, "SAME"), lambda t: ad.nn.max_pool2d(t, 3, 1, "SAME")),
    (lambda t: ad.nn.max_pool1d(t[0], [1, 2, 1], [1, 2, 1], "VALID")[None],
     lambda t: ad.nn.max_pool2d(t, [1, 2], [1, 2], "VALID")),
    (lambda t: ad.nn.avg_pool1d(t[0], 3, 1, "SAME")[None],
     lambda t: ad.nn.avg_pool2d(t, [1, 3], 1, "SAME")),
    (lambda t: ad.nn.pool(t[0], [2], "AVG", strides=[2], padding="SAME")[None],
     lambda t: ad.nn.avg_pool2d(t, [1, 2], [1, 2], "SAME")),
    (lambda t: ad.nn.convolution(t, F2(), strides=2, padding="SAME"),
     lambda t: ad.nn.conv2d(t, F2(), 2, "SAME")),
    (lambda t: ad.nn.convolution(t[0], F1(), dilations=2)[None],
     lambda t: ad.nn.conv1d(t[0], F1(), 1, "VALID", dilations=2)[None]),
])
def test_the_rank_generic_names_agree_with_the_2d_ops(new, old):
    x = ad.constant(X4)
    np.testing.assert_array_equal(new(x).numpy(), old(x).numpy())
    testing.check_grads(new, [X4_UNTIED], order=2)


BAD = InvalidArgumentError


@pytest.mark.parametrize("call, error, words", [
    (lambda x: ad.nn.pool(x, [2, 2], "SUM"), BAD, ["pool", "SUM"]),
    (lambda x: ad.nn.pool(x, [2], "AVG"), BAD, ["AvgPool", "rank 3", "(1, 6, 5, 1)"]),
    (lambda x: ad.nn.pool(x, [2, 2], "AVG", strides=2, dilations=2), BAD,
     ["AvgPool", "strides", "dilations"]),
    (lambda x: ad.nn.pool(x, [2, 2], "MAX", padding="SAME", dilations=2), BAD,
     ["MaxPool", "SAME", "dilations"]),
    (lambda x: ad.nn.max_pool(ad.zeros([1, 2, 2, 2, 1]), 2, 1, "VALID"), BAD,
     ["MaxPool", "(1, 2, 2, 2, 1)"]),
    (lambda x: ad.nn.max_pool1d(x, 2, 1, "VALID"), BAD, ["MaxPool", "3-D"]),
    (lambda x: ad.nn.avg_pool(ad.zeros([1, 4, 1], dtype=ad.int32), 2, 1, "VALID"), BAD,
     ["AvgPool", "int32"]),
    (lambda x: ad.nn.avg_pool1d(x[0], 2, 1, "VALID", data_format="NCW"), BAD, ["AvgPool", "NCW"]),
    (lambda x: ad.nn.convolution(x[0], ad.zeros([2, 2, 1, 1])), BAD,
     ["Conv2D", "filters", "rank 3"]),
    (lambda x: ad.nn.convolution(x[0], ad.zeros([2, 1, 1]), padding=[[0, 0]] * 3), TypeError,
     ["Conv2D", "padding"]),
    (lambda x: ad.nn.max_pool(x, [2, 2, 2], 1, "VALID"), BAD, ["MaxPool", "ksize"]),
])
def test_bad_arguments_to_the_new_names_name_the_op_and_argument(call, error, words):
    with pytest.raises(error) as info:
        call(ad.constant(X4))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_l2_normalize_is_also_in_linalg():
    assert ad.linalg.l2_normalize is ad.math.l2_normalize is ad.nn.l2_normalize
    np.testing.assert_allclose(ad.linalg.l2_normalize(ad.constant([3.0, 4.0])).numpy(), [0.6, 0.8])


# ---- empty literals, zero-size matmul, and the smaller fixes ------------------------------
def test_an_empty_literal_condition_converts_as_bool():
    got = ad.where([[], [], [], []], ad.zeros((4, 0)), ad.zeros((1, 0)))
    assert got.shape == (4, 0) and got.dtype == ad.float32
    assert ad.where([[], []]).shape == (0, 2)


@pytest.mark.parametrize("a_shape, b_shape, out", [
    ((3, 3, 2, 0), (0, 2), (3, 3, 2, 2)), ((2, 0), (0, 3), (2, 3)), ((0, 2, 3), (3, 2), (0, 2, 2)),
    ((2, 3), (3, 0), (2, 0)),
])
def test_matmul_over_a_zero_size_axis(a_shape, b_shape, out):
    got = ad.matmul(ad.zeros(a_shape), ad.zeros(b_shape))
    assert got.shape == out
    np.testing.assert_array_equal(got.numpy(), np.zeros(out))
    testing.check_grads(ad.matmul, [np.ones(a_shape), np.ones(b_shape)], order=2)


def test_integer_features_and_ids_convert_as_in_tensorflow():
    got = ad.nn.leaky_relu(ad.constant([1, -2]))
    assert got.dtype == ad.float32
    np.testing.assert_allclose(got.numpy(), [1.0, -0.4])
    summed = ad.math.unsorted_segment_sum(ad.constant([1.0, 2.0, 5.0]),
                                          ad.constant([0, -1, 0], dtype=ad.int64), 2)
    np.testing.assert_array_equal(summed.numpy(), [6.0, 0.0])


def test_selu_of_a_tiny_negative_float32_takes_tensorflows_branch():
    # exp(-2e-8) - 1 is 0 in float32, as in TensorFlow's kernel: value 0, gradient scale
    x = ad.constant([-1.9868215517249155e-08, -0.0, -1.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.nn.selu(x)
    assert y.numpy()[0] == 0.0 and np.signbit(y.numpy()[1])
    scale, scale_alpha = 1.0507009873554805, 1.7580993408473766
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               [scale, scale, scale_alpha * np.exp(-1.0)], rtol=1e-6)
