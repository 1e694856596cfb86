"""Loading a saved model (``ad.saved_model.load``): check everything, then rebuild.

The format is documented in ``saved_model.py``. Loading reads
``saved_model.json`` and ``variables.npz`` (``allow_pickle=False``), checks
the format name and version, rebuilds the variables and constants (every
array must have the shape and dtype the JSON promises), and rebuilds each
traced graph through the op registry (``saved_model_format.Reader``). The
result is a ``LoadedModel``: each saved function is an attribute that picks
the trace matching its arguments. Nothing from the files is ever executed
as code.
"""

import json
import os
import zipfile

import numpy as np

from . import nest
from .function import ConcreteFunction
from .module import Module
from .saved_model_format import (ARRAYS_FILE, FORMAT_NAME, FORMAT_VERSION, JSON_FILE, FormatError,
                                 Reader, decode_dtype, decode_shape, decode_structure, field)
from .signature import TensorSpec, bind, describe, describe_text, is_placeholder, key_of
from .tensor import Variable, constant

__all__ = ["load", "LoadedModel", "LoadedFunction"]


class LoadedFunction:
    """A function of a loaded model: picks the saved trace matching the call and runs it."""

    def __init__(self, name, input_signature, arg_names, concrete_functions):
        self.name = name
        self.input_signature = input_signature
        self._arg_names = tuple(arg_names)
        self._concrete = {key_of(c.structured_input_signature): c for c in concrete_functions}

    @property
    def concrete_functions(self):
        """The saved traces (ConcreteFunctions): a loaded model can be saved again."""
        return list(self._concrete.values())

    def __call__(self, *args, **kwargs):
        structure = bind(args, kwargs, self.input_signature, self._arg_names, self.name)
        description = describe(structure)
        concrete = self._concrete.get(key_of(description))
        if concrete is None:
            known = ", ".join(describe_text(c.structured_input_signature)
                              for c in self._concrete.values()) or "none"
            raise ValueError(f"the loaded function {self.name!r} has no trace for these "
                             f"arguments: {describe_text(description)}. Traces are specialized "
                             f"to shapes; it was saved with traces for: {known}")
        return concrete._run([t for t in nest.flatten(structure) if is_placeholder(t)])

    def __repr__(self):
        return f"<loaded function {self.name}: {len(self._concrete)} trace(s)>"


class LoadedModel(Module):
    """What ``load`` returns: the saved functions as attributes, and the variables."""

    def __init__(self, functions, variables, path):
        super().__init__(name="loaded_model")
        self.saved_variables = list(variables)
        self._ad_functions = functions
        self._ad_path = path
        for name, fn in functions.items():
            if not hasattr(self, name):
                setattr(self, name, fn)

    def __call__(self, *args, **kwargs):
        if "__call__" not in self._ad_functions:
            raise TypeError("this loaded model is not callable: no __call__ function was saved")
        return self._ad_functions["__call__"](*args, **kwargs)

    @property
    def functions(self):
        """``{name: LoadedFunction}``, including any whose name an attribute hides."""
        return dict(self._ad_functions)

    def __repr__(self):
        return f"<LoadedModel from {self._ad_path!r}: functions {sorted(self._ad_functions)}>"


def load(export_dir, tags=None, options=None):
    """Loads a model written by ``save`` (in this process or any other).

    Returns:
        A LoadedModel: ``loaded.<function name>(...)``, ``.variables``,
        ``.trainable_variables``.

    Raises:
        OSError: ``export_dir`` or one of its files does not exist.
        ValueError: a file is truncated, corrupted or inconsistent (the
            message names the file and the problem), or uses an op type
            that is not registered in this process.
    """
    path = os.fspath(export_dir)
    json_path = os.path.join(path, JSON_FILE)
    if not os.path.isfile(json_path):
        raise FileNotFoundError(f"SavedModel file does not exist at: {json_path}")
    try:
        with open(json_path, encoding="utf-8") as f:
            document = json.load(f)
    except (ValueError, UnicodeDecodeError) as err:
        raise FormatError(f"{json_path} is not valid JSON (truncated or corrupted?): {err}") from None
    try:
        return _load(path, json_path, document)
    except FormatError as err:
        if getattr(err, "names_file", False):
            raise
        raise FormatError(f"{json_path}: {err}") from None


