"""Activation layers and reshaping layers: Activation, ReLU, LeakyReLU, Softmax, Reshape.

    >>> ad.keras.layers.ReLU(max_value=6.0)(ad.constant([-1.0, 3.0, 9.0])).numpy()
    array([0., 3., 6.], dtype=float32)
    >>> ad.keras.layers.Reshape((2, 3))(ad.ones([4, 6])).shape
    TensorShape([4, 2, 3])

Each is one call of ``ad.keras.activations`` or ``ad.reshape``; none has weights.
"""

import math

from ...ops import predicates
from ...ops.shape import reshape
from .. import activations
from .base import Layer

__all__ = ["Activation", "ReLU", "LeakyReLU", "Softmax", "Reshape"]


class Activation(Layer):
    """Applies an activation: ``Activation('relu')(x)`` is ``activations.relu(x)``.

    Args:
        activation: a name (``'gelu'``) or a callable.
    """

    _ad_config = ("activation",)
    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class ReLU(Layer):
    """``relu`` with Keras' options: ``max_value``, ``negative_slope`` and ``threshold``.

    Raises:
        ValueError: a negative ``max_value``, ``negative_slope`` or ``threshold``.
    """

    _ad_config = ("max_value", "negative_slope", "threshold")
    supports_masking = True

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        for arg, value in (("max_value", max_value), ("negative_slope", negative_slope),
                           ("threshold", threshold)):
            if value is not None and value < 0:
                raise ValueError(f"`{arg}` of a ReLU layer cannot be a negative value. "
                                 f"Received: {arg}={value}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)


class LeakyReLU(Layer):
    """``x`` for x > 0, ``negative_slope * x`` below (Keras 3's layer default: 0.3)."""

    _ad_config = ("negative_slope",)
    supports_masking = True

    def __init__(self, negative_slope=0.3, **kwargs):
        super().__init__(**kwargs)
        self.negative_slope = negative_slope

    def call(self, inputs):
        return activations.leaky_relu(inputs, negative_slope=self.negative_slope)


class Softmax(Layer):
    """Softmax along ``axis``; where ``mask`` is False the input counts as -1e9 (Keras')."""

    _ad_config = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            inputs = predicates.where(mask, inputs, inputs * 0.0 - 1e9)
        return activations.softmax(inputs, axis=self.axis)


class Reshape(Layer):
    """Each example reshaped to ``target_shape`` (one entry may be -1), the batch axis kept.

    Raises:
        ValueError: a target shape whose size differs from the example's, naming both.
    """

    _ad_config = ("target_shape",)

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(f"Reshape: at most one -1 in target_shape, got {self.target_shape}")

    def call(self, inputs):
        size = math.prod(inputs.shape[1:])
        known = math.prod(d for d in self.target_shape if d != -1)
        if (-1 in self.target_shape and size % known) or \
                (-1 not in self.target_shape and size != known):
            raise ValueError(f"Reshape layer {self.name!r}: total size of the new array must be "
                             f"unchanged, input_shape = {tuple(inputs.shape[1:])}, output_shape "
                             f"= {self.target_shape}")
        return reshape(inputs, (inputs.shape[0],) + self.target_shape)
