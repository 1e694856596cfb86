"""Symbolic inputs: ``ad.keras.Input``, ``KerasTensor`` and the record of a layer called on one.

In Keras' functional API a model is described by calling layers on
placeholders; nothing is computed until the model is called on data:

    >>> x = ad.keras.Input(shape=(3,), name="x")
    >>> x
    <KerasTensor shape=(None, 3), dtype=float32, name=x>
    >>> h = ad.keras.layers.Dense(4)(x)       # a Node: Dense called on x
    >>> h.shape
    (None, 4)

A layer called on KerasTensors builds itself and learns its output's shape
by running once on zeros (outside every tape: nothing is recorded), with
each unknown dimension set to 1 and again to 2: a dimension of the output
that changes with them is unknown (``None``) too. The call is kept as a
``Node`` (the layer, its arguments with their KerasTensors), which
``functional.py`` walks to make a ``Model(inputs, outputs)``.

Owns: KerasTensor, Node, Input, InputLayer, ``symbolic_call``, and ``Operation``: a
``keras.ops`` function called on KerasTensors (``symbolic_aware`` wraps them).
"""

from ... import dtypes, nest
from ...ops import creation
from ..layers.base import Layer, _unique_name
from ..module import not_recorded

__all__ = ["KerasTensor", "Node", "Input", "InputLayer", "Operation", "has_symbolic",
           "symbolic_aware", "symbolic_call"]


class KerasTensor:
    """A placeholder: a shape (``None`` where unknown, the batch axis first) and a dtype.

    ``_ad_history`` is ``(node, index)``: which call made it, and which of its outputs.
    """

    def __init__(self, shape, dtype=dtypes.float32, name=None, history=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name
        self._ad_history = history

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, name={self.name}>"

    def __bool__(self):
        raise TypeError("A KerasTensor is symbolic: it has no value to test. Build the model "
                        "with Model(inputs, outputs), then call it on data")

    # Arithmetic on placeholders makes nodes too, as in Keras (x + y for a residual); a
    # Python number takes the placeholder's dtype, as beside a tensor (x * 2 for float x).
    def __add__(self, other):
        return _operator("add")([self, self._partner(other)])

    def __radd__(self, other):
        return _operator("add")([self._partner(other), self])

    def __sub__(self, other):
        return _operator("subtract")([self, self._partner(other)])

    def __rsub__(self, other):
        return _operator("subtract")([self._partner(other), self])

    def __mul__(self, other):
        return _operator("multiply")([self, self._partner(other)])

    def __rmul__(self, other):
        return _operator("multiply")([self._partner(other), self])

    def _partner(self, other):
        if isinstance(other, (bool, int, float)) and not isinstance(other, KerasTensor):
            return _constant(other, self.dtype)
        return other


def _constant(value, dtype):
    from ...tensor import convert_to_tensor
    return convert_to_tensor(value, dtype=dtype)


class Operation(Layer):
    """A ``keras.ops`` function called on KerasTensors: one node of the graph that runs the
    function when the model runs (Keras records its operations the same way); like the
    operators above, it is not listed in ``model.layers``."""

    def __init__(self, fn):
        super().__init__(name=_unique_name(fn.__name__))
        self._ad_fn, self._ad_operation = fn, True

    def call(self, inputs, *args, **kwargs):
        return self._ad_fn(inputs, *args, **kwargs)


def symbolic_aware(fn):
    """``fn`` (a ``keras.ops`` function), which makes an ``Operation`` node when an argument
    is a KerasTensor (``ops.concatenate([a, b])`` included) and runs as it is otherwise."""
    def call(*args, **kwargs):
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, KerasTensor) or (isinstance(arg, (list, tuple)) and any(
                    isinstance(a, KerasTensor) for a in arg)):
                return Operation(fn)(*args, **kwargs)
        return fn(*args, **kwargs)
    call.__name__, call.__qualname__, call.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    call.__wrapped__ = fn
    return call


def _operator(kind):
    """The merge layer behind ``x + y`` on placeholders; like Keras' operations, it is not
    listed in ``model.layers``."""
    from ..layers.merging import Add, Multiply, Subtract
    layer = {"add": Add, "subtract": Subtract, "multiply": Multiply}[kind]()
    layer._ad_operation = True
    return layer


class Node:
    """One call of a layer on symbolic inputs: the layer, its arguments, its outputs."""

    def __init__(self, layer, inputs, args, kwargs, outputs):
        self.layer, self.inputs, self.args, self.kwargs = layer, inputs, args, kwargs
        self.outputs = outputs

    @property
    def input_tensors(self):
        return [t for t in nest.flatten([self.inputs, list(self.args), self.kwargs])
                if isinstance(t, KerasTensor)]

    @property
    def is_input(self):
        return isinstance(self.layer, InputLayer)

    def parent_nodes(self):
        return [t._ad_history[0] for t in self.input_tensors if t._ad_history]

    def fill_in(self, values):
        """The call's arguments with each KerasTensor replaced by ``values[id(tensor)]``."""
        def fill(leaf):
            return values[id(leaf)] if isinstance(leaf, KerasTensor) else leaf
        return (nest.map_structure(fill, self.inputs), [nest.map_structure(fill, a) for a in self.args],
                {k: nest.map_structure(fill, v) for k, v in self.kwargs.items()})


