"""Matrix functions, einsum, activations and random tensors: values, TF conventions, errors.

The op table (test_op_table.py) checks every registered op's gradients
against finite differences; this file pins down what the table cannot:
values against NumPy, the derivative at TensorFlow's special points, the
error messages, and the seeding rules of ``ad.random``.
"""

import math

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing
from autodiff.errors import InvalidArgumentError


def _grad(f, x):
    x = ad.constant(x)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


def _well_conditioned(rng, shape):
    n = shape[-1]
    return rng.uniform(-1.0, 1.0, size=shape) + n * np.eye(n)


def _spd(rng, n):
    m = rng.uniform(-1.0, 1.0, size=(n, n))
    return m @ m.T + n * np.eye(n)


# ---- linalg: values ----------------------------------------------------------------

def test_solve_matches_numpy_with_batches_broadcasting_and_adjoint():
    rng = np.random.default_rng(0)
    a = _well_conditioned(rng, (2, 3, 3))
    b = rng.standard_normal((2, 3, 2))
    np.testing.assert_allclose(ad.linalg.solve(a, b).numpy(), np.linalg.solve(a, b))
    np.testing.assert_allclose(ad.linalg.solve(a, b, adjoint=True).numpy(),
                               np.linalg.solve(np.swapaxes(a, -1, -2), b))
    b3 = rng.standard_normal((4, 1, 3, 2))   # batch axes broadcast against a's (2,)
    np.testing.assert_allclose(ad.linalg.solve(a, b3).numpy(),
                               np.linalg.solve(np.broadcast_to(a, (4, 2, 3, 3)),
                                               np.broadcast_to(b3, (4, 2, 3, 2))))


def test_inv_det_slogdet_match_numpy():
    rng = np.random.default_rng(1)
    a = _well_conditioned(rng, (2, 3, 3)) * np.array([1.0, -1.0])[:, None, None]
    np.testing.assert_allclose(ad.linalg.inv(a).numpy(), np.linalg.inv(a))
    np.testing.assert_allclose(ad.linalg.inv(a, adjoint=True).numpy(),
                               np.linalg.inv(np.swapaxes(a, -1, -2)))
    np.testing.assert_allclose(ad.linalg.det(a).numpy(), np.linalg.det(a))
    sign, logabs = ad.linalg.slogdet(a)
    ref_sign, ref_logabs = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.numpy(), ref_sign)
    assert set(sign.numpy().tolist()) == {1.0, -1.0}   # both signs occur in this batch
    np.testing.assert_allclose(logabs.numpy(), ref_logabs)


def test_float32_matrix_ops_keep_float32():
    a = ad.constant([[4.0, 2.0], [2.0, 3.0]])
    for out in (ad.linalg.inv(a), ad.linalg.det(a), ad.linalg.cholesky(a), *ad.linalg.slogdet(a),
                ad.linalg.solve(a, a), ad.linalg.trace(a), ad.linalg.diag_part(a)):
        assert out.dtype == ad.float32


def test_cholesky_factor_reproduces_the_matrix():
    a = _spd(np.random.default_rng(2), 4)
    lower = ad.linalg.cholesky(a).numpy()
    np.testing.assert_allclose(lower, np.linalg.cholesky(a))
    np.testing.assert_allclose(lower @ lower.T, a)
    assert np.all(np.triu(lower, 1) == 0)


def test_trace_diag_part_diag_and_logdet_values():
    x = np.arange(12.0).reshape(2, 2, 3)
    np.testing.assert_array_equal(ad.linalg.diag_part(x).numpy(), [[0.0, 4.0], [6.0, 10.0]])
    np.testing.assert_array_equal(ad.linalg.trace(x).numpy(), [4.0, 16.0])
    np.testing.assert_array_equal(ad.linalg.diag(ad.constant([1.0, 2.0])).numpy(),
                                  [[1.0, 0.0], [0.0, 2.0]])
    spd = _spd(np.random.default_rng(3), 3)
    np.testing.assert_allclose(ad.linalg.logdet(spd).numpy(), np.log(np.linalg.det(spd)))


def test_linalg_namespace_has_matmul_and_eye():
    np.testing.assert_array_equal(ad.linalg.eye(2).numpy(), np.eye(2))
    np.testing.assert_array_equal(ad.linalg.matmul(ad.eye(2), ad.ones([2, 1])).numpy(),
                                  [[1.0], [1.0]])


