"""Elementwise math: one Primitive per op type, forward and VJP side by side.

Each block reads: TensorFlow's op type, the forward on backend arrays (``xp``
is NumPy or CuPy), one VJP rule per input, and what the tape must save.
Rules are written with this library's own ops (``g * cos(x)``), so an
outer tape can differentiate them again. Binary rules end in
``unbroadcast`` because NumPy broadcasting may have stretched an input.
"""

import math as _math

import numpy as _np

from .. import backend, dtypes
from .. import validate as _validate
from ..broadcast import unbroadcast
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "negative", "pow", "maximum", "minimum", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "softplus", "erf", "abs", "sign", "round", "floor", "ceil", "cast"]

REALS = (-2.0, 2.0)
POSITIVE = (0.2, 2.0)
AWAY_FROM_ZERO = ((0.3, 2.0), "signs")   # sampled magnitudes with random signs

BINARY_CASES = [(((), ()), {}), (((3,), (3,)), {}), (((2, 3), (2, 3)), {}),
                (((2, 3), (3,)), {}), (((2, 1), (1, 3)), {}), (((), (2, 3)), {})]


def _unary(name, forward, rule, *, saves="inputs", domain=REALS, label=None, doc=None):
    return Primitive(name, forward, (rule,) if callable(rule) else rule, saves=saves,
                     domain=domain, label=label or (name + "({0})"), doc=doc)


def _binary(name, forward, rules, *, saves="inputs", domain=REALS, label=None, doc=None):
    return Primitive(name, forward, rules, saves=saves, domain=domain, cases=BINARY_CASES,
                     label=label or (name + "({0}, {1})"), doc=doc)


# ---- arithmetic -----------------------------------------------------------
ADD = _binary("AddV2", lambda xp, x, y: x + y,
              (lambda g, ans, x, y: unbroadcast(g, x, ans),
               lambda g, ans, x, y: unbroadcast(g, y, ans)),
              saves="shapes", label="{0} + {1}", doc="d(x + y) = dx + dy")
SUB = _binary("Sub", lambda xp, x, y: x - y,
              (lambda g, ans, x, y: unbroadcast(g, x, ans),
               lambda g, ans, x, y: unbroadcast(-g, y, ans)),
              saves="shapes", label="{0} - {1}", doc="d(x - y) = dx - dy")
MUL = _binary("Mul", lambda xp, x, y: x * y,
              (lambda g, ans, x, y: unbroadcast(g * y, x, ans),
               lambda g, ans, x, y: unbroadcast(g * x, y, ans)),
              label="{0} * {1}", doc="d(x y) = y dx + x dy")
# TensorFlow's formulas, operation for operation (g * ((-x / y) / y), not -g x / y^2):
# they decide where second derivatives meet 0 * inf, e.g. at x = 0, y = -inf
DIV = _binary("RealDiv", lambda xp, x, y: x / y,
              (lambda g, ans, x, y: unbroadcast(g / y, x, ans),
               lambda g, ans, x, y: unbroadcast(g * ((-x / y) / y), y, ans)),
              domain=(REALS, AWAY_FROM_ZERO), label="{0} / {1}",
              doc="d(x / y) = dx / y - x dy / y^2")


def _pow_grad_y(g, ans, x, y):
    # d/dy x^y = x^y log x, taken as 0 where x <= 0 (TensorFlow's convention;
    # for complex x, only where x == 0)
    return unbroadcast(g * ans * safe_log_base(x), y, ans)


def safe_log_base(x):
    """log x where Pow's d/dy uses it, 0 elsewhere (x <= 0; for complex x, x == 0)."""
    usable = not_equal(x, zeros_like(x)) if x.dtype.is_complex else x > 0
    return where(usable, log(where(usable, x, ones_like(x))), zeros_like(x))


def _pow_grad_x(g, ans, x, y):
    # TensorFlow's formula, op for op: (g * y) * x ** (y - 1), even for x ** 2.
    # Writing it as g * (2 * x) would look the same at first order but lose the
    # recorded Pow: the third derivative of x ** 2 would be None, not 0 (and
    # NaN at x = 0, where TensorFlow meets 0 * 0 ** -1).
    return unbroadcast(g * y * pow(x, y - 1), x, ans)


