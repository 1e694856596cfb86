"""MatMul: the matrix product on the last two axes, and its batch-ready VJPs.

For ``C = A @ B``: ``dA = g @ B^T`` and ``dB = A^T @ g``. Both are matmuls on
the last two axes, so a cotangent with leading batch axes (a stack of
Jacobian rows) needs no change: NumPy's matmul broadcasts over them and the
whole stack becomes one large BLAS call. ``sum_to`` then folds any axes that
broadcasting added back onto a smaller operand.
"""

import math as _math

from ..broadcast import sum_to
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["matmul", "conj"]

MATMUL_CASES = [(((2, 3), (3, 4)), {}), (((1, 1), (1, 1)), {}), (((2, 2, 3), (3, 2)), {}),
                (((2, 3), (2, 3, 4)), {}), (((3, 2, 0), (0, 2)), {}), (((0, 2, 3), (3, 2)), {}),
                (((3, 2), (3, 4)), {"transpose_a": True}),
                (((2, 3), (4, 3)), {"transpose_b": True}),
                (((3, 2), (4, 3)), {"transpose_a": True, "transpose_b": True})]


def _t(x):
    """Swap the last two axes (a Tensor op, so it can be recorded)."""
    n = x._value.ndim
    return transpose(x, list(range(n - 2)) + [n - 1, n - 2])


def _matmul_forward(xp, a, b, transpose_a=False, transpose_b=False):
    if transpose_a:
        a = xp.swapaxes(a, -1, -2)
    if transpose_b:
        b = xp.swapaxes(b, -1, -2)
    if b.ndim == 2 and a.ndim > 2:
        # A stack of matrices times one matrix is one large GEMM on the stacked
        # rows (NumPy's broadcasting matmul would call BLAS once per matrix).
        # (rows counted, not -1: with a zero-size axis -1 is ambiguous and NumPy refuses it)
        rows = _math.prod(a.shape[:-1])
        return xp.matmul(a.reshape(rows, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
    return xp.matmul(a, b)


def _grad_a(g, ans, a, b, transpose_a=False, transpose_b=False):
    n_batch = g._value.ndim - ans._value.ndim
    if transpose_a:   # A was used as A^T: dA = (g @ op(B)^T)^T = op(B) @ g^T
        da = matmul(b, g, transpose_a=transpose_b, transpose_b=True)
    else:
        da = matmul(g, b, transpose_b=not transpose_b)
    return sum_to(da, a._value.shape, n_batch)


def _grad_b(g, ans, a, b, transpose_a=False, transpose_b=False):
    n_batch = g._value.ndim - ans._value.ndim
    if transpose_b:   # dB = (op(A)^T @ g)^T = g^T @ op(A)
        db = matmul(g, a, transpose_a=True, transpose_b=transpose_a)
    else:
        db = matmul(a, g, transpose_a=not transpose_a)
    return sum_to(db, b._value.shape, n_batch)


MATMUL = Primitive("MatMul", _matmul_forward, (_grad_a, _grad_b), domain=(-2.0, 2.0),
                   label="{0} @ {1}", cases=MATMUL_CASES,
                   doc="d(A B) = dA B + A dB, so dA = g B^T and dB = A^T g")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """Matrix product over the last two axes (leading axes broadcast).

    Args:
        a, b: tensors of rank >= 2 and the same dtype.
        transpose_a, transpose_b: use the transpose of ``a`` / ``b``.
        adjoint_a, adjoint_b: conjugate transposes (the same for real dtypes).

    >>> ad.matmul(ad.ones([2, 3]), ad.ones([3, 4])).shape
    TensorShape([2, 4])
    """
    a = convert_to_tensor(a)
    b = convert_to_tensor(b, dtype_hint=a.dtype)
    if adjoint_a:
        a, transpose_a = conj(a), not transpose_a
    if adjoint_b:
        b, transpose_b = conj(b), not transpose_b
    sa, sb = a._value.shape, b._value.shape
    if len(sa) < 2 or len(sb) < 2:
        raise InvalidArgumentError(
            f"MatMul: In[0] and In[1] must have rank >= 2, got shapes {sa} and {sb} "
            f"(use ad.tensordot or reshape a vector to a matrix)")
    k_a = sa[-2] if transpose_a else sa[-1]
    k_b = sb[-1] if transpose_b else sb[-2]
    if k_a != k_b:
        raise InvalidArgumentError(
            f"MatMul: Matrix size-incompatible: In[0]: {list(sa)}, In[1]: {list(sb)} "
            f"(transpose_a={transpose_a}, transpose_b={transpose_b})")
    return MATMUL(a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


def conj(x, name=None):
    """Complex conjugate (the identity for real tensors)."""
    x = convert_to_tensor(x)
    if not x.dtype.is_complex:
        return x
    return CONJ(x)


CONJ = Primitive("Conj", lambda xp, x: xp.conj(x), (lambda g, ans, x: conj(g),), saves="shapes",
                 domain=(-2.0, 2.0), doc="d conj(x) = conj(dx)")

from .shape import transpose  # noqa: E402
