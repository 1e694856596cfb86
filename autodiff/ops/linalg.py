"""Matrix functions (``ad.linalg``): solve, inv, det, slogdet, cholesky, diagonals, trace.

Every op here acts on the last two axes and treats the axes before them as a
batch of matrices, so a cotangent with extra leading axes (a stack of
Jacobian rows) is just more batch: the rules below are matmuls, solves and
inverses on the last two axes and need no special case for it.

The derivatives, with ``A^-T`` the transposed inverse:

    X = solve(A, B):   dB = A^-T g          dA = -dB X^T
    Y = inv(A):        dA = -Y^T g Y^T
    d = det(A):        dA = g d A^-T
    log|det A|:        dA = g A^-T
    L = cholesky(A):   dA = sym(L^-T Phi(L^T g) L^-1), Phi = lower triangle, half diagonal

Ill-conditioned matrices make finite differences (and the ops) meaningless,
so the primitives that need an invertible or positive-definite input carry a
``make_inputs(rng, shapes)`` hook the table-driven gradient test uses instead
of uniform sampling. That, broadcasting batch shapes and catching LinAlgError
are all this module uses NumPy for, but one check: on the NumPy backend,
``inv`` and ``solve`` (and so the gradients of ``det`` and ``slogdet``, which
call ``inv``) raise InvalidArgumentError for a matrix with a NaN or zero
pivot, as TensorFlow's CPU kernels do ("Input matrix is not invertible").
The check runs only when the result holds a NaN or inf. On a device backend it
would be a copy to the host, so there, as on TensorFlow's GPU, NaN comes back.
"""

import numpy as np

from ..broadcast import sum_to
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["solve", "inv", "det", "slogdet", "logdet", "cholesky", "trace", "diag_part", "diag",
           "norm"]

REALS = (-2.0, 2.0)
SQUARE_CASES = [(((1, 1),), {}), (((3, 3),), {}), (((2, 3, 3),), {})]


# ---- test inputs: matrices far from singular ----------------------------------------
def _invertible(rng, shape):
    """Diagonally dominant, with random row signs (so determinants of both signs occur)."""
    n = shape[-1]
    m = rng.uniform(-1.0, 1.0, size=shape) + n * np.eye(n)
    signs = np.where(rng.uniform(0.0, 1.0, size=shape[:-1] + (1,)) < 0.5, -1.0, 1.0)
    return m * signs


def _positive_definite(rng, shape):
    """M M^T + n I: symmetric, eigenvalues at least n."""
    n = shape[-1]
    m = rng.uniform(-1.0, 1.0, size=shape)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _square_inputs(make):
    """``make_inputs`` for an op whose first input is square: the rest are uniform."""
    return lambda rng, shapes: [make(rng, tuple(shapes[0]))] + [
        rng.uniform(-1.0, 1.0, size=tuple(s)) for s in shapes[1:]]


# ---- shared helpers (all Tensor ops, so an outer tape can record them) ------------
def _as_matrix_scale(g):
    """A cotangent of shape ``B + batch`` as ``B + batch + (1, 1)``, to scale matrices."""
    return reshape(g, tuple(g._value.shape) + (1, 1))


