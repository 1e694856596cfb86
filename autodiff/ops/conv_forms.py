"""``tf.nn``'s rank-generic and 1-D spellings of convolution and pooling, run on the 2-D ops.

TensorFlow has names for one rank (``conv1d``, ``max_pool2d``) and names that
read the rank from the input (``convolution``, ``pool``, ``max_pool``,
``avg_pool``). Every one of them here runs ``Conv2D``, ``MaxPool`` or
``AvgPool`` (``conv.py``, ``pooling.py``): a 1-D input ``[batch, width,
channels]`` is a 2-D one of height 1, so the derivatives (every order) are
those ops' own. 3-D inputs (rank 5) are not supported; channels come last.

    >>> ad.nn.pool(ad.ones([1, 5, 2]), [2], "MAX", strides=[2], padding="SAME").shape
    TensorShape([1, 3, 2])
"""

from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..tensor import convert_to_tensor

__all__ = ["convolution", "pool", "max_pool", "avg_pool", "max_pool1d", "avg_pool1d"]

_FORMATS = {1: ("NWC", None), 2: ("NHWC", None)}


def _spatial(value, n, what, op):
    """An int, or a list of 1, ``n`` or ``n + 2`` ints (1 at the batch and channel axes),
    as a tuple of ``n`` positive ints."""
    values = [value] if not isinstance(value, (list, tuple)) else list(value)
    values = [_validate.as_int(op, what, v) for v in values]
    if len(values) == n + 2:
        if values[0] != 1 or values[-1] != 1:
            raise InvalidArgumentError(f"{op}: {what} on the batch and channel axes must be 1, "
                                       f"got {what}={values}")
        values = values[1:-1]
    if len(values) == 1:
        values = values * n
    if len(values) != n or min(values) < 1:
        raise InvalidArgumentError(f"{op}: {what} must be a positive int or a list of 1, {n} or "
                                   f"{n + 2} positive ints for {n}-D inputs, got {what}={value!r}")
    return tuple(values)


def _spatial_rank(op, x, data_format):
    """How many spatial axes ``x`` has (1 or 2); its data_format must put channels last."""
    n = x.ndim - 2
    if n not in (1, 2):
        raise InvalidArgumentError(
            f"{op}: input must be 3-D [batch, width, channels] or 4-D [batch, height, width, "
            f"channels], got shape {tuple(x.shape)} (rank-5, 3-D, inputs are not supported)")
    if data_format not in _FORMATS[n]:
        raise InvalidArgumentError(f"{op}: only data_format={_FORMATS[n][0]!r} (channels last) "
                                   f"is supported for input shape {tuple(x.shape)}, got "
                                   f"{data_format!r}")
    return n


def _pool(op, x, window, strides, padding, dilations):
    if len(window) == 1:   # a row of height 1
        y = pool2d(op, expand_dims(x, 1), (1,) + window, (1,) + strides, padding,
                   dilations=(1,) + dilations)
        return squeeze(y, [1])
    return pool2d(op, x, window, strides, padding, dilations=dilations)


def _dilated(op, strides, padding, dilations):
    """TensorFlow's limits on dilated windows: stride 1 and VALID padding only."""
    if max(dilations) > 1 and max(strides) > 1:
        raise InvalidArgumentError(f"{op}: strides > 1 are not supported together with "
                                   f"dilations > 1 (strides={list(strides)}, "
                                   f"dilations={list(dilations)})")
    if max(dilations) > 1 and padding == "SAME" and op != "Conv2D":
        raise InvalidArgumentError(f"{op}: padding 'SAME' is not supported with dilations > 1 "
                                   f"(dilations={list(dilations)})")


def pool(input, window_shape, pooling_type, strides=None, padding="VALID",  # noqa: A002
         data_format=None, dilations=None, name=None):
    """Max or average pooling over 1 or 2 spatial axes, as ``tf.nn.pool``.

    Args:
        input: ``[batch, width, channels]`` or ``[batch, height, width, channels]``.
        window_shape: a list of N ints, N = the number of spatial axes.
        pooling_type: ``"MAX"`` or ``"AVG"`` (average: floating input only).
        strides: a list of N ints (default 1).
        padding: ``"VALID"`` or ``"SAME"``.
        dilations: a list of N ints, the spacing of the window's cells (default 1);
            above 1 only with stride 1 and VALID padding, as in TensorFlow.

    Returns:
        The pooled tensor, ``[batch, out_width, channels]`` or 4-D.

    >>> x = ad.reshape(ad.range(6.0), [1, 6, 1])
    >>> ad.reshape(ad.nn.pool(x, [2], "AVG", dilations=[2]), [-1]).numpy()
    array([1., 2., 3., 4.], dtype=float32)
    """
    x = convert_to_tensor(input)
    if not isinstance(window_shape, (list, tuple)):
        raise TypeError(f"pool: window_shape must be a list of ints, got {window_shape!r}")
    if pooling_type not in ("MAX", "AVG"):
        raise InvalidArgumentError(f"pool: pooling_type must be 'MAX' or 'AVG', got "
                                   f"{pooling_type!r}")
    op = "MaxPool" if pooling_type == "MAX" else "AvgPool"
    n = len(window_shape)
    if x.ndim != n + 2:
        raise InvalidArgumentError(f"{op}: a window of {n} dims needs an input of rank {n + 2}, "
                                   f"got shape {tuple(x.shape)}")
    _spatial_rank(op, x, data_format)
    window = _spatial(window_shape, n, "window_shape", op)
    strides = _spatial(1 if strides is None else strides, n, "strides", op)
    dilations = _spatial(1 if dilations is None else dilations, n, "dilations", op)
    _dilated(op, strides, padding, dilations)
    return _pool(op, x, window, strides, padding, dilations)


