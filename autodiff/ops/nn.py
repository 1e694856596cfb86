"""Neural-network activations and losses (``ad.nn``).

``Relu`` follows TensorFlow: its VJP is a separate op, ``ReluGrad``, that
passes ``g`` where the output is positive. relu'(0) is 0. ``ReluGrad`` is
linear in ``g``, so its own VJP is ReluGrad again: that gives relu's
second derivative (zero almost everywhere) without a special case.

The other activations write their VJPs with ordinary ops. Several read the
op's *output* rather than its input (elu' = elu + 1 for x < 0, softmax'
from softmax itself): the tape then saves only ``ans``. Softmax-like ops
keep their ``axis`` as a negative number, so a cotangent with extra leading
batch axes is reduced over the same axis. gelu and silu are compositions of
other ops (as in TensorFlow): their gradients come from those ops.
"""

import math

import numpy as np

from .. import validate as _validate
from ..broadcast import unbroadcast
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor
from . import short_rows

__all__ = ["relu", "relu6", "elu", "selu", "leaky_relu", "gelu", "silu", "swish", "softmax",
           "log_softmax", "l2_loss"]

AWAY_FROM_ZERO = ((0.3, 2.0), "signs")
REALS = (-2.0, 2.0)

def _zeros_with_batch(gg, out, x):
    """Zeros shaped like ``x`` plus the batch axes ``gg`` has in front of ``out``'s shape."""
    n_batch = gg._value.ndim - out._value.ndim
    if n_batch <= 0:
        return zeros_like(x)
    return zeros(gg._value.shape[:n_batch] + x._value.shape, dtype=x.dtype)


def _relu_grad_forward(xp, g, ans):
    # g is ans-shaped, possibly with leading batch axes; nothing else may broadcast
    if g.shape[g.ndim - ans.ndim:] != ans.shape or g.ndim < ans.ndim:
        raise InvalidArgumentError(f"ReluGrad: gradients of shape {tuple(g.shape)} do not end "
                                   f"with the shape {tuple(ans.shape)} of the relu output")
    return g * (ans > 0)


# d ReluGrad / d ans is zero almost everywhere: a zero gradient (not None), as
# TensorFlow's second derivatives of relu, relu6 and leaky_relu are zeros.
RELU_GRAD = Primitive("ReluGrad", _relu_grad_forward,
                      (lambda gg, ans_, g, ans: relu_grad(gg, ans),
                       lambda gg, ans_, g, ans: _zeros_with_batch(gg, ans_, ans)),
                      saves="inputs", domain=(AWAY_FROM_ZERO, AWAY_FROM_ZERO),
                      cases=[(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 3), (2, 3)), {})],
                      dtype_args=(0, 1), label="ReluGrad({0}, {1})",
                      doc="linear in g: passes g where the relu output is positive")
# maximum(0, x), not (x, 0): on the tie at -0.0 NumPy keeps the second, and
# TensorFlow's relu(-0.0) is -0.0
def _relu(xp, x):
    # TensorFlow (Eigen): x < 0 ? 0 : x, so relu(-0.0) is -0.0 and NaN stays NaN. NumPy's
    # maximum(0, x) gives exactly that; CuPy's gives +0.0 on the tie, so it is spelled out.
    if x.dtype.kind == "b":
        raise InvalidArgumentError(f"Relu: features must be numeric, not bool "
                                   f"(shape {tuple(x.shape)})")
    if xp is np:
        return xp.maximum(0, x)
    return xp.where(x < 0, xp.zeros((), dtype=x.dtype), x)


RELU = Primitive("Relu", _relu, (lambda g, ans, x: relu_grad(g, ans),),
                 saves="ans", domain=AWAY_FROM_ZERO, label="relu({0})",
                 doc="d/dx relu x = 1 if x > 0 else 0 (0 at x = 0)")


def relu_grad(g, ans):
    """``g`` where ``ans > 0``, else 0 (``g`` may carry leading batch axes)."""
    return RELU_GRAD(g, ans)