# Exponents whose power NumPy's own ``**`` also computes by a cheaper ufunc,
# with the same float result: x ** 1 = +x, x ** 2 = x * x, x ** -1 = 1 / x.
_CHEAP_POWERS = {1.0: _np.positive, 2.0: _np.square, -1.0: _np.reciprocal}


def _pow_forward(xp, x, y):
    if x.dtype.kind in "iu" and y.dtype.kind in "iu" and xp.any(y < 0).item():
        # TensorFlow's CPU kernel refuses, NumPy raises; CuPy would answer (a device read)
        raise InvalidArgumentError(f"Pow: integers to negative integer powers are not allowed "
                                   f"(y, {y.dtype} of shape {tuple(y.shape)}, has a negative "
                                   f"element)")
    if isinstance(y, (_np.ndarray, _np.generic)) and y.ndim == 0 and x.dtype.kind == "f" \
            and y.dtype == x.dtype:   # a host scalar: reading it costs no device transfer
        c = float(y)
        if c == 0.0:  # C's pow: 1 even for NaN and inf
            return xp.ones_like(x)
        cheap = _CHEAP_POWERS.get(c)
        if cheap is not None:
            return cheap(x) if xp is _np else getattr(xp, cheap.__name__)(x)
        # (``_math.fabs``: this module's ``abs`` is the op; NaN and inf fail the first test)
        if _math.fabs(c) < 2 ** 24 and c == int(c):
            # An integer power of a negative base is |x| ** c with x's sign when c is
            # odd (C's pow does the same); NumPy's power is ~30x slower on negative bases.
            magnitude = xp.power(xp.abs(x), y)
            return xp.copysign(magnitude, x) if int(c) % 2 else magnitude
        if c != 0.5:   # the fix below changes nothing for another exponent: skip its passes
            return xp.power(x, y)
    # NumPy computes x ** 0.5 as sqrt(x): NaN at -inf and -0.0 at -0.0, where C's
    # pow (TensorFlow's kernel) gives +inf and +0.0; |x| is C's answer at both.
    out = xp.power(x, y)
    if out.dtype.kind == "f":
        out = xp.where((y == 0.5) & ((x == 0) | (x == -xp.inf)), xp.abs(x), out)
    return out


POW = _binary("Pow", _pow_forward,
              (_pow_grad_x, _pow_grad_y),
              saves="both", domain=(POSITIVE, REALS), label="{0} ** {1}",
              doc="d(x^y) = y x^(y-1) dx + x^y log(x) dy")


def _max_min_grads(pick_x):
    """Maximum/Minimum send g to x where x wins or ties (TensorFlow's rule)."""
    return (lambda g, ans, x, y: unbroadcast(where(pick_x(x, y), g, zeros_like(g)), x, ans),
            lambda g, ans, x, y: unbroadcast(where(pick_x(x, y), zeros_like(g), g), y, ans))


MAXIMUM = _binary("Maximum", lambda xp, x, y: xp.maximum(x, y),
                  _max_min_grads(lambda x, y: x >= y), doc="g flows to the larger input; ties to x")
MINIMUM = _binary("Minimum", lambda xp, x, y: xp.minimum(x, y),
                  _max_min_grads(lambda x, y: x <= y), doc="g flows to the smaller input; ties to x")
def _integer_divisor_checked(op, forward):
    """``forward`` that refuses an integer divisor with a zero (NumPy would answer 0)."""
    def checked(xp, x, y):
        if x.dtype.kind in "iu" and y.dtype.kind in "iu" and xp.sum(y == 0).item() > 0:
            raise InvalidArgumentError(
                f"{op}: integer division by zero (y, {y.dtype} of shape {tuple(y.shape)}, "
                f"has a zero element; x is {x.dtype} of shape {tuple(x.shape)})")
        return forward(xp, x, y)
    return checked


