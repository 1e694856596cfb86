"""The base of every layer: a unique Keras-style name, building on the first call, activations
and initializers by name.

A layer is an ``ad.Module`` that creates its variables on the first call,
when it knows the input's shape (Keras calls this *building*). Names follow
Keras: the snake_case class name, made unique per program run (``dense``,
``dense_1``, ...), and variables named ``layer/variable:0``. A layer lists
its own variables in creation order (kernel, then bias), not sorted by
attribute name as a plain ``ad.Module`` would.
"""

import inspect
import itertools
import math as _math

from ... import dtypes, nn
from ...ops import creation, elementwise, linalg
from ...ops.matmul import matmul
from ...ops.shape import matrix_transpose, reshape
from ...ops import random as _random
from ...tensor import Variable, convert_to_tensor
from ..module import Module, _flatten, camel_to_snake

__all__ = ["Layer", "get_activation", "ACTIVATIONS", "INITIALIZERS", "glorot_uniform", "orthogonal"]

_name_counters = {}  # base name -> itertools.count, so names are unique per run (Keras' uids)


def _unique_name(base):
    n = next(_name_counters.setdefault(base, itertools.count()))
    return base if n == 0 else f"{base}_{n}"


ACTIVATIONS = {
    "linear": None, "relu": nn.relu, "relu6": nn.relu6, "elu": nn.elu, "selu": nn.selu,
    "sigmoid": nn.sigmoid, "tanh": nn.tanh, "softmax": nn.softmax, "log_softmax": nn.log_softmax,
    "softplus": nn.softplus, "gelu": nn.gelu, "silu": nn.silu, "swish": nn.swish,
    "leaky_relu": nn.leaky_relu, "exponential": elementwise.exp,
}


def get_activation(activation):
    """A callable for ``activation``: None, a callable, or a Keras name such as ``'relu'``."""
    if activation is None or callable(activation):
        return activation
    if isinstance(activation, str) and activation in ACTIVATIONS:
        return ACTIVATIONS[activation]
    raise ValueError(f"Unknown activation function: {activation!r}. "
                     f"Use a callable or one of {sorted(ACTIVATIONS)}")


def glorot_uniform(shape, dtype):
    """Keras' default kernel initializer: U(-l, l) with l = sqrt(6 / (fan_in + fan_out)).

    For a conv kernel ``(kh, kw, in, out)`` the fans count the receptive
    field too: ``fan_in = kh * kw * in`` (Keras' ``compute_fans``)."""
    fan_in, fan_out = (shape[-2], shape[-1]) if len(shape) >= 2 else (shape[0], shape[0])
    receptive = _math.prod(shape[:-2]) if len(shape) > 2 else 1
    fan_in, fan_out = fan_in * receptive, fan_out * receptive
    limit = _math.sqrt(6.0 / max(1, fan_in + fan_out))
    return _random.uniform(shape, -limit, limit, dtype=dtype)


def orthogonal(shape, dtype):
    """Keras' ``'orthogonal'`` initializer: a random matrix with orthonormal columns (or rows).

    As Keras: ``shape`` is flattened to ``(rows, cols) = (prod(shape[:-1]),
    shape[-1])``, a normal matrix ``a`` of shape ``(max, min)`` is factored
    ``a = q r`` with the diagonal of ``r`` positive (Keras multiplies ``q`` by
    ``sign(diag(r))``, which amounts to the same), and ``q``, transposed when
    there are fewer rows than columns, is the value. The library has no QR op,
    so ``q`` comes from Cholesky QR (``r`` is the Cholesky factor of ``a^T a``,
    whose diagonal is positive by construction), done twice in float64 so the
    columns are orthonormal to float64 round-off. Same distribution as Keras,
    not the same numbers.

    >>> q = orthogonal((3, 3), ad.float32)
    >>> bool(ad.reduce_max(ad.abs(ad.matmul(q, q, transpose_a=True) - ad.eye(3))) < 1e-6)
    True
    """
    if len(shape) < 2:
        raise ValueError(f"orthogonal: the tensor to initialize needs rank 2 or more, "
                         f"got shape {tuple(shape)}")
    rows, cols = _math.prod(shape[:-1]), shape[-1]
    q = _random.normal((max(rows, cols), min(rows, cols)), dtype=dtypes.float64)
    for _ in range(2):   # the second pass removes what round-off the first left
        lower = linalg.cholesky(matmul(q, q, transpose_a=True))       # a^T a = r^T r, r = lower^T
        q = matrix_transpose(linalg.solve(lower, matrix_transpose(q)))  # q = a r^-1
    if rows < cols:
        q = matrix_transpose(q)
    return reshape(elementwise.cast(q, dtype), tuple(shape))