def relu(features, name=None):
    """max(x, 0) elementwise. ``ad.nn.relu(ad.constant([-1.0, 2.0]))`` -> ``[0., 2.]``."""
    x = convert_to_tensor(features)
    if x.dtype._np.kind == "b":
        _validate.check_dtype("Relu", x, lambda d: False, "numeric (not bool)")
    return RELU(x)


def _masked_grad(name, scale):
    """``name(g, x) = g * scale(x)``, the VJP op of a piecewise-linear activation.

    Like TensorFlow's Relu6Grad and LeakyReluGrad it is an op of its own: linear
    in ``g`` and flat in ``x``, so its VJP is itself for ``g`` and a zero gradient
    (not None) for ``x``; second derivatives are then zeros, as in TensorFlow.
    """
    prim = Primitive(name, lambda xp, g, x, **params: (g * scale(xp, x, **params)).astype(
                         g.dtype, copy=False),
                     # g may be smaller than x (broadcast against it): sum back to g's shape
                     (lambda gg, ans, g, x, **params: unbroadcast(prim(gg, x, **params), g, ans),
                      lambda gg, ans, g, x, **params: _zeros_with_batch(gg, ans, x)),
                     domain=(REALS, AWAY_FROM_ZERO), dtype_args=(0, 1), label=name + "({0}, {1})",
                     cases=[(((3,), (3,)), {}), (((2, 3), (2, 3)), {})],
                     doc="linear in g (the VJP is the op again), zero gradient in x")
    return prim


RELU6_GRAD = _masked_grad("Relu6Grad", lambda xp, x: (x > 0) & (x < 6))
LEAKY_RELU_GRAD = _masked_grad("LeakyReluGrad",
                               lambda xp, x, alpha=0.2: xp.where(x > 0, 1.0, alpha).astype(x.dtype))
LEAKY_RELU_GRAD.cases = [(((3,), (3,)), {"alpha": 0.2}), (((2, 3), (2, 3)), {"alpha": 0.01})]
RELU6 = Primitive("Relu6", lambda xp, x: xp.clip(x, 0, 6).astype(x.dtype, copy=False),
                  (lambda g, ans, x: RELU6_GRAD(g, x),),
                  domain=((0.3, 8.0), "signs"), label="relu6({0})",
                  doc="d/dx min(max(x, 0), 6) = 1 for 0 < x < 6, else 0")


def relu6(features, name=None):
    """min(max(x, 0), 6) elementwise; the gradient is 0 at 0 and at 6 (TensorFlow).

    >>> ad.nn.relu6(ad.constant([-1., 3., 9.])).numpy()
    array([0., 3., 6.], dtype=float32)
    """
    return RELU6(convert_to_tensor(features))


# ---- exponential linear units: the VJP reads the output ------------------------------
SELU_SCALE = 1.0507009873554805
SELU_ALPHA = 1.6732632423543772


def _elu_forward(xp, x):
    # expm1 only of the non-positive part: the unused branch must not overflow
    # minimum(0, x) keeps -0.0 (so elu(-0.0) = -0.0, as TensorFlow)
    return xp.where(x > 0, x, xp.expm1(xp.minimum(0, x))).astype(x.dtype, copy=False)


# The derivative is computed on ans's shape and only then multiplied into g,
# so a stack of Jacobian cotangents costs one multiply, not a select over all.
# A select (not minimum(ans, 0) + 1), as TensorFlow's EluGrad: 1 at x = 0 and at
# NaN, and the second derivative at 0 is 0 (minimum would send its tie to ans).
ELU = Primitive("Elu", _elu_forward,
                (lambda g, ans, x: g * where(ans < 0, ans + 1.0, ones_like(ans)),),
                saves="ans", domain=AWAY_FROM_ZERO, label="elu({0})",
                doc="d/dx elu x = 1 for x > 0, e^x = elu(x) + 1 for x < 0")


def _selu_forward(xp, x):
    # TensorFlow's kernel, select for select: exp(x) - 1 (not expm1), so a tiny negative x
    # gives 0 in float32 there as here, and the gradient (which reads ans) takes the same
    # branch; exp only of the non-positive part, so the unused branch cannot overflow
    negative = (SELU_SCALE * SELU_ALPHA) * (xp.exp(xp.minimum(0, x)) - 1)
    return xp.where(x < 0, negative, SELU_SCALE * x).astype(x.dtype, copy=False)


