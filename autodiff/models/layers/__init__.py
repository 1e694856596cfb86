"""``ad.layers`` (also ``ad.keras.layers``): Keras 3's layers, written with the engine's ops.

A layer is an ``ad.Module`` that creates its variables on the first call,
when it knows the input's last dimension (Keras calls this *building*):

    >>> ad.random.set_seed(0)
    >>> layer = ad.layers.Dense(10, activation="relu")
    >>> layer.built
    False
    >>> y = layer(ad.random.normal([7, 5]))          # builds: kernel (5, 10), bias (10,)
    >>> [(v.name, v.path) for v in layer.trainable_variables]
    [('kernel', 'dense/kernel'), ('bias', 'dense/bias')]

Names follow Keras 3: the snake_case class name, made unique per program run
(``dense``, ``dense_1``, ...); a variable's ``name`` is short and its
``path`` names the scopes it was built in (``weights.py``). A layer lists
its own variables in creation order (kernel, then bias), not sorted by
attribute name as a plain ``ad.Module`` would.

Files, one concept each: ``base.py`` (building, add_weight, losses,
configs), ``weights.py``, ``core.py``, ``activation.py``, ``conv.py``,
``pooling.py``, ``normalization.py``, ``merging.py``, ``attention.py``,
``recurrent_cells.py``, ``recurrent.py``, ``wrappers.py``, ``reshaping.py`` (Permute,
RepeatVector, Rescaling, Identity, Lambda).

Everything a layer computes is ordinary ops, so a tape differentiates a
layer like any other code, to any order (the guides take Jacobians and
Hessians through them). Only batch normalization's moving statistics are
updated outside every tape, with ``Variable.assign``, as in Keras.
"""

from .activation import Activation, LeakyReLU, ReLU, Reshape, Softmax
from .attention import MultiHeadAttention
from .base import Layer
from .conv import AveragePooling2D, Conv1D, Conv2D, MaxPooling2D
from .core import Dense, Dropout, Embedding, Flatten, SpatialDropout2D
from .merging import Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract
from .normalization import BatchNormalization, GroupNormalization, LayerNormalization
from .pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
                      GlobalMaxPooling2D)
from .recurrent import GRU, LSTM, RNN, SimpleRNN
from .reshaping import Identity, Lambda, Permute, RepeatVector, Rescaling
from .recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell
from .wrappers import Bidirectional, TimeDistributed

from ..functional.keras_tensor import Input, InputLayer  # noqa: E402 (keras.layers.Input)

# Keras' shorter names for the pooling layers
MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D

__all__ = ["Layer", "Dense", "Flatten", "Dropout", "Embedding", "Conv2D", "MaxPooling2D",
           "MaxPool2D", "AveragePooling2D", "AvgPool2D", "BatchNormalization",
           "LayerNormalization", "RNN", "SimpleRNN", "GRU", "LSTM", "SimpleRNNCell", "GRUCell",
           "LSTMCell", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
           "Concatenate", "Input", "InputLayer", "Activation", "ReLU", "LeakyReLU", "Softmax",
           "Reshape", "Conv1D", "MultiHeadAttention", "GroupNormalization", "SpatialDropout2D",
           "GlobalAveragePooling2D", "GlobalMaxPooling2D", "GlobalAveragePooling1D",
           "GlobalMaxPooling1D", "TimeDistributed", "Bidirectional", "Permute", "RepeatVector",
           "Rescaling", "Identity", "Lambda"]


def __dir__():   # dir(ad.layers) and tab completion show the layers, not the package's modules
    return __all__
