"""Keras 3's ``.weights.h5`` layout: where each variable of a model lives in the HDF5 file.

Keras 3 walks a model as it walks any saveable object, and so does this file:

- a Sequential or functional model's layers come first, under ``layers/``,
  each named by its *class* in snake case with a counter (``dense``,
  ``dense_1``: never the layer's own name, which varies between runs);
- then every attribute holding a layer or an optimizer, in sorted order
  (public names before ``_private`` ones), under its attribute name
  (``layers/lstm/cell``, ``optimizer``);
- an object's own variables are datasets ``<path>/vars/0``, ``1``, ... in
  Keras' order (trainable, then non-trainable), and the ``vars`` group
  carries the object's ``name``.

So ``layers/dense/vars/0`` is the first Dense layer's kernel, whatever the
layer is called, and a file written by Keras 3 loads here (and the
reverse) for the layers both have. h5py is imported only when a file is
read or written: it is an optional extra (``pip install tapeschool[keras]``).
"""

import warnings

from ...variable import Variable

__all__ = ["walk", "write_weights", "read_weights", "require_h5py"]


def require_h5py():
    """The h5py module, or ImportError saying how to install it."""
    try:
        import h5py
    except ImportError as err:   # an optional extra
        raise ImportError("Saving and loading Keras files needs h5py: "
                          "python -m pip install 'tapeschool[keras]' (or h5py)") from err
    return h5py


def _snake(name):
    from ..layers.base import keras_snake
    return keras_snake(name)


def _own_variables(obj):
    from ..layers.base import Layer
    from ..optimizers import Optimizer
    if isinstance(obj, Optimizer):
        return list(obj.variables)
    if isinstance(obj, Layer):
        own = obj.__dict__.get("_ad_weights", [])
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]
    return []


def _is_saveable(value):
    from ..layers.base import Layer
    from ..optimizers import Optimizer
    return isinstance(value, (Layer, Optimizer))


def _children(obj):
    from ..functional.model import Functional
    from ..model import Sequential
    if isinstance(obj, (Sequential, Functional)):
        yield "layers", obj.layers
    for attr in sorted(vars(obj), key=lambda a: f"~{a}" if a.startswith("_") else a):
        if attr.startswith("_ad_") or attr in ("_layers", "_functional_layers"):
            continue
        value = vars(obj)[attr]
        if _is_saveable(value) or (isinstance(value, (list, tuple, dict)) and any(
                _is_saveable(v) for v in (value.values() if isinstance(value, dict) else value))):
            yield attr, value


def walk(obj, path="", seen=None):
    """Yields ``(path, object, its own variables)`` for ``obj`` and everything under it, in
    Keras 3's order (each object once)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield path, obj, _own_variables(obj)
    for attr, child in _children(obj):
        child_path = f"{path}/{attr}" if path else attr
        if _is_saveable(child):
            yield from walk(child, child_path, seen)
            continue
        used = {}
        for item in child.values() if isinstance(child, dict) else child:
            if not _is_saveable(item):
                continue
            base = _snake(type(item).__name__)
            n = used.get(base, 0)
            used[base] = n + 1
            yield from walk(item, f"{child_path}/{base if n == 0 else f'{base}_{n}'}", seen)


def write_weights(obj, h5_file):
    """Writes every variable under ``obj`` into the open h5py file, as Keras 3 lays it out."""
    for path, item, variables in walk(obj):
        group = h5_file.require_group(f"{path}/vars" if path else "vars")
        name = getattr(item, "name", None)
        if isinstance(name, str):
            group.attrs["name"] = name
        for k, variable in enumerate(variables):
            group.create_dataset(str(k), data=variable.numpy())


def read_weights(obj, h5_file, source="the file", skip_mismatch=False):
    """Assigns every variable under ``obj`` from the open h5py file.

    Args:
        skip_mismatch: as Keras 3, an object (layer, optimizer) whose variables do
            not fit the file's (their number, or a shape) is skipped with a
            warning and the rest are loaded; as in Keras, the object's variables
            before the first one that does not fit are still assigned.

    Raises:
        ValueError: without ``skip_mismatch``, a layer whose number of variables or
            a variable whose shape differs from the file's, naming the path
            (nothing is assigned then).
    """
    plan, failed = [], []
    for path, item, variables in walk(obj):
        try:
            _plan_object(path, item, variables, h5_file, source, plan)
        except ValueError as error:
            if not skip_mismatch:
                raise
            failed.append((getattr(item, "name", path), error))
    for variable, value in plan:   # all checked first: a bad file changes nothing
        if isinstance(variable, Variable):
            variable.assign(value.astype(variable.dtype.as_numpy_dtype)
                            if hasattr(variable.dtype, "as_numpy_dtype") else value)
    if failed:
        warnings.warn(f"A total of {len(failed)} objects could not be loaded. Example error "
                      f"message for object {failed[0][0]}:\n\n{failed[0][1]}\n\nList of "
                      f"objects that could not be loaded:\n{[name for name, _ in failed]}",
                      UserWarning, stacklevel=3)


def _plan_object(path, item, variables, h5_file, source, plan):
    """Adds ``(variable, value)`` for ``item``'s variables to ``plan``, up to the first that
    does not fit; then raises ValueError naming it."""
    key = f"{path}/vars" if path else "vars"
    stored = h5_file[key] if key in h5_file else {}
    if len(stored) != len(variables):
        label = getattr(item, "name", path)
        raise ValueError(f"Layer {label!r} (at {path or 'the top'!r} in {source}) expected "
                         f"{len(variables)} variables, but received {len(stored)} "
                         f"variables during loading.")
    for k, variable in enumerate(variables):
        value = stored[str(k)][()]
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"{key}/{k} in {source} has shape {tuple(value.shape)}, but "
                             f"the variable {getattr(variable, 'path', variable.name)} has "
                             f"shape {tuple(variable.shape)}")
        plan.append((variable, value))
