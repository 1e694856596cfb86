"""``ad.Module``: a container that finds its variables by walking its attributes.

A module is any object that keeps Variables (and other modules) in its
attributes, directly or inside lists, tuples and dicts. Nothing registers
them: ``trainable_variables`` walks the attributes each time it is asked, as
``tf.Module`` does, in a fixed order (attribute names sorted, dicts by sorted
key, a module's own attributes before those of its submodules, each object
once):

    >>> class Affine(ad.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = ad.Variable([[1.0, 2.0]], name="w")
    ...         self.b = ad.Variable([0.0, 0.0], name="b", trainable=False)
    >>> m = Affine()
    >>> [v.name for v in m.variables]         # sorted by attribute: b before w
    ['b:0', 'w:0']
    >>> [v.name for v in m.trainable_variables]
    ['w:0']

Calling a module whose class defines ``__call__`` as a plain function runs
it inside ``ad.name_scope(module.name)``, so the records it makes carry the
scope (``'my_model/dense'`` for a Dense layer called inside ``my_model``).
Only the scope changes, never a value; a module calling itself again (a
subclass's ``__call__`` calling ``super().__call__``) does not nest its
name twice.

Layers (``ad.layers``) change only the order of their *own* variables (the
order they were created in, as Keras does: kernel before bias).
"""

import contextlib
import functools
import inspect
import re
import threading

from .. import nest
from .. import tape as _tape
from ..name_scope import name_scope as _name_scope
from ..tensor import Variable

__all__ = ["Module"]


def camel_to_snake(name):
    """``'BatchNormalization'`` -> ``'batch_normalization'`` (TensorFlow's default names)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


class Module:
    """Base class for objects that own variables and submodules.

    Args:
        name: the module's name; by default the class name in snake_case
            (``MyModule`` -> ``'my_module'``).

    Attributes whose names start with ``_ad_`` are bookkeeping and are not
    walked.
    """

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{name!r} is not a valid module name: module names must be "
                             f"valid Python identifiers (e.g. 'my_module')")
        self._ad_name = name

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        call = cls.__dict__.get("__call__")
        if inspect.isfunction(call) and not getattr(call, "_ad_scoped", False):
            cls.__call__ = _in_own_scope(call)

    @property
    def name_scope(self):
        """``ad.name_scope(self.name)`` (as ``tf.Module.name_scope``)."""
        return _name_scope(self.name)

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: ``method`` runs inside the module's name scope (``tf.Module``'s).

        >>> class Scaler(ad.Module):
        ...     @ad.Module.with_name_scope
        ...     def scale(self, x):
        ...         return x * 2.0          # recorded with scope 'scaler'
        """
        return _in_own_scope(method)

    @property
    def name(self):
        """The module's name (not made unique: two modules may share one)."""
        return self._module_name()

    def _module_name(self):
        # A subclass that forgot super().__init__() still gets a name.
        return self.__dict__.get("_ad_name") or camel_to_snake(type(self).__name__)

    @property
    def variables(self):
        """Every Variable of this module and its submodules, each once, in walk order."""
        return tuple(_walk(self, lambda x: isinstance(x, Variable)))

    @property
    def trainable_variables(self):
        """The variables with ``trainable=True`` (what a tape watches and optimizers update)."""
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        """The variables with ``trainable=False`` (e.g. batch normalization's moving statistics)."""
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        """Every module reachable from this one (not itself), each once, in walk order."""
        return tuple(_walk(self, lambda x: isinstance(x, Module)))

    def _own_leaves(self):
        """This module's direct leaves (attribute values, containers flattened), in walk order."""
        for key in sorted(vars(self)):
            if key.startswith("_ad_"):
                continue
            for leaf in _flatten(vars(self)[key]):
                yield leaf

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"


_calling = threading.local()   # .module: the module whose scoped method runs now


def _in_own_scope(method):
    """``method`` wrapped to run inside ``ad.name_scope(self.name)``."""

    @functools.wraps(method)
    def scoped(self, *args, **kwargs):
        outer = getattr(_calling, "module", None)
        if outer is self:   # already inside this module's scope
            return method(self, *args, **kwargs)
        _calling.module = self
        try:
            with _name_scope(self._module_name()):
                return method(self, *args, **kwargs)
        finally:
            _calling.module = outer

    scoped._ad_scoped = True
    return scoped


def _flatten(value):
    try:
        return nest.flatten(value)
    except Exception:  # an exotic container: treat it as one leaf, as tf.Module does  # noqa: BLE001
        return [value]


def _walk(module, predicate):
    """Yields the matching leaves: a module's own leaves first, then each submodule's.

    Breadth within a module, depth across modules, each object once (so a
    variable shared by two layers is listed once and cycles end).
    """
    seen = {id(module)}
    stack = [module]
    while stack:
        current = stack.pop(0)
        submodules = []
        for leaf in current._own_leaves():
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if isinstance(leaf, Module):
                submodules.append(leaf)
        # Depth-first across modules, as tf.Module: this module's submodules
        # are walked before the siblings queued by its parent.
        stack[:0] = submodules


@contextlib.contextmanager
def not_recorded():
    """Ops run inside are seen by no tape or tracer of this thread (building a model on
    zeros, an optimizer step running inside its traced node)."""
    state = _tape.thread_state
    active, observers = list(state.active), list(state.observers)
    state.active[:], state.observers[:] = [], []
    try:
        yield
    finally:
        state.active[:], state.observers[:] = active, observers