def _floor_div(xp, x, y):
    # TensorFlow's float kernel is floor(x / y): -5 // inf is -0.0 and inf // 1 is inf,
    # where NumPy's floor_divide gives -1.0 and NaN (CUDA's agrees with TensorFlow)
    return xp.floor(x / y) if x.dtype.kind == "f" else xp.floor_divide(x, y)


FLOORDIV = _binary("FloorDiv", _integer_divisor_checked("FloorDiv", _floor_div),
                   NotDifferentiable,
                   domain=(REALS, AWAY_FROM_ZERO), label="{0} // {1}",
                   doc="not differentiable (gradient None), as in TensorFlow")
def _floor_mod(xp, x, y):
    if x.dtype.kind not in "fc":
        return xp.mod(x, y)
    # TensorFlow's kernel: fmod, then + y where the signs differ; a zero keeps x's
    # sign (floormod(-1., 1.) is -0.0), where NumPy's mod gives it y's
    r = xp.fmod(x, y)
    return xp.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


FLOORMOD = _binary("FloorMod", _integer_divisor_checked("FloorMod", _floor_mod),
                   (lambda g, ans, x, y: unbroadcast(g, x, ans),
                    lambda g, ans, x, y: unbroadcast(-g * floor(x / y), y, ans)),
                   domain=(REALS, AWAY_FROM_ZERO), label="{0} % {1}",
                   doc="d(x mod y) = dx - floor(x / y) dy")

NEG = _unary("Neg", lambda xp, x: -x, lambda g, ans, x: -g, saves="shapes", label="-{0}",
             doc="d(-x) = -dx")
SQUARE = _unary("Square", lambda xp, x: x * x, lambda g, ans, x: g * (2 * x),
                doc="d/dx x^2 = 2x")
# SqrtGrad, RsqrtGrad, ReciprocalGrad are kernels of their own (grad_kernels.py):
# like TensorFlow's, they give 0 where g is 0, even where the derivative is inf.
SQRT = _unary("Sqrt", lambda xp, x: xp.sqrt(x), lambda g, ans, x: sqrt_grad(ans, g),
              saves="ans", domain=POSITIVE, doc="d/dx sqrt x = 1 / (2 sqrt x)")
RSQRT = _unary("Rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda g, ans, x: rsqrt_grad(ans, g),
               saves="ans", domain=POSITIVE, doc="d/dx x^(-1/2) = -x^(-3/2) / 2")
RECIPROCAL = _unary("Reciprocal", lambda xp, x: 1 / x, lambda g, ans, x: reciprocal_grad(ans, g),
                    saves="ans", domain=AWAY_FROM_ZERO, doc="d/dx 1/x = -1/x^2")
EXP = _unary("Exp", lambda xp, x: xp.exp(x), lambda g, ans, x: g * ans, saves="ans",
             doc="d/dx e^x = e^x")
EXPM1 = _unary("Expm1", lambda xp, x: xp.expm1(x), lambda g, ans, x: g * (ans + 1), saves="ans",
               doc="d/dx (e^x - 1) = e^x")
# g * reciprocal(x), as TensorFlow: Reciprocal's gradient (ReciprocalGrad, 0 where its
# cotangent is 0) then decides the second derivative, e.g. of log(relu6(x)) at 0
LOG = _unary("Log", lambda xp, x: xp.log(x), lambda g, ans, x: g * reciprocal(x), domain=POSITIVE,
             doc="d/dx log x = 1/x")
LOG1P = _unary("Log1p", lambda xp, x: xp.log1p(x), lambda g, ans, x: g * reciprocal(1 + x),
               domain=(-0.8, 2.0), doc="d/dx log(1 + x) = 1 / (1 + x)")

# ---- trigonometric and friends ----------------------------------------------
SIN = _unary("Sin", lambda xp, x: xp.sin(x), lambda g, ans, x: g * cos(x), doc="d/dx sin x = cos x")
COS = _unary("Cos", lambda xp, x: xp.cos(x), lambda g, ans, x: -g * sin(x), doc="d/dx cos x = -sin x")
TAN = _unary("Tan", lambda xp, x: xp.tan(x), lambda g, ans, x: g * (1 + ans * ans), saves="ans",
             domain=(-1.2, 1.2), doc="d/dx tan x = 1 + tan^2 x")
