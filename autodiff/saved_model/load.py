"""Loading a saved model (``ad.saved_model.load``): check everything, then rebuild.

The format is documented in ``save.py``, the directory layout in
``store.py``. Loading resolves the pointer to one version, opens its two
files (``safe_files.py``: regular files inside the directory, never
through a link), reads its ``saved_model.json`` (bounded in size and depth,
every key checked: ``checked_json.py``) and only the ``variables.npz``
members it refers to (``arrays.py``: sizes checked before anything
inflates, never a pickle), checks the format name and version (an older
version's graphs are first rewritten as the current version reads them:
``upgrade.py``), rebuilds the variables and constants (every array must
have the shape and dtype the JSON promises), and rebuilds each traced graph
through the op registry (``file_format.Reader``). Last, the JSON's SHA-256 must be the one the
pointer recorded when it was saved: a corruption that still parses (a
digit of a shape, a letter of a name) is caught there. The result is a
``LoadedModel``: each saved function is an attribute that picks the trace
matching its arguments. Nothing from the files is ever executed as code.
Every malformed input raises one error type, ``FormatError`` (a
ValueError), naming the file and the JSON path of the problem; a file
missing is a ``MissingFileError``, a link or special file an
``UnsafeFileError`` (both FormatErrors).
"""

import hashlib

import numpy as np

from .. import nest
from ..tensor import Variable, constant
from ..models.module import Module
from ..tracing.concrete_function import ConcreteFunction
from ..tracing.polymorphic import fits
from ..tracing.signature import TensorSpec, bind, describe, describe_text, is_placeholder, key_of
from . import store, upgrade
from .arrays import ArrayFile
from .checked_json import (FormatError, check_keys, decode_dtype, decode_shape, field, parse_json,
                           short_repr, short_text)
from .file_format import (ARRAYS_FILE, FORMAT_NAME, FORMAT_VERSION, JSON_FILE, OLDEST_VERSION,
                          Reader, decode_structure)
from .safe_files import MissingFileError, UnsafeFileError

__all__ = ["load", "LoadedModel", "LoadedFunction", "FormatError", "MissingFileError",
           "UnsafeFileError"]

MAX_JSON_BYTES = 1 << 28     # 256 MiB of JSON
TOP_KEYS = ("format", "version", "custom_gradients", "variables", "constants", "functions")


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
        if concrete is None:   # a trace saved with None sizes serves any size they allow
            concrete = next((c for c in self._concrete.values()
                             if fits(c.structured_input_signature, description)), None)
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
            FormatError and a FileNotFoundError; a link, FIFO, device or
            socket where a file belongs is an ``UnsafeFileError``.
        PermissionError: an entry this process may not open, as ``open`` says.
    """
    return store.read_with_retries(export_dir, _load_version)


def _load_version(version, json_sha256):
    """The model in the open ``safe_files.Directory`` ``version``; the pointer's digest or None."""
    json_path = version.join(JSON_FILE)
    raw = version.read(JSON_FILE, MAX_JSON_BYTES)
    npz, size = version.open_file(ARRAYS_FILE)   # both open now: a save may remove the version
    arrays = None
    try:
        document = parse_json(raw)
        arrays = ArrayFile(npz, size, version.join(ARRAYS_FILE), ARRAYS_FILE)
        model = _load(version.path, document, arrays)
    except FormatError as err:
        if getattr(err, "names_file", False):
            raise
        raise FormatError(f"{json_path}: {err}") from None
    except (RecursionError, MemoryError) as err:
        raise FormatError(f"{json_path}: too large or too deeply nested to load "
                          f"({type(err).__name__})") from None
    except Exception as err:  # noqa: BLE001 - whatever a malformed file provokes: one error type
        raise FormatError(f"{json_path}: malformed content ({type(err).__name__}: "
                          f"{short_text(err)})") from None
    finally:
        if arrays is not None:
            arrays.close()
        npz.close()
    if json_sha256 is not None and hashlib.sha256(raw).hexdigest() != json_sha256:
        raise FormatError(f"{json_path}: its SHA-256 is not the one {store.POINTER_FILE} "
                          f"recorded when it was saved ({json_sha256[:16]}...): the file was "
                          f"changed or corrupted since")
    return model


