"""``ad.debugging.check_numerics``: stop at the first NaN or inf, in the forward pass and the backward.

    >>> x = ad.constant([1.0, 0.0])
    >>> y = ad.debugging.check_numerics(ad.math.log(x), "log of the input")
    Traceback (most recent call last):
    autodiff.errors.InvalidArgumentError: log of the input : Tensor had Inf values [CheckNumerics]

As in TensorFlow, the op passes its input through unchanged when every
element is finite, and its gradient is the incoming gradient, checked the
same way (its message then starts "Not a number (NaN) or infinity (Inf)
values detected in gradient."), so a NaN that first appears in the backward
pass is caught where it crosses the check. The op is *stateful*: inside
``ad.function`` it runs on every call even when nothing uses its result,
and it is never folded into a constant or merged with a twin.
"""

from .. import backend, dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor
from .elementwise import REALS

__all__ = ["check_numerics"]

GRADIENT_PREFIX = "Not a number (NaN) or infinity (Inf) values detected in gradient. "
_CHECKED = (dtypes.float16, dtypes.float32, dtypes.float64)


def _check(xp, x, message=""):
    if not backend.to_numpy(xp.all(xp.isfinite(x))):   # one bool to the host
        nan = bool(backend.to_numpy(xp.any(xp.isnan(x))))
        inf = bool(backend.to_numpy(xp.any(xp.isinf(x))))
        what = "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")
        raise InvalidArgumentError(f"{message} : Tensor had {what} values [CheckNumerics]")
    return x


def _check_numerics_vjp(g, ans, x, message=""):
    return CHECK_NUMERICS(g, message=GRADIENT_PREFIX + message)


CHECK_NUMERICS = Primitive("CheckNumerics", _check, (_check_numerics_vjp,), saves="shapes",
                           domain=REALS, stateful=True, label="CheckNumerics({0})",
                           cases=[(((),), {"message": "x"}), (((3,),), {"message": "x"}),
                                  (((2, 3),), {"message": "x"})],
                           doc="d check_numerics(x) = dx (the gradient is checked too)")


def check_numerics(tensor, message, name=None):
    """``tensor`` unchanged, after checking that it holds no NaN and no inf.

    Args:
        tensor: a float16, float32 or float64 tensor.
        message: the start of the error message.

    Returns:
        ``tensor``'s value (a new tensor on the tape, whose gradient is checked too).

    Raises:
        InvalidArgumentError: an element is NaN or inf (the message says which), or the
            dtype is not a float one.
    """
    x = _validate.check_dtype("CheckNumerics", convert_to_tensor(tensor),
                              lambda dtype: dtype in _CHECKED, "float16, float32 or float64")
    return CHECK_NUMERICS(x, message=str(message))