def _check_square(x, op_type):
    shape = tuple(x._value.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise InvalidArgumentError(
            f"{op_type}: Input must be a square matrix (rank >= 2, last two dimensions "
            f"equal), got shape {shape}")
    if not x.dtype.is_differentiable:
        raise InvalidArgumentError(
            f"{op_type}: Input must be a float or complex tensor, got {x.dtype.name}")


def _lu_refuses(a):
    """Per matrix, whether TensorFlow's check after its LU factorization fails.

    TensorFlow (Eigen) factorizes with partial pivoting and refuses the matrix
    unless the smallest |pivot| is > 0. Eigen's max and min keep their first
    value unless a later one is strictly larger (smaller), so a NaN counts only
    in first place: a NaN first pivot refuses, a NaN later pivot does not.
    """
    n = a.shape[-1]
    lu = np.array(a, dtype=np.complex128 if a.dtype.kind == "c" else np.float64).reshape(-1, n, n)
    rows = np.arange(lu.shape[0])
    pivots = np.empty(lu.shape[:2])
    with np.errstate(all="ignore"):
        for k in range(n):
            column = np.abs(lu[:, k:, k])
            pick = np.argmax(np.where(np.isnan(column), -1.0, column), axis=1)
            pick = np.where(np.isnan(column[:, 0]), 0, pick) + k
            top = lu[:, k, :].copy()
            lu[:, k, :] = lu[rows, pick, :]
            lu[rows, pick, :] = top
            pivot = lu[:, k, k]
            pivots[:, k] = np.abs(pivot)
            scale = np.where((pivot == 0)[:, None], 0, lu[:, k + 1:, k] / pivot[:, None])
            lu[:, k + 1:, k + 1:] -= scale[:, :, None] * lu[:, None, k, k + 1:]
    smallest = np.where(np.isnan(pivots[:, 0]), np.nan,
                        np.min(np.where(np.isnan(pivots), np.inf, pivots), axis=1))
    return ~(smallest > 0)


def _check_invertible(xp, op_type, a, out):
    """Raises where TensorFlow's LU kernels do: a zero or (first) NaN pivot (NumPy only).

    On a device, reading the pivots would be a copy to the host: instead a
    matrix holding a NaN or an inf gives NaN everywhere (CUDA's solver can
    return finite numbers for it; LAPACK's answer holds NaNs). Returns the
    (possibly NaN-ed) result.
    """
    if type(a) is not np.ndarray:
        if a.size == 0:
            return out
        poisoned = xp.any(~xp.isfinite(a), axis=(-2, -1))[..., None, None]
        return xp.where(poisoned, xp.asarray(np.nan, dtype=out.dtype), out)
    if a.shape[-1] == 0 or np.isfinite(out).all():
        return out  # nothing to explain
    bad = _lu_refuses(a)
    if bad.any():
        where = f" (matrix #{int(np.argmax(bad))} of the batch)" if a.ndim > 2 else ""
        raise InvalidArgumentError(
            f"{op_type}: the matrix is not invertible{where}: its LU factorization has a "
            f"zero or NaN pivot (input of shape {tuple(a.shape)}, {a.dtype})")
    return out


# ---- solve ---------------------------------------------------------------------------
def _solve_forward(xp, a, b, adjoint=False):
    if adjoint:
        a = xp.conj(xp.swapaxes(a, -1, -2))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])   # shapes only: any backend
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    out = xp.linalg.solve(a, b).astype(b.dtype, copy=False)
    return _check_invertible(xp, "MatrixSolve", a, out)


def _solve_vjp(g, ans, a, b, adjoint=False):
    # one function for both inputs: dA needs dB, so the solve is done once
    n_batch = g._value.ndim - ans._value.ndim
    grad_b = solve(a, g, adjoint=not adjoint)
    if adjoint:
        grad_a = -matmul(ans, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, ans, adjoint_b=True)
    return [sum_to(grad_a, a._value.shape, n_batch), sum_to(grad_b, b._value.shape, n_batch)]


MATRIX_SOLVE = Primitive(
    "MatrixSolve", _solve_forward, _solve_vjp, saves="both", domain=(REALS, REALS),
    cases=[(((1, 1), (1, 1)), {}), (((3, 3), (3, 2)), {}), (((3, 3), (3, 2)), {"adjoint": True}),
           (((2, 3, 3), (2, 3, 1)), {}), (((3, 3), (2, 3, 2)), {})],
    label="solve({0}, {1})", doc="X = A^-1 B: dB = A^-T g, dA = -dB X^T")
MATRIX_SOLVE.make_inputs = _square_inputs(_invertible)
MATRIX_SOLVE.host_checks = "a zero or NaN pivot raises on the NumPy backend only"


