"""``ad.layers``: the two Keras layers the autodiff guides use, Dense and BatchNormalization.

A layer is an ``ad.Module`` that creates its variables on the first call,
when it knows the input's last dimension (Keras calls this *building*):

    >>> ad.random.set_seed(0)
    >>> layer = ad.layers.Dense(10, activation="relu")
    >>> layer.built
    False
    >>> y = layer(ad.random.normal([7, 5]))          # builds: kernel (5, 10), bias (10,)
    >>> [v.name for v in layer.trainable_variables]
    ['dense/kernel:0', 'dense/bias:0']

Names follow Keras: the snake_case class name, made unique per program run
(``dense``, ``dense_1``, ...), and variables named ``layer/variable:0``. A
layer lists its own variables in creation order (kernel, then bias), not
sorted by attribute name as a plain ``ad.Module`` would.

Everything a layer computes is ordinary ops, so a tape differentiates a
layer like any other code, to any order (the guides take Jacobians and
Hessians through them). Only batch normalization's moving statistics are
updated outside every tape, with ``Variable.assign``, as in Keras.
"""

import inspect
import itertools
import math as _math

from .. import dtypes, nn
from ..ops import creation, elementwise, reduce
from ..ops import random as _random
from ..ops.matmul import matmul
from ..ops.shape import STOP_GRADIENT, reshape
from ..tensor import Variable, convert_to_tensor
from .module import Module, camel_to_snake

__all__ = ["Layer", "Dense", "BatchNormalization", "Conv2D"]


def __dir__():   # dir(ad.layers) and tab completion show the layers, not this module's imports
    return __all__

_name_counters = {}  # base name -> itertools.count, so names are unique per run (Keras' uids)


def _unique_name(base):
    n = next(_name_counters.setdefault(base, itertools.count()))
    return base if n == 0 else f"{base}_{n}"


ACTIVATIONS = {
    "linear": None, "relu": nn.relu, "relu6": nn.relu6, "elu": nn.elu, "selu": nn.selu,
    "sigmoid": nn.sigmoid, "tanh": nn.tanh, "softmax": nn.softmax, "log_softmax": nn.log_softmax,
    "softplus": nn.softplus, "gelu": nn.gelu, "silu": nn.silu, "swish": nn.swish,
    "leaky_relu": nn.leaky_relu, "exponential": elementwise.exp,
}


def get_activation(activation):
    """A callable for ``activation``: None, a callable, or a Keras name such as ``'relu'``."""
    if activation is None or callable(activation):
        return activation
    if isinstance(activation, str) and activation in ACTIVATIONS:
        return ACTIVATIONS[activation]
    raise ValueError(f"Unknown activation function: {activation!r}. "
                     f"Use a callable or one of {sorted(ACTIVATIONS)}")


def glorot_uniform(shape, dtype):
    """Keras' default kernel initializer: U(-l, l) with l = sqrt(6 / (fan_in + fan_out)).

    For a conv kernel ``(kh, kw, in, out)`` the fans count the receptive
    field too: ``fan_in = kh * kw * in`` (Keras' ``compute_fans``)."""
    fan_in, fan_out = (shape[-2], shape[-1]) if len(shape) >= 2 else (shape[0], shape[0])
    receptive = _math.prod(shape[:-2]) if len(shape) > 2 else 1
    fan_in, fan_out = fan_in * receptive, fan_out * receptive
    limit = _math.sqrt(6.0 / max(1, fan_in + fan_out))
    return _random.uniform(shape, -limit, limit, dtype=dtype)


INITIALIZERS = {
    "glorot_uniform": glorot_uniform,
    "zeros": lambda shape, dtype: creation.zeros(shape, dtype=dtype),
    "ones": lambda shape, dtype: creation.ones(shape, dtype=dtype),
    "random_normal": lambda shape, dtype: _random.normal(shape, stddev=0.05, dtype=dtype),
}


def _initializer(init):
    if callable(init):
        return init
    if init in INITIALIZERS:
        return INITIALIZERS[init]
    raise ValueError(f"Unknown initializer: {init!r}. Use a callable (shape, dtype) -> tensor "
                     f"or one of {sorted(INITIALIZERS)}")