def has_symbolic(inputs, args=(), kwargs=None):
    """True when a KerasTensor is among a call's arguments."""
    leaves = nest.flatten([inputs, list(args), dict(kwargs or {})])
    return any(isinstance(leaf, KerasTensor) for leaf in leaves)


def _probe(layer, node_inputs, node_args, node_kwargs, fill):
    def concrete(leaf):
        if not isinstance(leaf, KerasTensor):
            return leaf
        return creation.zeros(tuple(fill if d is None else d for d in leaf.shape),
                              dtype=leaf.dtype)
    inputs = nest.map_structure(concrete, node_inputs)
    args = [nest.map_structure(concrete, a) for a in node_args]
    kwargs = {k: nest.map_structure(concrete, v) for k, v in node_kwargs.items()}
    with not_recorded():
        return layer(inputs, *args, **kwargs)


def symbolic_call(layer, inputs, args, kwargs):
    """``layer`` called on KerasTensors: builds it, returns KerasTensors of its outputs.

    Raises:
        whatever the layer raises for inputs of these shapes, with the layer named.
    """
    try:
        first = _probe(layer, inputs, args, kwargs, 1)
        unknown = any(d is None for t in nest.flatten([inputs, list(args), kwargs])
                      if isinstance(t, KerasTensor) for d in t.shape)
        second = _probe(layer, inputs, args, kwargs, 2) if unknown else first
    except (ValueError, TypeError) as err:
        shapes = [t.shape for t in nest.flatten([inputs, list(args), kwargs])
                  if isinstance(t, KerasTensor)]
        raise type(err)(f"{type(layer).__name__} {layer.name!r} called on inputs of shapes "
                        f"{shapes}: {err}") from err
    node = Node(layer, inputs, tuple(args), dict(kwargs), None)
    flat = []
    for k, (a, b) in enumerate(zip(nest.flatten(first), nest.flatten(second))):
        shape = [da if da == db else None for da, db in zip(a.shape, b.shape)]
        flat.append(KerasTensor(shape, a.dtype, name=f"{layer.name}_{k}" if k else layer.name,
                                history=(node, k)))
    node.outputs = nest.pack_sequence_as(first, flat)
    layer._ad_inbound.append(node)
    return node.outputs


class InputLayer(Layer):
    """The layer behind an ``Input``: its output is the placeholder.

    Args:
        shape: the example's shape, without the batch axis.
        batch_size: an optional fixed batch size.
        dtype: the inputs' dtype (default float32).
        batch_shape: the whole shape instead of ``shape`` and ``batch_size``.
        sparse, ragged: Keras' arguments; True raises NotImplementedError.
    """

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None,
                 input_tensor=None, optional=False, name=None, ragged=None, **kwargs):
        super().__init__(name=name or _unique_name("input_layer"), dtype=dtype, **kwargs)
        for arg, value in (("sparse", sparse), ("ragged", ragged), ("optional", optional),
                           ("input_tensor", input_tensor)):
            if value:
                raise NotImplementedError(f"Input: {arg}={value!r} is not implemented")
        if batch_shape is None:
            if shape is None:
                raise ValueError("You must pass a `shape` argument.")
            batch_shape = (batch_size,) + tuple(shape)
        self.batch_shape = tuple(batch_shape)
        self.shape = self.batch_shape     # older name, kept for Sequential
        self.built = True
        node = Node(self, (), (), {}, None)   # its output is ``layer.output`` (Layer's)
        node.outputs = KerasTensor(self.batch_shape, self.dtype, name=self.name,
                                   history=(node, 0))
        self._ad_inbound.append(node)

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self.dtype.name,
                "sparse": False, "ragged": False, "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None,  # noqa: N802
          name=None, tensor=None, optional=False, ragged=None):
    """A placeholder for a model's input (Keras' ``keras.Input``).

    Args:
        shape: the shape of one example, without the batch axis (``(28, 28, 1)``).
        batch_size: an optional fixed batch size.
        dtype: the inputs' dtype (default float32).
        batch_shape: the whole shape, batch axis included, instead.
        name: the input's name (unique by default: ``input_layer``, ``input_layer_1``...).

    Returns:
        A ``KerasTensor``; call layers on it, then ``ad.keras.Model(inputs, outputs)``.

    >>> inputs = ad.keras.Input((3,))
    >>> outputs = ad.keras.layers.Dense(1)(inputs)
    >>> model = ad.keras.Model(inputs, outputs)
    """
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse,
                       batch_shape=batch_shape, input_tensor=tensor, optional=optional,
                       name=name, ragged=ragged)
    return layer.output
