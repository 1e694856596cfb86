"""Convolution and pooling layers, channels last: Conv1D (NWC), Conv2D, MaxPooling2D,
AveragePooling2D (NHWC)."""

from ... import nn
from ...ops.join import pad
from .base import Layer, _unique_name, get_activation, refuse

__all__ = ["Conv1D", "Conv2D", "MaxPooling2D", "AveragePooling2D"]


class Conv2D(Layer):
    """A 2-D convolution layer: ``activation(conv2d(inputs, kernel) + bias)``, as Keras.

    Args:
        filters: number of output channels.
        kernel_size: an int or a pair ``(kh, kw)``.
        strides: an int or a pair (default 1).
        padding: ``'valid'`` or ``'same'`` (any case).
        dilation_rate: an int or a pair (default 1).
        activation: a callable, a name or None.
        use_bias: whether to add a bias per output channel.
        kernel_initializer, bias_initializer: as ``Dense``.

    Inputs are NHWC ``[batch, height, width, channels]``; the kernel,
    created on the first call, is ``(kh, kw, channels, filters)``.

    >>> layer = ad.layers.Conv2D(4, 3, padding="same")
    >>> layer(ad.ones([2, 8, 8, 3])).shape, layer.kernel.shape
    (TensorShape([2, 8, 8, 4]), TensorShape([3, 3, 3, 4]))
    """

    _ad_config = ("filters", "kernel_size", "strides", "padding", "dilation_rate", "activation",
                  "use_bias", "kernel_initializer", "bias_initializer")

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 name=None, kernel_regularizer=None, bias_regularizer=None, **kwargs):
        refuse("Conv2D", kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer)
        # Keras' name is 'conv2d' (not the snake case of the class name, 'conv2_d')
        super().__init__(name=name or _unique_name("conv2d"), **kwargs)
        if int(filters) <= 0:
            raise ValueError(f"Conv2D: filters must be a positive int (the number of output "
                             f"channels), not {filters!r}")
        self.filters = int(filters)
        self.kernel_size = _int_pair(kernel_size, "kernel_size")
        self.strides = _int_pair(strides, "strides")
        self.dilation_rate = _int_pair(dilation_rate, "dilation_rate")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"Conv2D: padding must be 'valid' or 'same', not {padding!r}")
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(f"Conv2D layer {self.name!r}: its input must have rank 4 "
                             f"[batch, height, width, channels], got shape "
                             f"{tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (input_shape[-1], self.filters), initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer)

    def call(self, inputs):
        outputs = nn.conv2d(inputs, self.kernel, strides=self.strides,
                            padding=self.padding.upper(), dilations=self.dilation_rate)
        if self.use_bias:
            outputs = outputs + self.bias
        return outputs if self.activation is None else self.activation(outputs)


class Conv1D(Layer):
    """A 1-D convolution over sequences ``[batch, steps, channels]``, as Keras' Conv1D.

    Args:
        filters, activation, use_bias, kernel_initializer, bias_initializer: as ``Conv2D``.
        kernel_size, strides, dilation_rate: ints (or one-element tuples).
        padding: ``'valid'``, ``'same'`` or ``'causal'`` (zeros on the left only, so
            an output step never sees a later input step).

    The kernel is ``(kernel_size, channels, filters)``.

    >>> ad.keras.layers.Conv1D(4, 3, padding="causal")(ad.ones([2, 10, 3])).shape
    TensorShape([2, 10, 4])
    """

    _ad_config = ("filters", "kernel_size", "strides", "padding", "dilation_rate", "activation",
                  "use_bias", "kernel_initializer", "bias_initializer")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", dilation_rate=1,
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 name=None, **kwargs):
        refuse("Conv1D", kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer)
        super().__init__(name=name or _unique_name("conv1d"), **kwargs)
        self.filters = int(filters)
        self.kernel_size = (_one_int(kernel_size, "kernel_size"),)
        self.strides = (_one_int(strides, "strides"),)
        self.dilation_rate = (_one_int(dilation_rate, "dilation_rate"),)
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same", "causal"):
            raise ValueError(f"Conv1D: padding must be 'valid', 'same' or 'causal', not "
                             f"{padding!r}")
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"Conv1D layer {self.name!r}: its input must have rank 3 "
                             f"[batch, steps, channels], got shape {tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (
            input_shape[-1], self.filters), initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,),
                                        initializer=self.bias_initializer)

    def call(self, inputs):
        padding = self.padding.upper()
        if padding == "CAUSAL":   # Keras: pad (kernel - 1) * dilation steps on the left
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs = pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "VALID"
        outputs = nn.conv1d(inputs, self.kernel, stride=self.strides[0], padding=padding,
                            dilations=self.dilation_rate[0])
        if self.use_bias:
            outputs = outputs + self.bias
        return self.activation(outputs)


def _one_int(value, what):
    value = value[0] if isinstance(value, (tuple, list)) and len(value) == 1 else value
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"Conv1D: {what} must be a positive int, not {value!r}")
    return value


def _int_pair(value, what, layer="Conv2D"):
    pair = (value, value) if isinstance(value, int) else tuple(int(v) for v in value)
    if len(pair) != 2 or min(pair) < 1:
        raise ValueError(f"{layer}: {what} must be a positive int or a pair of them, "
                         f"not {value!r}")
    return pair


class _Pooling2D(Layer):
    """The shared part of the 2-D pooling layers: window, strides, padding."""

    _pool = None   # the ad.nn function
    _ad_config = ("pool_size", "padding", "strides")

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__}: only data_format='channels_last' (NHWC) "
                             f"is supported, not {data_format!r}")
        self.pool_size = _int_pair(pool_size, "pool_size", type(self).__name__)
        self.strides = self.pool_size if strides is None else _int_pair(
            strides, "strides", type(self).__name__)
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"{type(self).__name__}: padding must be 'valid' or 'same', "
                             f"not {padding!r}")

    def call(self, inputs):
        if inputs.ndim != 4:
            raise ValueError(f"{type(self).__name__} layer {self.name!r}: its input must have "
                             f"rank 4 [batch, height, width, channels], got shape "
                             f"{tuple(inputs.shape)}")
        return type(self)._pool(inputs, self.pool_size, self.strides, self.padding.upper())


class MaxPooling2D(_Pooling2D):
    """The maximum of each ``pool_size`` window (NHWC), as ``keras.layers.MaxPooling2D``.

    Args:
        pool_size: an int or a pair (default 2 x 2).
        strides: an int, a pair, or None (the pool size).
        padding: ``'valid'`` or ``'same'``.

    >>> ad.layers.MaxPooling2D()(ad.ones([1, 4, 4, 3])).shape
    TensorShape([1, 2, 2, 3])
    """

    _pool = staticmethod(nn.max_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format,
                         name=name or _unique_name("max_pooling2d"), **kwargs)


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window (NHWC), as ``keras.layers.AveragePooling2D``.

    Args: as ``MaxPooling2D``. With ``'same'`` padding the padded cells are not counted.

    >>> ad.layers.AveragePooling2D(2)(ad.ones([1, 4, 4, 3])).shape
    TensorShape([1, 2, 2, 3])
    """

    _pool = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format,
                         name=name or _unique_name("average_pooling2d"), **kwargs)
