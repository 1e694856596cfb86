"""Cross-entropy losses on logits (``ad.nn``), computed the stable way, as TensorFlow.

The two softmax cross-entropies are fused ops, as in TensorFlow: one op
computes ``-sum(labels * log_softmax(logits))`` with the maximum subtracted
first (so ``exp`` never overflows), and its VJP is the famous
``softmax(logits) - labels``. TensorFlow uses that formula even when the
labels do not sum to 1 (then it is not the exact derivative); so do we, to
give TensorFlow's numbers. The labels' gradient is ``-log_softmax(logits)``.

Written with this library's ops, the VJPs differentiate again: the second
derivative with respect to the logits is softmax's Jacobian. (One place we
part from TensorFlow: the mixed derivative "logits gradient with respect to
labels" is ``-g`` here, the derivative of the formula above; TensorFlow's
fused kernel reports zeros for it.)

``sigmoid_cross_entropy_with_logits`` is not an op of its own in TensorFlow
but a composition, ``max(x, 0) - x * z + log(1 + exp(-|x|))``; it is one here
too, so the tape shows the same arithmetic ops (its selects are ``SelectV2``;
TensorFlow's code calls the older ``Select``).

``SparseSoftmaxCrossEntropyWithLogits`` checks that every label is in
``[0, num_classes)`` on the NumPy backend (TensorFlow's CPU kernel raises);
on a device backend the check would be a copy to the host, so, as
TensorFlow's GPU kernel, it gives NaN for those rows instead.
"""

import numpy as np

from .. import dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import convert_to_tensor

__all__ = ["softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
           "sigmoid_cross_entropy_with_logits", "one_hot"]


def _log_softmax(xp, x, axis):
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


# ---- softmax cross-entropy with soft labels ------------------------------------------
def _sce_forward(xp, logits, labels, axis=-1):
    return (-xp.sum(labels * _log_softmax(xp, logits, axis), axis=axis)).astype(
        logits.dtype, copy=False)


def _sce_logits_grad(g, ans, logits, labels, axis=-1):
    # TensorFlow's backprop, softmax - labels; unbroadcast when labels were the larger
    grad = expand_dims(g, axis) * (softmax(logits, axis=axis) - labels)
    return sum_to(grad, logits._value.shape, g._value.ndim - ans._value.ndim)


def _sce_labels_grad(g, ans, logits, labels, axis=-1):
    grad = expand_dims(g, axis) * -log_softmax(logits, axis=axis)
    return sum_to(grad, labels._value.shape, g._value.ndim - ans._value.ndim)


def _distributions(rng, shapes):
    """Logits anywhere, labels that are probability distributions along the last axis."""
    logits = rng.uniform(-2.0, 2.0, size=shapes[0])
    labels = rng.uniform(0.1, 1.0, size=shapes[1])
    return [logits, labels / labels.sum(axis=-1, keepdims=True)]


SOFTMAX_CROSS_ENTROPY = Primitive(
    "SoftmaxCrossEntropyWithLogits", _sce_forward, (_sce_logits_grad, _sce_labels_grad),
    saves="inputs", label="softmax_cross_entropy({1}, {0})",
    cases=[(((3,), (3,)), {"axis": -1}), (((2, 3), (2, 3)), {"axis": -1}),
           (((2, 3), (1, 3)), {"axis": -1}), (((2, 4, 3), (2, 4, 3)), {"axis": -1})],
    doc="d/dlogits = g * (softmax(logits) - labels); d/dlabels = -g * log_softmax(logits)")