TANH = _unary("Tanh", lambda xp, x: xp.tanh(x), lambda g, ans, x: tanh_grad(ans, g), saves="ans",
              doc="d/dx tanh x = 1 - tanh^2 x")

# Like ReluGrad, TensorFlow's TanhGrad(y, dy) = dy (1 - y^2) is an op of its own:
# 1 - y^2 is formed on y's (unbatched) shape before it meets a stack of
# cotangents, and second derivatives cost one op per layer instead of four.
TANH_GRAD = Primitive(
    "TanhGrad", lambda xp, y, dy: dy * (1 - y * y),
    (lambda gg, ans, y, dy: unbroadcast(gg * (-2 * y * dy), y, ans),
     lambda gg, ans, y, dy: unbroadcast(tanh_grad(y, gg), dy, ans)),
    saves="inputs", domain=((-0.9, 0.9), REALS), label="TanhGrad({0}, {1})",
    cases=[(((3,), (3,)), {}), (((3,), (2, 3)), {}), (((2, 3), (2, 3)), {})],
    doc="TanhGrad(y, dy) = dy (1 - y^2): d/dy = -2 y dy, d/d(dy) = 1 - y^2")


def tanh_grad(y, dy):
    """``dy * (1 - y**2)``: the VJP of tanh given its output ``y``."""
    return TANH_GRAD(y, dy)


def _sigmoid_forward(xp, x):
    # exp of a large |x| overflows; this form never feeds exp a positive number
    if x.dtype.kind == "c":  # no overflow-safe branch on the sign of a complex number
        return 1 / (1 + xp.exp(-x))
    z = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + z), z / (1 + z)).astype(x.dtype)


SIGMOID = _unary("Sigmoid", _sigmoid_forward, lambda g, ans, x: g * ans * (1 - ans), saves="ans",
                 doc="d/dx sigmoid x = sigmoid x (1 - sigmoid x)")
SOFTPLUS = _unary("Softplus", lambda xp, x: xp.logaddexp(0, x).astype(x.dtype),
                  lambda g, ans, x: g * sigmoid(x), doc="d/dx log(1 + e^x) = sigmoid x")
ERF = _unary("Erf", lambda xp, x: backend.erf(x),
             lambda g, ans, x: g * (2 / _math.sqrt(_math.pi)) * exp(-(x * x)),
             doc="d/dx erf x = 2/sqrt(pi) exp(-x^2)")

# ---- piecewise: TensorFlow's conventions at the kinks ---------------------------
def _abs_grad(g, ans, x):
    if not x.dtype.is_complex:
        return g * sign(x)
    # |z| is real and not holomorphic: TensorFlow's gradient is g z / |z| (0 at z = 0).
    # g is real, so registry.conjugating_vjp passes x unconjugated.
    r = cast(abs(x), x.dtype)
    nonzero = not_equal(r, zeros_like(r))
    return cast(g, x.dtype) * where(nonzero, x / where(nonzero, r, ones_like(r)), zeros_like(r))


ABS = _unary("Abs", lambda xp, x: xp.abs(x), _abs_grad, domain=AWAY_FROM_ZERO,
             doc="d/dx |x| = sign x (0 at x = 0)")
# forward mode: d|z| = Re(conj(z) dz) / |z|, a real tangent for the real |z|
ABS.jvp = lambda t, ans, x: cast(_abs_grad(conj(t[0]), ans, x), ans.dtype) \
    if x.dtype.is_complex else t[0] * sign(x)
def _sign(xp, x):
    if x.dtype.kind == "b":   # TensorFlow has no bool kernel; CuPy, unlike NumPy, would answer
        raise InvalidArgumentError(f"Sign: x must be numeric, not bool (shape {tuple(x.shape)})")
    return xp.sign(x)


SIGN = _unary("Sign", _sign, lambda g, ans, x: zeros_like(g), saves="shapes",
              domain=AWAY_FROM_ZERO, doc="d/dx sign x = 0 (a zero gradient, not None)")
ROUND = _unary("Round", lambda xp, x: xp.round(x), NotDifferentiable, saves="shapes",
               doc="not differentiable: the gradient is None")