def solve(matrix, rhs, adjoint=False, name=None):
    """Solves ``matrix @ X = rhs`` for X (batched over leading axes).

    Args:
        matrix: shape ``[..., M, M]``, invertible.
        rhs: shape ``[..., M, K]``, same dtype.
        adjoint: solve ``adjoint(matrix) @ X = rhs`` instead.

    Returns:
        X, shape ``[..., M, K]``.

    >>> ad.linalg.solve(ad.constant([[2., 0.], [0., 4.]]), ad.constant([[2.], [2.]])).numpy()
    array([[1. ],
           [0.5]], dtype=float32)
    """
    a = convert_to_tensor(matrix)
    b = convert_to_tensor(rhs, dtype_hint=a.dtype)
    _check_square(a, "MatrixSolve")
    sb = tuple(b._value.shape)
    if len(sb) < 2 or sb[-2] != a._value.shape[-1]:
        raise InvalidArgumentError(
            f"MatrixSolve: Input matrix and right-hand side must have the same number of rows "
            f"(rhs of rank >= 2): matrix shape {tuple(a._value.shape)} vs rhs shape {sb}")
    return MATRIX_SOLVE(a, b, adjoint=bool(adjoint))


# ---- inverse, determinants --------------------------------------------------------
def _inv_forward(xp, x, adjoint=False, checked=True):
    # checked=False: Cholesky's gradient, where TensorFlow inverts L by a triangular
    # solve, which has no invertibility check
    if adjoint:
        x = xp.conj(xp.swapaxes(x, -1, -2))
    out = xp.linalg.inv(x).astype(x.dtype, copy=False)
    return _check_invertible(xp, "MatrixInverse", x, out) if checked else out


def _inv_grad(g, ans, x, adjoint=False, checked=True):
    # TensorFlow's form: -Y^H g Y^H, or -Y g^H Y when Y = inv(A^H)
    return -matmul(ans, matmul(g, ans, adjoint_a=adjoint, adjoint_b=not adjoint),
                   adjoint_a=not adjoint)


MATRIX_INVERSE = Primitive("MatrixInverse", _inv_forward, (_inv_grad,), saves="ans",
                           domain=REALS, cases=SQUARE_CASES + [(((3, 3),), {"adjoint": True})],
                           label="inv({0})", doc="d inv(A) = -inv(A) dA inv(A): dA = -Y^T g Y^T")
MATRIX_INVERSE.make_inputs = _square_inputs(_invertible)
MATRIX_INVERSE.host_checks = "a zero or NaN pivot raises on the NumPy backend only"


