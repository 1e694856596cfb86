"""Normalization layers: BatchNormalization (over the batch, with moving statistics),
LayerNormalization (over each example's features) and GroupNormalization (over groups of
channels)."""

from ...ops import elementwise, reduce
from ...ops.shape import STOP_GRADIENT, reshape
from .base import Layer

__all__ = ["BatchNormalization", "LayerNormalization", "GroupNormalization"]


class _Normalization(Layer):
    """What both normalizations share: the axes, and ``gamma`` / ``beta`` shaped like them."""

    def __init__(self, axis, epsilon, center, scale, **kwargs):
        super().__init__(**kwargs)
        self.axis = [int(axis)] if isinstance(axis, int) else [int(a) for a in axis]
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.gamma = self.beta = None

    def build(self, input_shape):
        ndim = len(input_shape)
        axes = sorted({a % ndim for a in self.axis if -ndim <= a < ndim})
        if len(axes) != len(self.axis):
            raise ValueError(f"Invalid axis {self.axis} for layer {self.name!r} and an input "
                             f"of rank {ndim}")
        self._ad_axes = axes
        self._ad_rank = ndim
        self._ad_param_shape = tuple(input_shape[a] for a in axes)
        if self.scale:
            self.gamma = self.add_weight(name="gamma", shape=self._ad_param_shape, initializer="ones")
        if self.center:
            self.beta = self.add_weight(name="beta", shape=self._ad_param_shape, initializer="zeros")

    def _broadcastable(self, t, ndim):
        """A per-feature tensor reshaped so it broadcasts against the input."""
        if self._ad_axes == [ndim - 1] or len(self._ad_axes) == ndim:
            return t
        shape = [1] * ndim
        for a, d in zip(self._ad_axes, t.shape):
            shape[a] = d
        return reshape(t, tuple(shape))


class BatchNormalization(_Normalization):
    """Normalizes each feature: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    With ``training=True`` the mean and variance are the current batch's
    (over every axis but ``axis``), so every output depends on every example
    of the batch: a Jacobian through it is not block-diagonal (the guide's
    warning about ``batch_jacobian``). Each training call also moves the
    moving statistics towards the batch's:
    ``moving = moving * momentum + batch * (1 - momentum)``, outside every tape.
    With ``training=False`` (the default) the moving statistics are used.
    Inside an ``ad.function`` (compiled or not) the update is traced and
    runs on every call, exactly as the eager call would make it.

    Args:
        axis: the feature axis (an int or a list of ints; default the last).
        momentum: of the moving averages.
        epsilon: added to the variance before the square root.
        center, scale: whether to have ``beta`` / ``gamma`` (trainable).

    Variables: ``gamma``, ``beta`` (trainable); ``moving_mean``,
    ``moving_variance`` (not trainable).
    """

    _ad_config = ("axis", "momentum", "epsilon", "center", "scale")

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                 **kwargs):
        super().__init__(axis, epsilon, center, scale, **kwargs)
        self.momentum = float(momentum)
        self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        super().build(input_shape)
        self.moving_mean = self.add_weight(name="moving_mean", shape=self._ad_param_shape, initializer="zeros",
                                           trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=self._ad_param_shape, initializer="ones",
                                               trainable=False)

    def call(self, inputs, training=False):
        ndim = inputs.ndim
        if ndim != self._ad_rank:
            raise ValueError(f"BatchNormalization layer {self.name!r}: it was built for "
                             f"inputs of rank {self._ad_rank}, but this input has rank {ndim}")
        if training:
            reduced = tuple(a for a in range(ndim) if a not in self._ad_axes)
            # Differentiable all the way (as Keras 3's moments): exact second
            # derivatives. tf.nn.moments stops the gradient through the mean
            # inside the variance, which changes only second derivatives.
            mean = reduce.reduce_mean(inputs, axis=reduced, keepdims=True)
            variance = reduce.reduce_mean(elementwise.square(inputs - mean), axis=reduced)
            mean = reshape(mean, tuple(variance.shape))
            self._assign_moving_average(self.moving_mean, mean)
            self._assign_moving_average(self.moving_variance, variance)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        inv = elementwise.rsqrt(variance + self.epsilon)
        if self.scale:
            inv = inv * self.gamma
        shift = -mean * inv
        if self.center:
            shift = shift + self.beta
        return inputs * self._broadcastable(inv, ndim) + self._broadcastable(shift, ndim)

    def _assign_moving_average(self, variable, value):
        # With the library's ops (as Keras does), so that an ad.function traces the
        # update and replays it on every call; stop_gradient: nothing to differentiate.
        variable.assign_sub((variable - STOP_GRADIENT(value)) * (1.0 - self.momentum))


