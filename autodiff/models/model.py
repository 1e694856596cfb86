"""``ad.keras.Model`` (subclassing, and ``Model(inputs, outputs)``) and ``ad.keras.Sequential``.

A Keras 3 custom training loop runs with ``keras.`` replaced by ``ad.keras.``:

    >>> model = ad.keras.Sequential([ad.keras.Input((3,)),
    ...                              ad.keras.layers.Dense(8, activation="relu"),
    ...                              ad.keras.layers.Dense(1)])
    >>> opt = ad.keras.optimizers.Adam(1e-3)
    >>> x, y = ad.ones([4, 3]), ad.zeros([4, 1])
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.keras.losses.MeanSquaredError()(y, model(x, training=True))
    >>> grads = tape.gradient(loss, model.trainable_variables)
    >>> _ = opt.apply_gradients(zip(grads, model.trainable_variables))
    >>> int(opt.iterations)
    1

and so does Keras' own loop: ``model.compile(...)``, ``model.fit(...)``
(``training/``), ``model.save(...)`` (``saving/``).

A ``Model`` subclass assigns its layers (and variables) as attributes in
``__init__`` and computes in ``call``; it finds them by walking its
attributes in the order they were assigned, as Keras tracks them. That
order is the order of ``trainable_variables``, so the gradient list lines up
with Keras' for the same model. ``Model(inputs, outputs)`` makes a
functional model (``functional/model.py``).

Every call runs inside the model's name scope, and each layer inside its
own, so a tape's records read ``sequential/dense_1/MatMul``: the tape
player groups them by layer.
"""

import inspect

from ..dtypes import as_dtype
from ..ops.creation import zeros
from .functional.keras_tensor import Input, InputLayer, KerasTensor, has_symbolic, symbolic_call
from .layers.base import Layer, _unique_name
from .module import camel_to_snake, not_recorded
from .saving.model_io import SavingMixin
from .training.trainer import Trainer

__all__ = ["Model", "Sequential", "Input", "InputLayer"]


class Model(Trainer, SavingMixin, Layer):
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
    >>> [v.path for v in model.trainable_variables][:2]
    ['two_layers/dense/kernel', 'two_layers/dense/bias']

    ``Model(inputs, outputs)`` (or ``Model(inputs=..., outputs=...)``) makes a
    functional model instead.
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            from .functional.model import Functional
            return Functional.__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args, name=None, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise NotImplementedError(
                f"{type(self).__name__}: a subclassed Model made with inputs and outputs (a "
                f"functional subclass) is not supported; use ad.keras.Model(inputs, outputs)")
        super().__init__(name=name or _unique_name(camel_to_snake(type(self).__name__)),
                         **kwargs)
        self._ad_compiled = None   # what compile() set (training/trainer.py)

    def __call__(self, *args, **kwargs):
        if "_ad_weights" not in vars(self):
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before it assigns layers (as in Keras)")
        if args and has_symbolic(args[0], args[1:], kwargs):
            return symbolic_call(self, args[0], args[1:], kwargs)
        parameters = inspect.signature(self.call).parameters
        for key in ("training", "mask"):
            if key in kwargs and key not in parameters:
                del kwargs[key]
        self.built = True
        return self._call_counting_losses(args[0] if args else kwargs.pop("inputs"), args[1:],
                                          kwargs)

    def call(self, inputs, training=None):
        raise NotImplementedError(f"{type(self).__name__} must define call(self, inputs, ...)")

    @property
    def layers(self):
        """The layers this model holds directly, in the order they were assigned."""
        return [leaf for leaf in self._own_leaves() if isinstance(leaf, Layer)]

    def get_layer(self, name=None, index=None):
        """The layer named ``name`` (or at ``index`` in ``layers``).

        Raises:
            ValueError: no layer of that name, naming the model's layers.
        """
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in self.layers]}.")

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints each layer's name and type, output shape and number of parameters, and
        the totals, as Keras' ``summary()`` (without its box drawing)."""
        from .functional.summary import summary_text
        (print_fn or print)(summary_text(self, expand_nested=expand_nested,
                                         show_trainable=show_trainable))


class Sequential(Model):
    """Layers applied one after another: ``Sequential([a, b, c])(x)`` is ``c(b(a(x)))``.

    Args:
        layers: the layers, in order; an ``ad.keras.Input(shape)`` first (or
            ``input_shape=`` on the first layer) builds the model at once.
        trainable: False makes the variables its layers create non-trainable.
        name: the model's name (default ``'sequential'``, made unique).

    ``training=`` is passed to the layers that take it (Dropout,
    BatchNormalization), and an ``Embedding(mask_zero=True)``'s mask to the
    layers that take ``mask`` (the recurrent layers).

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
        if isinstance(layer, KerasTensor) and isinstance(layer._ad_history[0].layer, InputLayer):
            layer = layer._ad_history[0].layer
        if isinstance(layer, InputLayer):
            if self._layers:
                raise ValueError("Sequential.add: an Input can only come first")
            self._ad_input = (layer.batch_shape, layer.dtype)
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

    @property
    def input_shape(self):
        return None if self._ad_input is None else self._ad_input[0]

    def _build_now(self):
        if self._ad_input is None or not self._layers:
            return
        shape, dtype = self._ad_input
        example = zeros(tuple(1 if d is None else d for d in shape), dtype=as_dtype(dtype))
        with not_recorded():
            self(example, training=False)   # each layer makes its variables from the shape
        self.built = True

    def build(self, input_shape=None):
        """Builds every layer for inputs of ``input_shape`` (batch axis included)."""
        self._ad_input = (tuple(input_shape), self.dtype)
        self._build_now()

    def call(self, inputs, training=None, mask=None):
        outputs = inputs
        for layer in self._layers:
            kwargs = {} if training is None else {"training": training}
            if mask is not None and "mask" in inspect.signature(layer.call).parameters:
                kwargs["mask"] = mask
            before = outputs
            outputs = layer(outputs, **kwargs)
            mask = layer.compute_mask(before, mask)
            if "_ad_output_shape" not in vars(layer) and hasattr(outputs, "shape"):   # summary()
                layer._ad_output_shape = (None,) + tuple(outputs.shape[1:])
        return outputs

    def get_config(self):
        from .saving.config import serialize_layer
        layers = [serialize_layer(layer) for layer in self._layers]
        if self._ad_input is not None:
            shape, dtype = self._ad_input
            layers.insert(0, {"module": "keras.layers", "class_name": "InputLayer",
                              "config": {"batch_shape": list(shape), "dtype": dtype.name,
                                         "sparse": False, "ragged": False,
                                         "name": f"input_layer{_suffix(self.name)}"},
                              "registered_name": None})
        from .layers.base import _dtype_policy
        return {"name": self.name, "trainable": self.trainable,
                "dtype": _dtype_policy(self.dtype), "layers": layers}

    @classmethod
    def from_config(cls, config):
        from .saving.config import deserialize_layer
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for layer_config in config.get("layers", []):
            if layer_config.get("class_name") == "InputLayer":
                c = layer_config["config"]
                model.add(InputLayer(batch_shape=c.get("batch_shape") or c.get("batch_input_shape"),
                                     dtype=c.get("dtype")))
            else:   # built by the model, inside its scope, as Keras 3 names the paths
                model.add(deserialize_layer(dict(layer_config, build_config=None)))
        shape = config.get("build_input_shape")
        if shape is not None and not model.built:
            model.build(shape)
        return model


def _suffix(name):
    tail = name.rpartition("_")[2]
    return f"_{tail}" if tail.isdigit() else ""
