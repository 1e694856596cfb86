"""More of ``tf.math``: complex parts, squared differences, sums of many tensors,
spread statistics and reversal, each with TensorFlow's gradient.

Primitives where TensorFlow has an op with a gradient of its own (``Real``,
``Imag``, ``SquaredDifference``, ``AddN``, ``EuclideanNorm``, ``ReverseV2``);
compositions where TensorFlow composes too (``reduce_variance`` is a mean of
squared deviations, ``reduce_std`` its square root), so their gradients of
every order come from the ops they are built of, as in TensorFlow.
"""

import numpy as _np

from ..broadcast import unbroadcast
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import Tensor, convert_to_tensor

# ad.math's names (as tf.math's); ``reverse`` and ``add_n`` are also top level, as in tf
__all__ = ["real", "imag", "conj", "squared_difference", "add_n", "reduce_variance", "reduce_std",
           "reduce_euclidean_norm"]

REALS = (-2.0, 2.0)
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


# ---- complex parts ------------------------------------------------------------
def _as_complex(g, x):
    """``g`` (real) as x's complex dtype: TensorFlow's ``complex(g, 0)``."""
    return cast(g, x.dtype)


REAL = Primitive("Real", lambda xp, x: xp.real(x), (lambda g, ans, x: _as_complex(g, x),),
                 saves="shapes", domain=REALS, cases=[(((3,),), {})], label="Real({0})",
                 doc="d Re(z) = Re(dz): the gradient is complex(g, 0)")
def _imag_grad(g, ans, x):
    if not x.dtype.is_complex:  # the op table's real inputs: Im(x) = 0 whatever x is
        return zeros_like(g)
    return _as_complex(g, x) * 1j


IMAG = Primitive("Imag", lambda xp, x: xp.imag(x), (_imag_grad,),
                 saves="shapes", domain=REALS, cases=[(((3,),), {})], label="Imag({0})",
                 doc="d Im(z) = Im(dz): the gradient is complex(0, g)")


def real(input, name=None):  # noqa: A002 - TensorFlow's name
    """The real part of a complex tensor; a real tensor is returned unchanged.

    >>> ad.math.real(ad.constant([1 + 2j])).numpy()       # complex128 -> float64
    array([1.])
    """
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        if x.dtype._np.kind == "b":
            raise TypeError(f"Real: input must be numeric, got {x.dtype.name} of shape "
                            f"{tuple(x._value.shape)}")
        return x
    return REAL(x)


def imag(input, name=None):  # noqa: A002
    """The imaginary part of a complex tensor; zeros for a real tensor (as TensorFlow).

    >>> ad.math.imag(ad.constant([1 + 2j])).numpy()
    array([2.])
    """
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        return zeros_like(x)
    return IMAG(x)


# ---- squared difference and sums of many ---------------------------------------------
def _squared_difference_grad(g, x, y):
    return (2.0 * g) * (x - y)  # TensorFlow's scalar_mul(2, grad) * (x - y), negated for y


SQUARED_DIFFERENCE = Primitive(
    "SquaredDifference", lambda xp, x, y: (x - y) * xp.conj(x - y),
    (lambda g, ans, x, y: unbroadcast(_squared_difference_grad(g, x, y), x, ans),
     lambda g, ans, x, y: unbroadcast(-_squared_difference_grad(g, x, y), y, ans)),
    domain=REALS, label="SquaredDifference({0}, {1})",
    cases=[(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((), (2, 3)), {})],
    doc="d (x - y)^2 = 2 (x - y) (dx - dy)")


def squared_difference(x, y, name=None):
    """``(x - y) * conj(x - y)`` elementwise, with broadcasting.

    >>> ad.math.squared_difference(ad.constant([1.0, 4.0]), 2.0).numpy()
    array([1., 4.], dtype=float32)
    """
    return binary(SQUARED_DIFFERENCE, x, y)


def _add_n_forward(xp, *xs):
    shape, dtype = xs[0].shape, xs[0].dtype
    for i, x in enumerate(xs[1:], 1):
        if x.shape != shape:  # AddN does not broadcast
            raise InvalidArgumentError(
                f"AddN: all inputs must have the same shape; input #0 has shape {tuple(shape)}, "
                f"input #{i} has shape {tuple(x.shape)}")
    total = xs[0].copy()
    for x in xs[1:]:
        total = total + x
    return total.astype(dtype, copy=False)


