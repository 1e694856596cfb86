"""``ad.keras.ops``: Keras 3's backend-neutral op names, as thin calls of this engine's ops.

Keras 3 code writes ``keras.ops.sum(x, axis=1)`` where TensorFlow writes
``tf.reduce_sum``; here each name calls the engine's op of the same meaning,
with Keras' argument names and defaults (``keepdims``, ``axis=None`` over
everything, ``concatenate(xs, axis=0)``), so tapes record the usual ops:

    >>> ops = ad.keras.ops
    >>> print(ops.sum(ops.square(ad.constant([1.0, 2.0]))))
    ad.Tensor(5.0, shape=(), dtype=float32)

Owns the name table only; every derivative is the engine's.
"""

from .. import linalg as _linalg
from .. import math as _math
from .. import nn as _nn
import autodiff as _ad
from .functional.keras_tensor import symbolic_aware

__all__ = []


def _export(fn):
    __all__.append(fn.__name__)
    return symbolic_aware(fn)   # on KerasTensors: a node of a functional model, as in Keras


# Elementwise and linear algebra: the engine's op under Keras' name, looked up on first use
# (this module is imported while ``autodiff`` itself is still being set up).
_SAME = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
         "true_divide": "divide", "negative": "negative", "power": "pow", "exp": "exp",
         "log": "log", "log1p": "math.log1p", "expm1": "math.expm1", "sqrt": "sqrt",
         "rsqrt": "math.rsqrt", "square": "square", "abs": "abs", "absolute": "abs",
         "sign": "sign", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
         "floor": "floor", "ceil": "ceil", "round": "round", "erf": "math.erf",
         "maximum": "maximum", "minimum": "minimum", "equal": "equal", "not_equal": "not_equal",
         "greater": "greater", "greater_equal": "greater_equal", "less": "less",
         "less_equal": "less_equal", "logical_and": "logical_and", "logical_or": "logical_or",
         "logical_not": "logical_not", "where": "where", "matmul": "matmul", "einsum": "einsum",
         "zeros_like": "zeros_like", "ones_like": "ones_like", "eye": "eye", "tile": "tile",
         "broadcast_to": "broadcast_to", "stop_gradient": "stop_gradient", "relu": "nn.relu",
         "relu6": "nn.relu6", "sigmoid": "nn.sigmoid", "softplus": "nn.softplus",
         "silu": "nn.silu", "swish": "nn.silu", "elu": "nn.elu", "selu": "nn.selu",
         "isnan": "math.is_nan", "isinf": "math.is_inf", "isfinite": "math.is_finite"}
__all__ += sorted(_SAME)


def __getattr__(name):
    if name not in _SAME:
        raise AttributeError(f"module 'ad.keras.ops' has no attribute {name!r}")
    target = _ad
    for part in _SAME[name].split("."):
        target = getattr(target, part)
    target = symbolic_aware(target)
    globals()[name] = target      # looked up once
    return target


def shape(x):   # a KerasTensor's too: a tuple with None where unknown, as in Keras
    return tuple(x.shape)


__all__.append("shape")


@_export
def leaky_relu(x, negative_slope=0.2):
    return _nn.leaky_relu(x, alpha=negative_slope)


@_export
def gelu(x, approximate=True):
    """Keras' ``ops.gelu`` defaults to the tanh approximation (the layer activation does not)."""
    return _nn.gelu(x, approximate=approximate)


@_export
def softmax(x, axis=-1):
    return _nn.softmax(x, axis=axis)


@_export
def log_softmax(x, axis=-1):
    return _nn.log_softmax(x, axis=axis)


@_export
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - Keras' name
    return _linalg.norm(x, ord="euclidean" if ord is None else ord, axis=axis, keepdims=keepdims)


@_export
def convert_to_tensor(x, dtype=None, sparse=None):
    """A tensor of ``x`` (``sparse=True`` is refused)."""
    if sparse:
        raise NotImplementedError("keras.ops.convert_to_tensor: sparse=True is not implemented")
    return _ad.convert_to_tensor(x, dtype=dtype)


def convert_to_numpy(x):
    """``x`` as a NumPy array (Keras' ``ops.convert_to_numpy``)."""
    import numpy as np
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


__all__.append("convert_to_numpy")


@_export
def cast(x, dtype):
    return _ad.cast(x, dtype)


@_export
def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras' name
    return _ad.reduce_sum(x, axis=axis, keepdims=keepdims)


@_export
def mean(x, axis=None, keepdims=False):
    return _ad.reduce_mean(x, axis=axis, keepdims=keepdims)


@_export
def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    if initial is not None:
        raise NotImplementedError("keras.ops.max: initial= is not implemented")
    return _ad.reduce_max(x, axis=axis, keepdims=keepdims)


@_export
def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    if initial is not None:
        raise NotImplementedError("keras.ops.min: initial= is not implemented")
    return _ad.reduce_min(x, axis=axis, keepdims=keepdims)


@_export
def prod(x, axis=None, keepdims=False, dtype=None):
    return _ad.reduce_prod(x, axis=axis, keepdims=keepdims)


@_export
def var(x, axis=None, keepdims=False):
    return _math.reduce_variance(x, axis=axis, keepdims=keepdims)