def _load(path, document, arrays):
    if field(document, "format", str, "$") != FORMAT_NAME:
        raise FormatError(f"$.format: {short_repr(document['format'])} is not {FORMAT_NAME!r}")
    version = field(document, "version", int, "$")
    if not OLDEST_VERSION <= version <= FORMAT_VERSION:
        newer = " (a newer autodiff wrote it)" if version > FORMAT_VERSION else ""
        raise FormatError(f"$.version: format version {version} is not supported{newer}: this "
                          f"autodiff reads versions {OLDEST_VERSION} to {FORMAT_VERSION}")
    check_keys(document, "$", TOP_KEYS)
    document = upgrade.to_current(document, version)   # version 1's LSTM gradients
    field(document, "custom_gradients", bool, "$")   # how it was saved; nothing to rebuild
    variables = []
    for i, entry in enumerate(field(document, "variables", list, "$")):
        where = f"$.variables[{i}]"
        check_keys(entry, where, ("name", "shape", "dtype", "trainable", "array"))
        value = _array(arrays, entry, where)
        variables.append(Variable(value, trainable=field(entry, "trainable", bool, where),
                                  name=field(entry, "name", str, where)))
    constants = _LazyConstants(arrays, field(document, "constants", list, "$"))
    reader = Reader(constants, variables)
    functions = {}
    for name, entry in field(document, "functions", dict, "$").items():
        where = f"$.functions.{short_text(name, 40)}"
        check_keys(entry, where, ("input_signature", "arg_names", "traces"))
        signature = field(entry, "input_signature", (dict, type(None)), where)
        if signature is not None:
            signature = tuple(decode_structure(signature, _spec_from_json,
                                               f"{where}.input_signature"))
        arg_names = field(entry, "arg_names", list, where)
        if not all(isinstance(a, str) for a in arg_names):
            raise FormatError(f"{where}.arg_names: {short_repr(arg_names)} is not a list of names")
        concrete = []
        for k, trace in enumerate(field(entry, "traces", list, where)):
            here = f"{where}.traces[{k}]"
            check_keys(trace, here, ("call", "graph"))
            call = field(trace, "call", dict, here)
            decode_structure(call, _call_leaf, f"{here}.call")
            graph = reader.graph(field(trace, "graph", dict, here), f"{here}.graph")
            n_tensors = key_of(call).count('{"tensor": ')
            if n_tensors != len(graph.arg_specs):
                raise FormatError(f"{here}: the call has {n_tensors} tensor(s), the graph "
                                  f"{len(graph.arg_specs)} argument(s)")
            concrete.append(ConcreteFunction(graph, name, call))
        functions[name] = LoadedFunction(name, signature, arg_names, concrete)
    return LoadedModel(functions, variables, path)


class _LazyConstants:
    """The constants list, each array read (and checked) only when a graph refers to it."""

    def __init__(self, arrays, entries):
        self._arrays, self._entries, self._loaded = arrays, entries, {}

    def __len__(self):
        return len(self._entries)

    def __getitem__(self, index):
        if index not in self._loaded:
            where = f"$.constants[{index}]"
            check_keys(self._entries[index], where, ("shape", "dtype", "array"))
            value = _array(self._arrays, self._entries[index], where)
            self._loaded[index] = constant(value)
        return self._loaded[index]


def _call_leaf(kind, body, where):
    """A leaf of a trace's ``call`` key: a tensor's [shape, dtype], or a Python value."""
    if kind == "tensor":
        if not (isinstance(body, list) and len(body) == 2 and isinstance(body[1], str)):
            raise FormatError(f"{where}: a tensor must be [shape, dtype], got {short_repr(body)}")
        decode_shape(body[0], where, allow_none=True)   # None: a size (or rank) left open
        decode_dtype(body[1], where)
    elif kind != "python" or not (body is None or isinstance(body, (bool, int, float, str))):
        raise FormatError(f"{where}: {short_repr(kind)} is not a valid call leaf")
    return None


def _spec_from_json(kind, body, where):
    if kind != "spec":
        raise FormatError(f"{where}: expected a spec, got {short_repr(kind)}")
    check_keys(body, where, ("shape", "dtype", "name"))
    return TensorSpec(decode_shape(field(body, "shape", (list, type(None)), where), where,
                                   allow_none=True),
                      decode_dtype(field(body, "dtype", str, where), where),
                      field(body, "name", (str, type(None)), where))


def _array(arrays, entry, where):
    key = field(entry, "array", str, where)
    shape = decode_shape(field(entry, "shape", list, where), where)
    dtype = decode_dtype(field(entry, "dtype", str, where), where)
    return arrays.read(key, shape, np.dtype(dtype._np), where)
