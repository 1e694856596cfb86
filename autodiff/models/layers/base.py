"""The base of every layer: a unique Keras-style name, building on the first call, Keras 3's
``add_weight``, ``losses`` (regularizers), and calls on symbolic inputs (the functional API).

A layer is an ``ad.Module`` that creates its variables on the first call,
when it knows the input's shape (Keras calls this *building*). Names follow
Keras: the snake_case class name, made unique per program run (``dense``,
``dense_1``, ...); a variable's ``name`` is short (``'kernel'``) and its
``path`` names the scopes it was made in (``'dense/kernel'``, see
``weights.py``). A layer lists its own variables in creation order (kernel,
then bias), not sorted by attribute name as a plain ``ad.Module`` would.

Called on an ``ad.keras.Input`` (a ``KerasTensor``) instead of a tensor, a
layer computes nothing: it records the call for a functional model
(``functional/``) and returns KerasTensors of the output's shape.
"""

import inspect
import itertools
import re
import math
import threading

from ... import dtypes, nest
from ... import tape as _tape
from ...ops import elementwise
from ...tensor import Tensor, convert_to_tensor
from .. import activations, initializers, regularizers
from ..module import Module, _flatten, _calling
from .weights import KerasVariable, parse_add_weight

__all__ = ["Layer", "get_activation", "refuse"]

# Keras 3 arguments this library does not implement, at their defaults: a Keras config holds
# them, so they are accepted at these values and refused (NotImplementedError) at any other.
KERAS_DEFAULTS = {"kernel_constraint": None, "bias_constraint": None, "recurrent_constraint": None,
                  "embeddings_constraint": None, "beta_constraint": None,
                  "gamma_constraint": None, "lora_rank": None, "lora_alpha": None,
                  "quantization_config": None, "synchronized": False, "renorm": False,
                  "renorm_clipping": None, "renorm_momentum": 0.99, "data_format": None,
                  "groups": 1, "embeddings_regularizer": None, "sparse": False,
                  "rms_scaling": False, "moving_mean_initializer": "zeros",
                  "moving_variance_initializer": "ones", "beta_initializer": "zeros",
                  "gamma_initializer": "ones", "activity_regularizer": None,
                  "input_length": None, "beta_regularizer": None, "gamma_regularizer": None,
                  "recurrent_regularizer": None, "kernel_regularizer": None,
                  "bias_regularizer": None}

_name_counters = {}  # base name -> itertools.count, so names are unique per run (Keras' uids)
_calls = threading.local()   # .depth: nesting of layer calls in this thread (losses reset at 0)


def _per_example(loss, output):
    """An activity penalty divided by the batch size, as Keras 3 records it."""
    if output.ndim == 0:
        return loss
    from ...ops.shape import shape
    from ...ops.special import divide_no_nan
    return divide_no_nan(loss, elementwise.cast(shape(output)[0], loss.dtype))


