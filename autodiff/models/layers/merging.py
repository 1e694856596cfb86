"""Merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate.

Each takes a list of tensors (``Add()([a, b])``), as Keras 3's, and
broadcasts them as the engine's ops do; ``Concatenate(axis=-1)`` joins
them along one axis. With KerasTensors they make one node with several
inputs in a functional model (a residual connection is ``Add()([x, f(x)])``,
or ``x + f(x)``).

    >>> ad.keras.layers.Add()([ad.ones([2, 3]), ad.ones([2, 3])]).numpy()[0]
    array([2., 2., 2.], dtype=float32)
"""

import functools

from ...ops import elementwise
from ...ops.join import concat
from .base import Layer

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"]


class _Merge(Layer):
    """The shared part: a list of at least two tensors in, one out."""

    _ad_config = ()
    supports_masking = True

    def _checked(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer ({type(self).__name__} {self.name!r}) should be "
                             f"called on a list of at least 2 inputs. Got "
                             f"{len(inputs) if isinstance(inputs, (list, tuple)) else 1} input")
        return list(inputs)

    def compute_mask(self, inputs, mask=None):
        return None

    def call(self, inputs):
        return functools.reduce(self._combine, self._checked(inputs))


class Add(_Merge):
    """The elementwise sum of the inputs."""

    @staticmethod
    def _combine(a, b):
        return a + b


class Subtract(_Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    def call(self, inputs):
        inputs = self._checked(inputs)
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={len(inputs)} inputs")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """The elementwise product of the inputs."""

    @staticmethod
    def _combine(a, b):
        return a * b


class Average(_Merge):
    """The elementwise mean of the inputs."""

    def call(self, inputs):
        inputs = self._checked(inputs)
        return functools.reduce(lambda a, b: a + b, inputs) / float(len(inputs))


class Maximum(_Merge):
    """The elementwise maximum of the inputs."""

    _combine = staticmethod(elementwise.maximum)


class Minimum(_Merge):
    """The elementwise minimum of the inputs."""

    _combine = staticmethod(elementwise.minimum)


class Concatenate(_Merge):
    """The inputs joined along ``axis`` (default the last).

    Raises:
        ValueError: inputs whose shapes differ off ``axis``, naming them.
    """

    _ad_config = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        inputs = self._checked(inputs)
        ranks = {len(t.shape) for t in inputs}
        axis = self.axis % max(ranks) if len(ranks) == 1 else self.axis
        others = {tuple(d for k, d in enumerate(t.shape) if k != axis) for t in inputs}
        if len(ranks) != 1 or len(others) != 1:
            raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes "
                             f"except for the concatenation axis. Received: input_shape="
                             f"{[tuple(t.shape) for t in inputs]}")
        return concat(inputs, axis=self.axis)