@_export
def std(x, axis=None, keepdims=False):
    return _math.reduce_std(x, axis=axis, keepdims=keepdims)


@_export
def logsumexp(x, axis=None, keepdims=False):
    return _ad.reduce_logsumexp(x, axis=axis, keepdims=keepdims)


def _arg(op, x, axis, keepdims):
    """Keras' argmax/argmin: over the flattened tensor when ``axis`` is None."""
    out = op(_ad.reshape(x, [-1]) if axis is None else x, axis=0 if axis is None else axis,
             output_type=_ad.int32)   # Keras 3's index dtype
    return _ad.expand_dims(out, axis) if keepdims and axis is not None else out


@_export
def argmax(x, axis=None, keepdims=False):
    return _arg(_ad.argmax, x, axis, keepdims)


@_export
def argmin(x, axis=None, keepdims=False):
    return _arg(_ad.argmin, x, axis, keepdims)


@_export
def cumsum(x, axis=None, dtype=None):
    return _ad.cumsum(_ad.reshape(x, [-1]) if axis is None else x, axis=0 if axis is None else axis)


@_export
def clip(x, x_min, x_max):
    return _ad.clip_by_value(x, x_min, x_max)


@_export
def reshape(x, newshape):
    return _ad.reshape(x, newshape)


@_export
def transpose(x, axes=None):
    return _ad.transpose(x, perm=axes)


@_export
def concatenate(xs, axis=0):
    return _ad.concat(list(xs), axis=axis)


@_export
def stack(x, axis=0):
    return _ad.stack(list(x), axis=axis)


@_export
def expand_dims(x, axis):
    return _ad.expand_dims(x, axis)


@_export
def squeeze(x, axis=None):
    return _ad.squeeze(x, axis=axis)


@_export
def take(x, indices, axis=None):
    if axis is None:
        return _ad.gather(_ad.reshape(x, [-1]), indices)
    return _ad.gather(x, indices, axis=axis)


@_export
def dot(x1, x2):
    """Keras' ``dot``: a product over the last axis of ``x1`` and the second-last of ``x2``."""
    if len(x1.shape) == 0 or len(x2.shape) == 0:
        return _ad.multiply(x1, x2)
    if len(x2.shape) == 1:
        return _ad.reduce_sum(_ad.multiply(x1, x2), axis=-1)
    return _ad.tensordot(x1, x2, axes=[[len(x1.shape) - 1], [len(x2.shape) - 2]])


@_export
def zeros(shape, dtype=None):
    return _ad.zeros(shape, dtype=dtype or _ad.float32)


@_export
def ones(shape, dtype=None):
    return _ad.ones(shape, dtype=dtype or _ad.float32)


@_export
def arange(start, stop=None, step=1, dtype=None):
    return _ad.range(start, stop, step, dtype=dtype) if stop is not None \
        else _ad.range(start, dtype=dtype)


@_export
def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise NotImplementedError("keras.ops.one_hot: sparse=True is not implemented")
    return _ad.one_hot(x, num_classes, axis=axis, dtype=dtype or _ad.float32)


@_export
def split(x, indices_or_sections, axis=0):
    return _ad.split(x, indices_or_sections, axis=axis)


@_export
def full(shape, fill_value, dtype=None):
    """Keras' ``ops.full``: float32 unless ``dtype`` says otherwise (an int fill too)."""
    return _ad.cast(_ad.fill(list(shape), _ad.convert_to_tensor(fill_value)),
                    dtype or _ad.float32)


@_export
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """Keras' ``ops.linspace`` (float32 unless ``dtype`` says otherwise); ``endpoint=False``
    and ``retstep=True`` are not implemented."""
    if not endpoint or retstep:
        raise NotImplementedError("keras.ops.linspace: endpoint=False and retstep=True are "
                                  "not implemented")
    dtype = dtype or _ad.float32
    return _ad.linspace(_ad.cast(start, dtype), _ad.cast(stop, dtype), num, axis=axis)


@_export
def any(x, axis=None, keepdims=False):  # noqa: A001 - Keras' name
    return _ad.reduce_any(_ad.cast(x, _ad.bool), axis=axis, keepdims=keepdims)


@_export
def all(x, axis=None, keepdims=False):  # noqa: A001 - Keras' name
    return _ad.reduce_all(_ad.cast(x, _ad.bool), axis=axis, keepdims=keepdims)


@_export
def sort(x, axis=-1):
    return _ad.sort(x, axis=axis)


@_export
def argsort(x, axis=-1):
    return _ad.argsort(x, axis=axis, stable=True)


@_export
def flip(x, axis=None):
    x = _ad.convert_to_tensor(x)
    axes = list(range(x.ndim)) if axis is None else \
        (list(axis) if isinstance(axis, (list, tuple)) else [axis])
    return _ad.reverse(x, axes)


@_export
def moments(x, axes, keepdims=False, synchronized=False):
    if synchronized:
        raise NotImplementedError("keras.ops.moments: synchronized=True is not implemented")
    return _nn.moments(x, axes, keepdims=keepdims)


def __dir__():
    return sorted(__all__)
