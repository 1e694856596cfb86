"""A model's architecture as Keras 3's ``config.json``, and back, without running any code.

Every layer is stored as Keras stores it::

    {"module": "keras.layers", "class_name": "Dense", "config": {"units": 4, ...},
     "registered_name": null, "build_config": {"input_shape": [null, 3]}}

and a functional model adds, per layer, the calls that made its outputs
(``inbound_nodes``: the arguments, each placeholder named by
``[layer, node, tensor]``), then ``input_layers`` and ``output_layers``.

Loading maps each ``class_name`` to a class of ``ad.keras`` and calls its
``from_config`` with plain data: a file can name only classes this library
has. A class it lacks (Keras' ``Lambda``, a custom layer) raises ValueError
naming it and where it is in the file; nothing from the file is imported,
evaluated or unpickled.
"""

from ... import nest
from ..functional.keras_tensor import Input, InputLayer, KerasTensor

__all__ = ["serialize_layer", "deserialize_layer", "functional_config", "functional_from_config"]


def _layer_classes():
    from .. import layers
    from ..functional.model import Functional
    from ..model import Sequential
    # Lambda's config is Python code (Keras stores its bytecode): never made from a file
    classes = {name: getattr(layers, name) for name in layers.__all__ if name != "Lambda"}
    classes.update({"Functional": Functional, "Sequential": Sequential, "Model": Functional,
                    "InputLayer": InputLayer})
    return classes


def _class_name(layer):
    return type(layer).__name__


def _build_config(layer):
    nodes = layer.__dict__.get("_ad_inbound") or []
    if nodes and not nodes[0].is_input:
        shapes = [list(t.shape) for t in nodes[0].input_tensors]
        return {"input_shape": shapes[0] if len(shapes) == 1 else shapes}
    shape = layer.__dict__.get("_ad_build_shape")
    return {"input_shape": None if shape is None else _none_batch(shape)}


def _none_batch(shape):
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
        return [_none_batch(s) for s in shape]
    return [None] + list(shape[1:])


def serialize_layer(layer):
    """Keras 3's dict for one layer (models included)."""
    from ..functional.model import Functional
    from ..model import Sequential
    if isinstance(layer, Functional):
        module, registered = "keras.src.models.functional", "Functional"
    elif isinstance(layer, Sequential):
        module, registered = "keras", None
    else:
        module, registered = "keras.layers", None
    return {"module": module, "class_name": _class_name(layer), "config": layer.get_config(),
            "registered_name": registered, "build_config": _build_config(layer)}