SOFTMAX_CROSS_ENTROPY.make_inputs = _distributions


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross-entropy between ``labels`` (probabilities) and ``softmax(logits)``.

    ``-reduce_sum(labels * log_softmax(logits, axis), axis)``, computed stably.

    Args:
        labels: a distribution over classes along ``axis`` (broadcastable to
            ``logits``); cast to the logits' dtype, as TensorFlow does. It has
            a gradient too: ``-log_softmax(logits)``.
        logits: unnormalized log-probabilities, rank >= 1.
        axis: the class axis (default the last).

    Returns:
        A tensor shaped like ``logits`` without ``axis``.

    >>> print(ad.nn.softmax_cross_entropy_with_logits([0.0, 1.0], [0.0, 0.0]).numpy())
    0.6931472
    """
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype_hint=logits.dtype)
    op = "SoftmaxCrossEntropyWithLogits"
    if not logits.dtype.is_floating:
        raise InvalidArgumentError(f"{op}: logits must be a floating tensor, not "
                                   f"{logits.dtype.name}")
    if labels.dtype != logits.dtype:
        labels = cast(labels, logits.dtype)
    try:
        shape = np.broadcast_shapes(tuple(logits.shape), tuple(labels.shape))
    except ValueError:
        raise InvalidArgumentError(f"{op}: logits and labels must be broadcastable: logits "
                                   f"shape {tuple(logits.shape)}, labels shape "
                                   f"{tuple(labels.shape)}") from None
    rank = len(shape)
    if rank == 0 or not -rank <= int(axis) < rank:
        raise InvalidArgumentError(f"{op}: axis {axis} is out of range for logits of shape "
                                   f"{tuple(logits.shape)} (logits need rank >= 1)")
    if logits.dtype == dtypes.float16:   # TensorFlow computes these in float32
        loss = SOFTMAX_CROSS_ENTROPY(cast(logits, dtypes.float32), cast(labels, dtypes.float32),
                                     axis=int(axis) % rank - rank)
        return cast(loss, dtypes.float16)
    return SOFTMAX_CROSS_ENTROPY(logits, labels, axis=int(axis) % rank - rank)


# ---- sparse: one integer class per example --------------------------------------------
def _sparse_forward(xp, logits, labels):
    depth = logits.shape[-1]
    if isinstance(labels, np.ndarray) and labels.size and (labels.min() < 0 or
                                                           labels.max() >= depth):
        bad = labels[(labels < 0) | (labels >= depth)].ravel()[0]
        shown = " ".join(map(str, labels.ravel()[:10])) + (" ..." if labels.size > 10 else "")
        raise InvalidArgumentError(
            f"SparseSoftmaxCrossEntropyWithLogits: label {bad} is outside the valid range "
            f"[0, {depth}) of the {depth} classes (labels: {shown})")
    picked = xp.arange(depth) == labels[..., None]
    loss = -xp.sum(xp.where(picked, _log_softmax(xp, logits, -1), 0), axis=-1)
    valid = (labels >= 0) & (labels < depth)   # all true on NumPy (checked above)
    return xp.where(valid, loss, xp.nan).astype(logits.dtype, copy=False)


def _sparse_logits_grad(g, ans, logits, labels):
    depth = logits._value.shape[-1]
    return expand_dims(g, -1) * (softmax(logits, axis=-1) - one_hot(labels, depth,
                                                                     dtype=logits.dtype))


def _class_labels(rng, shapes):
    logits = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [logits, rng.integers(0, shapes[0][-1], size=shapes[1]).astype(np.int32)]


SPARSE_SOFTMAX_CROSS_ENTROPY = Primitive(
    "SparseSoftmaxCrossEntropyWithLogits", _sparse_forward, (_sparse_logits_grad, lambda *a: None),
    saves="inputs", dtype_args=(0,), label="sparse_softmax_cross_entropy({1}, {0})",
    cases=[(((3,), ()), {}), (((4, 3), (4,)), {}), (((2, 4, 5), (2, 4)), {})],
    doc="d/dlogits = g * (softmax(logits) - one_hot(labels)); integer labels: None")
SPARSE_SOFTMAX_CROSS_ENTROPY.make_inputs = _class_labels


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Cross-entropy with one integer class per example: ``-log_softmax(logits)[labels]``.

    Args:
        labels: int32 or int64 class indices in ``[0, num_classes)``, shaped like
            ``logits`` without its last axis. Out-of-range labels raise
            InvalidArgumentError on NumPy (TensorFlow's CPU behaviour).
        logits: float tensor ``[..., num_classes]``.

    Returns:
        A tensor shaped like ``labels``. The labels get no gradient.

    >>> ad.nn.sparse_softmax_cross_entropy_with_logits([1], [[0.0, 0.0]]).numpy()
    array([0.6931472], dtype=float32)
    """
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    op = "SparseSoftmaxCrossEntropyWithLogits"
    if labels.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"{op}: labels must be int32 or int64, not "
                                   f"{labels.dtype.name}")
    if not logits.dtype.is_floating:
        raise InvalidArgumentError(f"{op}: logits must be a floating tensor, not "
                                   f"{logits.dtype.name}")
    if logits.ndim == 0 or tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise InvalidArgumentError(
            f"{op}: labels shape must equal logits shape without its last axis: labels shape "
            f"{tuple(labels.shape)}, logits shape {tuple(logits.shape)}")
    if logits.dtype == dtypes.float16:   # TensorFlow computes these in float32
        return cast(SPARSE_SOFTMAX_CROSS_ENTROPY(cast(logits, dtypes.float32), labels),
                    dtypes.float16)
    return SPARSE_SOFTMAX_CROSS_ENTROPY(logits, labels)