FLOOR = _unary("Floor", lambda xp, x: xp.floor(x), NotDifferentiable, saves="shapes",
               doc="not differentiable: the gradient is None")
CEIL = _unary("Ceil", lambda xp, x: xp.ceil(x), NotDifferentiable, saves="shapes",
              doc="not differentiable: the gradient is None")


# ---- dtype changes ------------------------------------------------------------
def _cast_grad(g, ans, x, dtype):
    if not x.dtype.is_differentiable:
        return None
    return cast(g, x.dtype)


def _cast_forward(xp, x, dtype):
    if x.dtype.kind == "c" and _np.dtype(dtype).kind != "c":
        x = xp.real(x)  # complex to real keeps the real part, quietly (as TensorFlow)
    return x.astype(dtype)


CAST = Primitive("Cast", _cast_forward, (_cast_grad,), saves="shapes",
                 domain=REALS, label="Cast({0})",
                 cases=[(((3,),), {"dtype": "float64"}), (((2, 3),), {"dtype": "float64"})],
                 doc="d cast(x) = cast(dx) back to x's dtype")


# ---- the public functions (binary ones convert their operands together: operands.py) ----
def add(x, y, name=None):
    """x + y elementwise, with broadcasting. ``ad.add(1.0, 2.0)`` -> 3.0."""
    return binary(ADD, x, y)


def subtract(x, y, name=None):
    """x - y elementwise, with broadcasting."""
    return binary(SUB, x, y)


def multiply(x, y, name=None):
    """x * y elementwise. ``ad.multiply(1, 3.0)`` is an error: int32 and float32 never mix."""
    return binary(MUL, x, y)


# TensorFlow's true division of integers: small ones in float32, the others in float64
_TRUEDIV = {"int8": dtypes.float32, "uint8": dtypes.float32, "int16": dtypes.float32,
            "uint16": dtypes.float32, "int32": dtypes.float64, "uint32": dtypes.float64,
            "int64": dtypes.float64, "uint64": dtypes.float64}


def true_division_operands(op, x, y):
    """``x`` and ``y`` converted together, integers cast to float as TensorFlow's ``truediv``
    casts them (int32 and int64 to float64)."""
    x, y = operands(x, y)
    if x.dtype.is_integer and y.dtype == x.dtype:
        wanted = _TRUEDIV.get(x.dtype.name)
        if wanted is None:
            raise InvalidArgumentError(f"{op}: cannot divide {x.dtype.name} tensors (shapes "
                                       f"{tuple(x.shape)} and {tuple(y.shape)})")
        x, y = cast(x, wanted), cast(y, wanted)
    return x, y


def divide(x, y, name=None):
    """x / y elementwise (true division; int32 and int64 inputs give float64, as in TensorFlow)."""
    try:
        return DIV(*true_division_operands("RealDiv", x, y))
    except InvalidArgumentError as err:
        raise _python_mix(DIV, x, y, err)


def truediv(x, y, name=None):
    """x / y elementwise, as ``divide`` (also ``ad.math.truediv``); a Python number on
    either side takes the tensor's dtype (TensorFlow's refuses one on the left: README).

    >>> ad.truediv(3, ad.constant([2.0], dtype=ad.float64)).numpy()
    array([1.5])
    """
    return divide(x, y)


def _floating(op, x):
    """``x`` as a tensor, refused (as TensorFlow does) unless floating or complex.

    ``op`` (a Primitive, or the name of a composition of ops) names the error."""
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    if x.dtype._np.kind in "fc":  # the valid call's whole cost: one isinstance, one lookup
        return x
    return _validate.check_dtype(getattr(op, "name", op), x, lambda d: False,
                                 "floating-point or complex")


def _numeric(primitive, x):
    """``x`` as a tensor, refused unless a number (bool is not, as in TensorFlow)."""
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    if x.dtype._np.kind != "b":
        return x
    return _validate.check_dtype(primitive.name, x, lambda d: False, "numeric (not bool)")


def floordiv(x, y, name=None):
    """x // y: the floor of the quotient (not differentiable)."""
    return binary(FLOORDIV, x, y)


