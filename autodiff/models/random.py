"""``ad.keras.random``: Keras 3's random functions over this engine's streams.

``seed`` is an int (a stream of its own, reproducible after
``ad.random.set_seed``) or None (the global stream), as ``ad.random``'s;
Keras' ``SeedGenerator`` objects are not supported. The numbers are this
library's, not Keras'.

    >>> ad.keras.random.normal((2, 3), seed=1).shape
    TensorShape([2, 3])
"""

import autodiff as _ad

__all__ = ["normal", "uniform", "truncated_normal", "dropout", "shuffle"]


def _seed(seed):
    if seed is not None and not isinstance(seed, int):
        raise NotImplementedError(f"keras.random: seed must be an int or None here (got "
                                  f"{type(seed).__name__}); SeedGenerator is not implemented")
    return seed


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _ad.random.normal(shape, mean, stddev, dtype=dtype or _ad.float32, seed=_seed(seed))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return _ad.random.uniform(shape, minval, maxval, dtype=dtype or _ad.float32, seed=_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _ad.random.truncated_normal(shape, mean, stddev, dtype=dtype or _ad.float32,
                                       seed=_seed(seed))


def dropout(inputs, rate, noise_shape=None, seed=None):
    return _ad.nn.dropout(inputs, rate, noise_shape=noise_shape, seed=_seed(seed))


def shuffle(x, axis=0, seed=None):
    if axis != 0:
        raise NotImplementedError("keras.random.shuffle: only axis=0 is implemented")
    return _ad.random.shuffle(x, seed=_seed(seed))