def _load(path, json_path, document):
    if field(document, "format", str, "top level") != FORMAT_NAME:
        raise FormatError(f"format is {document['format']!r}, not {FORMAT_NAME!r}")
    version = field(document, "version", int, "top level")
    if version != FORMAT_VERSION:
        raise FormatError(f"format version {version} is not supported (this autodiff reads "
                          f"version {FORMAT_VERSION})")
    arrays = _read_arrays(os.path.join(path, ARRAYS_FILE))
    variables = []
    for i, entry in enumerate(field(document, "variables", list, "top level")):
        where = f"variables[{i}]"
        value = _array(arrays, entry, where)
        variables.append(Variable(value, trainable=field(entry, "trainable", bool, where),
                                  name=field(entry, "name", str, where)))
    constants = [constant(_array(arrays, entry, f"constants[{i}]"))
                 for i, entry in enumerate(field(document, "constants", list, "top level"))]
    reader = Reader(constants, variables)
    functions = {}
    for name, entry in field(document, "functions", dict, "top level").items():
        where = f"functions.{name}"
        signature = entry.get("input_signature") if isinstance(entry, dict) else None
        if signature is not None:
            signature = tuple(decode_structure(signature, _spec_from_json, f"{where}.input_signature"))
        arg_names = field(entry, "arg_names", list, where)
        concrete = []
        for k, trace in enumerate(field(entry, "traces", list, where)):
            here = f"{where}.traces[{k}]"
            call = field(trace, "call", dict, here)
            graph = reader.graph(field(trace, "graph", dict, here), f"{here}.graph")
            n_tensors = key_of(call).count('{"tensor": ')
            if n_tensors != len(graph.arg_specs):
                raise FormatError(f"{here}: the call has {n_tensors} tensor(s), the graph "
                                  f"{len(graph.arg_specs)} argument(s)")
            concrete.append(ConcreteFunction(graph, name, call))
        functions[name] = LoadedFunction(name, signature, [str(a) for a in arg_names], concrete)
    return LoadedModel(functions, variables, path)


def _spec_from_json(kind, body, where):
    if kind != "spec":
        raise FormatError(f"{where}: expected a spec, got {kind!r}")
    name = body.get("name") if isinstance(body, dict) else None
    return TensorSpec(decode_shape(field(body, "shape", (list, type(None)), where), where,
                                   allow_none=True),
                      decode_dtype(field(body, "dtype", str, where), where),
                      name if isinstance(name, str) else None)


def _read_arrays(npz_path):
    if not os.path.isfile(npz_path):
        raise FileNotFoundError(f"SavedModel file does not exist at: {npz_path}")
    try:
        with np.load(npz_path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as err:
        raise _naming_file(f"{npz_path} cannot be read (truncated or corrupted?): "
                           f"{type(err).__name__}: {err}") from None


def _naming_file(message):
    err = FormatError(message)
    err.names_file = True
    return err


def _array(arrays, entry, where):
    key = field(entry, "array", str, where)
    shape = decode_shape(field(entry, "shape", list, where), where)
    dtype = decode_dtype(field(entry, "dtype", str, where), where)
    if key not in arrays:
        raise FormatError(f"{where}: array {key!r} is missing from {ARRAYS_FILE}")
    value = arrays[key]
    if value.shape != shape or value.dtype != dtype._np:
        raise FormatError(f"{where}: array {key!r} in {ARRAYS_FILE} has shape {value.shape} and "
                          f"dtype {value.dtype}, but {JSON_FILE} says shape {shape} and "
                          f"dtype {dtype.name}")
    return value
