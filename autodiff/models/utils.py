"""``ad.keras.utils``: Keras 3's ``set_random_seed``, ``to_categorical`` and ``clear_session``.

    >>> ad.keras.utils.set_random_seed(42)     # Python's, NumPy's and ad.random's streams
    >>> ad.keras.utils.to_categorical([0, 2, 1], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 1., 0.]])
"""

import random as _python_random

import numpy as np

__all__ = ["set_random_seed", "to_categorical", "clear_session"]


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy's global generator and ``ad.random`` (so weight
    initializers, dropout and shuffling repeat), as Keras 3 does.

    Raises:
        ValueError: ``seed`` is not an int (Keras' message).
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed!r} "
                         f"(of type {type(seed)})")
    from ..ops import random as _random
    _python_random.seed(seed)
    np.random.seed(seed)
    _random.set_seed(seed)


def clear_session(free_memory=True):
    """Starts Keras' automatic names over (the next ``Dense()`` is ``'dense'`` again), as
    ``keras.backend.clear_session()`` / ``keras.utils.clear_session()`` do; models already
    made keep their names and weights."""
    from .layers import base
    base._name_counters.clear()


def to_categorical(x, num_classes=None):
    """Class indices as one-hot rows (a float64 NumPy array, as Keras 3 returns).

    A trailing axis of size 1 (labels shaped ``(n, 1)``) is dropped first, as in
    Keras; ``num_classes`` defaults to the largest index plus one.

    Raises:
        ValueError: an index that is negative or not below ``num_classes``.
    """
    labels = np.asarray(getattr(x, "numpy", lambda: x)(), dtype=np.int64)
    shape = labels.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    flat = labels.reshape(-1)
    if num_classes is None:
        num_classes = int(flat.max()) + 1 if flat.size else 0
    num_classes = int(num_classes)
    if flat.size and (flat.min() < 0 or flat.max() >= num_classes):
        raise ValueError(f"to_categorical: class indices must be in [0, {num_classes}), got "
                         f"values from {int(flat.min())} to {int(flat.max())}")
    out = np.zeros((flat.size, num_classes), dtype=np.float64)
    out[np.arange(flat.size), flat] = 1.0
    return out.reshape(shape + (num_classes,))
