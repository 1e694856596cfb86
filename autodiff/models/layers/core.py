"""The core layers: Dense, Flatten, Dropout, SpatialDropout2D, Embedding (with mask_zero)."""

import numpy as np

from ...dtypes import int32
from ...ops.elementwise import cast
from ...ops.matmul import matmul
from ...ops.nn_compositions import dropout
from ...ops.open_sizes import open_sized
from ...ops.shape import reshape
from ...ops.resource_gather import lookup_rows
from ...ops.slicing import gather
from .. import regularizers
from ...ops.predicates import not_equal
from .base import Layer, _unique_name, get_activation

__all__ = ["Dense", "Flatten", "Dropout", "SpatialDropout2D", "Embedding"]


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

    _ad_config = ("units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
                  "kernel_regularizer", "bias_regularizer")

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
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
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.units,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer)

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
            known = int(np.prod(lead[1:] + (self.units,), dtype=np.int64))
            if known and open_sized(inputs):   # no batch size written into a trace serving any
                lead = (-1,) + lead[1:]
            outputs = reshape(matmul(flat, self.kernel), lead + (self.units,))
        if self.use_bias:
            outputs = outputs + self.bias
        return outputs if self.activation is None else self.activation(outputs)


class Flatten(Layer):
    """Each example flattened to one axis: ``[batch, d1, d2, ...] -> [batch, d1 * d2 * ...]``.

    >>> ad.layers.Flatten()(ad.ones([2, 3, 4])).shape
    TensorShape([2, 12])
    """

    _ad_config = ()

    def call(self, inputs):
        if inputs.ndim < 2:
            return reshape(inputs, (-1, 1))
        features = int(np.prod(inputs.shape[1:], dtype=np.int64))
        if features and open_sized(inputs):   # no batch size written into a trace serving any
            return reshape(inputs, (-1, features))
        return reshape(inputs, (inputs.shape[0], -1))


class Dropout(Layer):
    """While training, zeroes each input with probability ``rate`` and scales the rest by
    ``1 / (1 - rate)``; otherwise passes inputs through unchanged (Keras' inverted dropout).

    Args:
        rate: the fraction to drop, in [0, 1).
        noise_shape: the shape of the mask, broadcast against the input (None: the input's).
        seed: an int: this layer draws from its own stream, reproducible after
            ``ad.random.set_seed``; None: the global stream.

    The masks are this library's random numbers, not Keras': after the same
    seed, Keras drops other elements (the rule, the rate and the scaling are Keras').

    >>> layer = ad.layers.Dropout(0.5)
    >>> layer(ad.ones([4]), training=False).numpy()      # inference: unchanged
    array([1., 1., 1., 1.], dtype=float32)
    """

    _ad_config = ("rate", "seed", "noise_shape")

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1 (1 excluded). Received: rate={rate!r}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        return dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)


class SpatialDropout2D(Dropout):
    """Dropout of whole channels: while training, each channel of each example (NHWC) is
    zeroed with probability ``rate`` everywhere at once, the rest scaled by ``1 / (1 - rate)``.

    >>> ad.keras.layers.SpatialDropout2D(0.5)(ad.ones([1, 2, 2, 3]), training=False).shape
    TensorShape([1, 2, 2, 3])
    """

    _ad_config = ("rate", "seed")

    def __init__(self, rate, data_format=None, seed=None, name=None, **kwargs):
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"SpatialDropout2D: data_format={data_format!r} is not "
                                      f"implemented (channels_last only)")
        super().__init__(rate, seed=seed, name=name or _unique_name("spatial_dropout2d"),
                         **kwargs)

    def call(self, inputs, training=False):
        if inputs.ndim != 4:
            raise ValueError(f"SpatialDropout2D layer {self.name!r}: expected rank 4 "
                             f"[batch, height, width, channels], got shape {tuple(inputs.shape)}")
        if not training or self.rate == 0:
            return inputs
        shape = (inputs.shape[0], 1, 1, inputs.shape[3])
        return dropout(inputs, self.rate, noise_shape=shape, seed=self.seed)


class Embedding(Layer):
    """A lookup table: row ``i`` of ``embeddings`` for each integer ``i`` in the input.

    Args:
        input_dim: the vocabulary size (rows of the table).
        output_dim: the size of each vector.
        embeddings_initializer: Keras' default ``'uniform'`` is U(-0.05, 0.05).
        mask_zero: id 0 is padding: the layer's mask (``compute_mask``) is
            ``ids != 0``, and a Sequential or functional model passes it to the
            layers after it that take a ``mask`` (the recurrent layers skip those
            steps), as Keras.
        sparse_update: this library's opt-in for Keras 3's sparse update (not a
            Keras argument). False (default): the table's gradient is dense, zeros
            in the rows not looked up. True: it is an ``ad.IndexedSlices``, one row
            per occurrence of an id, as TensorFlow gives it, and the optimizers
            apply it as Keras 3 does: Adam, RMSprop and Adagrad add each
            occurrence's square into their second moment (``sum g_i**2`` where the
            dense gradient gives ``(sum g_i)**2``).

    >>> layer = ad.layers.Embedding(10, 3, sparse_update=True)
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.reduce_sum(layer(ad.constant([4, 4, 1])))
    >>> tape.gradient(loss, layer.embeddings).indices.numpy()
    array([4, 4, 1], dtype=int32)

    >>> layer = ad.layers.Embedding(10, 3)
    >>> layer(ad.constant([[1, 2], [3, 4]])).shape
    TensorShape([2, 2, 3])
    """

    _ad_config = ("input_dim", "output_dim", "embeddings_initializer", "mask_zero")

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", mask_zero=False,
                 sparse_update=False, **kwargs):
        super().__init__(**kwargs)
        self.mask_zero = bool(mask_zero)
        self.sparse_update = bool(sparse_update)
        for arg, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Both `input_dim` and `output_dim` should be positive, "
                                 f"Received {arg}={value!r}")
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.embeddings_initializer = embeddings_initializer
        self.embeddings = None

    def build(self, input_shape):
        self.embeddings = self.add_weight(name="embeddings", shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer)

    def call(self, inputs):
        if not inputs.dtype.is_integer:
            inputs = cast(inputs, int32)   # Keras casts float ids to int32
        if self.sparse_update:
            return lookup_rows(self.embeddings, inputs)   # gradient: IndexedSlices
        return gather(self.embeddings, inputs)

    def get_config(self):
        config = super().get_config()
        if self.sparse_update:   # only then: Keras 3 does not know the argument
            config["sparse_update"] = True
        return config

    def compute_mask(self, inputs, mask=None):
        return not_equal(inputs, 0) if self.mask_zero else None
