"""Behaviour of the shape, slicing, reduction and clipping ops beyond the op table.

Values against NumPy, TensorFlow's conventions at special points (clip
bounds, a zero in reduce_prod, the norm at 0), dense gradients of indexing
with repeated indices, batch-ready rules for the index layouts NumPy
rearranges, and the errors each op raises (naming the op).
"""

import json

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing
from autodiff.errors import InvalidArgumentError
from autodiff.ops import slicing
from autodiff.ops.shape import shape as tf_shape


def _grad(f, *values):
    xs = [ad.constant(np.asarray(v, dtype=np.float64)) for v in values]
    with ad.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    grads = tape.gradient(y, xs)
    return [None if g is None else g.numpy() for g in grads]


def _op_types(f, x):
    x = ad.constant(x)
    with ad.GradientTape() as tape:
        tape.watch(x)
        f(x)
    return [rec.op_type for rec in tape.records]


X = np.arange(60, dtype=np.float64).reshape(3, 4, 5) / 7.0

# ---- indexing ------------------------------------------------------------------------
KEYS = [
    1, -1, (slice(None), 2), (Ellipsis, slice(None, None, -2)), (None, 1, Ellipsis, None),
    (slice(5, 0, -2), slice(None), slice(1, 3)), (), Ellipsis,
    [0, 2, 2], ([0, 1], slice(None), [1, 1]), (0, slice(None), [1, 2]),
    (slice(None), [0, 1], None, [1, 2]), ([0, 1], Ellipsis, [1, 2]),
    (slice(None), [[0, 3], [3, 3]]), (X[:, :, 0] > 0.5,), (Ellipsis, X[0, 0] > 0.2),
    (1, X[0, :, 0] > 0.2), (np.array([2, 0]), Ellipsis),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_getitem_matches_numpy_and_its_gradient_adds_up_repeated_indices(key):
    got = ad.constant(X)[key]
    want = X[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    (g,) = _grad(lambda t: ad.reduce_sum(t[key] * 3.0), X)
    expected = np.zeros_like(X)
    np.add.at(expected, key, 3.0)
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("key", [(slice(1, None), -1), ([2, 0, 2], slice(None, None, -1)),
                                 ([0, 1], slice(None), [3, 3])])
def test_getitem_has_second_derivatives(key):
    testing.check_grads(lambda t: t[key] * t[key], [X[:, :, :4] + 0.5], order=2)


def test_repeated_index_collects_every_cotangent():
    (g,) = _grad(lambda t: ad.reduce_sum(t[[0, 2, 2, 2]]), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [1.0, 0.0, 3.0])


def test_scalar_int_tensor_index_and_tensor_slice_bounds_work():
    x = ad.constant(X)
    np.testing.assert_array_equal(x[ad.constant(1), ad.constant([0, 0, 3])].numpy(),
                                  X[1, [0, 0, 3]])
    np.testing.assert_array_equal(x[ad.constant(1):].numpy(), X[1:])


def test_basic_indexing_records_strided_slice_and_arrays_record_gather():
    assert _op_types(lambda t: t[1:, 0], X) == ["StridedSlice"]
    assert _op_types(lambda t: t[[0, 0]], X) == ["GatherV2"]
    assert _op_types(lambda t: t[t > 1.0], X) == ["GatherV2"]


def test_index_params_are_plain_json_data():
    x = ad.constant(X)
    with ad.GradientTape() as tape:
        tape.watch(x)
        x[1:, None, ::-1]
        x[[0, 2], ..., np.array([1, 1])]
        ad.gather(x, [[1, 0]], axis=2)
    for rec in tape.records:
        assert json.loads(json.dumps(rec.params)) == json.loads(json.dumps(rec.params))
        again = rec.primitive.forward(np, X, **json.loads(json.dumps(rec.params)))
        np.testing.assert_array_equal(again, rec.primitive.forward(np, X, **rec.params))


@pytest.mark.parametrize("key, message", [
    (5, "StridedSlice: index 5 is out of bounds for axis 0 with size 3"),
    ((slice(None), [0, 9]), "GatherV2: index 9 is out of bounds for axis 1 with size 4"),
    ((1, 2, 3, 4), "StridedSlice: too many indices for a tensor of shape (3, 4, 5)"),
    ((Ellipsis, Ellipsis), "StridedSlice: an index can only have a single ellipsis"),
    (np.array([True, False]), "GatherV2: boolean mask of shape (2,) does not match"),
])
def test_bad_indices_raise_invalid_argument_naming_op_index_and_shape(key, message):
    with pytest.raises(InvalidArgumentError) as info:
        ad.constant(X)[key]
    assert message in str(info.value)
    assert "(3, 4" in str(info.value)


@pytest.mark.parametrize("key", [ad.constant(1.0), 1.5, True])
def test_float_and_bool_scalar_indices_raise_type_error(key):
    with pytest.raises(TypeError):
        ad.constant(X)[key]


@pytest.mark.parametrize("key", [([0, 1], slice(None), [2, 3]), (slice(None), [[1], [2]]),
                                 (1, slice(None, None, -1))])
def test_index_ops_with_batch_axes_equal_the_stack_of_single_calls(key):
    # Non-adjacent array indices make NumPy move their axes in front of every
    # sliced axis, batch axes included; the ops move the batch axes back.
    x = ad.constant(X)
    items = slicing._python_key(x, key)
    encoded = tuple(slicing._encode(k) for k in items)
    op = slicing.GATHER if any(isinstance(k, np.ndarray) for k in items) else slicing.STRIDED_SLICE
    stacked = np.stack([X, 2 * X])
    got = op(ad.constant(stacked), key=encoded, n_batch=1).numpy()
    np.testing.assert_array_equal(got, np.stack([X[key], 2 * X[key]]))
    grad_op = slicing.GATHER_GRAD if op is slicing.GATHER else slicing.STRIDED_SLICE_GRAD
    g = np.stack([X[key], -X[key]])
    scattered = grad_op(ad.constant(g), key=encoded, shape=X.shape, n_batch=1).numpy()
    for row, g_row in zip(scattered, g):
        expected = np.zeros_like(X)
        np.add.at(expected, key, g_row)
        np.testing.assert_array_equal(row, expected)


def test_gather_matches_tf_gather():
    np.testing.assert_array_equal(ad.gather(ad.constant(X), [2, 0, 2]).numpy(), X[[2, 0, 2]])
    np.testing.assert_array_equal(ad.gather(ad.constant(X), [[4, 0]], axis=-1).numpy(),
                                  np.take(X, [[4, 0]], axis=-1))
    np.testing.assert_array_equal(ad.gather(ad.constant(X), 3, axis=1).numpy(), X[:, 3])
    idx = np.array([[1, 1], [0, 3], [2, 2]])
    for axis in (1, 2):
        got = ad.gather(ad.constant(X), idx, axis=axis, batch_dims=1).numpy()
        want = np.stack([np.take(X[b], idx[b], axis=axis - 1) for b in range(3)])
        np.testing.assert_array_equal(got, want)
    testing.check_grads(lambda t: ad.gather(t, idx, axis=2, batch_dims=1) ** 2, [X], order=2)


def test_gather_rejects_out_of_range_indices_like_tensorflow():
    message = r"GatherV2: indices\[1\] = 3 is not in \[0, 3\)"
    with pytest.raises(InvalidArgumentError, match=message):
        ad.gather(ad.constant(X), [0, 3])
    with pytest.raises(InvalidArgumentError, match="GatherV2"):
        ad.gather(ad.constant(X), [-1])


def test_boolean_mask():
    mask = X[:, 0, 0] > 0.5
    np.testing.assert_array_equal(ad.boolean_mask(ad.constant(X), mask).numpy(), X[mask])
    np.testing.assert_array_equal(ad.boolean_mask(ad.constant(X), [True] * 4, axis=1).numpy(), X)


# ---- joining and reshaping ---------------------------------------------------------------
def test_join_ops_match_numpy():
    a, b = X[:, :2], X[:, 2:]
    np.testing.assert_array_equal(ad.concat([a, b], axis=-2).numpy(), X)
    np.testing.assert_array_equal(ad.stack([a, b], axis=1).numpy(), np.stack([a, b], axis=1))
    parts = ad.unstack(ad.constant(X), axis=2)
    assert len(parts) == 5
    np.testing.assert_array_equal(parts[3].numpy(), X[:, :, 3])
    pieces = ad.split(ad.constant(X), [1, -1, 2], axis=2)
    assert [p.shape for p in pieces] == [(3, 4, 1), (3, 4, 2), (3, 4, 2)]
    np.testing.assert_array_equal(ad.concat(pieces, 2).numpy(), X)
    assert [p.shape for p in ad.split(ad.constant(X), 2, axis=1)] == [(3, 2, 5), (3, 2, 5)]
    assert ad.squeeze(ad.zeros([1, 3, 1])).shape == [3]
    assert ad.squeeze(ad.zeros([1, 3, 1]), axis=[-1]).shape == [1, 3]
    np.testing.assert_array_equal(ad.tile(ad.constant(X), [2, 1, 3]).numpy(), np.tile(X, (2, 1, 3)))


def test_size_and_shape_are_int32_tensors():
    assert ad.size(ad.ones([2, 3])).numpy() == 6
    assert ad.size(ad.ones([2, 3])).dtype == ad.int32
    np.testing.assert_array_equal(tf_shape(ad.ones([2, 3])).numpy(), [2, 3])
    assert tf_shape(ad.ones([2, 3])).dtype == ad.int32
    assert tf_shape(ad.constant(1.0)).shape == [0]


@pytest.mark.parametrize("mode", ["CONSTANT", "reflect", "SYMMETRIC"])
def test_pad_matches_numpy_and_has_second_derivatives(mode):
    widths = [[1, 2], [3, 0], [0, 4]]
    kwargs = {"constant_values": -1.5} if mode == "CONSTANT" else {}
    got = ad.pad(ad.constant(X), widths, mode=mode, **kwargs).numpy()
    np_mode = {"CONSTANT": "constant", "reflect": "reflect", "SYMMETRIC": "symmetric"}[mode]
    np_kwargs = {"constant_values": -1.5} if mode == "CONSTANT" else {}
    np.testing.assert_array_equal(got, np.pad(X, widths, mode=np_mode, **np_kwargs))
    testing.check_grads(lambda t: ad.pad(t, widths, mode=mode, **kwargs) ** 2, [X], order=2)


def test_unstack_gradient_when_only_some_outputs_are_used():
    (g,) = _grad(lambda t: ad.unstack(t)[1] * 2.0, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(g, [[0.0, 0.0], [2.0, 2.0]])
    testing.check_grads(lambda t: ad.unstack(t, axis=1)[0] * ad.unstack(t, axis=1)[2], [X], order=2)


@pytest.mark.parametrize("call, message", [
    (lambda: ad.concat([ad.ones([2, 3]), ad.ones([3, 3])], axis=1),
     "ConcatV2: Dimensions of inputs should match except on axis 1"),
    (lambda: ad.concat([ad.ones([2]), ad.ones([2], dtype=ad.float64)], 0), "ConcatV2"),
    (lambda: ad.stack([ad.ones([2]), ad.ones([3])]), "Pack: Shapes of all inputs must match"),
    (lambda: ad.unstack(ad.ones([2, 3]), num=3), "Unpack: num=3"),
    (lambda: ad.split(ad.ones([5]), 2), "Split: Number of ways to split should evenly divide"),
    (lambda: ad.squeeze(ad.ones([1, 3]), axis=1), "Squeeze: Can not squeeze dim[1]"),
    (lambda: ad.tile(ad.ones([2, 3]), [2]), "Tile: Expected multiples argument to be a vector"),
    (lambda: ad.pad(ad.ones([2, 3]), [[1, 1]]), "PadV2: The first dimension of paddings"),
    (lambda: ad.pad(ad.ones([2, 3]), [[1, 1], [-1, 0]]), "PadV2: Paddings must be non-negative"),
    (lambda: ad.pad(ad.ones([2, 3]), [[2, 0], [0, 0]], mode="REFLECT"), "MirrorPad"),
    (lambda: ad.cumsum(ad.ones([2]), axis=1), "Cumsum: axis 1 is out of range"),
])
def test_shape_errors_name_the_op(call, message):
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert message in str(info.value)


# ---- reductions -------------------------------------------------------------------------
def test_reduce_prod_gradient_is_exact_at_zeros():
    (g,) = _grad(ad.reduce_prod, [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, 6.0, 0.0])
    (g,) = _grad(ad.reduce_prod, [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    x = np.array([[0.0, 2.0, 1.5], [0.0, 0.0, -1.0]])
    for axis in (None, 0, 1, [0, 1]):
        testing.check_grads(lambda t: ad.reduce_prod(t, axis=axis), [x], order=2)


def test_reduce_prod_of_a_shape_is_an_int32_count():
    n = ad.reduce_prod(ad.ones([5, 8]).shape)
    assert n.dtype == ad.int32 and int(n) == 40
    assert ad.reshape(ad.ones([5, 8]), [n, 1]).shape == [40, 1]


def test_reduce_logsumexp_is_stable_and_its_gradient_is_softmax():
    big = ad.reduce_logsumexp(ad.constant([1000.0, 1000.0]))
    assert np.isclose(big.numpy(), 1000.0 + np.log(2.0))
    assert ad.reduce_logsumexp(ad.constant([-np.inf, -np.inf])).numpy() == -np.inf
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    got = ad.reduce_logsumexp(ad.constant(x), axis=1, keepdims=True).numpy()
    np.testing.assert_allclose(got, np.log(np.exp(x).sum(1, keepdims=True)))
    (g,) = _grad(lambda t: ad.reduce_logsumexp(t, axis=1), x)
    np.testing.assert_allclose(g, np.exp(x) / np.exp(x).sum(1, keepdims=True))
    testing.check_grads(lambda t: ad.reduce_logsumexp(t, axis=0), [x], order=2)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_and_cumprod_match_numpy(exclusive, reverse):
    x = np.array([[1.5, 0.0, -2.0, 3.0], [0.5, 2.0, 1.0, -1.0]])
    flip = (lambda a: a[:, ::-1]) if reverse else (lambda a: a)
    for op, np_op, start in ((ad.cumsum, np.cumsum, 0.0), (ad.math.cumprod, np.cumprod, 1.0)):
        want = np_op(flip(x), axis=1)
        if exclusive:
            want = np.concatenate([np.full((2, 1), start), want[:, :-1]], axis=1)
        got = op(ad.constant(x), axis=-1, exclusive=exclusive, reverse=reverse).numpy()
        np.testing.assert_allclose(got, flip(want))
        testing.check_grads(lambda t: op(t, axis=1, exclusive=exclusive, reverse=reverse), [x],
                            order=2)


def test_argmax_and_argmin_are_int64_first_on_ties_and_never_differentiable():
    x = ad.constant([[1.0, 5.0, 5.0], [7.0, 2.0, 2.0]])
    assert ad.argmax(x).dtype == ad.int64
    np.testing.assert_array_equal(ad.argmax(x, axis=1).numpy(), [1, 0])
    np.testing.assert_array_equal(ad.math.argmin(x, axis=-1, output_type=ad.int32).numpy(), [0, 1])
    with ad.GradientTape() as tape:
        tape.watch(x)
        i = ad.argmax(x, axis=1)
    assert tape.gradient(i, x) is None


def test_math_namespace_and_top_level_have_the_reductions():
    for name in ("reduce_prod", "reduce_logsumexp", "cumsum"):
        assert getattr(ad.math, name) is getattr(ad, name)


# ---- clipping and norms ---------------------------------------------------------------
def test_clip_by_value_passes_the_gradient_at_its_bounds():
    t = [-2.0, -1.0, 0.0, 1.0, 2.0]
    g_t, g_lo, g_hi = _grad(lambda t, lo, hi: ad.clip_by_value(t, lo, hi), t, -1.0, 1.0)
    np.testing.assert_array_equal(g_t, [0.0, 1.0, 1.0, 1.0, 0.0])
    assert g_lo == 1.0 and g_hi == 1.0   # one element below, one above
    np.testing.assert_array_equal(ad.clip_by_value(ad.constant(t), -1.0, 1.0).numpy(),
                                  [-1.0, -1.0, 0.0, 1.0, 1.0])


def test_clip_by_value_bounds_broadcast_but_may_not_grow_t():
    x = np.array([[0.5, -3.0], [2.0, 0.0]])
    got = ad.clip_by_value(ad.constant(x), [-1.0, 0.0], 1.0).numpy()
    np.testing.assert_array_equal(got, np.clip(x, [-1.0, 0.0], 1.0))
    with pytest.raises(InvalidArgumentError, match="ClipByValue"):
        ad.clip_by_value(ad.constant([1.0, 2.0]), ad.zeros([3, 2]), 1.0)


def test_clip_by_norm_reproduces_the_custom_gradient_guide():
    # The guide clips the upstream gradient dy = 2 v = 4 with clip_by_norm(dy, 0.5).
    assert ad.clip_by_norm(ad.constant(4.0), 0.5).numpy() == 0.5
    np.testing.assert_allclose(ad.clip_by_norm(ad.constant([3.0, 4.0]), 1.0).numpy(), [0.6, 0.8])
    np.testing.assert_array_equal(ad.clip_by_norm(ad.constant([3.0, 4.0]), 9.0).numpy(), [3, 4])
    rows = ad.clip_by_norm(ad.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1]).numpy()
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.3, 0.4]])


def test_norm_gradient_at_zero_is_nan_but_clip_by_norm_stays_finite():
    (g,) = _grad(ad.norm, [0.0, 0.0])
    assert np.isnan(g).all()           # TensorFlow's result: sqrt'(0) * 0
    (g,) = _grad(lambda t: ad.clip_by_norm(t, 1.0), [0.0, 0.0])
    np.testing.assert_array_equal(g, [1.0, 1.0])
    testing.check_grads(lambda t: ad.clip_by_norm(t, 0.7, axes=[1]), [X[0]], order=2)


@pytest.mark.parametrize("ord_, axis", [("euclidean", None), (1, None), (2, -1), (np.inf, 0),
                                        (3, 1), (0.5, None), ("fro", (0, 2)), (1, (1, 2)),
                                        (np.inf, (-1, 0))])
def test_norm_matches_numpy(ord_, axis):
    x = X - 4.0
    got = ad.norm(ad.constant(x), ord=ord_, axis=axis).numpy()
    if axis is None:
        want = np.linalg.norm(x.ravel(), ord=2 if ord_ == "euclidean" else ord_)
    else:
        want = np.linalg.norm(x, ord=ord_, axis=axis)
    np.testing.assert_allclose(got, want)
    kept = ad.norm(ad.constant(x), ord=ord_, axis=axis, keepdims=True)
    assert kept.ndim == x.ndim
    away_from_ties = np.random.default_rng(0).uniform(0.5, 2.0, (2, 3, 3)) * [1, -1, 1]
    testing.check_grads(lambda t: ad.norm(t, ord=ord_, axis=axis), [away_from_ties], order=1)


@pytest.mark.parametrize("kwargs", [{"ord": "fro"}, {"ord": -1}, {"ord": 2, "axis": (0, 1)},
                                    {"axis": [0]}, {"axis": (1, 1)}])
def test_norm_rejects_unsupported_arguments(kwargs):
    with pytest.raises(ValueError):
        ad.norm(ad.constant(X), **kwargs)
