"""``ad.keras.random``: Keras 3's random functions.

As in Keras 3, an int ``seed`` makes the draw deterministic: the same seed
gives the same numbers on every call (a stream of its own, from NumPy's
generator seeded with it; inside ``ad.function`` the numbers are fixed, as
Keras' stateless draws are). ``seed=None`` draws from the global stream
(``ad.random``, reproducible after ``ad.random.set_seed``). Keras'
``SeedGenerator`` objects are not supported. The numbers are this library's,
not Keras'.

    >>> a = ad.keras.random.normal((2, 3), seed=1)
    >>> bool(ad.reduce_all(a == ad.keras.random.normal((2, 3), seed=1)))
    True
"""

import numpy as np

import autodiff as _ad

__all__ = ["normal", "uniform", "truncated_normal", "dropout", "shuffle"]


def _generator(seed):
    """NumPy's generator for an int seed; None for the global stream."""
    if seed is None:
        return None
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise NotImplementedError(f"keras.random: seed must be an int or None here (got "
                                  f"{type(seed).__name__}); SeedGenerator is not implemented")
    return np.random.default_rng(seed)


def _constant(values, dtype):
    return _ad.constant(values, dtype=dtype or _ad.float32)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    rng = _generator(seed)
    if rng is None:
        return _ad.random.normal(shape, mean, stddev, dtype=dtype or _ad.float32)
    return _constant(rng.normal(mean, stddev, tuple(shape)), dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    rng = _generator(seed)
    if rng is None:
        return _ad.random.uniform(shape, minval, maxval, dtype=dtype or _ad.float32)
    return _constant(rng.uniform(minval, maxval, tuple(shape)), dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal draws, redrawn until within two standard deviations of the mean."""
    rng = _generator(seed)
    if rng is None:
        return _ad.random.truncated_normal(shape, mean, stddev, dtype=dtype or _ad.float32)
    values = rng.normal(0.0, 1.0, tuple(shape))
    while np.any(np.abs(values) > 2):
        outside = np.abs(values) > 2
        values[outside] = rng.normal(0.0, 1.0, int(outside.sum()))
    return _constant(mean + stddev * values, dtype)


def dropout(inputs, rate, noise_shape=None, seed=None):
    rng = _generator(seed)
    if rng is None:
        return _ad.nn.dropout(inputs, rate, noise_shape=noise_shape)
    shape = tuple(inputs.shape) if noise_shape is None else tuple(noise_shape)
    keep = _ad.constant(rng.uniform(size=shape) >= rate, dtype=inputs.dtype)
    return inputs * keep / (1.0 - rate)


def shuffle(x, axis=0, seed=None):
    if axis != 0:
        raise NotImplementedError("keras.random.shuffle: only axis=0 is implemented")
    rng = _generator(seed)
    if rng is None:
        return _ad.random.shuffle(x)
    return _ad.gather(x, _ad.constant(rng.permutation(x.shape[0])))