def _pool_of_rank(op, input, ksize, strides, padding, data_format, rank=None):  # noqa: A002
    x = convert_to_tensor(input)
    if rank is not None and x.ndim != rank + 2:
        raise InvalidArgumentError(f"{op}: input must be 3-D [batch, width, channels], got "
                                   f"shape {tuple(x.shape)}")
    n = _spatial_rank(op, x, data_format)
    return _pool(op, x, _spatial(ksize, n, "ksize", op), _spatial(strides, n, "strides", op),
                 padding, (1,) * n)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """The maximum of each window over 1 or 2 spatial axes (read from the input's rank), as
    ``tf.nn.max_pool``.

    Args:
        input: ``[batch, width, channels]`` or ``[batch, height, width, channels]``.
        ksize, strides: an int, or a list of 1, N or N + 2 ints.
        padding: ``"VALID"`` or ``"SAME"``.

    >>> ad.nn.max_pool(ad.constant([[[1.0], [3.0], [2.0]]]), 2, 1, "VALID").numpy().ravel()
    array([3., 3.], dtype=float32)
    """
    return _pool_of_rank("MaxPool", input, ksize, strides, padding, data_format)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """The mean of each window over 1 or 2 spatial axes, as ``tf.nn.avg_pool`` (SAME: padded
    cells are not counted). Arguments as ``max_pool``; the input must be floating.

    >>> ad.nn.avg_pool(ad.constant([[[1.0], [3.0], [2.0]]]), 2, 1, "VALID").numpy().ravel()
    array([2. , 2.5], dtype=float32)
    """
    return _pool_of_rank("AvgPool", input, ksize, strides, padding, data_format)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The maximum of each window of a ``[batch, width, channels]`` input, as
    ``tf.nn.max_pool1d``; ``ksize`` and ``strides``: an int or a list of 1 or 3 ints.

    >>> ad.nn.max_pool1d(ad.ones([2, 5, 3]), 2, 2, "SAME").shape
    TensorShape([2, 3, 3])
    """
    return _pool_of_rank("MaxPool", input, ksize, strides, padding, data_format, rank=1)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The mean of each window of a ``[batch, width, channels]`` input, as
    ``tf.nn.avg_pool1d``; arguments as ``max_pool1d``.

    >>> ad.nn.avg_pool1d(ad.ones([2, 5, 3]), 2, 2, "VALID").shape
    TensorShape([2, 2, 3])
    """
    return _pool_of_rank("AvgPool", input, ksize, strides, padding, data_format, rank=1)


def convolution(input, filters, strides=None, padding="VALID", data_format=None,  # noqa: A002
                dilations=None, name=None):
    """Convolution over 1 or 2 spatial axes (read from the input's rank), as
    ``tf.nn.convolution``: ``conv1d`` for 3-D inputs, ``conv2d`` for 4-D ones.

    Args:
        input: ``[batch, width, in]`` or ``[batch, height, width, in]``.
        filters: ``[width, in, out]`` or ``[height, width, in, out]``.
        strides: an int or a list of N ints (default 1).
        padding: ``"VALID"`` (the default) or ``"SAME"``.
        dilations: an int or a list of N ints (default 1); above 1 only with stride 1.

    >>> ad.nn.convolution(ad.ones([1, 5, 2]), ad.ones([2, 2, 3])).shape
    TensorShape([1, 4, 3])
    """
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    op = "Conv2D"
    n = _spatial_rank(op, x, data_format)
    if w.ndim != n + 2:
        raise InvalidArgumentError(f"{op}: filters must have rank {n + 2} for input shape "
                                   f"{tuple(x.shape)}, got filters shape {tuple(w.shape)}")
    if not isinstance(padding, str):   # TypeError, as TensorFlow ("Expected string")
        raise TypeError(f"{op}: padding must be 'VALID' or 'SAME', got {padding!r}")
    strides = _spatial(1 if strides is None else strides, n, "strides", op)
    dilations = _spatial(1 if dilations is None else dilations, n, "dilations", op)
    _dilated(op, strides, padding, dilations)
    if n == 1:
        return conv1d(x, w, stride=strides[0], padding=padding, dilations=dilations[0])
    return conv2d(x, w, strides=list(strides), padding=padding, dilations=list(dilations))


from .conv import conv1d, conv2d  # noqa: E402
from .pooling import pool2d  # noqa: E402
from .shape import expand_dims, squeeze  # noqa: E402