def deserialize_layer(config, where="config.json"):
    """The layer a Keras 3 layer dict describes (built when it says with which shape).

    Raises:
        ValueError: a class ``ad.keras`` does not have, naming it and where it is.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"{where}: not a Keras layer description: {config!r}")
    name = config["class_name"]
    module = str(config.get("module") or "keras")
    cls = _layer_classes().get(name)
    if cls is None or not module.startswith("keras"):
        known = sorted(_layer_classes())
        raise ValueError(f"Unknown layer: '{name}' (module {module!r}, named "
                         f"{config.get('config', {}).get('name')!r}) in {where}. ad.keras can "
                         f"load only the layers it has, and never runs code from a file; "
                         f"known layers: {known}")
    layer = cls.from_config(dict(config.get("config") or {}))
    shape = (config.get("build_config") or {}).get("input_shape")
    if shape is not None and not layer.built:
        _build_from_shape(layer, shape)
    return layer


def _build_from_shape(layer, shape):
    from ..functional.keras_tensor import symbolic_call
    nested = bool(shape) and isinstance(shape[0], (list, tuple))
    inputs = [KerasTensor(s) for s in shape] if nested else KerasTensor(shape)
    symbolic_call(layer, inputs, (), {})
    layer._ad_inbound.clear()   # building leaves no node behind


def _tensor_config(t, node_index):
    node, index = t._ad_history
    return {"class_name": "__keras_tensor__",
            "config": {"shape": list(t.shape), "dtype": t.dtype.name,
                       "keras_history": [node.layer.name, node_index[id(node)], index]}}


def functional_config(model):
    """Keras 3's config of a functional model: its layers with their calls, inputs, outputs."""
    in_model = {id(n) for nodes in model._ad_nodes_by_depth for n in nodes}
    node_index = {}
    for layer in model.layers:
        for k, node in enumerate(n for n in layer._ad_inbound if id(n) in in_model):
            node_index[id(node)] = k

    def encode(value):
        return nest.map_structure(
            lambda leaf: _tensor_config(leaf, node_index) if isinstance(leaf, KerasTensor)
            else leaf, value)

    layers = []
    for layer in model.layers:
        entry = serialize_layer(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [] if isinstance(layer, InputLayer) else [
            {"args": [encode(node.inputs)] + [encode(a) for a in node.args],
             "kwargs": encode(node.kwargs)}
            for node in layer._ad_inbound if id(node) in in_model]
        layers.append(entry)

    def ends(tensors, structure):
        refs = [[t._ad_history[0].layer.name, node_index[id(t._ad_history[0])],
                 t._ad_history[1]] for t in tensors]
        return refs[0] if not isinstance(structure, (list, tuple, dict)) else refs

    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": ends(model._ad_inputs, model._ad_inputs_struct),
            "output_layers": ends(model._ad_outputs, model._ad_outputs_struct)}


def functional_from_config(config, where="config.json"):
    """The functional model a Keras 3 config describes: its layers made from their configs,
    then called on placeholders in the order the file records.

    Raises:
        ValueError: an unknown layer, or calls whose inputs never appear.
    """
    from ..functional.model import Functional
    made, tensors, pending = {}, {}, []
    for entry in config["layers"]:
        name = entry.get("name") or entry["config"]["name"]
        if entry["class_name"] == "InputLayer":
            c = entry["config"]
            t = Input(batch_shape=c.get("batch_shape") or c.get("batch_input_shape"),
                      dtype=c.get("dtype"), name=c.get("name", name))
            made[name] = t._ad_history[0].layer
            tensors[(name, 0, 0)] = t
            continue
        entry = dict(entry, build_config=None)   # built below, by its calls
        made[name] = deserialize_layer(entry, f"{where}, layer {name!r}")
        pending += [(name, k, node) for k, node in enumerate(entry.get("inbound_nodes", []))]

    def decode(value):
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            key = tuple(value["config"]["keras_history"])
            if key not in tensors:
                raise KeyError(key)
            return tensors[key]
        if isinstance(value, dict):
            return {k: decode(v) for k, v in value.items()}
        if isinstance(value, list):
            return [decode(v) for v in value]
        return value

    while pending:
        progressed, waiting = False, []
        for name, k, node in pending:
            try:
                args, kwargs = decode(node.get("args", [])), decode(node.get("kwargs", {}))
            except KeyError:
                waiting.append((name, k, node))
                continue
            kwargs = {key: v for key, v in kwargs.items() if v is not None}
            outputs = made[name](*args, **kwargs)
            for i, t in enumerate(nest.flatten(outputs)):
                tensors[(name, k, i)] = t
            progressed = True
        if not progressed:
            raise ValueError(f"{where}: the calls of layers {[p[0] for p in waiting]} wait "
                             f"for inputs no layer makes")
        pending = waiting

    def ends(refs):
        if isinstance(refs, dict):
            return {k: tensors[tuple(v)] for k, v in refs.items()}
        if refs and not isinstance(refs[0], list):
            return tensors[tuple(refs)]
        return [tensors[tuple(r)] for r in refs]

    return Functional(ends(config["input_layers"]), ends(config["output_layers"]),
                      name=config.get("name"), trainable=config.get("trainable", True))
