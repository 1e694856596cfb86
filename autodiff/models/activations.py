"""``ad.keras.activations``: Keras 3's activation functions, by name or as functions.

    >>> ad.keras.activations.relu(ad.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    >>> ad.keras.activations.get("gelu") is ad.keras.activations.gelu
    True

Each is written with the engine's ops (``ad.nn``), so a tape differentiates
it like any other code. Arguments and defaults are Keras 3's (``gelu`` is
exact unless ``approximate=True``; ``leaky_relu``'s slope is 0.2). Owns: the
functions, the name table, ``get`` and ``serialize``.
"""

from .. import nn
from ..ops import clip, elementwise, predicates
from ..tensor import convert_to_tensor

__all__ = ["relu", "relu6", "elu", "selu", "sigmoid", "hard_sigmoid", "tanh", "softmax",
           "log_softmax", "softplus", "softsign", "gelu", "silu", "swish", "leaky_relu", "mish",
           "exponential", "linear", "get", "serialize"]


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """``max(x, 0)``; with Keras' options: a slope below ``threshold``, a cap at ``max_value``.

    >>> relu = ad.keras.activations.relu
    >>> relu(ad.constant([-2.0, 0.5, 9.0]), negative_slope=0.1, max_value=6.0).numpy()
    array([-0.2,  0.5,  6. ], dtype=float32)
    """
    if negative_slope == 0 and max_value is None and threshold == 0:
        return nn.relu(x)
    # Keras 3's own steps (its ReLU.static_call), so that the edges agree with it too:
    # -inf, inf and NaN, a signed zero, and which op a gradient flows through.
    x = convert_to_tensor(x)
    if negative_slope != 0:
        if max_value is None and threshold == 0:
            return nn.leaky_relu(x, alpha=negative_slope)
        negative_part = nn.relu(-x + threshold) if threshold != 0 else nn.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = predicates.where(predicates.greater(x, threshold), x, 0.0)
    elif max_value == 6:
        x, clip_max = nn.relu6(x), False
    else:
        x = nn.relu(x)
    if clip_max:
        x = clip.clip_by_value(x, 0.0, max_value)
    if negative_slope != 0:
        x = x - negative_slope * negative_part
    return x


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return nn.relu6(x)


def elu(x, alpha=1.0):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` below."""
    out = nn.elu(x)
    return out if alpha == 1.0 else predicates.where(predicates.greater(x, 0.0), out, out * alpha)


def selu(x):
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return nn.selu(x)


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return nn.sigmoid(x)


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid (Keras 3's definition)."""
    return nn.relu6(x + 3.0) / 6.0


def tanh(x):
    """The hyperbolic tangent."""
    return nn.tanh(x)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """``x - log(sum(exp(x)))`` along ``axis``."""
    return nn.log_softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``."""
    return nn.softplus(x)


def softsign(x):
    """``x / (1 + |x|)``."""
    return nn.softsign(x)


def gelu(x, approximate=False):
    """``x * Phi(x)`` (exact by default, tanh's approximation with ``approximate=True``)."""
    return nn.gelu(x, approximate=approximate)


def silu(x):
    """``x * sigmoid(x)`` (also ``swish``)."""
    return nn.silu(x)


swish = silu


def leaky_relu(x, negative_slope=0.2):
    """``x`` for x > 0, ``negative_slope * x`` below."""
    return nn.leaky_relu(x, alpha=negative_slope)


def mish(x):
    """``x * tanh(softplus(x))``."""
    return x * nn.tanh(nn.softplus(x))


def exponential(x):
    """``exp(x)``."""
    return elementwise.exp(x)


def linear(x):
    """``x`` unchanged (what ``activation=None`` means)."""
    return x


ACTIVATIONS = {name: globals()[name] for name in __all__ if name not in ("get", "serialize")}


def get(identifier):
    """A callable for ``identifier``: None (linear), a callable, or a Keras name.

    Raises:
        ValueError: an unknown name, naming the known ones.
    """
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, dict) and identifier.get("class_name") == "function":
        identifier = identifier.get("config")
    if isinstance(identifier, str) and identifier in ACTIVATIONS:
        return ACTIVATIONS[identifier]
    raise ValueError(f"Unknown activation function: {identifier!r}. "
                     f"Use a callable or one of {sorted(ACTIVATIONS)}")


def serialize(activation):
    """The name Keras stores for ``activation`` (``'relu'``); a function without a Keras
    name cannot be stored.

    Raises:
        ValueError: a callable that is not one of these functions.
    """
    for name, fn in ACTIVATIONS.items():
        if fn is activation and name != "swish":
            return name
    if activation is None:
        return "linear"
    raise ValueError(f"Cannot serialize the activation {activation!r}: only Keras' named "
                     f"activations ({sorted(ACTIVATIONS)}) can be saved")
