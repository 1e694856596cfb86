"""Global pooling layers: one value per channel, over every position of an example.

    >>> ad.keras.layers.GlobalAveragePooling2D()(ad.ones([2, 4, 4, 3])).shape
    TensorShape([2, 3])

NHWC (and NWC) only, as the rest of the library (``data_format='channels_last'``).
"""

from ...ops import reduce
from .base import Layer

__all__ = ["GlobalAveragePooling2D", "GlobalMaxPooling2D", "GlobalAveragePooling1D",
           "GlobalMaxPooling1D"]


class _GlobalPooling(Layer):
    _ad_config = ("keepdims",)
    _axes = None
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"{type(self).__name__}: data_format={data_format!r} is "
                                      f"not implemented (channels_last only)")
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        if inputs.ndim != len(self._axes) + 2:
            raise ValueError(f"{type(self).__name__} layer {self.name!r}: expected an input of "
                             f"rank {len(self._axes) + 2}, got shape {tuple(inputs.shape)}")
        return type(self)._reduce(inputs, axis=list(self._axes), keepdims=self.keepdims)


class GlobalAveragePooling2D(_GlobalPooling):
    """The mean over height and width: ``[B, H, W, C] -> [B, C]``."""

    _axes, _reduce = (1, 2), staticmethod(reduce.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over height and width: ``[B, H, W, C] -> [B, C]``."""

    _axes, _reduce = (1, 2), staticmethod(reduce.reduce_max)


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps: ``[B, T, C] -> [B, C]`` (masks are not supported)."""

    _axes, _reduce = (1,), staticmethod(reduce.reduce_mean)


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps: ``[B, T, C] -> [B, C]``."""

    _axes, _reduce = (1,), staticmethod(reduce.reduce_max)