ADD_N = Primitive("AddN", _add_n_forward, lambda g, ans, *xs: [g] * len(xs), saves="shapes",
                  domain=REALS, label="AddN({0}, ...)",
                  cases=[(((3,), (3,), (3,)), {}), (((2, 3), (2, 3)), {})],
                  doc="d(x1 + ... + xn) = dx1 + ... + dxn: every input gets g")


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one shape and dtype (no broadcasting).

    >>> ad.add_n([ad.constant([1.0, 2.0]), ad.constant([3.0, 4.0])]).numpy()
    array([4., 6.], dtype=float32)
    """
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(f"AddN: inputs must be a non-empty list of tensors, got {inputs!r}")
    xs = [convert_to_tensor(x) for x in inputs]
    if len(xs) == 1:   # as TensorFlow: the input itself, a new tensor only when named
        return xs[0] if name is None else identity(xs[0])
    return ADD_N(*xs)


# ---- spread statistics ---------------------------------------------------------------
def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance over ``axis``: the mean of the squared deviations from the mean.

    >>> float(ad.math.reduce_variance(ad.constant([1.0, 2.0, 3.0, 4.0])))
    1.25
    """
    x = convert_to_tensor(input_tensor)
    if not x.dtype.is_floating and not x.dtype.is_complex:
        raise TypeError(f"reduce_variance: input must be either real or complex, got "
                        f"{x.dtype.name} of shape {tuple(x._value.shape)}")
    diff = x - reduce_mean(x, axis=axis, keepdims=True)
    squared = real(diff * conj(diff)) if x.dtype.is_complex else square(diff)
    return reduce_mean(squared, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over ``axis``: ``sqrt(reduce_variance(...))``.

    >>> print(ad.math.reduce_std(ad.constant([1.0, 2.0, 3.0, 4.0])).numpy())
    1.118034
    """
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def _euclidean_norm_forward(xp, x, axis, keepdims=False):
    squares = x * xp.conj(x)
    return xp.sqrt(xp.sum(squares, axis=axis, keepdims=keepdims)).astype(x.dtype, copy=False)


def _euclidean_norm_grad(g, ans, x, axis, keepdims=False):
    # TensorFlow: x / (norm / g), norm and g with the reduced axes kept
    return x / (_keep_dims(ans, x, ans, axis) / _keep_dims(g, x, ans, axis))


EUCLIDEAN_NORM = Primitive(
    "EuclideanNorm", _euclidean_norm_forward, (_euclidean_norm_grad,), saves="both",
    domain=((0.3, 2.0), "signs"), label="EuclideanNorm({0})",
    cases=[(((4,),), {"axis": (0,)}), (((2, 3),), {"axis": (1,)}),
           (((2, 3),), {"axis": (0, 1), "keepdims": True})],
    doc="d |x| = x . dx / |x|")


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """``sqrt(sum(x * conj(x)))`` over ``axis`` (all axes by default).

    >>> float(ad.math.reduce_euclidean_norm(ad.constant([3.0, 4.0])))
    5.0
    """
    x = convert_to_tensor(input_tensor)
    return EUCLIDEAN_NORM(x, axis=normalize_axes(axis, x._value.ndim, "EuclideanNorm"),
                          keepdims=bool(keepdims))


# ---- reversal -----------------------------------------------------------------
def _reverse_grad(g, ans, x, axis):
    # axes counted from the end, so g may carry leading batch axes
    ndim = x._value.ndim
    return REVERSE(g, axis=tuple(a - ndim if a >= 0 else a for a in axis))


REVERSE = Primitive("ReverseV2", lambda xp, x, axis: xp.flip(x, axis=axis) if axis else x,
                    (_reverse_grad,), saves="shapes", domain=REALS, label="ReverseV2({0})",
                    cases=[(((4,),), {"axis": (0,)}), (((2, 3),), {"axis": (0, 1)}),
                           (((2, 3),), {"axis": (1,)})],
                    doc="linear: the gradient is g reversed along the same axes")


def reverse(tensor, axis, name=None):
    """``tensor`` with the entries along each axis in ``axis`` (a list) in reverse order.

    >>> ad.reverse(ad.constant([[1, 2, 3]]), axis=[1]).numpy()
    array([[3, 2, 1]], dtype=int32)
    """
    x = convert_to_tensor(tensor)
    ndim = x._value.ndim
    axes = [axis] if isinstance(axis, (int, _np.integer)) else list(axis)
    for a in axes:
        if not isinstance(a, (int, _np.integer)) or not -ndim <= a < ndim:
            raise InvalidArgumentError(f"ReverseV2: axis {a!r} is out of range [{-ndim}, {ndim}) "
                                       f"for a tensor of shape {tuple(x._value.shape)}")
    normalized = [int(a) % ndim for a in axes]
    if len(set(normalized)) != len(normalized):
        raise InvalidArgumentError(f"ReverseV2: axis {axes} names an axis twice (tensor of "
                                   f"shape {tuple(x._value.shape)})")
    return REVERSE(x, axis=tuple(sorted(normalized)))


from .creation import zeros_like  # noqa: E402
from .elementwise import cast, sqrt, square  # noqa: E402
from .matmul import conj  # noqa: E402,F401  (ad.math.conj, as tf.math.conj)
from .reduce import _keep_dims, normalize_axes, reduce_mean  # noqa: E402
from .shape import identity  # noqa: E402
from .operands import binary  # noqa: E402