class LayerNormalization(_Normalization):
    """Normalizes each example over ``axis``: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    Unlike batch normalization the statistics are each example's own (over
    its features), so there are no moving statistics and training and
    inference compute the same thing.

    Args:
        axis: the axis or axes to normalize over (default the last).
        epsilon: added to the variance before the square root.
        center, scale: whether to have ``beta`` / ``gamma`` (trainable).

    >>> layer = ad.layers.LayerNormalization()
    >>> y = layer(ad.constant([[1.0, 2.0, 3.0]]))      # mean 0, variance ~1 per row
    """

    _ad_config = ("axis", "epsilon", "center", "scale")

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(axis, epsilon, center, scale, **kwargs)

    def call(self, inputs):
        ndim = inputs.ndim
        axes = tuple(self._ad_axes)
        mean = reduce.reduce_mean(inputs, axis=axes, keepdims=True)
        variance = reduce.reduce_mean(elementwise.square(inputs - mean), axis=axes, keepdims=True)
        inv = elementwise.rsqrt(variance + self.epsilon)
        if self.scale:
            inv = inv * self._broadcastable(self.gamma, ndim)
        shift = -mean * inv
        if self.center:
            shift = shift + self._broadcastable(self.beta, ndim)
        return inputs * inv + shift


class GroupNormalization(Layer):
    """Normalizes each example over groups of channels (Wu and He), as Keras 3's.

    The channels (``axis``, default the last) are split into ``groups``
    equal groups; each group of each example is normalized by its own mean
    and variance over every other axis, then scaled by ``gamma`` and shifted
    by ``beta`` per channel. ``groups=1`` normalizes over all channels (like
    layer normalization over every axis); ``groups=channels`` is instance
    normalization.

    Args:
        groups: how many groups (must divide the number of channels).
        axis: the channel axis (default -1).
        epsilon: added to the variance before the square root.
        center, scale: whether to have ``beta`` / ``gamma`` (trainable, one per channel).

    Raises:
        ValueError: ``groups`` that does not divide the channels, naming both.
    """

    _ad_config = ("groups", "axis", "epsilon", "center", "scale")

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = int(groups), int(axis), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.gamma = self.beta = None

    def build(self, input_shape):
        channels = input_shape[self.axis]
        if channels is None or channels % self.groups or self.groups > channels:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number "
                             f"of channels ({channels}) for layer {self.name!r}.")
        if self.scale:
            self.gamma = self.add_weight(name="gamma", shape=(channels,), initializer="ones")
        if self.center:
            self.beta = self.add_weight(name="beta", shape=(channels,), initializer="zeros")

    def call(self, inputs):
        shape = tuple(inputs.shape)
        axis = self.axis % len(shape)
        if axis != len(shape) - 1:
            raise NotImplementedError(f"GroupNormalization: only the last axis as channels is "
                                      f"implemented (axis={self.axis})")
        channels = shape[-1]
        grouped = reshape(inputs, shape[:-1] + (self.groups, channels // self.groups))
        axes = tuple(range(1, len(shape) - 1)) + (len(shape),)   # all but batch and group
        mean = reduce.reduce_mean(grouped, axis=axes, keepdims=True)
        variance = reduce.reduce_mean(elementwise.square(grouped - mean), axis=axes,
                                      keepdims=True)
        normalized = reshape((grouped - mean) * elementwise.rsqrt(variance + self.epsilon), shape)
        if self.scale:
            normalized = normalized * self.gamma
        return normalized + self.beta if self.center else normalized
