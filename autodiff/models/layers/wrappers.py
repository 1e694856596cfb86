"""Wrappers: TimeDistributed (a layer on every time step) and Bidirectional (an RNN both ways).

    >>> td = ad.keras.layers.TimeDistributed(ad.keras.layers.Dense(2))
    >>> td(ad.ones([4, 7, 3])).shape                    # Dense on each of the 7 steps
    TensorShape([4, 7, 2])
    >>> bi = ad.keras.layers.Bidirectional(ad.keras.layers.GRU(5, return_sequences=True))
    >>> bi(ad.ones([4, 7, 3])).shape                    # forward and backward, concatenated
    TensorShape([4, 7, 10])

As Keras 3: TimeDistributed's layer is built for one step's shape and its
variables are ``time_distributed/dense/kernel``...; Bidirectional makes
``forward_<name>`` and ``backward_<name>`` (with ``go_backwards`` flipped)
from the layer's config, and reverses the backward sequence before merging.
"""

from ...ops.join import concat
from ...ops.math_extra import reverse
from ...ops.shape import reshape
from ...name_scope import name_scope
from .base import Layer

__all__ = ["TimeDistributed", "Bidirectional"]


class TimeDistributed(Layer):
    """Applies ``layer`` to every slice ``inputs[:, t]`` (one call on the steps folded into
    the batch: the same result as a loop over t).

    Args:
        layer: any layer taking one step's shape ``[batch, ...]``.
    """

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `Layer` "
                             f"instance. Received: {layer}")
        self.layer = layer

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with "
                             f"at least 3 dimensions, received: {tuple(input_shape)}")
        if not self.layer.built:   # its variables: time_distributed/<layer>/kernel, as Keras
            self.layer.build((input_shape[0] * input_shape[1],) + tuple(input_shape[2:]))
            self.layer.built = True

    def call(self, inputs, training=None):
        batch, steps = inputs.shape[0], inputs.shape[1]
        folded = reshape(inputs, (batch * steps,) + tuple(inputs.shape[2:]))
        out = self.layer(folded) if training is None else self.layer(folded, training=training)
        return reshape(out, (batch, steps) + tuple(out.shape[1:]))

    def get_config(self):
        from ..saving.config import serialize_layer
        config = _base_config(self)
        config["layer"] = serialize_layer(self.layer)
        return config

    @classmethod
    def from_config(cls, config):
        from ..saving.config import deserialize_layer
        config = dict(config)
        return cls(deserialize_layer(dict(config.pop("layer"), build_config=None)), **config)


def _base_config(layer):
    from .base import _dtype_policy
    return {"name": layer.name, "trainable": layer.trainable, "dtype": _dtype_policy(layer.dtype)}


class Bidirectional(Layer):
    """Runs an RNN layer forwards and a copy of it backwards, and merges the two.

    Args:
        layer: a ``SimpleRNN``, ``GRU`` or ``LSTM`` (its config makes both copies).
        merge_mode: ``'concat'`` (default), ``'sum'``, ``'mul'``, ``'ave'`` or None
            (a list of the two).
        backward_layer: a layer to use backwards instead of the copy.

    ``return_state=True`` returns the merged output, then the forward states,
    then the backward ones.
    """

    _MODES = ("concat", "sum", "mul", "ave", None)

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        super().__init__(**kwargs)
        if merge_mode not in self._MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                             f"one of {{'sum', 'mul', 'ave', 'concat', None}}")
        if weights is not None:
            raise NotImplementedError("Bidirectional: weights= is not implemented; use "
                                      "set_weights after building")
        self.merge_mode = merge_mode
        for rnn in (layer, backward_layer):   # Keras: masked steps of a sequence give zeros
            if rnn is not None:
                rnn.zero_output_for_mask = rnn.return_sequences
        self.forward_layer = _copy(layer, "forward_" + layer.name.removeprefix("forward_"),
                                   layer.go_backwards)
        self.backward_layer = backward_layer if backward_layer is not None else _copy(
            layer, "backward_" + layer.name.removeprefix("backward_"), not layer.go_backwards)
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state

    def build(self, input_shape):
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                with name_scope(layer.name):
                    layer.build(input_shape)
                layer.built = True

    def call(self, inputs, mask=None, training=None, initial_state=None):
        kwargs = {} if training is None else {"training": training}
        if mask is not None:
            kwargs["mask"] = mask
        forward_states = backward_states = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_states, backward_states = initial_state[:half], initial_state[half:]
        y = self.forward_layer(inputs, initial_state=forward_states, **kwargs)
        y_rev = self.backward_layer(inputs, initial_state=backward_states, **kwargs)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = reverse(y_rev, [1])
        merged = {"concat": lambda: concat([y, y_rev], axis=-1), "sum": lambda: y + y_rev,
                  "mul": lambda: y * y_rev, "ave": lambda: (y + y_rev) * 0.5,
                  None: lambda: [y, y_rev]}[self.merge_mode]()
        return (merged, *states) if states else merged

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences and self.merge_mode is not None else None

    def get_config(self):
        from ..saving.config import serialize_layer
        config = _base_config(self)
        config.update(merge_mode=self.merge_mode, layer=serialize_layer(self.forward_layer))
        return config

    @classmethod
    def from_config(cls, config):
        from ..saving.config import deserialize_layer
        config = dict(config)
        layer = deserialize_layer(dict(config.pop("layer"), build_config=None))
        backward = config.pop("backward_layer", None)
        if backward is not None:
            backward = deserialize_layer(dict(backward, build_config=None))
        return cls(layer, backward_layer=backward, **config)


def _copy(layer, name, go_backwards):
    config = dict(layer.get_config(), name=name, go_backwards=go_backwards)
    return type(layer).from_config(config)

