"""The loss classes (``BinaryCrossentropy()``, ...): per-sample losses weighed by
``sample_weight`` and reduced, by default to their mean."""

import numpy as np

from ... import dtypes
from ...ops import creation, elementwise, open_sizes, predicates, reduce, special
from ..layers.base import _unique_name
from ..module import camel_to_snake
from .per_sample import (_check_broadcast, _sparse_losses_and_mask, _squeeze_or_expand, _tensor,
                         binary_crossentropy,
                         categorical_crossentropy, huber, mean_absolute_error,
                         mean_squared_error, sparse_categorical_crossentropy)

REDUCTIONS = ("sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight")


# ---- the classes: weighting and reduction ---------------------------------------------
def _count(shape, dtype):
    return _tensor(float(np.prod(shape, dtype=np.int64)), dtype)


def _reduce_weighted(losses, sample_weight, mask, reduction, dtype, name):
    """Keras' ``reduce_weighted_values``: mask and weights multiply the losses, then reduce."""
    losses = _tensor(losses, dtype)
    if sample_weight is not None:
        sample_weight = _tensor(sample_weight, dtype)
    if mask is not None:
        if reduction in ("mean", "sum_over_batch_size"):
            # kept samples weigh total / kept, so the mean over all is the mean over the kept
            weight = special.divide_no_nan(_count(mask.shape, dtype),
                                           reduce.reduce_sum(elementwise.cast(mask, dtype)))
            float_mask = predicates.where(mask, weight, creation.zeros_like(weight))
        else:
            float_mask = elementwise.cast(mask, dtype)
        if sample_weight is None:
            sample_weight = float_mask
        else:
            float_mask, sample_weight = _squeeze_or_expand(float_mask, sample_weight)
            _check_broadcast(name, sample_weight, float_mask, "sample_weight", "the mask")
            sample_weight = sample_weight * float_mask
    if sample_weight is not None:
        losses, sample_weight = _squeeze_or_expand(losses, sample_weight)
        _check_broadcast(name, losses, sample_weight, "the per-sample losses", "sample_weight")
        losses = losses * sample_weight
    if reduction in (None, "none") or tuple(losses.shape) in ((), (0,)):
        return losses
    loss = reduce.reduce_sum(losses)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = elementwise.cast(reduce.reduce_sum(sample_weight), loss.dtype)
    elif open_sizes.open_sized(losses):   # the batch size read in the graph
        divisor = open_sizes.count(losses, range(losses.ndim), loss.dtype)
    else:
        divisor = _count(losses.shape, loss.dtype)
    return special.divide_no_nan(loss, divisor)   # an empty batch gives 0, not NaN


class Loss:
    """The base class: ``call`` gives per-sample losses, ``__call__`` weighs and reduces them.

    Args:
        name: the loss's name (default: the class name in snake case, made unique).
        reduction: ``'sum_over_batch_size'`` (the default: the sum divided by
            the number of per-sample losses), ``'sum'``, ``'none'`` or None (no
            reduction), ``'mean'`` (as the default) or ``'mean_with_sample_weight'``
            (the sum divided by the sum of the weights).
        dtype: the dtype inputs are cast to (default float32, Keras' floatx).

    ``loss(y_true, y_pred, sample_weight=None)``: ``sample_weight`` multiplies
    the per-sample losses, broadcasting (``(B,)`` weights fit ``(B, 1)`` losses).

    >>> class Cubed(ad.losses.Loss):
    ...     def call(self, y_true, y_pred):
    ...         return ad.reduce_mean((y_pred - y_true) ** 3, axis=-1)
    >>> float(Cubed()([[0.0]], [[2.0]]))
    8.0
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in REDUCTIONS:
            raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                             f"{REDUCTIONS}. Received: reduction={reduction!r}")
        self.name = name or _unique_name(camel_to_snake(type(self).__name__))
        self.reduction = reduction
        self._dtype = dtypes.as_dtype(dtype or dtypes.float32)

    @property
    def dtype(self):
        """The computation dtype's name (``'float32'``), as Keras."""
        return self._dtype.name

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred, y_true = _tensor(y_pred, self._dtype), _tensor(y_true, self._dtype)
        losses, mask = self._losses_and_mask(y_true, y_pred)
        return _reduce_weighted(losses, sample_weight, mask, self.reduction, self._dtype,
                                f"{type(self).__name__} '{self.name}'")

    def call(self, y_true, y_pred):
        """The per-sample losses (to be written by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred)")

    def _losses_and_mask(self, y_true, y_pred):
        return self.call(y_true, y_pred), None

    def get_config(self):
        """The constructor arguments Keras saves: ``{'name': ..., 'reduction': ...}``."""
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        """A loss made from ``get_config()``'s dict."""
        return cls(**config)