class Layer(Module):
    """The base of ``ad.layers``: a unique Keras-style name, building on first call.

    Subclasses implement ``build(input_shape)`` (create variables with
    ``add_weight``) and ``call(inputs, ...)``.

    Args:
        name: the layer's name; by default a unique snake_case class name.
        dtype: the variables' dtype (default float32). Floating inputs of
            another dtype are cast to it, as Keras' layers do.
    """

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name or _unique_name(camel_to_snake(type(self).__name__)))
        self.dtype = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        self._ad_weights = []     # own variables in creation order
        self.built = False

    def add_weight(self, name, shape, initializer, trainable=True):
        """Creates a Variable named ``'<layer>/<name>'`` and lists it on this layer."""
        value = _initializer(initializer)(tuple(shape), self.dtype)
        variable = Variable(value, trainable=trainable, name=f"{self.name}/{name}", dtype=self.dtype)
        self._ad_weights.append(variable)
        return variable

    def _own_leaves(self):
        yield from self._ad_weights
        yield from super()._own_leaves()

    @property
    def weights(self):
        """All variables, as Keras names them."""
        return list(self.variables)

    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs)
        if inputs.dtype != self.dtype and inputs.dtype.is_floating:
            inputs = elementwise.cast(inputs, self.dtype)
        if not self.built:
            self.build(tuple(inputs.shape))
            self.built = True
        if "training" in kwargs and "training" not in inspect.signature(self.call).parameters:
            del kwargs["training"]  # as Keras: a layer that does not use it never sees it
        return self.call(inputs, *args, **kwargs)

    def build(self, input_shape):
        pass

    def call(self, inputs):
        raise NotImplementedError


class Dense(Layer):
    """A densely connected layer: ``activation(inputs @ kernel + bias)``.

    Args:
        units: size of the last axis of the output.
        activation: a callable (``ad.nn.relu``), a name (``'relu'``) or None (linear).
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: a name (``'glorot_uniform'``,
            ``'zeros'``, ``'ones'``, ``'random_normal'``) or a function
            ``(shape, dtype) -> tensor``. Random ones follow ``ad.random.set_seed``.

    Inputs of rank > 2 are multiplied on their last axis.

    >>> layer = ad.layers.Dense(3)
    >>> layer(ad.ones([2, 4])).shape, layer.kernel.shape
    (TensorShape([2, 3]), TensorShape([4, 3]))
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if isinstance(units, bool) or not hasattr(units, "__index__") or int(units) <= 0:
            raise ValueError(f"Dense: units must be a positive int (the number of outputs), "
                             f"not {units!r}")
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        if len(input_shape) < 2 or input_shape[-1] is None:
            raise ValueError(f"Dense layer {self.name!r}: its input needs rank 2 or more with "
                             f"a known last axis, got shape {tuple(input_shape)}")
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer)

    def call(self, inputs):
        if inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"Dense layer {self.name!r}: it was built for inputs whose last "
                             f"axis is {self.kernel.shape[0]}, but this input has shape "
                             f"{tuple(inputs.shape)}")
        if inputs.ndim == 2:
            outputs = matmul(inputs, self.kernel)
        else:  # fold the leading axes into one, multiply, unfold
            lead = tuple(inputs.shape[:-1])
            flat = reshape(inputs, (-1, inputs.shape[-1]))
            outputs = reshape(matmul(flat, self.kernel), lead + (self.units,))
        if self.use_bias:
            outputs = outputs + self.bias
        return outputs if self.activation is None else self.activation(outputs)


class BatchNormalization(Layer):
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

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                 name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.axis = [int(axis)] if isinstance(axis, int) else [int(a) for a in axis]
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        ndim = len(input_shape)
        axes = sorted({a % ndim for a in self.axis if -ndim <= a < ndim})
        if len(axes) != len(self.axis):
            raise ValueError(f"Invalid axis {self.axis} for layer {self.name!r} and an input "
                             f"of rank {ndim}")
        self._ad_axes = axes
        self._ad_rank = ndim
        param_shape = tuple(input_shape[a] for a in axes)
        if self.scale:
            self.gamma = self.add_weight("gamma", param_shape, "ones")
        if self.center:
            self.beta = self.add_weight("beta", param_shape, "zeros")
        self.moving_mean = self.add_weight("moving_mean", param_shape, "zeros", trainable=False)
        self.moving_variance = self.add_weight("moving_variance", param_shape, "ones",
                                               trainable=False)

    def _broadcastable(self, t, ndim):
        """A per-feature tensor reshaped so it broadcasts against the input."""
        if self._ad_axes == [ndim - 1] or len(self._ad_axes) == ndim:
            return t
        shape = [1] * ndim
        for a, d in zip(self._ad_axes, t.shape):
            shape[a] = d
        return reshape(t, tuple(shape))

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

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 name=None, dtype=None):
        # Keras' name is 'conv2d' (not the snake case of the class name, 'conv2_d')
        super().__init__(name=name or _unique_name("conv2d"), dtype=dtype)
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
        self.kernel = self.add_weight(
            "kernel", self.kernel_size + (input_shape[-1], self.filters), self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer)

    def call(self, inputs):
        outputs = nn.conv2d(inputs, self.kernel, strides=self.strides,
                            padding=self.padding.upper(), dilations=self.dilation_rate)
        if self.use_bias:
            outputs = outputs + self.bias
        return outputs if self.activation is None else self.activation(outputs)


def _int_pair(value, what):
    pair = (value, value) if isinstance(value, int) else tuple(int(v) for v in value)
    if len(pair) != 2 or min(pair) < 1:
        raise ValueError(f"Conv2D: {what} must be a positive int or a pair of them, "
                         f"not {value!r}")
    return pair
