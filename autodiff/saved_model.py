"""``ad.saved_model``: save a module's traced functions and variables; load them anywhere.

    >>> class MyModule(ad.Module):
    ...     @ad.function(input_signature=[ad.TensorSpec(None)])
    ...     def call_custom_grad(self, x):
    ...         return clip_gradients(x)          # an ad.custom_gradient function
    >>> ad.saved_model.save(MyModule(), "saved_model",
    ...     options=ad.saved_model.SaveOptions(experimental_custom_gradients=True))
    >>> loaded = ad.saved_model.load("saved_model")    # in any process
    >>> v = ad.Variable(2.0)
    >>> with ad.GradientTape() as t:
    ...     output = loaded.call_custom_grad(v * v)
    >>> print(t.gradient(output, v))                   # the saved grad_fn clips 4 to 2
    ad.Tensor(2.0, shape=(), dtype=float32)

What is saved: every ``ad.function`` attribute of the module (its class's
and its own) that has an ``input_signature`` or has been traced, with all
its traces; and every variable (``module.variables``, then any other
variable a graph captures). Only the module's own functions are saved, not
those of its submodules, and no Python code: ``load`` gives back an object
with the functions as attributes, ``.variables`` and ``.trainable_variables``.
A signature with unknown sizes that was never called is traced at save
time on the smallest shape it allows (unknown rank: a scalar; unknown
size: 1); call the function on the shapes you need before saving (graphs
are specialized to shapes, see ``function.py``).

The format (version 1): a directory with two files, never a pickle.

``saved_model.json`` (human-readable)::

    {"format": "autodiff.saved_model", "version": 1,
     "custom_gradients": true,
     "variables": [{"name": "dense/kernel", "shape": [5, 10], "dtype": "float32",
                    "trainable": true, "array": "variable_0"}],
     "constants": [{"shape": [], "dtype": "float32", "array": "constant_0"}],
     "functions": {
       "f": {"input_signature": [{"spec": {"shape": null, "dtype": "float32", "name": null}}],
             "arg_names": ["x"],
             "traces": [{
               "call": {"list": [{"list": [{"tensor": [[], "float32"]}]}, {"dict": []}]},
               "graph": {
                 "args": [{"shape": [], "dtype": "float32"}],
                 "nodes": [{"op": "Mul", "inputs": [["arg", 0], ["const", 0]], "params": {}},
                           {"op": "Sum", "inputs": [["node", 0, 0]],
                            "params": {"axis": [], "keepdims": false}}],
                 "outputs": {"ref": ["node", 1, 0]}}}]}}}

- A reference is ``["arg", k]`` (placeholder k), ``["node", i, j]`` (output
  j of node i, always an earlier node), ``["const", c]`` or ``["var", v]``
  (indices into the top-level lists).
- ``call`` is the signature key of the trace (``function.describe``): the
  loaded function picks the trace whose key matches the call.
- Structures are ``{"list": [...]}``, ``{"tuple": [...]}``,
  ``{"dict": [[key, value], ...]}``; output leaves ``{"ref": ...}`` or
  ``{"python": value}``; params are JSON with tuples as lists.
- A custom-gradient call is ``{"op": "IdentityN", "inputs": [y..., x...,
  captures...], "custom_gradient": {"n_y": 1, "n_x": 1, "graph": {...}}}``,
  its gradient graph taking ``(dy..., inputs...)`` (see ``graph.py``). Saved
  with ``experimental_custom_gradients=False``, ``"graph"`` is replaced by
  ``"gradient_op_type": "CustomGradient-<random hex>"``, a name only the
  saving process knows. As in TensorFlow, loading in that same process
  still finds the gradient; in a fresh process the node is a plain
  ``IdentityN`` with no gradient, and differentiating it raises
  ``LookupError: No gradient defined for operation 'IdentityN' (op type:
  IdentityN)``.

``variables.npz``: one array per ``"array"`` key above, read with
``allow_pickle=False``.

Saving over an existing model writes a new directory next to it and then
swaps the two, so a failed save leaves the old model intact and a reader
never sees a half-written one. Loading checks everything (format name and
version, keys, references, array shapes and dtypes, op types known to the
registry) and raises an ``OSError`` (missing files) or ``ValueError``
naming the file and what is wrong.
"""

import json
import os
import shutil
import tempfile
import warnings

import numpy as np

from .function import Function
from .module import Module
from .saved_model_format import (ARRAYS_FILE, FORMAT_NAME, FORMAT_VERSION, JSON_FILE, Writer,
                                 encode_structure)
from .saved_model_load import LoadedModel, load  # noqa: F401  (load: ad.saved_model.load)

__all__ = ["save", "load", "SaveOptions"]


class SaveOptions:
    """Options for ``save``.

    Args:
        experimental_custom_gradients: save each custom gradient's traced
            ``grad_fn`` (default True, as in TensorFlow); with False the
            custom op is saved as an ``IdentityN`` that has no gradient.
    """

    def __init__(self, experimental_custom_gradients=True, **ignored):
        self.experimental_custom_gradients = bool(experimental_custom_gradients)

    def __repr__(self):
        return f"SaveOptions(experimental_custom_gradients={self.experimental_custom_gradients})"


