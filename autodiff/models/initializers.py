"""``ad.keras.initializers``: how a layer's weights start, as Keras 3 draws them.

An initializer is called with a shape and a dtype and returns a tensor:

    >>> init = ad.keras.initializers.HeNormal(seed=1)
    >>> init((3, 4)).shape
    TensorShape([3, 4])
    >>> ad.keras.layers.Dense(4, kernel_initializer="he_normal")      # by name
    <Dense 'dense'>

The distributions, scales and fans are Keras' (``VarianceScaling`` is the
general rule: glorot = fan_avg, he = 2 / fan_in, lecun = 1 / fan_in); the
random numbers are this library's, so the same seed gives other values than
Keras. As in Keras 3, a seeded initializer gives the same values at every call
(two layers sharing one start equal). Owns: the initializer classes, their snake_case names, ``get``.
"""

import math as _math

from .. import dtypes
from ..ops import creation, elementwise, linalg
from . import random as _random   # keras.random: an int seed repeats its draw, as in Keras
from ..ops.matmul import matmul
from ..ops.shape import matrix_transpose, reshape

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "GlorotUniform", "GlorotNormal", "HeNormal",
           "HeUniform", "LecunNormal", "LecunUniform", "Orthogonal", "get", "serialize"]


class Initializer:
    """The base: ``initializer(shape, dtype=None) -> tensor``; ``get_config()`` for saving."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype)")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        """The initializer a Keras config describes; Keras' keys this library lacks
        (``input_axes``, ...) are accepted when None and refused otherwise."""
        import inspect
        accepted = inspect.signature(cls.__init__).parameters
        extra = {k: v for k, v in config.items() if k not in accepted}
        used = sorted(k for k, v in extra.items() if v is not None)
        if used:
            raise NotImplementedError(f"{cls.__name__}: {', '.join(used)} not implemented")
        return cls(**{k: v for k, v in config.items() if k in accepted})

    def __repr__(self):
        return f"{type(self).__name__}({self.get_config()})"


def _dtype(dtype):
    return dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype=None):
        return creation.zeros(tuple(shape), dtype=_dtype(dtype))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None):
        return creation.ones(tuple(shape), dtype=_dtype(dtype))


class Constant(Initializer):
    """Every element ``value``."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return creation.ones(tuple(shape), dtype=_dtype(dtype)) * float(self.value)

    def get_config(self):
        return {"value": self.value}


class _Random(Initializer):
    def __init__(self, seed=None):
        self.seed = seed

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(_Random):
    """N(mean, stddev^2) (Keras' defaults: 0, 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return _random.normal(tuple(shape), self.mean, self.stddev, dtype=_dtype(dtype),
                              seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """N(mean, stddev^2) redrawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None):
        return _random.truncated_normal(tuple(shape), self.mean, self.stddev,
                                        dtype=_dtype(dtype), seed=self.seed)


