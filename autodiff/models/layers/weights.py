"""A layer's variables as Keras 3 names them, and ``add_weight``'s Keras 3 arguments.

Keras 3 gives a layer's variable a short ``name`` (``'kernel'``) and a
``path`` made of the name scopes it was created in (``'dense/kernel'``, or
``'sequential/dense/kernel'`` when a Sequential model builds its layers
inside its own scope):

    >>> layer = ad.keras.layers.Dense(2, name="dense")
    >>> y = layer(ad.ones([1, 3]))
    >>> layer.kernel.name, layer.kernel.path
    ('kernel', 'dense/kernel')

Owns: ``KerasVariable`` (an ``ad.Variable`` with ``name``, ``path`` and an
optional ``regularizer``) and ``parse_add_weight`` (Keras 3's signature,
its errors, and NotImplementedError for the arguments this library lacks).
"""

from ... import dtypes
from ...variable import Variable
from .. import initializers, regularizers

__all__ = ["KerasVariable", "StandaloneVariable", "parse_add_weight"]


class KerasVariable(Variable):
    """An ``ad.Variable`` named as Keras 3 names a layer's variables.

    ``name`` is the short name (``'kernel'``); ``path`` the full one
    (``'sequential/dense/kernel'``). Tapes, graphs and the widgets label it
    ``'<layer>/<name>'`` (``'dense/kernel'``): the layer it belongs to, which
    is how they group variables.
    """

    __slots__ = ("regularizer", "_path")

    def __init__(self, value, path, layer_name, trainable=True, dtype=None, regularizer=None):
        short = path.rpartition("/")[2]
        super().__init__(value, trainable=trainable, name=f"{layer_name}/{short}", dtype=dtype)
        self._path = path
        self.regularizer = regularizer

    @property
    def name(self):
        return self._path.rpartition("/")[2]

    @property
    def path(self):
        return self._path

    def __repr__(self):
        return (f"<KerasVariable path={self.path}, shape={tuple(self.shape)}, "
                f"dtype={self.dtype.name}, value={self._numpy_text(True)}>")

    __str__ = __repr__


class StandaloneVariable(KerasVariable):
    """``ad.keras.Variable``: Keras 3's ``keras.Variable(initializer, shape=None, dtype=None,
    trainable=True, name=None)``, a variable outside any layer (``name`` and ``path`` are both
    ``name``, by default ``'variable'``, ``'variable_1'``, ...).

    ``initializer`` is a value (a number, a list, an array, a tensor) or an initializer
    (a name such as ``'zeros'`` or an instance), which then needs ``shape``.

    Raises:
        ValueError: an initializer without a ``shape``, or a value with another ``shape``.
    """

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None, **kwargs):
        if name is None:   # 'variable', 'variable_1', ... as Keras names them
            from .base import _unique_name
            name = _unique_name("variable")
        if isinstance(initializer, str) or (callable(initializer) and
                                            not hasattr(initializer, "shape")):
            if shape is None:
                raise ValueError(f"When creating a Variable from an initializer, the `shape` "
                                 f"argument should be specified. Received: "
                                 f"initializer={initializer} and shape={shape}")
            value = initializers.get(initializer)(tuple(shape), dtype=dtype or "float32")
        else:
            value = initializer
        super().__init__(value, name, name, trainable=trainable, dtype=dtype)
        if shape is not None and tuple(self.shape) != tuple(shape):
            raise ValueError(f"Initial value has shape {tuple(self.shape)}, but the variable "
                             f"was given shape {tuple(shape)}.")


_NOT_HERE = {"constraint": None, "aggregation": "none", "overwrite_with_gradient": False}


def parse_add_weight(layer, args, shape, initializer, dtype, regularizer, name, **rest):
    """``(shape, initializer, dtype, regularizer, name)`` from Keras 3's ``add_weight`` call.

    Keras 3: ``add_weight(shape=None, initializer=None, dtype=None,
    trainable=True, autocast=True, regularizer=None, constraint=None,
    aggregation='none', overwrite_with_gradient=False, name=None)``; up to
    three positional arguments are ``shape, initializer, dtype``, and a string
    first is refused (Keras 2's positional name). The default initializer is
    ``'glorot_uniform'`` for a float variable, ``'zeros'`` otherwise.

    Raises:
        ValueError / TypeError: as Keras 3 for a misplaced or doubled argument.
        NotImplementedError: ``constraint``, ``aggregation`` other than
            ``'none'``, ``overwrite_with_gradient=True``, naming them.
    """
    for key, value in rest.items():
        if key not in _NOT_HERE:
            raise TypeError(f"Layer.add_weight() got an unexpected keyword argument {key!r}")
        if value is not None and value != _NOT_HERE[key]:
            raise NotImplementedError(f"{type(layer).__name__}.add_weight: {key}={value!r} "
                                      f"is not implemented")
    if len(args) > 3:
        raise TypeError(f"add_weight() takes at most 3 positional arguments but {len(args)} "
                        f"were given.")
    if args and isinstance(args[0], str):
        raise ValueError(f"`name` must be passed as a keyword argument. Received: "
                         f"add_weight('{args[0]}', ...). Use: add_weight(shape=..., "
                         f"name='{args[0]}').")
    given = dict(zip(("shape", "initializer", "dtype"), args))
    for key, value in (("shape", shape), ("initializer", initializer), ("dtype", dtype)):
        if key in given and value is not None:
            raise ValueError(f"`{key}` was passed both positionally and as a keyword argument.")
    shape = tuple(given.get("shape", shape) or ())
    dtype = given.get("dtype", dtype)
    dtype = layer.dtype if dtype is None else dtypes.as_dtype(dtype)
    initializer = given.get("initializer", initializer)
    if initializer is None:
        initializer = "glorot_uniform" if dtype.is_floating else "zeros"
    return (shape, initializers.get(initializer), dtype, regularizers.get(regularizer),
            name or "variable")
