"""``ad.keras.Model`` (subclassing) and ``ad.keras.Sequential``: layers that hold layers.

A Keras 3 custom training loop runs with ``keras.`` replaced by ``ad.keras.``:

    >>> model = ad.keras.Sequential([ad.keras.Input((3,)),
    ...                              ad.keras.layers.Dense(8, activation="relu"),
    ...                              ad.keras.layers.Dense(1)])
    >>> opt = ad.keras.optimizers.Adam(1e-3)
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.keras.losses.MeanSquaredError()(y, model(x, training=True))
    >>> grads = tape.gradient(loss, model.trainable_variables)
    >>> opt.apply_gradients(zip(grads, model.trainable_variables))

A ``Model`` subclass assigns its layers (and variables) as attributes in
``__init__`` and computes in ``call``; it finds them as ``tf.Module`` does,
by walking its attributes, but in the order they were assigned, as Keras
tracks them (every ``Layer`` does; a plain ``ad.Module`` sorts attribute names). That order is
the order of ``trainable_variables``, so the gradient list lines up with
Keras' for the same model.

Every call runs inside the model's name scope, and each layer inside its
own, so a tape's records read ``sequential/dense_1/MatMul``: the tape
player groups them by layer.
"""

import inspect

from ..dtypes import as_dtype
from ..ops.creation import zeros
from .layers.base import Layer, _unique_name
from .module import camel_to_snake, not_recorded

__all__ = ["Model", "Sequential", "Input", "InputLayer"]


class Model(Layer):
    """The base of a subclassed model: assign layers in ``__init__``, compute in ``call``.

    >>> class TwoLayers(ad.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = ad.keras.layers.Dense(16, activation="relu")
    ...         self.out = ad.keras.layers.Dense(1)
    ...     def call(self, x, training=False):
    ...         return self.out(self.hidden(x))
    >>> model = TwoLayers()
    >>> y = model(ad.ones([4, 3]))
    >>> [v.name for v in model.trainable_variables][:2]
    ['dense/kernel:0', 'dense/bias:0']

    Only subclassing and ``Sequential`` are supported; ``Model(inputs, outputs)``
    (the functional API) raises NotImplementedError.
    """

    def __init__(self, *args, name=None, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise NotImplementedError(
                "ad.keras.Model(inputs, outputs): the functional API is not supported; "
                "subclass ad.keras.Model (layers in __init__, the computation in call) or "
                "use ad.keras.Sequential")
        super().__init__(name=name or _unique_name(camel_to_snake(type(self).__name__)),
                         **kwargs)

    def __call__(self, *args, **kwargs):
        if "_ad_weights" not in vars(self):
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before it assigns layers (as in Keras)")
        if "training" in kwargs and "training" not in inspect.signature(self.call).parameters:
            del kwargs["training"]
        self.built = True
        return self.call(*args, **kwargs)

    def call(self, inputs, training=None):
        raise NotImplementedError(f"{type(self).__name__} must define call(self, inputs, ...)")

    @property
    def layers(self):
        """The layers this model holds directly, in the order they were assigned."""
        return [leaf for leaf in self._own_leaves() if isinstance(leaf, Layer)]

    def summary(self, print_fn=print):
        """Prints each layer's name, type and number of parameters, and the totals."""
        rows = [(f"{layer.name} ({type(layer).__name__})",
                 sum(int(v.numpy().size) for v in layer.variables)) for layer in self.layers]
        width = max([len(r[0]) for r in rows] + [20])
        lines = [f'Model: "{self.name}"', f"{'Layer (type)':<{width}}  {'Param #':>10}"]
        lines += [f"{text:<{width}}  {count:>10,}" for text, count in rows]
        trainable = sum(int(v.numpy().size) for v in self.trainable_variables)
        total = sum(int(v.numpy().size) for v in self.variables)
        lines += [f"Total params: {total:,}", f"Trainable params: {trainable:,}",
                  f"Non-trainable params: {total - trainable:,}"]
        print_fn("\n".join(lines))


class InputLayer(Layer):
    """The shape (and dtype) of one example, for the first place of a ``Sequential``.

    Args:
        shape: the example's shape, without the batch axis.
        batch_size: an optional fixed batch size.
        dtype: the inputs' dtype (default float32).
    """

    def __init__(self, shape=None, batch_size=None, dtype=None, name=None, **kwargs):
        super().__init__(name=name or _unique_name("input_layer"), dtype=dtype, **kwargs)
        if shape is None:
            raise ValueError("InputLayer: give the shape of one example, e.g. shape=(3,)")
        self.shape = (batch_size,) + tuple(shape)

    def call(self, inputs):
        return inputs


def Input(shape=None, batch_size=None, dtype=None, name=None):  # noqa: N802 (Keras' name)
    """The input of a ``Sequential`` model: ``ad.keras.Sequential([ad.keras.Input((3,)), ...])``.

    Args:
        shape: the shape of one example, without the batch axis.
        batch_size: an optional fixed batch size.
        dtype: the inputs' dtype.

    Returns:
        An ``InputLayer``; ``Sequential`` builds its layers from its shape at once.
    """
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name)


class Sequential(Model):
    """Layers applied one after another: ``Sequential([a, b, c])(x)`` is ``c(b(a(x)))``.

    Args:
        layers: the layers, in order; an ``ad.keras.Input(shape)`` first (or
            ``input_shape=`` on the first layer) builds the model at once.
        trainable: False makes the variables its layers create non-trainable.
        name: the model's name (default ``'sequential'``, made unique).

    ``training=`` is passed to the layers that take it (Dropout, BatchNormalization).

    >>> model = ad.keras.Sequential([ad.keras.layers.Dense(4, input_shape=(3,)),
    ...                              ad.keras.layers.Dense(1)])
    >>> [tuple(v.shape) for v in model.trainable_variables]
    [(3, 4), (4,), (4, 1), (1,)]
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(name=name or _unique_name("sequential"), trainable=trainable)
        self._layers = []
        self._ad_input = None     # (shape with batch axis, dtype), once known
        for layer in layers or ():
            self.add(layer)

    def add(self, layer):
        """Appends ``layer`` (builds the model when the input shape is known)."""
        if isinstance(layer, InputLayer):
            if self._layers:
                raise ValueError("Sequential.add: an Input can only come first")
            self._ad_input = (layer.shape, layer.dtype)
            return self._build_now()
        if not isinstance(layer, Layer):
            raise ValueError(f"Only instances of `ad.keras.layers.Layer` can be added to a "
                            f"Sequential model. Received: {layer!r} "
                            f"(of type {type(layer).__name__})")
        self._layers.append(layer)
        if len(self._layers) == 1 and layer._ad_input_shape is not None and self._ad_input is None:
            self._ad_input = ((None,) + layer._ad_input_shape, layer.dtype)
        return self._build_now()

    def pop(self):
        """Removes and returns the last layer."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        return self._layers.pop()

    @property
    def layers(self):
        return list(self._layers)

    def _build_now(self):
        if self._ad_input is None or not self._layers:
            return
        shape, dtype = self._ad_input
        example = zeros(tuple(1 if d is None else d for d in shape), dtype=as_dtype(dtype))
        with not_recorded():
            self(example, training=False)   # each layer makes its variables from the shape
        self.built = True

    def build(self, input_shape):
        """Builds every layer for inputs of ``input_shape`` (batch axis included)."""
        self._ad_input = (tuple(input_shape), self.dtype)
        self._build_now()

    def call(self, inputs, training=None):
        outputs = inputs
        for layer in self._layers:
            outputs = layer(outputs) if training is None else layer(outputs, training=training)
        return outputs