def keras_snake(name):
    """Keras' snake case for a class name: ``'GlobalAveragePooling2D'`` ->
    ``'global_average_pooling2d'``, ``'ReLU'`` -> ``'re_lu'`` (a digit does not start a word,
    unlike TensorFlow's module names)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _unique_name(base):
    n = next(_name_counters.setdefault(base, itertools.count()))
    return base if n == 0 else f"{base}_{n}"


def get_activation(activation):
    """A callable for ``activation``: None (linear), a callable, or a Keras name (``'relu'``)."""
    return activations.get(activation)


def refuse(layer_type, **given):
    """NotImplementedError naming each Keras argument given a value this library lacks.

    >>> from autodiff.models.layers.base import refuse
    >>> refuse("Dense", kernel_constraint=None, lora_rank=None)   # nothing given: fine
    >>> refuse("Dense", lora_rank=4)
    Traceback (most recent call last):
    NotImplementedError: Dense: lora_rank=4 is not implemented
    """
    used = [f"{k}={v!r}" for k, v in given.items() if v is not None and v is not False]
    if used:
        raise NotImplementedError(f"{layer_type}: {', '.join(used)} "
                                  f"{'is' if len(used) == 1 else 'are'} not implemented")


class Layer(Module):
    """The base of ``ad.layers``: a unique Keras-style name, building on first call.

    Subclasses implement ``build(input_shape)`` (create variables with
    ``add_weight``) and ``call(inputs, ...)``.

    Args:
        name: the layer's name; by default a unique snake_case class name.
        dtype: the variables' dtype (default float32). Floating inputs of
            another dtype are cast to it, as Keras' layers do.
        trainable: False makes every variable the layer creates non-trainable.
        activity_regularizer: a penalty on the layer's outputs, added to
            ``losses`` at each call.
        input_shape: the shape of one example (no batch axis), as Keras 3
            still accepts on a ``Sequential``'s first layer (``Sequential``
            then builds at once); ``input_dim=n`` is ``input_shape=(n,)``.

    Other keyword arguments raise ValueError naming them, as Keras.
    """

    def __init__(self, name=None, dtype=None, trainable=True, input_shape=None, input_dim=None,
                 activity_regularizer=None, autocast=True, **kwargs):
        check_keras_only(type(self).__name__, kwargs)
        super().__init__(name=name or _unique_name(keras_snake(type(self).__name__)))
        if isinstance(dtype, dict):   # Keras 3's stored DTypePolicy
            dtype = (dtype.get("config") or {}).get("name")
        self.dtype = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        self._ad_trainable = bool(trainable)
        if input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        self._ad_input_shape = None if input_shape is None else tuple(input_shape)
        self._ad_weights = []     # own variables in creation order
        self._ad_call_losses = []   # activity penalties and add_loss() of the last call
        self._ad_activity_regularizer = regularizers.get(activity_regularizer)
        self._ad_inbound = []     # functional nodes that produced this layer's outputs
        self.built = False

    @property
    def trainable(self):
        """Whether the layer's variables are trained (settable, as Keras: it applies to the
        variables it already has and to those of its sublayers)."""
        return self.__dict__.get("_ad_trainable", True)

    @trainable.setter
    def trainable(self, value):
        self._ad_trainable = bool(value)
        for layer in self._flatten_layers():
            layer._ad_trainable = bool(value)
            for variable in layer.__dict__.get("_ad_weights", ()):
                variable._trainable = bool(value)

    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True,
                   autocast=True, regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """Creates a variable on this layer, with Keras 3's signature.

        Args:
            shape: the variable's shape (default scalar).
            initializer: a name (``'he_normal'``), an ``ad.keras.initializers``
                object or a callable ``(shape, dtype)``; default
                ``'glorot_uniform'`` for floats, ``'zeros'`` otherwise.
            dtype: default the layer's.
            trainable: False for state such as moving averages.
            regularizer: a penalty on the variable, reported in ``losses``.
            name: the short name (``'kernel'``); the path adds the scopes.

        Returns:
            A ``KerasVariable``.

        >>> layer = ad.keras.layers.Layer(name="scaler")
        >>> w = layer.add_weight(shape=(2,), initializer="ones", name="w")
        >>> w.path, w.numpy()
        ('scaler/w', array([1., 1.], dtype=float32))
        """
        shape, init, dtype, regularizer, name = parse_add_weight(
            self, args, shape, initializer, dtype, regularizer, name, constraint=constraint,
            aggregation=aggregation, overwrite_with_gradient=overwrite_with_gradient)
        scope = _tape.thread_state.scope
        inside = getattr(_calling, "module", None) is self and scope
        prefix = scope if inside else (f"{scope}/{self.name}" if scope else self.name)
        variable = KerasVariable(init(shape, dtype), f"{prefix}/{name}", self.name, dtype=dtype,
                                 trainable=trainable and self.trainable, regularizer=regularizer)
        self._ad_weights.append(variable)
        return variable

    def add_loss(self, loss):
        """Adds ``loss`` (a scalar tensor) to ``losses`` until the next call (Keras' add_loss)."""
        self._ad_call_losses.append(loss)

    @property
    def losses(self):
        """The penalties: each layer's ``add_loss`` and activity losses of the last call, then
        each variable's regularizer on its current value (Keras 3's order)."""
        layers = self._flatten_layers()
        losses = [loss for layer in layers for loss in layer.__dict__.get("_ad_call_losses", ())]
        for variable in self.trainable_variables:
            regularizer = getattr(variable, "regularizer", None)
            if regularizer is not None:
                losses.append(regularizer(variable))
        return losses

    def _flatten_layers(self):
        """This layer and every layer under it, each once, in tracking order."""
        return [self] + [m for m in self.submodules if isinstance(m, Layer)]

    def _own_leaves(self):
        # Keras' tracking order: own weights as created, then attributes as assigned (a
        # dict keeps insertion order), where a plain ad.Module sorts attribute names.
        yield from self.__dict__.get("_ad_weights", ())
        for key, value in vars(self).items():
            if not key.startswith("_ad_"):
                yield from _flatten(value)

    # Keras 3 hands variables out as lists (tf.Module and ad.Module as tuples), so
    # ``model.trainable_variables + [extra]`` works and tape.gradient returns a list
    @property
    def variables(self):
        return list(Module.variables.fget(self))

    @property
    def trainable_variables(self):
        return list(Module.trainable_variables.fget(self))

    @property
    def non_trainable_variables(self):
        return list(Module.non_trainable_variables.fget(self))

    @property
    def weights(self):
        """All variables, in Keras' order."""
        return list(self.variables)

    @property
    def trainable_weights(self):
        return list(self.trainable_variables)

    @property
    def non_trainable_weights(self):
        return list(self.non_trainable_variables)

    def get_weights(self):
        """The values of ``weights``, as NumPy arrays (Keras' ``get_weights``)."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Assigns ``weights`` (arrays, in the order of ``get_weights``) to the variables.

        Raises:
            ValueError: a different number of arrays, or an array of another shape.
        """
        weights = list(weights)
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"Layer {self.name!r}: set_weights got {len(weights)} arrays "
                             f"for its {len(mine)} weights")
        for variable, value in zip(mine, weights):
            if tuple(getattr(value, "shape", ())) != tuple(variable.shape):
                raise ValueError(f"Layer {self.name!r}: weight {variable.path if hasattr(variable, 'path') else variable.name} "
                                 f"has shape {tuple(variable.shape)}, the array given for it "
                                 f"{tuple(getattr(value, 'shape', ()))}")
            variable.assign(value)

    def _convert_input(self, x):
        if x is None or not (isinstance(x, (Tensor, int, float)) or hasattr(x, "__array__")):
            return x
        x = convert_to_tensor(x)
        if x.dtype != self.dtype and x.dtype.is_floating and self.dtype.is_floating:
            x = elementwise.cast(x, self.dtype)
        return x

    def __call__(self, inputs, *args, **kwargs):
        from ..functional.keras_tensor import has_symbolic, symbolic_call
        if has_symbolic(inputs, args, kwargs):
            return symbolic_call(self, inputs, args, kwargs)
        if _is_structure_of_tensors(inputs):
            inputs = nest.map_structure(self._convert_input, inputs)
        else:   # one tensor, or nested Python numbers that make one
            inputs = self._convert_input(convert_to_tensor(inputs))
        if not self.built:
            self._ad_build_shape = nest.map_structure(lambda t: tuple(t.shape), inputs)
            self.build(self._ad_build_shape)
            self.built = True
        parameters = inspect.signature(self.call).parameters
        for key in ("training", "mask"):   # as Keras: a layer that does not use it never sees it
            if key in kwargs and key not in parameters:
                del kwargs[key]
        return self._call_counting_losses(inputs, args, kwargs)

    def _call_counting_losses(self, inputs, args, kwargs):
        depth = getattr(_calls, "depth", 0)
        if depth == 0:   # an outermost call: the last call's losses go, as Keras 3
            for layer in self._flatten_layers():
                layer.__dict__.get("_ad_call_losses", []).clear()
        _calls.depth = depth + 1
        try:
            outputs = self.call(inputs, *args, **kwargs)
        finally:
            _calls.depth = depth
        if self._ad_activity_regularizer is not None:
            for output in nest.flatten(outputs):
                if isinstance(output, Tensor):
                    self.add_loss(_per_example(self._ad_activity_regularizer(output), output))
        return outputs

    def build(self, input_shape):
        pass

    def count_params(self):
        """The number of scalars in the layer's weights (Keras' ``count_params``).

        Raises:
            ValueError: the layer is not built yet (its weights do not exist).
        """
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the "
                             "layer isn't built. Build it first (call it on data, or build()).")
        return int(sum(math.prod(v.shape) for v in self.weights))

    @property
    def input(self):
        """The KerasTensor(s) of the layer's first call in the functional API."""
        return self._ad_first_node("input").inputs

    @property
    def output(self):
        """The KerasTensor(s) of the layer's first call in the functional API (Keras'
        ``layer.output``: ``Model(model.inputs, model.get_layer("h").output)``)."""
        return self._ad_first_node("output").outputs

    def _ad_first_node(self, what):
        if not self._ad_inbound:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no "
                                 f"defined {what}.")
        return self._ad_inbound[0]

    def call(self, inputs):
        raise NotImplementedError(f"{type(self).__name__} must define call(self, inputs, ...)")

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs (Keras): None, unless the layer passes masks through."""
        return mask if getattr(self, "supports_masking", False) else None

    _ad_config = None   # the attributes get_config stores, as Keras names them

    def get_config(self):
        """The arguments that make this layer again (Keras' ``get_config``): name, trainable,
        dtype, and the layer's own (``_ad_config``), initializers, activations and
        regularizers as Keras serializes them.

        Raises:
            NotImplementedError: a layer that does not list its arguments.
        """
        if self._ad_config is None:
            raise NotImplementedError(f"{type(self).__name__} {self.name!r}: get_config is not "
                                      f"implemented, so it cannot be saved in a .keras file "
                                      f"(save_weights works)")
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": _dtype_policy(self.dtype)}
        for key in self._ad_config:
            config[key] = _serialized(getattr(self, key), key)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def check_keras_only(layer_type, kwargs):
    """Refuses arguments no layer takes (ValueError, as Keras) and Keras 3 arguments this
    library lacks at a value other than Keras' default (NotImplementedError, naming them)."""
    unknown = {k: v for k, v in kwargs.items() if k not in KERAS_DEFAULTS}
    if unknown:
        raise ValueError(f"Unrecognized keyword arguments passed to {layer_type}: {unknown}")
    refuse(layer_type, **{k: v for k, v in kwargs.items()
                          if not _is_default(v, KERAS_DEFAULTS[k])
                          and not (k == "data_format" and v == "channels_last")})
    # (Keras 3 writes data_format="channels_last", the only layout here, in its configs)


def _is_default(value, default):
    if value == default:
        return True
    if isinstance(value, dict) and isinstance(default, str):   # a stored initializer
        return value.get("class_name") == type(initializers.get(default)).__name__
    return False


def _serialized(value, key):
    """An attribute as Keras' config stores it."""
    if key.endswith("initializer"):
        return initializers.serialize(initializers.get(value))
    if key.endswith("regularizer"):
        return None if value is None else regularizers.serialize(value)
    if key.endswith("activation"):
        return activations.serialize(value)
    if key == "axis" and isinstance(value, (list, tuple)) and len(value) == 1:
        return value[0]
    if isinstance(value, tuple):
        return list(value)
    return value


def _dtype_policy(dtype):
    """Keras 3's stored dtype: a DTypePolicy config."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": dtype.name},
            "registered_name": None}


def _is_structure_of_tensors(inputs):
    """A list, tuple or dict holding tensors or arrays (a merge layer's inputs)."""
    return isinstance(inputs, (list, tuple, dict)) and any(
        isinstance(leaf, Tensor) or hasattr(leaf, "__array__") for leaf in nest.flatten(inputs))