def test_linalg_norm_is_the_euclidean_norm():
    assert float(ad.linalg.norm(ad.constant([3.0, 4.0]))) == pytest.approx(5.0)


# ---- linalg: derivatives ---------------------------------------------------------------

def test_det_gradient_is_det_times_inverse_transpose():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])   # det = -2
    grad = _grad(ad.linalg.det, a).numpy()
    np.testing.assert_allclose(grad, -2.0 * np.linalg.inv(a).T)
    np.testing.assert_allclose(grad, [[4.0, -3.0], [-2.0, 1.0]])


def test_slogdet_gradient_flows_from_log_abs_det_only():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    grad = _grad(lambda x: ad.linalg.slogdet(x)[1], a).numpy()
    np.testing.assert_allclose(grad, np.linalg.inv(a).T)
    sign_grad = _grad(lambda x: ad.linalg.slogdet(x)[0], a)
    np.testing.assert_array_equal(sign_grad.numpy(), np.zeros((2, 2)))


def test_trace_gradient_is_the_identity():
    np.testing.assert_array_equal(_grad(ad.linalg.trace, np.ones((3, 3))).numpy(), np.eye(3))


def test_cholesky_gradient_is_symmetric_and_matches_finite_differences():
    a = _spd(np.random.default_rng(4), 3)
    grad = _grad(lambda x: ad.reduce_sum(ad.linalg.cholesky(x) * np.arange(9.0).reshape(3, 3)),
                 a).numpy()
    np.testing.assert_allclose(grad, grad.T)
    testing.check_grads(ad.linalg.cholesky, [a], order=2)


def test_solve_and_inv_second_derivatives_match_finite_differences():
    rng = np.random.default_rng(5)
    a, b = _well_conditioned(rng, (3, 3)), rng.standard_normal((3, 2))
    testing.check_grads(ad.linalg.solve, [a, b], order=2)
    testing.check_grads(lambda x: ad.linalg.solve(x, b, adjoint=True), [a], order=2)
    testing.check_grads(ad.linalg.inv, [a], order=2)


# ---- linalg: errors ----------------------------------------------------------------------

def test_inv_of_a_non_square_matrix_names_the_op_and_shape():
    with pytest.raises(InvalidArgumentError, match=r"MatrixInverse.*\(2, 3\)"):
        ad.linalg.inv(ad.ones([2, 3]))


def test_solve_with_mismatched_rows_names_both_shapes():
    with pytest.raises(InvalidArgumentError, match=r"MatrixSolve.*\(3, 3\).*\(2, 1\)"):
        ad.linalg.solve(ad.eye(3), ad.ones([2, 1]))


def test_cholesky_of_an_indefinite_matrix_is_an_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="Cholesky"):
        ad.linalg.cholesky(ad.constant([[1.0, 2.0], [2.0, 1.0]]))


def test_inverse_of_a_singular_matrix_is_an_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="MatrixInverse"):
        ad.linalg.inv(ad.constant([[1.0, 2.0], [2.0, 4.0]]))


def test_integer_matrices_are_refused():
    with pytest.raises(InvalidArgumentError, match="MatrixDeterminant.*int32"):
        ad.linalg.det(ad.constant([[1, 2], [3, 4]]))


# ---- einsum ----------------------------------------------------------------------------------

