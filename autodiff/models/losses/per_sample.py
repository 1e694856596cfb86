"""The per-sample losses (``binary_crossentropy(y_true, y_pred)``, ...): one loss per
sample, the last axis averaged or summed away, with Keras 3's arithmetic; and the shape
and dtype fix-ups the classes share."""

import warnings

import numpy as np

from ... import dtypes
from ...ops import clip, creation, elementwise, losses as nn_losses, predicates, reduce
from ...ops import shape as shape_ops
from ...tensor import convert_to_tensor

__all__ = ['mean_squared_error', 'mean_absolute_error', 'huber', 'binary_crossentropy', 'categorical_crossentropy', 'sparse_categorical_crossentropy']

EPSILON = 1e-7   # Keras' backend.epsilon(): how far probabilities stay from 0 and 1


# ---- helpers: conversion, shapes, averaging -------------------------------------------
def _tensor(x, dtype=None):
    """``x`` as a tensor, cast to ``dtype`` when it has another (Keras converts, TF would not)."""
    t = convert_to_tensor(x, dtype_hint=dtype)
    return elementwise.cast(t, dtype) if dtype is not None and t.dtype != dtype else t


def _squeeze_or_expand(x1, x2):
    """Keras' rank fix-up: when the ranks differ by one and the longer ends in 1, drop
    that axis, or, when the shorter is a vector, add one to it: ``(B,)`` with ``(B, 1)``."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        return (x1, shape_ops.expand_dims(x2, -1)) if x2.ndim == 1 else (
            shape_ops.squeeze(x1, -1), x2)
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        return (shape_ops.expand_dims(x1, -1), x2) if x1.ndim == 1 else (
            x1, shape_ops.squeeze(x2, -1))
    return x1, x2


def _check_broadcast(loss, a, b, a_name="y_true", b_name="y_pred"):
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"{loss}: {a_name} and {b_name} cannot broadcast together: "
                         f"{a_name}.shape={tuple(a.shape)}, {b_name}.shape="
                         f"{tuple(b.shape)}") from None


def _check_same_shape(loss, y_true, y_pred):
    if tuple(y_true.shape) != tuple(y_pred.shape) or y_pred.ndim == 0:
        raise ValueError(f"{loss}: y_true and y_pred must have the same shape, of rank >= 1; "
                         f"received y_true.shape={tuple(y_true.shape)}, "
                         f"y_pred.shape={tuple(y_pred.shape)}")


def _paired(loss, y_true, y_pred):
    """Tensors of ``y_pred``'s dtype, ranks fixed up, checked to broadcast."""
    y_pred = _tensor(y_pred)
    y_true, y_pred = _squeeze_or_expand(_tensor(y_true, y_pred.dtype), y_pred)
    _check_broadcast(loss, y_true, y_pred)
    return y_true, y_pred


def _mean(x, axis):
    """``keras.ops.mean``: float16 (and integers) are averaged in float32."""
    if x.dtype in (dtypes.float32, dtypes.float64):
        return reduce.reduce_mean(x, axis=axis)
    mean = reduce.reduce_mean(elementwise.cast(x, dtypes.float32), axis=axis)
    return elementwise.cast(mean, x.dtype) if x.dtype.is_floating else mean


def _log_clipped(p):
    return elementwise.log(clip.clip_by_value(p, EPSILON, 1.0 - EPSILON))