SELU = Primitive("Selu", _selu_forward,
                 (lambda g, ans, x: g * where(ans < 0, ans + SELU_SCALE * SELU_ALPHA,
                                              ones_like(ans) * SELU_SCALE),),
                 saves="ans", domain=AWAY_FROM_ZERO, label="selu({0})",
                 doc="d/dx selu x = scale for x > 0, selu(x) + scale alpha for x < 0")


def elu(features, name=None):
    """x for x > 0, else e^x - 1.

    >>> ad.nn.elu(ad.constant([-1., 2.])).numpy()
    array([-0.63212055,  2.        ], dtype=float32)
    """
    return ELU(convert_to_tensor(features))


def selu(features, name=None):
    """Scaled elu: ``scale * (x if x > 0 else alpha * (e^x - 1))`` with TensorFlow's constants.

    >>> ad.nn.selu(ad.constant([1.])).numpy()
    array([1.050701], dtype=float32)
    """
    return SELU(convert_to_tensor(features))


LEAKY_RELU = Primitive(
    "LeakyRelu", lambda xp, x, alpha=0.2: xp.where(x > 0, x, x * alpha).astype(x.dtype, copy=False),
    (lambda g, ans, x, alpha=0.2: LEAKY_RELU_GRAD(g, x, alpha=alpha),),
    domain=AWAY_FROM_ZERO, label="leaky_relu({0})",
    cases=[(((),), {"alpha": 0.2}), (((4,),), {"alpha": 0.2}), (((2, 3),), {"alpha": 0.01})],
    doc="d/dx leaky_relu x = 1 for x > 0, alpha for x <= 0 (alpha at 0, as TensorFlow)")


def leaky_relu(features, alpha=0.2, name=None):
    """x for x > 0, else ``alpha * x``. At 0 the gradient is ``alpha`` (TensorFlow).

    Integer features are cast to float32 first, as TensorFlow casts them.

    >>> ad.nn.leaky_relu(ad.constant([-1., 2.])).numpy()
    array([-0.2,  2. ], dtype=float32)
    """
    x = convert_to_tensor(features)
    if x.dtype.is_integer:
        x = cast(x, "float32")
    return LEAKY_RELU(x, alpha=float(alpha))


