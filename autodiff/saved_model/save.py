"""``ad.saved_model.save``: a module's traced functions and variables, written to a directory.

    >>> @ad.custom_gradient
    ... def clip_gradients(y):
    ...     def grad_fn(upstream):
    ...         return ad.clip_by_norm(upstream, 0.5)
    ...     return ad.identity(y), grad_fn
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
    >>> print(t.gradient(output, v))       # the saved grad_fn clips 1 to 0.5; times 2v
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
are specialized to shapes, see ``tracing/function.py``).

The format (version 2): two files, never a pickle, in a version directory
that ``export_dir/saved_model.current`` names (the layout and how a save is
published atomically: ``store.py``). Version 1 differed only in the LSTM
ops' outputs and inputs; ``load`` still reads it (``upgrade.py``).

``saved_model.json`` (human-readable)::

    {"format": "autodiff.saved_model", "version": 2,
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
  its gradient graph taking ``(dy..., inputs...)`` (see ``tracing/graph.py``). Saved
  with ``experimental_custom_gradients=False``, ``"graph"`` is replaced by
  ``"gradient_op_type": "CustomGradient-<random hex>"``, a name only the
  saving process knows. As in TensorFlow, loading in that same process
  still finds the gradient; in a fresh process the node is a plain
  ``IdentityN`` with no gradient, and differentiating it raises
  ``LookupError: No gradient defined for operation 'IdentityN' (op type:
  IdentityN)``.
- A control-flow node (``If``, ``Case``, ``While``, ``Scan``, ``MapFn``,
  ``Foldl``, ``Foldr``, and their gradients taken inside the trace) also has
  a ``"control_flow"`` object holding its branches and loop bodies as graphs
  in this same format (``control_flow.py``); loading rebuilds the op from its
  type, never from code in the file.

``variables.npz``: one array per ``"array"`` key above, read with
``allow_pickle=False``.

Saving over an existing model publishes a new version and switches the
pointer, so a failed save leaves the old model intact and a reader never
sees a half-written one. Loading checks everything (format name and
version, every key: one the format does not define or one given twice is
an error; references, array sizes, shapes and dtypes before reading them,
op types known to the registry; the arrays against the zip's CRC-32, and
``saved_model.json`` against the SHA-256 the pointer recorded) and
raises ``FormatError`` (a ValueError) naming the file and the JSON path of
what is wrong; ``FileNotFoundError`` when there is no model at the path.
A file edited by hand therefore no longer loads: save the model again.
Links and special files in the directory are refused, never followed
(``safe_files.py``).
"""

import hashlib
import json
import os
import warnings

import numpy as np

from ..models.module import Module
from ..tracing.function import Function
from . import store
from .file_format import (ARRAYS_FILE, FORMAT_NAME, FORMAT_VERSION, JSON_FILE, Writer,
                          encode_structure)
from .load import LoadedModel

__all__ = ["save", "SaveOptions", "current_version"]


def current_version(export_dir):
    """The directory holding the files of the model saved at ``export_dir`` now.

    A save writes a new version directory and then switches the pointer file
    ``saved_model.current`` to it in one atomic step; this is the directory
    the pointer names (``export_dir`` itself for the older layout).

    >>> import os
    >>> model = ad.Module()
    >>> model.w = ad.Variable(1.0)
    >>> ad.saved_model.save(model, "m")
    >>> sorted(os.listdir(ad.saved_model.current_version("m")))
    ['saved_model.json', 'variables.npz']

    Raises:
        FileNotFoundError: no saved model at ``export_dir``.
        FormatError: the pointer file is damaged.
    """
    return store.resolve(os.fspath(export_dir))


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

    The model is published as one unit (``store.py``): a reader
    loading meanwhile gets the old model or the new one, whole; a crash at
    any instant leaves one of them loadable.

    Raises:
        TypeError: ``obj`` is not a Module and has no ``ad.function`` attributes.
        ValueError: something cannot be saved (a param that is not plain
            data, a custom gradient that could not be traced, ...), or
            ``export_dir`` is a file, or a directory that is not a saved model
            (nothing of it is touched).
    """
    if not isinstance(obj, (Module, LoadedModel)) and not _has_functions(obj):
        raise TypeError(f"saved_model.save: the argument obj must be an ad.Module (or an object "
                        f"with ad.function attributes), got {type(obj).__name__} {obj!r:.60}")
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
    _publish(os.fspath(export_dir), document, arrays)


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


def _has_functions(obj):
    return any(isinstance(v, Function) for cls in type(obj).__mro__ for v in vars(cls).values()) \
        or any(isinstance(v, Function) for v in getattr(obj, "__dict__", {}).values())


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
        if fn.input_signature is not None:
            fn.check_any_size()   # trace it now, and learn whether one trace serves any size
        if fn.concrete_functions:
            found[name] = fn
    return found


def _publish(path, document, arrays):
    text = (_pretty(document) + "\n").encode("utf-8")
    store.publish(path, [(JSON_FILE, lambda f: f.write(text)),
                         (ARRAYS_FILE, lambda f: np.savez(f, **arrays))],
                  json_sha256=hashlib.sha256(text).hexdigest())


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
