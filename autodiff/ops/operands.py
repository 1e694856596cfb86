"""How every binary op's public function converts its two operands: one rule, TensorFlow's.

TensorFlow converts the two operands of an op like ``AddV2`` together. A
tensor operand decides the dtype, and a Python number or list beside it
becomes a tensor of that dtype; with no tensor at all, the first operand
converts alone and the second follows it:

    atan2(1.79, x64)     float64: 1.79 takes x64's dtype
    add(1.5, 2)          float32 3.5: 2 follows 1.5
    multiply(1, 3.0)     TypeError: 3.0 cannot follow 1's int32

Every public binary function (``add`` ... ``minimum``, ``atan2``, ``xlogy``
and the other zero-safe ops, ``squared_difference``, the comparisons, and
``where``'s two branches) converts with ``operands`` *before* it checks
dtypes. Checking first converts each operand alone, a bare ``1.79`` to
float32, which then cannot meet a float64 partner (``atan2`` once did just
that). Operators (``x * 2.0``) call the primitive, whose own conversion
(``registry.Primitive``) gives the number its tensor partner's dtype too.

    >>> ad.math.atan2(1.0, ad.constant([1.0], dtype=ad.float64)).dtype.name
    'float64'
"""

import numpy as np

from .. import backend, dtypes
from ..errors import InvalidArgumentError
from ..tensor import Tensor, convert_to_tensor

__all__ = []   # helpers for the op families, not public names


def operands(x, y):
    """``x`` and ``y`` as tensors of one dtype when that is possible (see the module docstring).

    A value that cannot take its partner's dtype (2.5 beside an int32 tensor) keeps its
    own, and the op then refuses the pair, naming both dtypes.
    """
    if isinstance(x, Tensor) or not isinstance(y, Tensor):
        x = convert_to_tensor(x)
        return x, convert_expecting(y, x.dtype)
    return convert_expecting(x, y.dtype), convert_to_tensor(y)


def convert_expecting(value, dtype):
    """``value`` as a tensor for an argument that expects ``dtype`` (TensorFlow's
    ``dtype_hint``): a Python value takes ``dtype`` when it converts without loss, a NumPy
    array or scalar when its kind allows (float64 to float32, as TensorFlow converts it),
    and an empty literal (``[]``, ``[[], []]``), which has no element to say otherwise,
    always does.

    >>> from autodiff.ops.operands import convert_expecting
    >>> t = convert_expecting([[], []], ad.bool)
    >>> t.shape, t.dtype.name
    (TensorShape([2, 0]), 'bool')
    """
    if isinstance(value, Tensor):
        return convert_to_tensor(value)
    if hasattr(value, "dtype"):
        wanted = dtypes.as_dtype(dtype)
        fits = np.can_cast(np.dtype(value.dtype), wanted._np, "same_kind")
        return convert_to_tensor(value, dtype=wanted if fits else None)
    if isinstance(value, (list, tuple)):
        try:
            empty = np.asarray(value)
        except ValueError:   # ragged: convert_to_tensor says so
            empty = None
        if empty is not None and empty.size == 0 and empty.dtype.kind == "f":
            return Tensor(backend.xp.zeros(empty.shape, dtype=dtypes.as_dtype(dtype)._np))
    return convert_to_tensor(value, dtype_hint=dtype)


def binary(primitive, x, y, check=None):
    """Runs ``primitive`` on ``x`` and ``y`` converted by ``operands``.

    Args:
        primitive: the op (its name goes into error messages).
        x, y: tensors, Python numbers, lists or arrays.
        check: optional ``check(primitive, tensor) -> tensor`` applied to each converted
            operand (e.g. ``elementwise._floating``: floating or complex only).

    Raises:
        TypeError: both operands were Python values whose dtypes cannot meet
            (``multiply(1, 3.0)``), as TensorFlow raises.
        InvalidArgumentError: the dtypes differ, or ``check`` refuses one.
    """
    try:
        a, b = operands(x, y)
        if check is not None:
            a, b = check(primitive, a), check(primitive, b)
        return primitive(a, b)
    except InvalidArgumentError as err:
        raise _python_mix(primitive, x, y, err)


def _python_mix(primitive, x, y, err):
    """The error for a failed binary op: TypeError when both operands were Python values
    of dtypes that cannot meet.

    TensorFlow converts ``1`` to int32 first and then cannot convert ``3.0`` to
    int32, a TypeError; with a tensor operand it is an InvalidArgumentError.
    """
    if isinstance(x, Tensor) or isinstance(y, Tensor) or hasattr(x, "dtype") or hasattr(y, "dtype"):
        return err
    try:
        first, second = dtypes.infer_dtype(x), dtypes.infer_dtype(y)
    except ValueError:
        return err
    if _can_follow(second, first):
        return err   # y could follow x: the op itself refused them (a shape, a dtype check)
    new = TypeError(f"{primitive.name}: cannot convert y={y!r} ({second.name}) to "
                    f"{first.name}, the dtype of x={x!r}; autodiff never casts "
                    f"implicitly: convert one with ad.constant(..., dtype=...)")
    new.__cause__ = None
    new.__suppress_context__ = True
    return new


def _can_follow(second, first):
    """Whether a Python value of dtype ``second`` converts losslessly to ``first``."""
    if second == first:
        return True
    if second.is_integer:
        return first.is_integer or first.is_floating or first.is_complex
    return second.is_floating and (first.is_floating or first.is_complex)