# ---- compositions ------------------------------------------------------------------------
def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit: ``x * P(X <= x)`` for a standard normal X.

    Args:
        features: a float tensor.
        approximate: use the tanh approximation
            ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` instead of the
            exact ``0.5 x (1 + erf(x / sqrt 2))``.

    Returns:
        A tensor like ``features``. Not an op of its own: the gradient comes
        from erf (or tanh), multiply and add.

    >>> ad.nn.gelu(ad.constant([1.])).numpy()
    array([0.8413447], dtype=float32)
    """
    x = convert_to_tensor(features)
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + tanh(inner))
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def silu(features, beta=1.0, name=None):
    """``x * sigmoid(beta * x)`` (a composition: its gradient comes from its parts).

    >>> ad.nn.silu(ad.constant([0.])).numpy()
    array([0.], dtype=float32)
    """
    x = convert_to_tensor(features)
    return x * sigmoid(x if beta == 1.0 else beta * x)


swish = silu


# ---- softmax: normalized over one axis ----------------------------------------------
def _softmax_forward(xp, x, axis=-1):
    if x.size == 0:
        return x  # nothing to normalize (the max below would have no identity)
    if x.ndim == 0:   # NumPy gives scalars here, which take no out=
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return (e / xp.sum(e, axis=axis, keepdims=True)).astype(x.dtype, copy=False)
    short = short_rows.last_axis_only(x, axis)   # many short rows: short_rows.py's ways
    top = short_rows.row_max(x, keepdims=True) if short else None
    e = xp.subtract(x, xp.max(x, axis=axis, keepdims=True) if top is None else top)
    xp.exp(e, out=e)   # shifted: exp never overflows
    total = short_rows.row_sum(e, keepdims=True) if short else None
    if total is None:
        total = xp.sum(e, axis=axis, keepdims=True)
    return xp.true_divide(e, total, out=e).astype(x.dtype, copy=False)


def _log_softmax_forward(xp, x, axis=-1):
    if x.size == 0:
        return x
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return (shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))).astype(
        x.dtype, copy=False)


SOFTMAX_CASES = [(((4,),), {"axis": -1}), (((2, 3),), {"axis": -1}), (((2, 3),), {"axis": -2}),
                 (((2, 3, 2),), {"axis": -2})]
SOFTMAX = Primitive(
    "Softmax", _softmax_forward,
    (lambda g, ans, x, axis=-1: ans * (g - reduce_sum(g * ans, axis=axis, keepdims=True)),),
    saves="ans", domain=REALS, cases=SOFTMAX_CASES, label="softmax({0})",
    doc="d softmax = s * (g - sum(g * s)) along the axis, with s = softmax(x)")
LOG_SOFTMAX = Primitive(
    "LogSoftmax", _log_softmax_forward,
    (lambda g, ans, x, axis=-1: g - exp(ans) * reduce_sum(g, axis=axis, keepdims=True),),
    saves="ans", domain=REALS, cases=SOFTMAX_CASES, label="log_softmax({0})",
    doc="d log_softmax = g - softmax(x) * sum(g) along the axis")


def _negative_axis(x, axis, op_type):
    ndim = x._value.ndim
    if x.dtype._np.kind != "f":
        _validate.check_dtype(op_type, x, lambda d: False, "floating-point")
    axis = -1 if axis is None else _validate.as_int(op_type, "axis", axis)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"{op_type}: axis {axis} is out of range for logits of shape "
                                   f"{tuple(x._value.shape)} (logits need rank >= 1)")
    return axis - ndim if axis >= 0 else axis


def softmax(logits, axis=None, name=None):
    """``exp(x) / reduce_sum(exp(x), axis)``, computed without overflow.

    Args:
        logits: a float tensor of rank >= 1.
        axis: the axis to normalize over (default -1, the last).

    >>> ad.nn.softmax(ad.constant([0., 0.])).numpy()
    array([0.5, 0.5], dtype=float32)
    """
    x = convert_to_tensor(logits)
    return SOFTMAX(x, axis=_negative_axis(x, axis, "Softmax"))


def log_softmax(logits, axis=None, name=None):
    """``x - log(reduce_sum(exp(x), axis))``: the log of softmax, computed stably.

    >>> ad.nn.log_softmax(ad.constant([0., 0.])).numpy()
    array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = convert_to_tensor(logits)
    return LOG_SOFTMAX(x, axis=_negative_axis(x, axis, "LogSoftmax"))


# ---- losses ------------------------------------------------------------------------------
def _l2_loss_grad(g, ans, x):
    # ans is a scalar, so g is just its batch axes: give it x's rank to scale x
    return reshape(g, tuple(g._value.shape) + (1,) * x._value.ndim) * x


L2_LOSS = Primitive("L2Loss", lambda xp, x: xp.asarray(xp.sum(x * x, dtype=x.dtype) / 2),
                    (_l2_loss_grad,), domain=REALS, label="l2_loss({0})",
                    cases=[(((),), {}), (((4,),), {}), (((2, 3),), {})],
                    doc="d/dx sum(x^2) / 2 = x")


def l2_loss(t, name=None):
    """Half the sum of squares, ``sum(t ** 2) / 2`` (no square root).

    >>> float(ad.nn.l2_loss(ad.constant([1., 2.])))
    2.5
    """
    return L2_LOSS(convert_to_tensor(t))


from .elementwise import cast, erf, exp, sigmoid, tanh  # noqa: E402
from .predicates import where  # noqa: E402
from .creation import ones_like, zeros, zeros_like  # noqa: E402
from .reduce import reduce_sum  # noqa: E402
from .shape import reshape  # noqa: E402
