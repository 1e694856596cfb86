"""Reading the legacy ``.h5`` weights (Keras 2's ``save_weights('x.h5')``, ``model.save('x.h5')``).

Before Keras 3's ``.weights.h5``, a weights file named each layer by its
*own* name and listed its variables by name:

    /                      attrs: layer_names = [b"dense", b"dense_1", ...],
                                  keras_version, backend
    /dense                 attrs: weight_names = [b"dense/kernel:0", b"dense/bias:0"]
    /dense/dense/kernel:0  the kernel (a dataset)
    /model_weights/...     the same, inside a whole-model file (``model.save('x.h5')``)

Keras 3 loads such a file by *order*, not by name
(``keras/src/legacy/saving/legacy_h5_format.py``): the file's layers that hold
weights are paired, in the file's ``layer_names`` order, with the model's
layers that hold weights (``model.layers`` order), and each layer's weights
(trainable, then non-trainable) with the listed arrays. This file does the
same, reading only datasets and attributes (nothing in the file is run),
and checks the counts and shapes first, so a file that does not fit changes
nothing, unless ``skip_mismatch`` asks to skip the weights whose shape
differs, with a warning, as Keras 3.

    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(1)])
    >>> model.load_weights("keras2_weights.h5")      # doctest: +SKIP
"""

import warnings

import numpy as np

__all__ = ["read_legacy_weights"]


def _attribute_list(group, name):
    """A list attribute, also when HDF5's header limit made Keras split it into
    ``name0``, ``name1``, ..."""
    if name in group.attrs:
        raw = list(group.attrs[name])
    else:
        raw, k = [], 0
        while f"{name}{k}" in group.attrs:
            raw.extend(group.attrs[f"{name}{k}"])
            k += 1
    return [n.decode("utf8") if hasattr(n, "decode") else str(n) for n in raw]


def _layer_weights(layer):
    """A layer's weights in the legacy order: trainable, then non-trainable (Keras 3's
    ``_legacy_weights``)."""
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def read_legacy_weights(model, h5_file, source="the file", skip_mismatch=False):
    """Assigns ``model``'s layers' weights from a legacy ``.h5`` file, by order.

    Args:
        model: a Sequential or functional model (its ``layers``).
        h5_file: the open h5py file.
        source: the file's name, for messages.
        skip_mismatch: skip (with a warning) each weight whose shape differs.

    Raises:
        ValueError: the file's layers with weights are not as many as the model's,
            a layer's weights are not as many as the file's, or (without
            ``skip_mismatch``) a shape differs; named, and nothing is assigned.
    """
    group = h5_file
    if "layer_names" not in group.attrs and "model_weights" in group:
        group = group["model_weights"]
    layers = [layer for layer in model.layers if _layer_weights(layer)]
    names = [name for name in _attribute_list(group, "layer_names")
             if _attribute_list(group[name], "weight_names")]
    if len(names) != len(layers):
        raise ValueError(f"Layer count mismatch when loading weights from {source}. Model "
                         f"expected {len(layers)} layers, found {len(names)} saved layers.")
    plan, skipped = [], []
    for k, (name, layer) in enumerate(zip(names, layers)):
        variables = _layer_weights(layer)
        values = [np.asarray(group[name][w]) for w in _attribute_list(group[name], "weight_names")]
        if len(values) != len(variables):
            raise ValueError(f"Weight count mismatch for layer #{k} (named {layer.name} in the "
                             f"current model, {name} in {source}). Layer expects "
                             f"{len(variables)} weight(s). Received {len(values)} saved "
                             f"weight(s)")
        for variable, value in zip(variables, values):
            where = getattr(variable, "path", variable.name)
            if tuple(value.shape) != tuple(variable.shape):
                message = (f"layer #{k} (named {layer.name}) for weight {where}. Weight expects "
                           f"shape {tuple(variable.shape)}. Received saved weight with shape "
                           f"{tuple(value.shape)}")
                if not skip_mismatch:
                    raise ValueError(f"Shape mismatch in {message} ({source})")
                skipped.append(message)
                continue
            plan.append((variable, value))
    for variable, value in plan:   # all checked first
        variable.assign(value.astype(variable.dtype.as_numpy_dtype))
    for message in skipped:
        warnings.warn(f"Skipping loading weights for {message}", UserWarning, stacklevel=3)
