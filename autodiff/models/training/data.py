"""The data ``fit``, ``evaluate`` and ``predict`` take: arrays (or tensors, lists, dicts of
them) cut into batches, as Keras 3's array adapter does.

- ``x`` is one array, a list of arrays (one per model input) or a dict (by
  input name); ``y`` and ``sample_weight`` likewise, per output.
- ``validation_split=f`` keeps the *last* fraction ``f`` of the examples
  apart, before any shuffling (Keras').
- ``class_weight={class: weight}`` becomes a sample weight per example (the
  class is the integer label, or the argmax of a one-hot one).
- float64 arrays become float32 (Keras' floatx); integers stay integers.
- ``shuffle=True`` draws a new order each epoch (NumPy's generator: the
  order is not Keras', so compare with Keras using ``shuffle=False``).
"""

import math

import numpy as np

from ... import nest
from ...tensor import Tensor, constant

__all__ = ["ArrayData", "split_validation", "class_weight_to_sample_weight"]


def _as_array(value):
    if value is None:
        return None
    array = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    if array.ndim == 0:
        raise ValueError(f"fit/evaluate/predict: every array needs a batch axis; got a scalar "
                         f"{value!r}")
    return array


def _structure(value):
    """Arrays in the structure given (a list or dict of arrays stays one)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and value and not all(
            isinstance(v, (int, float)) for v in nest.flatten(list(value))):
        return [_as_array(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_array(v) for k, v in value.items()}
    if hasattr(value, "__iter__") and not isinstance(value, (np.ndarray, Tensor, list, tuple)):
        raise NotImplementedError(f"fit/evaluate/predict: data of type {type(value).__name__} "
                                  f"(a generator or dataset) is not supported; pass arrays")
    return _as_array(value)


class ArrayData:
    """``x``, ``y`` and ``sample_weight`` as arrays, with their batches.

    Raises:
        ValueError: arrays with different numbers of examples, naming them.
    """

    def __init__(self, x, y=None, sample_weight=None):
        self.x, self.y, self.sample_weight = _structure(x), _structure(y), _structure(sample_weight)
        sizes = {len(a) for a in nest.flatten([self.x, self.y, self.sample_weight])
                 if a is not None}
        if len(sizes) != 1:
            raise ValueError(f"Data cardinality is ambiguous: the arrays given hold "
                             f"{sorted(sizes)} examples; make sure all arrays contain the same "
                             f"number of samples.")
        self.size = sizes.pop()

    def steps(self, batch_size):
        return math.ceil(self.size / batch_size)

    def take(self, index):
        """The examples at ``index`` (an array of positions), as the same structure."""
        def pick(a):
            return None if a is None else a[index]
        return tuple(nest.map_structure(pick, part) if part is not None else None
                     for part in (self.x, self.y, self.sample_weight))

    def batches(self, batch_size, shuffle=False, rng=None):
        """Yields ``(x, y, sample_weight)`` batches of tensors (None where not given)."""
        order = (rng or np.random.default_rng()).permutation(self.size) if shuffle \
            else np.arange(self.size)
        for start in range(0, self.size, batch_size):
            part = self.take(order[start:start + batch_size])
            yield tuple(None if p is None else nest.map_structure(constant, p) for p in part)


def split_validation(data, validation_split):
    """``(train, validation)``: the last ``validation_split`` of the examples apart (Keras')."""
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be between 0 and 1, got {validation_split}")
    split_at = int(math.floor(data.size * (1.0 - validation_split)))
    if split_at == 0 or split_at == data.size:
        raise ValueError(f"Training data contains {data.size} samples, which is not "
                         f"sufficient to split it into a validation and training set as "
                         f"specified by `validation_split={validation_split}`.")
    first, second = data.take(np.arange(split_at)), data.take(np.arange(split_at, data.size))
    return ArrayData(*first), ArrayData(*second)


def class_weight_to_sample_weight(y, class_weight):
    """One weight per example: ``class_weight[label]`` (a one-hot label's argmax).

    Raises:
        ValueError: a model with several outputs (Keras refuses it too), or a label
            missing from ``class_weight``.
    """
    if isinstance(y, (list, dict)):
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    labels = np.argmax(y, axis=-1) if y.ndim > 1 and y.shape[-1] > 1 else \
        np.round(y.reshape(len(y), -1)[:, 0]).astype(int)
    missing = sorted(set(labels.tolist()) - set(class_weight))
    if missing:
        raise ValueError(f"class_weight has no weight for the classes {missing}")
    return np.array([class_weight[int(k)] for k in labels], dtype=np.float32)
