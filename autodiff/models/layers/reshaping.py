"""Small layers that rearrange or rescale each example, or run a function: Permute,
RepeatVector, Rescaling, Identity and Lambda (Keras 3's), written with the engine's ops.

    >>> ad.keras.layers.Permute((2, 1))(ad.ones([4, 2, 3])).shape
    TensorShape([4, 3, 2])
    >>> ad.keras.layers.RepeatVector(3)(ad.ones([4, 2])).shape
    TensorShape([4, 3, 2])

A ``Lambda`` layer's function is Python code: a ``.keras`` file cannot hold it here (loading
runs no code from a file), so saving a model with one raises; ``save_weights`` works.
"""

from ...ops.elementwise import cast, multiply
from ...ops.shape import expand_dims, tile, transpose
from ...tensor import convert_to_tensor
from .base import Layer

__all__ = ["Permute", "RepeatVector", "Rescaling", "Identity", "Lambda"]


class Permute(Layer):
    """Each example's axes in the order ``dims`` (1-based: the batch axis stays first).

    Raises:
        ValueError: ``dims`` is not a permutation of ``1..len(dims)`` (Keras' check).
    """

    _ad_config = ("dims",)

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set "
                             f"of indices in `dims` must be consecutive and start from 1. "
                             f"Received dims={self.dims}")

    def call(self, inputs):
        return transpose(inputs, (0,) + self.dims)


class RepeatVector(Layer):
    """Each example (a vector) repeated ``n`` times: ``[batch, d] -> [batch, n, d]``."""

    _ad_config = ("n",)

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n

    def call(self, inputs):
        if inputs.ndim != 2:
            raise ValueError(f"RepeatVector {self.name!r}: expects inputs of rank 2, got shape "
                             f"{tuple(inputs.shape)}")
        return tile(expand_dims(inputs, 1), [1, self.n, 1])


class Rescaling(Layer):
    """``inputs * scale + offset`` (``Rescaling(1 / 255)`` for pixel values)."""

    _ad_config = ("scale", "offset")

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        if not inputs.dtype.is_floating:
            inputs = cast(inputs, self.dtype)
        scale = convert_to_tensor(self.scale, dtype=inputs.dtype)
        return multiply(inputs, scale) + convert_to_tensor(self.offset, dtype=inputs.dtype)


class Identity(Layer):
    """Returns its inputs unchanged (a placeholder in a model)."""

    _ad_config = ()

    def call(self, inputs):
        return inputs


class Lambda(Layer):
    """``function(inputs)`` (and ``**arguments``) as a layer; its ops are recorded as usual.

    Args:
        function: a function of the inputs.
        arguments: keyword arguments for ``function``.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, got {function!r}")
        self.function, self.arguments = function, dict(arguments or {})

    def call(self, inputs):
        return self.function(inputs, **self.arguments)