class _LossFunctionWrapper(Loss):
    """A loss function as a class: fixes up the ranks, then calls ``fn``."""

    def __init__(self, fn, reduction, name, dtype, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(*_squeeze_or_expand(y_true, y_pred), **self._fn_kwargs)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} reduction={self.reduction!r}>"


class MeanSquaredError(_LossFunctionWrapper):
    """``mean_squared_error``, weighted and reduced as ``Loss``.

    >>> float(ad.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction, name, dtype)


class MeanAbsoluteError(_LossFunctionWrapper):
    """``mean_absolute_error``, weighted and reduced as ``Loss``.

    >>> float(ad.losses.MeanAbsoluteError(reduction="sum")([[0.0], [1.0]], [[1.0], [3.0]]))
    3.0
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction, name, dtype)


class Huber(_LossFunctionWrapper):
    """``huber``, weighted and reduced as ``Loss``. Like Keras 3's, its ``get_config()``
    leaves ``delta`` out (``from_config`` then gives the default, 1.0).

    >>> float(ad.losses.Huber(delta=2.0)([[0.0]], [[3.0]]))   # 2 * 3 - 0.5 * 4
    4.0
    """

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss",
                 dtype=None):
        super().__init__(huber, reduction, name, dtype, delta=delta)


class _Crossentropy(_LossFunctionWrapper):
    """What the two dense cross-entropies share: their arguments and their config."""

    def __init__(self, fn, from_logits, label_smoothing, axis, reduction, name, dtype):
        super().__init__(fn, reduction, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        return {**Loss.get_config(self), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


class BinaryCrossentropy(_Crossentropy):
    """``binary_crossentropy`` (same arguments), weighted and reduced as ``Loss``.

    >>> print(ad.losses.BinaryCrossentropy(from_logits=True)([[1.0]], [[0.0]]).numpy())
    0.6931472
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, from_logits, label_smoothing, axis, reduction,
                         name, dtype)


class CategoricalCrossentropy(_Crossentropy):
    """``categorical_crossentropy`` (same arguments), weighted and reduced as ``Loss``.

    >>> print(ad.losses.CategoricalCrossentropy()([[0.0, 1.0]], [[0.5, 0.5]]).numpy())
    0.6931472
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, from_logits, label_smoothing, axis,
                         reduction, name, dtype)


class SparseCategoricalCrossentropy(_LossFunctionWrapper):
    """``sparse_categorical_crossentropy`` (same arguments), weighted and reduced as ``Loss``.

    ``ignore_class``'s samples are also left out of the mean. The labels are
    cast to ``dtype`` first, as Keras does (float32 holds them exactly below 2**24).

    >>> scce = ad.losses.SparseCategoricalCrossentropy(ignore_class=-1)
    >>> print(scce([1, -1], [[0.5, 0.5], [0.9, 0.1]]).numpy())    # the mean over the one kept
    0.6931472
    """

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 axis=-1, name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, reduction, name, dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)
        self.from_logits, self.ignore_class = from_logits, ignore_class

    def _losses_and_mask(self, y_true, y_pred):
        return _sparse_losses_and_mask(*_squeeze_or_expand(y_true, y_pred), **self._fn_kwargs)

    def get_config(self):
        return {**Loss.get_config(self), "from_logits": self.from_logits,
                "ignore_class": self.ignore_class}