INITIALIZERS = {
    "glorot_uniform": glorot_uniform,
    "zeros": lambda shape, dtype: creation.zeros(shape, dtype=dtype),
    "ones": lambda shape, dtype: creation.ones(shape, dtype=dtype),
    "random_normal": lambda shape, dtype: _random.normal(shape, stddev=0.05, dtype=dtype),
    "uniform": lambda shape, dtype: _random.uniform(shape, -0.05, 0.05, dtype=dtype),
    "random_uniform": lambda shape, dtype: _random.uniform(shape, -0.05, 0.05, dtype=dtype),
    "orthogonal": orthogonal,
}


def _initializer(init):
    if callable(init):
        return init
    if init in INITIALIZERS:
        return INITIALIZERS[init]
    raise ValueError(f"Unknown initializer: {init!r}. Use a callable (shape, dtype) -> tensor "
                     f"or one of {sorted(INITIALIZERS)}")


class Layer(Module):
    """The base of ``ad.layers``: a unique Keras-style name, building on first call.

    Subclasses implement ``build(input_shape)`` (create variables with
    ``add_weight``) and ``call(inputs, ...)``.

    Args:
        name: the layer's name; by default a unique snake_case class name.
        dtype: the variables' dtype (default float32). Floating inputs of
            another dtype are cast to it, as Keras' layers do.
        trainable: False makes every variable the layer creates non-trainable.
        input_shape: the shape of one example (no batch axis), as Keras 3
            still accepts on a ``Sequential``'s first layer (``Sequential``
            then builds at once); ``input_dim=n`` is ``input_shape=(n,)``.
    """

    def __init__(self, name=None, dtype=None, trainable=True, input_shape=None, input_dim=None):
        super().__init__(name=name or _unique_name(camel_to_snake(type(self).__name__)))
        self.dtype = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        self.trainable = bool(trainable)
        if input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        self._ad_input_shape = None if input_shape is None else tuple(input_shape)
        self._ad_weights = []     # own variables in creation order
        self.built = False

    def add_weight(self, name, shape, initializer, trainable=True):
        """Creates a Variable named ``'<layer>/<name>'`` and lists it on this layer."""
        value = _initializer(initializer)(tuple(shape), self.dtype)
        variable = Variable(value, trainable=trainable and self.trainable,
                            name=f"{self.name}/{name}", dtype=self.dtype)
        self._ad_weights.append(variable)
        return variable

    def _own_leaves(self):
        # Keras' tracking order: own weights as created, then attributes as assigned (a
        # dict keeps insertion order), where a plain ad.Module sorts attribute names.
        yield from self.__dict__.get("_ad_weights", ())
        for key, value in vars(self).items():
            if not key.startswith("_ad_"):
                yield from _flatten(value)

    @property
    def weights(self):
        """All variables, as Keras names them."""
        return list(self.variables)

    def get_weights(self):
        """The values of ``weights``, as NumPy arrays (Keras' ``get_weights``)."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Assigns ``weights`` (arrays, in the order of ``get_weights``) to the variables.

        Raises:
            ValueError: a different number of arrays, or an array of another shape.
        """
        weights = list(weights)
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"Layer {self.name!r}: set_weights got {len(weights)} arrays "
                             f"for its {len(mine)} weights")
        for variable, value in zip(mine, weights):
            if tuple(getattr(value, "shape", ())) != tuple(variable.shape):
                raise ValueError(f"Layer {self.name!r}: weight {variable.name} has shape "
                                 f"{tuple(variable.shape)}, the array given for it "
                                 f"{tuple(getattr(value, 'shape', ()))}")
            variable.assign(value)

    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs)
        if inputs.dtype != self.dtype and inputs.dtype.is_floating:
            inputs = elementwise.cast(inputs, self.dtype)
        if not self.built:
            self.build(tuple(inputs.shape))
            self.built = True
        if "training" in kwargs and "training" not in inspect.signature(self.call).parameters:
            del kwargs["training"]  # as Keras: a layer that does not use it never sees it
        return self.call(inputs, *args, **kwargs)

    def build(self, input_shape):
        pass

    def call(self, inputs):
        raise NotImplementedError