# ---- the per-sample losses --------------------------------------------------------------
def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``: one loss per sample.

    Args:
        y_true: targets, cast to ``y_pred``'s dtype; ``(B,)`` fits ``(B, 1)``.
        y_pred: predictions ``[batch, d0, .. dN]``; the result is ``[batch, .. dN-1]``.

    >>> ad.losses.mean_squared_error([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
    array([0.5], dtype=float32)
    """
    y_true, y_pred = _paired("mean_squared_error", y_true, y_pred)
    return _mean(elementwise.square(y_true - y_pred), -1)


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``; arguments as ``mean_squared_error``.

    >>> ad.losses.mean_absolute_error([[0.0, 1.0]], [[1.0, 3.0]]).numpy()
    array([1.5], dtype=float32)
    """
    y_true, y_pred = _paired("mean_absolute_error", y_true, y_pred)
    return _mean(elementwise.abs(y_true - y_pred), -1)


def huber(y_true, y_pred, delta=1.0):
    """``0.5 e^2`` where ``|e| <= delta``, else ``delta |e| - 0.5 delta^2``, averaged over
    the last axis (``e = y_pred - y_true``).

    Args:
        y_true, y_pred: as ``mean_squared_error``.
        delta: where the loss turns from quadratic to linear.

    >>> ad.losses.huber([[0.0, 0.0]], [[0.5, 3.0]]).numpy()     # (0.125 + 2.5) / 2
    array([1.3125], dtype=float32)
    """
    y_true, y_pred = _paired("huber", y_true, y_pred)
    delta, half = _tensor(delta, y_pred.dtype), _tensor(0.5, y_pred.dtype)
    error = y_pred - y_true
    abs_error = elementwise.abs(error)
    return _mean(predicates.where(predicates.less_equal(abs_error, delta),
                                  half * elementwise.square(error),
                                  delta * abs_error - half * elementwise.square(delta)), -1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """``-(y log p + (1 - y) log(1 - p))`` per element, averaged over ``axis``.

    Args:
        y_true: targets in [0, 1], the shape of ``y_pred``; cast to its dtype.
        y_pred: probabilities (clipped to ``[1e-7, 1 - 1e-7]``), or logits.
        from_logits: whether ``y_pred`` holds logits (then the loss is
            ``ad.nn.sigmoid_cross_entropy_with_logits``).
        label_smoothing: in [0, 1]; targets become ``y (1 - s) + 0.5 s``.
        axis: the axis averaged away (default the last).

    >>> ad.losses.binary_crossentropy([[0.0, 1.0]], [[0.0, 1.0]]).numpy()  # -log(1 - 1e-7)
    array([1.192093e-07], dtype=float32)
    """
    y_pred = _tensor(y_pred)
    y_true = _tensor(y_true, y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    _check_same_shape("binary_crossentropy", y_true, y_pred)
    if from_logits:
        return _mean(nn_losses.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred),
                     axis)
    p = clip.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    bce = y_true * elementwise.log(p)
    bce = bce + (1 - y_true) * elementwise.log(1 - p)
    return _mean(-bce, axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """``-sum(y * log p, axis)``: cross-entropy with a distribution over classes.

    Args:
        y_true: target distributions (one-hot or soft), the shape of ``y_pred``.
        y_pred: probabilities (each row divided by its sum, then clipped to
            ``[1e-7, 1 - 1e-7]``), or logits.
        from_logits: whether ``y_pred`` holds logits (then the loss is
            ``ad.nn.softmax_cross_entropy_with_logits``).
        label_smoothing: in [0, 1]; targets become ``y (1 - s) + s / C``, ``C``
            the size of the last axis (the last even when ``axis`` is another, as Keras).
        axis: the class axis (default the last).

    >>> ad.losses.categorical_crossentropy([[0.0, 1.0]], [[0.5, 0.5]]).numpy()
    array([0.6931472], dtype=float32)
    """
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"categorical_crossentropy: `axis` must be an int; received "
                         f"axis={axis!r}")
    y_pred = _tensor(y_pred)
    y_true = _tensor(y_true, y_pred.dtype)
    _check_same_shape("categorical_crossentropy", y_true, y_pred)
    if y_pred.shape[-1] == 1:
        warnings.warn(f"categorical_crossentropy: y_pred.shape={tuple(y_pred.shape)} has one "
                      f"class; use binary_crossentropy for two classes", SyntaxWarning,
                      stacklevel=2)
    if label_smoothing:
        # s / C is a tensor division in y_pred's dtype, as in Keras (not Python's double)
        num_classes = _tensor(float(y_true.shape[-1]), y_pred.dtype)
        y_true = (y_true * (1.0 - label_smoothing)
                  + _tensor(label_smoothing, y_pred.dtype) / num_classes)
    if from_logits:
        return nn_losses.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred,
                                                           axis=axis)
    p = y_pred / reduce.reduce_sum(y_pred, axis=axis, keepdims=True)
    return -reduce.reduce_sum(y_true * _log_clipped(p), axis=axis)


def _sparse_losses_and_mask(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """The per-sample losses and, with ``ignore_class``, the mask of samples that count."""
    name = "sparse_categorical_crossentropy"
    y_pred, y_true = _tensor(y_pred), _tensor(y_true)
    if y_pred.ndim == 0 or isinstance(axis, bool) or axis not in (-1, y_pred.ndim - 1):
        raise ValueError(f"{name}: the classes must be on y_pred's last axis (only axis=-1 "
                         f"is supported); received axis={axis}, y_pred.shape="
                         f"{tuple(y_pred.shape)}")
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:   # (B, 1) labels
        y_true = shape_ops.squeeze(y_true, -1)
    if tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
        raise ValueError(f"{name}: y_true must have the shape of y_pred without its last "
                         f"(class) axis; received y_true.shape={tuple(y_true.shape)}, "
                         f"y_pred.shape={tuple(y_pred.shape)}")
    mask = None
    if ignore_class is not None:
        # Keras compares in y_pred's dtype, then gives ignored samples class 0 and zero
        # predictions: their loss is discarded below, and their gradient is zero
        mask = predicates.not_equal(_tensor(y_true, y_pred.dtype),
                                    _tensor(ignore_class, y_pred.dtype))
        y_true = predicates.where(mask, y_true, creation.zeros_like(y_true))
        y_pred = predicates.where(shape_ops.expand_dims(mask, -1), y_pred,
                                  creation.zeros_like(y_pred))
    logits = y_pred if from_logits else _log_clipped(y_pred)
    losses = nn_losses.sparse_softmax_cross_entropy_with_logits(
        labels=_tensor(y_true, dtypes.int64), logits=logits)
    if mask is not None:
        losses = predicates.where(mask, losses, creation.zeros_like(losses))
    return losses, mask


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """Cross-entropy with one integer class per sample: ``-log p[y_true]``.

    Args:
        y_true: class indices, the shape of ``y_pred`` without its last axis
            (or with a last axis of 1); any dtype, cast to int64.
        y_pred: probabilities ``[..., num_classes]`` (clipped to ``[1e-7, 1 - 1e-7]``
            and logged, then fed to ``ad.nn.sparse_softmax_cross_entropy_with_logits``,
            as Keras does), or logits.
        from_logits: whether ``y_pred`` holds logits.
        ignore_class: a label whose samples get loss 0 (a "void" class); the
            class form also leaves them out of the mean.
        axis: only -1, the last axis.

    >>> ad.losses.sparse_categorical_crossentropy([1], [[0.5, 0.5]]).numpy()
    array([0.6931472], dtype=float32)
    """
    return _sparse_losses_and_mask(y_true, y_pred, from_logits, ignore_class, axis)[0]


mse = MSE = mean_squared_error   # tf.keras.losses' short names
mae = MAE = mean_absolute_error
