"""``Model(inputs, outputs)``: a model described by calling layers on ``ad.keras.Input``.

    >>> a = ad.keras.Input((3,), name="a")
    >>> b = ad.keras.Input((2,), name="b")
    >>> h = ad.keras.layers.Concatenate()([a, b])
    >>> out = ad.keras.layers.Dense(1, name="score")(h)
    >>> model = ad.keras.Model([a, b], out)
    >>> model([ad.ones([4, 3]), ad.ones([4, 2])]).shape
    TensorShape([4, 1])

Calling the model runs the recorded calls (``keras_tensor.Node``) from the
inputs to the outputs in ``graph.py``'s order, each on the values its
arguments now stand for. Inputs and outputs may be one tensor, a list or a
dict, and come back in the same structure. A functional model is a layer:
it can be called on KerasTensors in turn (a nested model).
"""

import inspect

from ... import nest
from ..layers.base import Layer, _unique_name
from ..model import Model
from .graph import map_graph
from .keras_tensor import InputLayer, KerasTensor

__all__ = ["Functional"]


class Functional(Model):
    """A model whose computation is a graph of layer calls (made by ``Model(inputs, outputs)``).

    Args:
        inputs: a KerasTensor from ``ad.keras.Input``, or a list or dict of them.
        outputs: KerasTensors computed from ``inputs``, in any structure.
        name: the model's name (default ``'functional'``, made unique).
        trainable: False freezes every layer.

    Raises:
        ValueError: an output that does not depend on the inputs ("Graph disconnected").
    """

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name or _unique_name("functional"), trainable=trainable,
                       **kwargs)
        self._ad_compiled = None
        for t in nest.flatten([inputs, outputs]):
            if not isinstance(t, KerasTensor):
                raise ValueError(f"Model(inputs, outputs): every input and output must be a "
                                 f"KerasTensor (from ad.keras.Input and layer calls); got "
                                 f"{type(t).__name__}")
        self._ad_inputs_struct = inputs
        self._ad_outputs_struct = outputs
        self._ad_inputs = nest.flatten(inputs)
        self._ad_outputs = nest.flatten(outputs)
        self._ad_nodes_by_depth, layers = map_graph(self._ad_inputs, self._ad_outputs)
        self._functional_layers = layers       # walked: the variables follow this order
        self.built = True

    @property
    def layers(self):
        """Every layer of the graph, Input layers first, in Keras 3's order (not the
        operations that ``x + y`` on placeholders makes, as Keras)."""
        return [layer for layer in self._functional_layers
                if not layer.__dict__.get("_ad_operation")]

    @property
    def inputs(self):
        return list(self._ad_inputs)

    @property
    def outputs(self):
        return list(self._ad_outputs)

    @property
    def output_names(self):
        """The names of the layers that make the outputs, in order (Keras'); compile's
        per-output losses and metrics go by them."""
        return self._output_names()

    @property
    def input_shape(self):
        shapes = [t.shape for t in self._ad_inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [t.shape for t in self._ad_outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    def call(self, inputs, training=None, mask=None):
        flat = self._flatten_inputs(inputs)
        values = {id(t): self._checked(t, v) for t, v in zip(self._ad_inputs, flat)}
        masks = {}
        for nodes in self._ad_nodes_by_depth:
            for node in nodes:
                if node.is_input:
                    continue
                x, args, kwargs = node.fill_in(values)
                parameters = inspect.signature(node.layer.call).parameters
                if training is not None and "training" in parameters:
                    kwargs.setdefault("training", training)
                in_mask = [masks.get(id(t)) for t in nest.flatten(node.inputs)
                           if isinstance(t, KerasTensor)]
                in_mask = in_mask[0] if len(in_mask) == 1 else None
                if in_mask is not None and "mask" in parameters:
                    kwargs.setdefault("mask", in_mask)
                outputs = node.layer(x, *args, **kwargs)
                out_mask = node.layer.compute_mask(x, in_mask)
                for t, y in zip(nest.flatten(node.outputs), nest.flatten(outputs)):
                    values[id(t)] = y
                    if out_mask is not None:
                        masks[id(t)] = out_mask
        return nest.pack_sequence_as(self._ad_outputs_struct,
                                     [values[id(t)] for t in self._ad_outputs])

    def _flatten_inputs(self, inputs):
        if isinstance(self._ad_inputs_struct, dict) and isinstance(inputs, dict):
            missing = sorted(set(self._ad_inputs_struct) - set(inputs))
            if missing:
                raise ValueError(f"Model {self.name!r}: inputs {missing} are missing")
            return [inputs[k] for k in sorted(self._ad_inputs_struct)]
        if isinstance(inputs, dict):   # by input name, as Keras
            names = [t._ad_history[0].layer.name for t in self._ad_inputs]
            return [inputs[n] for n in names]
        flat = nest.flatten(inputs)
        if len(flat) != len(self._ad_inputs):
            raise ValueError(f"Model {self.name!r} expects {len(self._ad_inputs)} input(s), "
                             f"but it received {len(flat)} input tensors.")
        return flat

    def _checked(self, placeholder, value):
        layer = placeholder._ad_history[0].layer
        value = layer._convert_input(value) if isinstance(layer, InputLayer) else value
        shape = tuple(getattr(value, "shape", ()))
        expected = placeholder.shape
        if len(shape) != len(expected) or any(e is not None and e != s
                                              for e, s in zip(expected, shape)):
            raise ValueError(f'Input "{layer.name}" of model {self.name!r} is incompatible: '
                             f"expected shape={expected}, found shape={shape}")
        return value

    def get_config(self):
        from ..saving.config import functional_config
        return functional_config(self)

    @classmethod
    def from_config(cls, config):
        from ..saving.config import functional_from_config
        return functional_from_config(config)