def floormod(x, y, name=None):
    """x % y, with the sign of y (Python's convention)."""
    return binary(FLOORMOD, x, y)


def negative(x, name=None):
    """-x elementwise."""
    return NEG(_numeric(NEG, x))


def pow(x, y, name=None):  # noqa: A001 - TensorFlow's name
    """x ** y elementwise. ``ad.pow(2.0, 3.0)`` -> 8.0."""
    return binary(POW, x, y)


def maximum(x, y, name=None):
    """Elementwise max; the gradient at a tie goes to ``x``."""
    return binary(MAXIMUM, x, y)


def minimum(x, y, name=None):
    """Elementwise min; the gradient at a tie goes to ``x``."""
    return binary(MINIMUM, x, y)


def square(x, name=None):
    """x * x elementwise."""
    return SQUARE(_numeric(SQUARE, x))


def sqrt(x, name=None):
    """Square root elementwise."""
    return SQRT(_floating(SQRT, x))


def rsqrt(x, name=None):
    """1 / sqrt(x) elementwise."""
    return RSQRT(_floating(RSQRT, x))


def reciprocal(x, name=None):
    """1 / x elementwise."""
    return RECIPROCAL(x)


def exp(x, name=None):
    """e ** x elementwise."""
    return EXP(_floating(EXP, x))


def expm1(x, name=None):
    """e ** x - 1, accurate for small x."""
    return EXPM1(_floating(EXPM1, x))


def log(x, name=None):
    """Natural logarithm elementwise."""
    return LOG(_floating(LOG, x))


def log1p(x, name=None):
    """log(1 + x), accurate for small x."""
    return LOG1P(_floating(LOG1P, x))


def sin(x, name=None):
    """Sine elementwise. ``ad.sin(0.0)`` -> 0.0."""
    return SIN(_floating(SIN, x))


def cos(x, name=None):
    """Cosine elementwise."""
    return COS(_floating(COS, x))


def tan(x, name=None):
    """Tangent elementwise."""
    return TAN(_floating(TAN, x))


def tanh(x, name=None):
    """Hyperbolic tangent elementwise."""
    return TANH(_floating(TANH, x))


def sigmoid(x, name=None):
    """1 / (1 + e^-x) elementwise, computed without overflow."""
    return SIGMOID(_floating(SIGMOID, x))


def softplus(features, name=None):
    """log(1 + e^x) elementwise, computed without overflow."""
    return SOFTPLUS(_floating(SOFTPLUS, features))


def erf(x, name=None):
    """The Gauss error function elementwise."""
    return ERF(_floating(ERF, x))


def abs(x, name=None):  # noqa: A001
    """|x| elementwise; the gradient at 0 is 0."""
    return ABS(x)


def sign(x, name=None):
    """-1, 0 or 1 elementwise; its gradient is zero (not None)."""
    return SIGN(x)


def round(x, name=None):  # noqa: A001
    """Round half to even, elementwise (not differentiable: gradient None)."""
    return ROUND(x)


def floor(x, name=None):
    """Largest integer not above x, elementwise (not differentiable: gradient None)."""
    return FLOOR(x)


def ceil(x, name=None):
    """Smallest integer not below x, elementwise (not differentiable: gradient None)."""
    return CEIL(x)


def cast(x, dtype, name=None):
    """Converts ``x`` to ``dtype``; the gradient flows back only between float types.

    >>> ad.cast(ad.constant([1.7, -2.3]), ad.int32).numpy()
    array([ 1, -2], dtype=int32)
    """
    dtype = dtypes.as_dtype(dtype)
    x = convert_to_tensor(x)
    if x._value.dtype == dtype._np:
        return x
    return CAST(x, dtype=dtype.name)


from .creation import ones_like, zeros_like  # noqa: E402
from .grad_kernels import reciprocal_grad, rsqrt_grad, sqrt_grad  # noqa: E402
from .matmul import conj  # noqa: E402
from .operands import _python_mix, binary, operands  # noqa: E402
from .predicates import not_equal, where  # noqa: E402  (Pow's and Maximum's rules use them)
