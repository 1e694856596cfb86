"""``ad.keras.metrics``: running averages a training loop reports (Keras 3's ``Mean``, accuracies).

A metric keeps its state in Variables and updates them with ops, so an
update inside a compiled training step happens on every call, exactly as
in eager code:

    >>> accuracy = ad.keras.metrics.SparseCategoricalAccuracy()
    >>> accuracy.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])   # one right, one wrong
    >>> float(accuracy.result())
    0.5
    >>> accuracy.reset_state()

``update_state(..., sample_weight=w)`` weighs each value; ``result()`` is the
weighted mean so far (0 before any update, as Keras); calling the metric,
``metric(y_true, y_pred)``, updates it and returns the result.
"""

from .. import dtypes
from ..ops import creation, elementwise, predicates, reduce, special
from ..ops.shape import squeeze
from ..tensor import convert_to_tensor
from ..variable import Variable
from .layers.base import _unique_name
from .losses import per_sample
from .module import camel_to_snake

__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "MeanSquaredError", "MeanAbsoluteError",
           "RootMeanSquaredError", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
           "SparseCategoricalAccuracy"]


def __dir__():
    return __all__


class Metric:
    """The base: state in Variables, ``update_state``, ``result``, ``reset_state``.

    Args:
        name: the metric's name (default: the class name in snake case, made unique).
        dtype: the dtype of the state and the result (default float32).
    """

    def __init__(self, name=None, dtype=None):
        self.name = name or _unique_name(camel_to_snake(type(self).__name__))
        self.dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self._variables = []

    def add_variable(self, name):
        """A zero scalar Variable of the metric's dtype, part of its state."""
        variable = Variable(0.0, trainable=False, dtype=self.dtype, name=f"{self.name}/{name}")
        self._variables.append(variable)
        return variable

    @property
    def variables(self):
        """The state, in creation order."""
        return list(self._variables)

    def reset_state(self):
        """Sets the state back to zeros (the start of an epoch)."""
        for variable in self._variables:
            variable.assign(creation.zeros_like(variable))

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must implement result")

    def __call__(self, *args, **kwargs):
        """``update_state(*args, **kwargs)``, then ``result()``."""
        self.update_state(*args, **kwargs)
        return self.result()

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


class Sum(Metric):
    """The (weighted) sum of every value given to ``update_state``."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable("total")

    def update_state(self, values, sample_weight=None):
        values, weights = _weighted(values, sample_weight, self.dtype)
        self.total.assign_add(reduce.reduce_sum(values * weights))

    def result(self):
        return self.total.read_value()


class Mean(Metric):
    """The (weighted) mean of every value given to ``update_state``, e.g. the epoch's loss.

    >>> mean = ad.keras.metrics.Mean()
    >>> mean.update_state([1.0, 3.0])
    >>> mean.update_state(5.0)
    >>> float(mean.result())
    3.0
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable("total")
        self.count = self.add_variable("count")

    def update_state(self, values, sample_weight=None):
        values, weights = _weighted(values, sample_weight, self.dtype)
        self.total.assign_add(reduce.reduce_sum(values * weights))
        self.count.assign_add(reduce.reduce_sum(weights + creation.zeros_like(values)))

    def result(self):
        return special.divide_no_nan(self.total.read_value(), self.count.read_value())


class MeanMetricWrapper(Mean):
    """The running mean of ``fn(y_true, y_pred, **kwargs)``, one value per example (Keras').

    Args:
        fn: a function of ``(y_true, y_pred)`` giving a value per example.
        name, dtype: as ``Mean``'s; ``kwargs`` go to ``fn``.
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or _unique_name(getattr(fn, "__name__", "metric")),
                         dtype=dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


class MeanSquaredError(MeanMetricWrapper):
    """The mean of ``(y_true - y_pred) ** 2`` over the last axis, averaged over examples."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(per_sample.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean of ``|y_true - y_pred|`` over the last axis, averaged over examples."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(per_sample.mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the mean of every squared error so far (Keras' running RMSE)."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        if y_true.dtype != y_pred.dtype:
            y_true = elementwise.cast(y_true, y_pred.dtype)
        super().update_state(elementwise.square(y_pred - y_true), sample_weight)

    def result(self):
        return elementwise.sqrt(super().result())


class _MeanOfMatches(Mean):
    """A mean of 1.0 (right) and 0.0 (wrong) per example; subclasses say what matches."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._matches(convert_to_tensor(y_true), convert_to_tensor(y_pred)),
                             sample_weight)


class Accuracy(_MeanOfMatches):
    """How often ``y_pred`` equals ``y_true`` exactly."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def _matches(self, y_true, y_pred):
        y_true, y_pred = _same_rank(y_true, y_pred)
        return predicates.equal(y_true, elementwise.cast(y_pred, y_true.dtype))


class BinaryAccuracy(_MeanOfMatches):
    """How often ``y_pred > threshold`` agrees with the 0/1 label ``y_true``.

    Args:
        threshold: the probability above which a prediction counts as 1.
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(name=name, dtype=dtype)
        self.threshold = float(threshold)

    def _matches(self, y_true, y_pred):
        y_true, y_pred = _same_rank(y_true, y_pred)
        predicted = elementwise.cast(predicates.greater(y_pred, self.threshold), y_true.dtype)
        return elementwise.cast(predicates.equal(y_true, predicted), self.dtype)


class CategoricalAccuracy(_MeanOfMatches):
    """How often the largest prediction is at the one-hot label's 1."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def _matches(self, y_true, y_pred):
        return predicates.equal(reduce.argmax(y_true, axis=-1), reduce.argmax(y_pred, axis=-1))


class SparseCategoricalAccuracy(_MeanOfMatches):
    """How often the largest prediction (``argmax`` of the last axis) is the integer label."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def _matches(self, y_true, y_pred):
        if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
            y_true = squeeze(y_true, -1)
        predicted = elementwise.cast(reduce.argmax(y_pred, axis=-1), y_true.dtype)
        return predicates.equal(y_true, predicted)


def _same_rank(y_true, y_pred):
    """Labels ``(n,)`` beside predictions ``(n, 1)`` (or the other way round) made the same
    rank, as Keras does, so they do not broadcast to ``(n, n)``."""
    if y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        y_pred = squeeze(y_pred, -1)
    elif y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, -1)
    return y_true, y_pred


def _weighted(values, sample_weight, dtype):
    """``values`` as ``dtype`` and weights broadcast against them (ones without weights)."""
    values = convert_to_tensor(values)
    values = values if values.dtype == dtype else elementwise.cast(values, dtype)
    if sample_weight is None:
        return values, creation.ones_like(values)
    weights = convert_to_tensor(sample_weight)
    weights = weights if weights.dtype == dtype else elementwise.cast(weights, dtype)
    while weights.ndim > values.ndim and weights.shape[-1] == 1:
        weights = squeeze(weights, -1)
    if values.ndim > weights.ndim:   # as Keras: a value per weight, the mean of the rest
        values = reduce.reduce_mean(values, axis=list(range(weights.ndim, values.ndim)))
    return values, weights + creation.zeros_like(values)
