"""``ad.layers`` (also ``ad.keras.layers``): Keras 3's layers, written with the engine's ops.

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

from .base import Layer
from .conv import AveragePooling2D, Conv2D, MaxPooling2D
from .core import Dense, Dropout, Embedding, Flatten
from .merging import Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract
from .normalization import BatchNormalization, LayerNormalization
from .recurrent import GRU, LSTM, RNN, SimpleRNN
from .recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell

from ..functional.keras_tensor import Input, InputLayer  # noqa: E402 (keras.layers.Input)

# Keras' shorter names for the pooling layers
MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D

__all__ = ["Layer", "Dense", "Flatten", "Dropout", "Embedding", "Conv2D", "MaxPooling2D",
           "MaxPool2D", "AveragePooling2D", "AvgPool2D", "BatchNormalization",
           "LayerNormalization", "RNN", "SimpleRNN", "GRU", "LSTM", "SimpleRNNCell", "GRUCell",
           "LSTMCell", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
           "Concatenate", "Input", "InputLayer"]


def __dir__():   # dir(ad.layers) and tab completion show the layers, not the package's modules
    return __all__
