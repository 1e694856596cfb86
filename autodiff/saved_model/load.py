"""Loading a saved model (``ad.saved_model.load``): check everything, then rebuild.

The format is documented in ``save.py``, the directory layout in
``store.py``. Loading resolves the pointer to one version,
reads its ``saved_model.json`` (bounded in size and depth) and only the
``variables.npz`` members it refers to (``arrays.py``: sizes
checked before anything inflates, never a pickle), checks
the format name and version, rebuilds the variables and constants (every
array must have the shape and dtype the JSON promises), and rebuilds each
traced graph through the op registry (``file_format.Reader``). The
result is a ``LoadedModel``: each saved function is an attribute that picks
the trace matching its arguments. Nothing from the files is ever executed
as code. Every malformed input raises one error type, ``FormatError``
(a ValueError), naming the file and the JSON path of the problem.
"""

import json
import os

import numpy as np

from .. import nest
from ..tensor import Variable, constant
from ..models.module import Module
from ..tracing.function import ConcreteFunction
from ..tracing.signature import TensorSpec, bind, describe, describe_text, is_placeholder, key_of
from . import store
from .arrays import ArrayFile
from .file_format import (ARRAYS_FILE, FORMAT_NAME, FORMAT_VERSION, JSON_FILE, FormatError,
                          Reader, decode_dtype, decode_shape, decode_structure, field)

__all__ = ["load", "LoadedModel", "LoadedFunction", "FormatError", "MissingFileError"]

MAX_JSON_BYTES = 1 << 28     # 256 MiB of JSON
MAX_JSON_DEPTH = 64          # our own files nest about 15 deep


class MissingFileError(FormatError, FileNotFoundError):
    """A file of a saved model's directory is missing (a FormatError and a FileNotFoundError)."""


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

    Reads the version ``saved_model.current`` names (``store.py``),
    or the two files of the older layout, and only the arrays the JSON refers to.

    Returns:
        A LoadedModel: ``loaded.<function name>(...)``, ``.variables``,
        ``.trainable_variables``.

    Raises:
        FileNotFoundError: no saved model at ``export_dir``.
        FormatError (a ValueError): anything malformed; the message names the
            file and the JSON path, e.g. ``.../saved_model.json:
            $.functions.f.traces[0].graph.nodes[3].inputs[1]: ...``. A file
            missing from a model directory is a ``MissingFileError``, both a
            FormatError and a FileNotFoundError.
    """
    path = os.fspath(export_dir)
    if os.path.isfile(path):
        raise FormatError(f"{path}: is a file; a saved model is a directory")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no saved model at {path}")
    try:
        return store.read_with_retries(path, _load_version)
    except store.StoreError as err:
        raise FormatError(str(err)) from None


def _load_version(version_dir):
    json_path = os.path.join(version_dir, JSON_FILE)
    document = _read_json(json_path)
    arrays = None
    try:
        arrays = ArrayFile(os.path.join(version_dir, ARRAYS_FILE), ARRAYS_FILE)
        return _load(version_dir, document, arrays)
    except FileNotFoundError as err:
        raise MissingFileError(f"{err.filename or version_dir}: a file of the saved model is "
                               f"missing: {err}") from None
    except FormatError as err:
        if getattr(err, "names_file", False):
            raise
        raise FormatError(f"{json_path}: {err}") from None
    except (RecursionError, MemoryError) as err:
        raise FormatError(f"{json_path}: too large or too deeply nested to load "
                          f"({type(err).__name__})") from None
    except Exception as err:  # noqa: BLE001 - whatever a malformed file provokes: one error type
        raise FormatError(f"{json_path}: malformed content ({type(err).__name__}: {err})") \
            from None
    finally:
        if arrays is not None:
            arrays.close()


def _read_json(json_path):
    try:
        with open(json_path, "rb") as f:
            # read(n) would allocate n bytes up front: ask the size first
            size = os.fstat(f.fileno()).st_size
            raw = f.read(size + 1) if size <= MAX_JSON_BYTES else b""
    except FileNotFoundError:
        raise MissingFileError(f"no saved model at {json_path}: the file is missing") from None
    except IsADirectoryError:
        raise FormatError(f"{json_path}: is a directory, not a file") from None
    if size > MAX_JSON_BYTES or len(raw) > MAX_JSON_BYTES:
        raise FormatError(f"{json_path}: larger than {MAX_JSON_BYTES} bytes; refusing it")
    try:
        document = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise FormatError(f"{json_path}: nested too deeply (over {MAX_JSON_DEPTH} levels)") \
            from None
    except (ValueError, UnicodeDecodeError) as err:
        raise FormatError(f"{json_path} is not valid JSON (truncated or corrupted?): {err}") \
            from None
    _check_depth(document, json_path)
    return document


def _check_depth(document, json_path):
    """Refuses nesting deeper than MAX_JSON_DEPTH (checked without recursion)."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise FormatError(f"{json_path}: nested too deeply (over {MAX_JSON_DEPTH} levels)")
        children = value.values() if isinstance(value, dict) else \
            value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))