def inv(input, adjoint=False, name=None):  # noqa: A002 - TensorFlow's argument name
    """The inverse of each square matrix in ``input`` (shape ``[..., M, M]``).

    >>> ad.linalg.inv(ad.constant([[2., 0.], [0., 4.]])).numpy()
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    x = convert_to_tensor(input)
    _check_square(x, "MatrixInverse")
    return MATRIX_INVERSE(x, adjoint=bool(adjoint))


MATRIX_DETERMINANT = Primitive(
    "MatrixDeterminant", lambda xp, x: xp.linalg.det(x).astype(x.dtype, copy=False),
    (lambda g, ans, x: _as_matrix_scale(g * ans) * inv(x, adjoint=True),),
    saves="both", domain=REALS, cases=SQUARE_CASES, label="det({0})",
    doc="d det(A) = det(A) tr(A^-1 dA): dA = g det(A) A^-T")
MATRIX_DETERMINANT.make_inputs = _square_inputs(_invertible)


def det(input, name=None):  # noqa: A002
    """The determinant of each square matrix (shape ``[..., M, M]`` -> ``[...]``).

    >>> float(ad.linalg.det(ad.constant([[1., 2.], [3., 4.]])))
    -2.0
    """
    x = convert_to_tensor(input)
    _check_square(x, "MatrixDeterminant")
    return MATRIX_DETERMINANT(x)


def _slogdet_forward(xp, x):
    sign, log_abs = xp.linalg.slogdet(x)
    sign = xp.where(log_abs != log_abs, log_abs, sign)  # a NaN determinant has a NaN sign (TF)
    return sign.astype(x.dtype, copy=False), log_abs.astype(x.dtype, copy=False)


def _slogdet_grad(g, ans, x):
    # the sign is piecewise constant: only the log|det| cotangent flows back. Where
    # only the sign had one, the tape fills in zeros that may lack g's batch axes.
    g_sign, g_log = g
    if g_sign._value.ndim > g_log._value.ndim:
        g_log = broadcast_gradient_to(g_log, g_sign._value.shape)
    return _as_matrix_scale(g_log) * inv(x, adjoint=True)


LOG_MATRIX_DETERMINANT = Primitive(
    "LogMatrixDeterminant", _slogdet_forward, (_slogdet_grad,), n_outputs=2, saves="inputs",
    domain=REALS, cases=SQUARE_CASES, label="slogdet({0})",
    doc="d log|det A| = tr(A^-1 dA): dA = g A^-T; the sign has zero derivative")
LOG_MATRIX_DETERMINANT.make_inputs = _square_inputs(_invertible)


def slogdet(input, name=None):  # noqa: A002
    """Sign and log of the absolute determinant, as a tuple ``(sign, log_abs_determinant)``.

    Stabler than ``log(abs(det(A)))`` for large matrices, whose determinants overflow.

    >>> sign, logabsdet = ad.linalg.slogdet(ad.constant([[1., 2.], [3., 4.]]))
    >>> print(sign.numpy(), logabsdet.numpy())   # det = -2
    -1.0 0.6931472
    """
    x = convert_to_tensor(input)
    _check_square(x, "LogMatrixDeterminant")
    return LOG_MATRIX_DETERMINANT(x)


def logdet(matrix, name=None):
    """log(det(A)) of a Hermitian positive-definite matrix, via its Cholesky factor.

    >>> print(ad.linalg.logdet(ad.constant([[4., 0.], [0., 1.]])).numpy())   # log 4
    1.3862944
    """
    chol = cholesky(matrix)
    return 2.0 * reduce_sum(log(diag_part(chol)), axis=-1)


# ---- cholesky ---------------------------------------------------------------------------
def _cholesky_forward(xp, x):
    # symmetrize first (as JAX does): then the symmetric gradient below is the
    # exact derivative along every direction, not only symmetric ones
    a = (x + xp.conj(xp.swapaxes(x, -1, -2))) / 2
    try:
        return xp.linalg.cholesky(a).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(
            f"Cholesky: Cholesky decomposition was not successful: the input of shape "
            f"{tuple(x.shape)} is not (numerically) symmetric positive definite") from None


def _cholesky_grad(g, ans, x):
    # Murray (2016), as TensorFlow: L^-T Phi(L^T g) L^-1, then symmetrized
    n = ans._value.shape[-1]
    phi = convert_to_tensor(np.tril(np.ones((n, n))) - 0.5 * np.eye(n), dtype=ans.dtype)
    l_inv = MATRIX_INVERSE(ans, checked=False)
    middle = matmul(ans, g, adjoint_a=True) * phi
    grad = matmul(l_inv, matmul(middle, l_inv), adjoint_a=True)
    return 0.5 * (grad + matrix_transpose(grad))


CHOLESKY = Primitive("Cholesky", _cholesky_forward, (_cholesky_grad,), saves="ans",
                     domain=REALS, cases=SQUARE_CASES, label="cholesky({0})",
                     doc="dA = sym(L^-T Phi(L^T g) L^-1), Phi keeps the lower triangle, "
                         "half the diagonal")
CHOLESKY.make_inputs = _square_inputs(_positive_definite)


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular L with ``L @ L^T = input``, for symmetric positive-definite input.

    The input is symmetrized first, ``(A + A^T) / 2`` (TensorFlow reads only its
    lower triangle; for a symmetric input the two agree).

    >>> ad.linalg.cholesky(ad.constant([[4., 2.], [2., 2.]])).numpy()
    array([[2., 0.],
           [1., 1.]], dtype=float32)
    """
    x = convert_to_tensor(input)
    _check_square(x, "Cholesky")
    return CHOLESKY(x)