EINSUM_EQUATIONS = [
    ("bxby->bxy", [(3, 2, 3, 4)]),
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("i,i->", [(3,), (3,)]),
    ("ij->ji", [(2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ii->i", [(3, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,j->ij", [(2,), (3,)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_EQUATIONS,
                         ids=[e for e, _ in EINSUM_EQUATIONS])
def test_einsum_matches_numpy_and_finite_differences(equation, shapes):
    rng = np.random.default_rng(len(equation))
    operands = [rng.standard_normal(s) for s in shapes]
    out = ad.einsum(equation, *[ad.constant(x) for x in operands])
    np.testing.assert_allclose(out.numpy(), np.einsum(equation, *operands))
    testing.check_grads(lambda *xs: ad.einsum(equation, *xs), operands, order=2)


def test_einsum_guide_diagonal_gradient_lands_on_the_batch_diagonal():
    j = np.zeros((2, 3, 2, 4))
    grad = _grad(lambda t: ad.einsum("bxby->bxy", t), j).numpy()
    expected = np.zeros((2, 3, 2, 4))
    for b in range(2):
        expected[b, :, b, :] = 1.0
    np.testing.assert_array_equal(grad, expected)


def test_einsum_diagonal_gradient_is_a_diagonal_matrix():
    weights = ad.constant([1.0, 2.0, 3.0], dtype=ad.float64)
    grad = _grad(lambda t: ad.einsum("ii->i", t) * weights, np.ones((3, 3)))
    np.testing.assert_array_equal(grad.numpy(), np.diag([1.0, 2.0, 3.0]))


def test_einsum_keeps_float32():
    assert ad.einsum("ij,jk->ik", ad.ones([2, 3]), ad.ones([3, 1])).dtype == ad.float32


@pytest.mark.parametrize("equation, shapes, fragment", [
    ("ij,jk->ik", [(2, 3), (4, 5)], "dimension 'j' has sizes 3 and 4"),
    ("ij,jk->ik", [(2, 3)], "2 input subscripts for 1 operands"),
    ("ij->k", [(2, 3)], "output subscripts"),
    ("ij->i", [(2, 3, 4)], "rank 3"),
    ("i$->i", [(2, 2)], "invalid subscripts"),
])
def test_einsum_errors_name_the_op_equation_and_shapes(equation, shapes, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        ad.einsum(equation, *[ad.ones(s) for s in shapes])
    message = str(info.value)
    assert "Einsum" in message and equation in message and fragment in message
    assert str(shapes[0]) in message


def test_einsum_refuses_mixed_dtypes():
    with pytest.raises(InvalidArgumentError, match="Einsum"):
        ad.einsum("i,i->", ad.ones([2]), ad.ones([2], dtype=ad.float64))


# ---- nn: values --------------------------------------------------------------------------------

X = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 2.0, 7.0])
ERF = np.vectorize(math.erf)
ACTIVATIONS = {
    "elu": (ad.nn.elu, np.where(X > 0, X, np.expm1(X))),
    "selu": (ad.nn.selu, 1.0507009873554805 * np.where(X > 0, X, 1.6732632423543772 * np.expm1(X))),
    "leaky_relu": (ad.nn.leaky_relu, np.where(X > 0, X, 0.2 * X)),
    "relu6": (ad.nn.relu6, np.clip(X, 0, 6)),
    "gelu": (ad.nn.gelu, 0.5 * X * (1 + ERF(X / np.sqrt(2)))),
    "gelu_tanh": (lambda t: ad.nn.gelu(t, approximate=True),
                  0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X ** 3)))),
    "silu": (ad.nn.silu, X / (1 + np.exp(-X))),
    "softmax": (ad.nn.softmax, np.exp(X) / np.exp(X).sum()),
    "log_softmax": (ad.nn.log_softmax, X - np.log(np.exp(X).sum())),
    "l2_loss": (ad.nn.l2_loss, np.sum(X * X) / 2),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_match_their_formulas(name):
    f, expected = ACTIVATIONS[name]
    np.testing.assert_allclose(f(ad.constant(X)).numpy(), expected, rtol=1e-12, atol=1e-12)
    assert f(ad.constant(X.astype(np.float32))).dtype == ad.float32


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_second_derivatives_match_finite_differences(name):
    f, _ = ACTIVATIONS[name]
    x = np.array([[-1.3, -0.4, 0.6], [1.1, 2.4, -2.2]])
    testing.check_grads(f, [x], order=2)


def test_softmax_over_another_axis_and_large_logits():
    logits = np.array([[1000.0, 0.0], [1000.0, 0.0]])
    np.testing.assert_allclose(ad.nn.softmax(logits).numpy(), [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(ad.nn.softmax(logits, axis=0).numpy(), [[0.5, 0.5], [0.5, 0.5]])
    assert np.all(np.isfinite(ad.nn.log_softmax(logits).numpy()))


def test_softmax_of_a_scalar_is_an_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="Softmax"):
        ad.nn.softmax(ad.constant(1.0))


# ---- nn: TensorFlow's derivatives at the kinks ------------------------------------------------

def test_leaky_relu_gradient_at_zero_is_alpha():
    grad = _grad(lambda x: ad.nn.leaky_relu(x, alpha=0.3), np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_allclose(grad.numpy(), [0.3, 0.3, 1.0])


def test_relu_and_relu6_gradients_are_zero_at_their_kinks():
    np.testing.assert_array_equal(_grad(ad.nn.relu, np.array([0.0, 1.0])).numpy(), [0.0, 1.0])
    grad6 = _grad(ad.nn.relu6, np.array([0.0, 3.0, 6.0, 7.0]))
    np.testing.assert_array_equal(grad6.numpy(), [0.0, 1.0, 0.0, 0.0])


def test_elu_and_selu_gradients_at_zero_and_below():
    np.testing.assert_allclose(_grad(ad.nn.elu, np.array([0.0, -1.0, 2.0])).numpy(),
                               [1.0, np.exp(-1.0), 1.0])
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    np.testing.assert_allclose(_grad(ad.nn.selu, np.array([-1.0, 2.0])).numpy(),
                               [scale * alpha * np.exp(-1.0), scale])


def test_softmax_of_a_sum_has_zero_gradient_and_l2_loss_gradient_is_x():
    x = np.array([[0.3, -1.0, 2.0]])
    np.testing.assert_allclose(_grad(ad.nn.softmax, x).numpy(), np.zeros_like(x), atol=1e-15)
    np.testing.assert_allclose(_grad(ad.nn.l2_loss, x).numpy(), x)


def test_nn_namespace_reexports_sigmoid_tanh_softplus():
    x = ad.constant([0.0])
    assert float(ad.nn.sigmoid(x)[0]) == 0.5
    assert float(ad.nn.tanh(x)[0]) == 0.0
    assert float(ad.nn.softplus(x)[0]) == pytest.approx(math.log(2.0))


# ---- random --------------------------------------------------------------------------------------

def _draws():
    return [ad.random.normal([3]).numpy(), ad.random.uniform([2, 2]).numpy(),
            ad.random.normal([2], seed=5).numpy(), ad.random.normal([2], seed=5).numpy(),
            ad.random.uniform([4], maxval=100, dtype=ad.int32).numpy()]


def test_set_seed_makes_the_whole_sequence_reproducible():
    ad.random.set_seed(1234)
    first = _draws()
    ad.random.set_seed(1234)
    second = _draws()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    ad.random.set_seed(4321)
    third = _draws()
    assert not np.array_equal(first[0], third[0])


def test_an_op_seed_gives_a_new_draw_on_each_call():
    ad.random.set_seed(7)
    a = ad.random.uniform([5], seed=3).numpy()
    b = ad.random.uniform([5], seed=3).numpy()
    assert not np.array_equal(a, b)
    ad.random.set_seed(7)
    np.testing.assert_array_equal(ad.random.uniform([5], seed=3).numpy(), a)


def test_uniform_respects_range_and_dtype():
    ad.random.set_seed(0)
    u = ad.random.uniform([1000], minval=-2.0, maxval=3.0, dtype=ad.float64)
    assert u.dtype == ad.float64 and u.shape == (1000,)
    assert u.numpy().min() >= -2.0 and u.numpy().max() < 3.0
    ints = ad.random.uniform([1000], minval=1, maxval=4, dtype=ad.int64).numpy()
    assert ints.dtype == np.int64 and set(ints.tolist()) == {1, 2, 3}


def test_integer_uniform_requires_maxval():
    with pytest.raises(ValueError, match="maxval"):
        ad.random.uniform([2], dtype=ad.int32)


def test_normal_and_truncated_normal_statistics():
    ad.random.set_seed(0)
    z = ad.random.normal([20000], mean=3.0, stddev=2.0).numpy()
    assert z.dtype == np.float32
    assert abs(z.mean() - 3.0) < 0.1 and abs(z.std() - 2.0) < 0.1
    t = ad.random.truncated_normal([20000], stddev=2.0).numpy()
    assert np.abs(t).max() <= 4.0 and t.std() < 2.0


def test_normal_passes_gradients_to_a_tensor_stddev():
    ad.random.set_seed(0)
    stddev = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(stddev)
        z = ad.random.normal([4], stddev=stddev)
    np.testing.assert_allclose(tape.gradient(z, stddev).numpy(), z.numpy().sum() / 2.0, rtol=1e-5)


def test_shuffle_permutes_the_first_axis_and_has_no_gradient():
    ad.random.set_seed(0)
    x = ad.constant(np.arange(20.0).reshape(10, 2))
    y = ad.random.shuffle(x).numpy()
    assert sorted(map(tuple, y.tolist())) == sorted(map(tuple, x.numpy().tolist()))
    assert not np.array_equal(y, x.numpy())
    with ad.GradientTape() as tape:
        tape.watch(x)
        loss = ad.reduce_sum(ad.random.shuffle(x))
    assert tape.gradient(loss, x) is None