def _load(path, document, arrays):
    if field(document, "format", str, "$") != FORMAT_NAME:
        raise FormatError(f"$.format: {document['format']!r} is not {FORMAT_NAME!r}")
    version = field(document, "version", int, "$")
    if version != FORMAT_VERSION:
        raise FormatError(f"$.version: format version {version} is not supported (this "
                          f"autodiff reads version {FORMAT_VERSION})")
    variables = []
    for i, entry in enumerate(field(document, "variables", list, "$")):
        where = f"$.variables[{i}]"
        value = _array(arrays, entry, where)
        variables.append(Variable(value, trainable=field(entry, "trainable", bool, where),
                                  name=field(entry, "name", str, where)))
    constants = _LazyConstants(arrays, field(document, "constants", list, "$"))
    reader = Reader(constants, variables)
    functions = {}
    for name, entry in field(document, "functions", dict, "$").items():
        where = f"$.functions.{name}"
        signature = field(entry, "input_signature", (dict, type(None)), where)
        if signature is not None:
            signature = tuple(decode_structure(signature, _spec_from_json,
                                               f"{where}.input_signature"))
        arg_names = field(entry, "arg_names", list, where)
        concrete = []
        for k, trace in enumerate(field(entry, "traces", list, where)):
            here = f"{where}.traces[{k}]"
            call = field(trace, "call", dict, here)
            decode_structure(call, _call_leaf, f"{here}.call")
            graph = reader.graph(field(trace, "graph", dict, here), f"{here}.graph")
            n_tensors = key_of(call).count('{"tensor": ')
            if n_tensors != len(graph.arg_specs):
                raise FormatError(f"{here}: the call has {n_tensors} tensor(s), the graph "
                                  f"{len(graph.arg_specs)} argument(s)")
            concrete.append(ConcreteFunction(graph, name, call))
        functions[name] = LoadedFunction(name, signature, [str(a) for a in arg_names], concrete)
    return LoadedModel(functions, variables, path)


class _LazyConstants:
    """The constants list, each array read (and checked) only when a graph refers to it."""

    def __init__(self, arrays, entries):
        self._arrays, self._entries, self._loaded = arrays, entries, {}

    def __len__(self):
        return len(self._entries)

    def __getitem__(self, index):
        if index not in self._loaded:
            value = _array(self._arrays, self._entries[index], f"$.constants[{index}]")
            self._loaded[index] = constant(value)
        return self._loaded[index]


def _call_leaf(kind, body, where):
    """A leaf of a trace's ``call`` key: a tensor's [shape, dtype], or a Python value."""
    if kind == "tensor":
        if not (isinstance(body, list) and len(body) == 2 and isinstance(body[1], str)):
            raise FormatError(f"{where}: a tensor must be [shape, dtype], got {body!r:.80}")
        decode_shape(body[0], where)
        decode_dtype(body[1], where)
    elif kind != "python" or not (body is None or isinstance(body, (bool, int, float, str))):
        raise FormatError(f"{where}: {kind!r} is not a valid call leaf")
    return None


def _spec_from_json(kind, body, where):
    if kind != "spec":
        raise FormatError(f"{where}: expected a spec, got {kind!r}")
    name = body.get("name") if isinstance(body, dict) else None
    return TensorSpec(decode_shape(field(body, "shape", (list, type(None)), where), where,
                                   allow_none=True),
                      decode_dtype(field(body, "dtype", str, where), where),
                      name if isinstance(name, str) else None)


def _array(arrays, entry, where):
    key = field(entry, "array", str, where)
    shape = decode_shape(field(entry, "shape", list, where), where)
    dtype = decode_dtype(field(entry, "dtype", str, where), where)
    return arrays.read(key, shape, np.dtype(dtype._np), where)