# ---- diagonals and trace -------------------------------------------------------------
def _diag_forward(xp, d, num_rows, num_cols):
    if d.ndim < 1 or d.shape[-1] != min(num_rows, num_cols):
        raise InvalidArgumentError(f"MatrixDiag: a diagonal of shape {tuple(d.shape)} does not "
                                   f"fit a {num_rows} x {num_cols} matrix")
    out = xp.zeros(d.shape[:-1] + (num_rows, num_cols), dtype=d.dtype)
    k = xp.arange(d.shape[-1])
    out[..., k, k] = d
    return out


MATRIX_DIAG_PART = Primitive(
    "MatrixDiagPart", lambda xp, x: xp.diagonal(x, axis1=-2, axis2=-1).copy(),
    (lambda g, ans, x: MATRIX_DIAG(g, num_rows=x._value.shape[-2], num_cols=x._value.shape[-1]),),
    saves="shapes", domain=REALS, label="diag_part({0})",
    cases=[(((1, 1),), {}), (((3, 3),), {}), (((2, 3),), {}), (((2, 4, 3),), {})],
    doc="the cotangent goes back onto the diagonal, zeros elsewhere")
MATRIX_DIAG = Primitive(
    "MatrixDiag", _diag_forward, (lambda g, ans, d, num_rows, num_cols: diag_part(g),),
    saves="shapes", domain=REALS, label="diag({0})",
    cases=[(((1,),), {"num_rows": 1, "num_cols": 1}), (((3,),), {"num_rows": 3, "num_cols": 3}),
           (((2, 2),), {"num_rows": 2, "num_cols": 3})],
    doc="only the diagonal depends on the input: the cotangent's diagonal comes back")


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The main diagonal of each matrix: shape ``[..., M, N]`` -> ``[..., min(M, N)]``.

    >>> ad.linalg.diag_part(ad.constant([[1., 2.], [3., 4.]])).numpy()
    array([1., 4.], dtype=float32)
    """
    x = convert_to_tensor(input)
    if x._value.ndim < 2:
        raise InvalidArgumentError(f"MatrixDiagPart: input must be at least 2-dim, got shape "
                                   f"{tuple(x._value.shape)}")
    if k != 0:
        raise InvalidArgumentError(f"MatrixDiagPart: only the main diagonal (k=0) is supported, "
                                   f"got k={k!r}")
    return MATRIX_DIAG_PART(x)


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Square (or ``num_rows`` x ``num_cols``) matrices with ``diagonal`` on the main diagonal.

    >>> ad.linalg.diag(ad.constant([1., 2.])).numpy()
    array([[1., 0.],
           [0., 2.]], dtype=float32)
    """
    d = convert_to_tensor(diagonal)
    if d._value.ndim < 1 or k != 0:
        raise InvalidArgumentError(f"MatrixDiag: needs a diagonal of rank >= 1 and k=0, got "
                                   f"shape {tuple(d._value.shape)} and k={k!r}")
    n = d._value.shape[-1]
    rows = n if num_rows == -1 else int(num_rows)
    cols = n if num_cols == -1 else int(num_cols)
    if min(rows, cols) != n:
        raise InvalidArgumentError(f"MatrixDiag: a diagonal of length {n} does not fit a "
                                   f"{rows} x {cols} matrix")
    return MATRIX_DIAG(d, num_rows=rows, num_cols=cols)


def trace(x, name=None):
    """The sum of each matrix's diagonal: shape ``[..., M, N]`` -> ``[...]``.

    Not an op of its own: ``reduce_sum(diag_part(x), axis=-1)``, so its
    gradient (the identity matrix times g) comes from those two ops.

    >>> float(ad.linalg.trace(ad.constant([[1., 2.], [3., 4.]])))
    5.0
    """
    return reduce_sum(diag_part(x), axis=-1)


from .clip import norm  # noqa: E402,F401  (ad.norm: it lives with clip_by_norm)
from .elementwise import log  # noqa: E402
from .matmul import matmul  # noqa: E402
from .reduce import reduce_sum  # noqa: E402
from .shape import broadcast_gradient_to, matrix_transpose, reshape  # noqa: E402