class RandomUniform(_Random):
    """U(minval, maxval) (Keras' defaults: -0.05, 0.05)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return _random.uniform(tuple(shape), self.minval, self.maxval, dtype=_dtype(dtype),
                               seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def compute_fans(shape):
    """Keras' ``(fan_in, fan_out)``: a conv kernel ``(kh, kw, in, out)`` counts its window."""
    shape = tuple(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = _math.prod(shape[:-2]) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(_Random):
    """Samples with variance ``scale / n``, ``n`` the fan chosen by ``mode``.

    Args:
        scale: the variance's numerator (> 0).
        mode: ``'fan_in'``, ``'fan_out'`` or ``'fan_avg'``.
        distribution: ``'truncated_normal'``, ``'untruncated_normal'`` or ``'uniform'``.
        seed: an int for a reproducible stream, or None.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(seed)
        if scale <= 0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, n)
        dtype, shape = _dtype(dtype), tuple(shape)
        if self.distribution == "truncated_normal":   # the truncation's own spread undone
            return _random.truncated_normal(shape, 0.0, _math.sqrt(variance) / 0.87962566103423978,
                                            dtype=dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return _random.normal(shape, 0.0, _math.sqrt(variance), dtype=dtype, seed=self.seed)
        limit = _math.sqrt(3.0 * variance)
        return _random.uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


def _named(scale, mode, distribution, doc):
    class Named(VarianceScaling):
        __doc__ = doc

        def __init__(self, seed=None):
            super().__init__(scale, mode, distribution, seed)

        def get_config(self):
            return {"seed": self.seed}
    return Named


GlorotUniform = _named(1.0, "fan_avg", "uniform", "U(-l, l), l = sqrt(6 / (fan_in + fan_out)): "
                       "Keras' default kernel initializer.")
GlorotNormal = _named(1.0, "fan_avg", "truncated_normal", "Truncated normal, variance 2 / "
                      "(fan_in + fan_out).")
HeNormal = _named(2.0, "fan_in", "truncated_normal", "Truncated normal, variance 2 / fan_in "
                  "(for ReLU layers).")
HeUniform = _named(2.0, "fan_in", "uniform", "U(-l, l), l = sqrt(6 / fan_in).")
LecunNormal = _named(1.0, "fan_in", "truncated_normal", "Truncated normal, variance 1 / fan_in "
                     "(for SELU layers).")
LecunUniform = _named(1.0, "fan_in", "uniform", "U(-l, l), l = sqrt(3 / fan_in).")
for _cls, _name in ((GlorotUniform, "GlorotUniform"), (GlorotNormal, "GlorotNormal"),
                    (HeNormal, "HeNormal"), (HeUniform, "HeUniform"),
                    (LecunNormal, "LecunNormal"), (LecunUniform, "LecunUniform")):
    _cls.__name__ = _cls.__qualname__ = _name


class Orthogonal(_Random):
    """A random matrix with orthonormal columns (or rows), times ``gain``, as Keras.

    ``shape`` is flattened to ``(rows, cols) = (prod(shape[:-1]), shape[-1])``;
    a normal matrix ``a`` of shape ``(max, min)`` is factored ``a = q r`` with
    the diagonal of ``r`` positive, and ``q`` (transposed when there are fewer
    rows than columns) is the value. The library has no QR op, so ``q`` comes
    from Cholesky QR done twice in float64 (``r`` is the Cholesky factor of
    ``a^T a``, whose diagonal is positive by construction): same distribution
    as Keras, not the same numbers.

    >>> q = ad.keras.initializers.Orthogonal(seed=0)((3, 3), ad.float32)
    >>> bool(ad.reduce_max(ad.abs(ad.matmul(q, q, transpose_a=True) - ad.eye(3))) < 1e-6)
    True
    """

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) < 2:
            raise ValueError(f"orthogonal: the tensor to initialize needs rank 2 or more, "
                             f"got shape {tuple(shape)}")
        rows, cols = _math.prod(shape[:-1]), shape[-1]
        q = _random.normal((max(rows, cols), min(rows, cols)), dtype=dtypes.float64,
                           seed=self.seed)
        for _ in range(2):   # the second pass removes what round-off the first left
            lower = linalg.cholesky(matmul(q, q, transpose_a=True))       # a^T a = r^T r
            q = matrix_transpose(linalg.solve(lower, matrix_transpose(q)))  # q = a r^-1
        if rows < cols:
            q = matrix_transpose(q)
        q = reshape(elementwise.cast(q, _dtype(dtype)), tuple(shape))
        return q if self.gain == 1.0 else q * float(self.gain)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
            "random_uniform": RandomUniform, "uniform": RandomUniform,
            "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
            "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
            "he_normal": HeNormal, "he_uniform": HeUniform, "lecun_normal": LecunNormal,
            "lecun_uniform": LecunUniform, "orthogonal": Orthogonal}
_BY_CLASS = {cls.__name__: cls for cls in _BY_NAME.values()}
# Keras' functional aliases: ad.keras.initializers.he_normal(seed=0) is HeNormal(seed=0)
globals().update({name: cls for name, cls in _BY_NAME.items() if name != "uniform"})
__all__ += [name for name in _BY_NAME if name != "uniform"]


def get(identifier):
    """An initializer from a name (``'he_normal'``), a class name, a Keras config dict
    (``{'class_name': 'HeNormal', 'config': {...}}``) or a callable ``(shape, dtype)``.

    Raises:
        ValueError: an unknown name, naming the known ones.
    """
    if identifier is None or (callable(identifier) and not isinstance(identifier, type)):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if isinstance(identifier, dict):
        cls = _BY_CLASS.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"Unknown initializer: {identifier.get('class_name')!r}")
        return cls.from_config(identifier.get("config") or {})
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_CLASS.get(identifier)
        if cls is not None:
            return cls()
    raise ValueError(f"Unknown initializer: {identifier!r}. Use a callable (shape, dtype) -> "
                     f"tensor or one of {sorted(_BY_NAME)}")


def serialize(initializer):
    """Keras' config dict for ``initializer`` (what a ``.keras`` file stores)."""
    return {"module": "keras.initializers", "class_name": type(initializer).__name__,
            "config": initializer.get_config(), "registered_name": None}