def save(obj, export_dir, signatures=None, options=None):
    """Writes ``obj``'s traced functions and variables to the directory ``export_dir``.

    Args:
        obj: an ``ad.Module`` (or any object with ``ad.function`` attributes).
        export_dir: the directory to write (replaced if it holds a saved model).
        signatures: accepted for TensorFlow compatibility; ignored.
        options: a ``SaveOptions``.

    Raises:
        ValueError: something cannot be saved (a param that is not plain
            data, a custom gradient that could not be traced, ...), or
            ``export_dir`` is a non-empty directory that is not a saved model.
    """
    options = options or SaveOptions()
    functions = _functions_of(obj)
    variables = list(obj.variables) if isinstance(obj, Module) else []
    writer = Writer(variables, options.experimental_custom_gradients)
    saved = {}
    for name, fn in functions.items():
        traces = []
        for concrete in fn.concrete_functions:
            description = concrete.structured_input_signature
            if _holds_objects(description):
                warnings.warn(f"not saving a trace of {name!r}: it was called with a Variable or "
                              f"another Python object, which a saved model cannot hold")
                continue
            traces.append({"call": description,
                           "graph": writer.graph(concrete.graph, f"function {name!r}")})
        signature = fn.input_signature
        saved[name] = {
            "input_signature": None if signature is None else encode_structure(
                list(signature), _spec_json, f"the input_signature of {name!r}"),
            "arg_names": list(fn._arg_names), "traces": traces}
    arrays = {}
    document = {"format": FORMAT_NAME, "version": FORMAT_VERSION,
                "custom_gradients": options.experimental_custom_gradients,
                "variables": [], "constants": [], "functions": saved}
    for i, var in enumerate(writer.variables):
        arrays[f"variable_{i}"] = np.asarray(var.numpy())
        document["variables"].append({"name": var._name, "shape": list(var.shape),
                                      "dtype": var.dtype.name, "trainable": var.trainable,
                                      "array": f"variable_{i}"})
    for i, tensor in enumerate(writer.constants):
        arrays[f"constant_{i}"] = np.asarray(tensor.numpy())
        document["constants"].append({"shape": list(tensor.shape), "dtype": tensor.dtype.name,
                                      "array": f"constant_{i}"})
    _write_atomically(os.fspath(export_dir), document, arrays)


def _holds_objects(description):
    """Whether a signature key names a Variable or object by identity (not saveable)."""
    ((kind, body),) = description.items()
    if kind in ("variable", "object"):
        return True
    if kind in ("list", "tuple"):
        return any(map(_holds_objects, body))
    return kind == "dict" and any(_holds_objects(v) for _, v in body)


def _spec_json(spec):
    return {"spec": {"shape": None if spec.shape is None else list(spec.shape),
                     "dtype": spec.dtype.name, "name": spec.name}}


def _functions_of(obj):
    """``{name: bound Function}``: the ad.function attributes of obj's class and of obj."""
    if isinstance(obj, LoadedModel):   # saving a loaded model again
        return obj.functions
    names = []
    for cls in reversed(type(obj).__mro__):
        names += [k for k, v in vars(cls).items() if isinstance(v, Function)]
    names += [k for k, v in getattr(obj, "__dict__", {}).items()
              if isinstance(v, Function) and not k.startswith("_ad_")]
    found = {}
    for name in sorted(set(names)):
        fn = getattr(obj, name)
        if fn.input_signature is not None and not fn.concrete_functions:
            fn.get_concrete_function()  # trace it now (on the smallest shapes it allows)
        if fn.concrete_functions:
            found[name] = fn
    return found


def _write_atomically(path, document, arrays):
    path = os.path.abspath(path)
    parent, base = os.path.dirname(path), os.path.basename(path)
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise ValueError(f"cannot save to {path}: it exists and is not a directory")
        if os.listdir(path) and not os.path.exists(os.path.join(path, JSON_FILE)):
            raise ValueError(f"cannot save to {path}: it is a non-empty directory without a "
                             f"{JSON_FILE}, so not a saved model; refusing to replace it")
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{base}.saving-", dir=parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp's 0700 would make the model private
        with open(os.path.join(staging, JSON_FILE), "w", encoding="utf-8") as f:
            f.write(_pretty(document) + "\n")
        with open(os.path.join(staging, ARRAYS_FILE), "wb") as f:
            np.savez(f, **arrays)
        if not os.path.exists(path):
            os.replace(staging, path)
            return
        # Two renames: the old model moves aside, the new one takes its place. A
        # reader sees the old model or the new one, never a half-written one.
        aside = tempfile.mkdtemp(prefix=f".{base}.old-", dir=parent)
        os.replace(path, os.path.join(aside, base))
        try:
            os.replace(staging, path)
        except BaseException:
            os.replace(os.path.join(aside, base), path)   # put the old model back
            os.rmdir(aside)
            raise
        shutil.rmtree(aside, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _pretty(value, depth=0, width=100):
    """JSON with one short object or list per line: a node fits on one line."""
    compact = json.dumps(value, allow_nan=False)
    if len(compact) + depth <= width or not isinstance(value, (dict, list)) or not value:
        return compact
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {_pretty(v, depth + 1, width)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    items = [pad + _pretty(v, depth + 1, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * depth + "]"