# ---- one_hot (not differentiable: its input is integer) ------------------------------
def _one_hot_forward(xp, indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    picked = xp.arange(depth) == indices[..., None]
    return xp.where(picked, on_value, off_value).astype(dtype, copy=False)


ONE_HOT = Primitive("OneHot", _one_hot_forward, NotDifferentiable, saves="shapes", domain=(),
                    cases=[(((3,),), {"depth": 4}), (((2, 3),), {"depth": 5})],
                    doc="integer indices in: not differentiable (gradient None)")
ONE_HOT.make_inputs = lambda rng, shapes: [rng.integers(0, 4, size=shapes[0]).astype(np.int32)]


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``on_value`` where the last axis' position equals the index, else ``off_value``.

    Args:
        indices: integer tensor; indices outside ``[0, depth)`` give a row of
            ``off_value`` (TensorFlow does the same).
        depth: number of classes (the new last axis).
        on_value, off_value: numbers (default 1 and 0).
        axis: only -1 (the default) is supported.
        dtype: the result's dtype (default float32).

    >>> ad.one_hot([0, 2], 3).numpy()
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    indices = convert_to_tensor(indices)
    if axis not in (None, -1):
        raise InvalidArgumentError(f"OneHot: only axis=-1 is supported, got axis={axis}")
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(f"OneHot: indices must be integers, not {indices.dtype.name}")
    depth = _validate.as_int("OneHot", "depth", depth)
    if depth < 0:
        raise InvalidArgumentError(f"OneHot: depth must be >= 0, got depth={depth}")
    dtype = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
    return ONE_HOT(indices, depth=depth, dtype=dtype.name,
                   on_value=1 if on_value is None else on_value,
                   off_value=0 if off_value is None else off_value)


# ---- sigmoid cross-entropy: a composition, as in TensorFlow ---------------------------
def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-element logistic loss: ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``.

    Computed as ``max(x, 0) - x * z + log(1 + exp(-|x|))``, which neither
    overflows nor loses precision for large ``|x|`` (TensorFlow's formula,
    and its ops: the gradient comes from them, ``sigmoid(x) - z`` for the
    logits and ``-x`` for the labels).

    Args:
        labels: ``z``, same shape and dtype as ``logits`` (values in [0, 1]).
        logits: ``x``, a float tensor.

    >>> ad.nn.sigmoid_cross_entropy_with_logits(labels=[1.0], logits=[0.0]).numpy()
    array([0.6931472], dtype=float32)
    """
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype_hint=logits.dtype)
    if tuple(labels.shape) != tuple(logits.shape):
        raise InvalidArgumentError(
            f"sigmoid_cross_entropy_with_logits: logits and labels must have the same shape: "
            f"logits shape {tuple(logits.shape)}, labels shape {tuple(labels.shape)}")
    zeros = zeros_like(logits)
    positive = greater_equal(logits, zeros)
    relu_logits = where(positive, logits, zeros)
    neg_abs_logits = where(positive, -logits, logits)
    return relu_logits - logits * labels + log1p(exp(neg_abs_logits))


from ..broadcast import sum_to  # noqa: E402
from .creation import zeros_like  # noqa: E402
from .elementwise import cast, exp, log1p  # noqa: E402
from .nn import log_softmax, softmax  # noqa: E402
from .predicates import greater_equal, where  # noqa: E402
from .shape import expand_dims  # noqa: E402
