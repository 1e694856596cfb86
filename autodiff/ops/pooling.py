"""Pooling (``ad.nn.max_pool2d``, ``avg_pool2d``): NHWC, as TensorFlow.

Both cut each window out of the input with ``conv.patches`` and reduce it.

Max pooling's gradient goes to the window's maximum. On a tie TensorFlow
(on CPU) picks the *first* maximum in the window, reading row by row; so
does ``argmax`` here. Overlapping windows that pick the same element add
up. The gradient is linear in ``g``, so three op types close under
differentiation, as in TensorFlow:

    MaxPool(x)                  y
    MaxPoolGrad(x, g)           g routed to each window's argmax (x's shape)
    MaxPoolGradGrad(x, h)       h read at each window's argmax (y's shape)

The argmax does not move under a small change of ``x``, so the rules give
zeros (not None, as TensorFlow) for ``x``. SAME padding pads with -inf,
so a padded cell never wins.

Average pooling is linear: ``AvgPoolGrad(g)`` spreads each ``g`` evenly over
its window and its VJP is ``AvgPool`` again. With SAME padding TensorFlow
averages only the cells inside the input (a corner window of a 3x3 pool
divides by 4, not 9); so do we.
"""

import numpy as np

from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor
from .conv import check_out_sizes, col2im, out_size, patches, resolve_padding, spatial_pair

__all__ = ["max_pool2d", "avg_pool2d"]

_ONE = (1, 1)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _argmax_mask(xp, x, ksize, strides, pads, dilations=_ONE):
    """(..., N, Ho, Wo, kh * kw, C): True at each window's first maximum."""
    cols = patches(xp, x, ksize[0], ksize[1], strides, dilations, pads, pad_value=_lowest(x.dtype))
    first = xp.argmax(cols, axis=-2)
    return xp.arange(cols.shape[-2])[:, None] == first[..., None, :]


def _blocks(xp, *arrays, ksize, strides, pads, dilations):
    """Whether pool_kernels' block formulation applies (NumPy, rank 4, disjoint windows)."""
    return xp is np and all(a.ndim == 4 for a in arrays) and pool_kernels.tiles(
        arrays[0].shape, ksize, strides, pads, dilations)


def _max_pool_forward(xp, x, ksize, strides, pads, dilations=_ONE):
    if _blocks(xp, x, ksize=ksize, strides=strides, pads=pads, dilations=dilations):
        return pool_kernels.max_pool(x, ksize)
    cols = patches(xp, x, ksize[0], ksize[1], strides, dilations, pads, pad_value=_lowest(x.dtype))
    return xp.max(cols, axis=-2)


def _max_pool_grad_forward(xp, x, g, ksize, strides, pads, dilations=_ONE):
    if _blocks(xp, x, g, ksize=ksize, strides=strides, pads=pads, dilations=dilations):
        dx = pool_kernels.max_pool_grad(x, g, ksize)
        if dx is not None:
            return dx
    routed = xp.where(_argmax_mask(xp, x, ksize, strides, pads, dilations), g[..., None, :], 0)
    return col2im(xp, routed.astype(g.dtype, copy=False), x.shape[-3:-1], ksize[0], ksize[1],
                  strides, dilations, pads)


def _max_pool_grad_grad_forward(xp, x, h, ksize, strides, pads, dilations=_ONE):
    if _blocks(xp, x, h, ksize=ksize, strides=strides, pads=pads, dilations=dilations):
        dh = pool_kernels.max_pool_grad_grad(x, h, ksize)
        if dh is not None:
            return dh
    cols = patches(xp, h, ksize[0], ksize[1], strides, dilations, pads)
    mask = _argmax_mask(xp, x, ksize, strides, pads, dilations)
    return xp.sum(xp.where(mask, cols, 0), axis=-2).astype(h.dtype, copy=False)


def _zeros_for(x, g, ans):
    """Zeros shaped like the batch axes of ``g`` followed by ``x``'s shape."""
    batch = tuple(g._value.shape[:g._value.ndim - ans._value.ndim])
    return zeros(batch + tuple(x._value.shape), dtype=x.dtype)


def _fit(grad, x, g, ans):
    return sum_to(grad, x._value.shape, g._value.ndim - ans._value.ndim)


POOL_CASES = [
    (((1, 4, 4, 2),), {"ksize": (2, 2), "strides": (2, 2), "pads": ((0, 0), (0, 0))}),
    (((2, 5, 4, 1),), {"ksize": (3, 2), "strides": (1, 2), "pads": ((1, 1), (0, 0))}),
    (((1, 4, 5, 1),), {"ksize": (3, 3), "strides": (2, 2), "pads": ((1, 1), (1, 1))}),
    (((1, 6, 5, 1),), {"ksize": (2, 2), "strides": (1, 1), "pads": ((0, 0), (0, 0)),
                       "dilations": (2, 1)}),                        # tf.nn.pool's dilations
    (((1, 3, 2, 1),), {"ksize": (1, 3), "strides": (1, 1), "pads": ((0, 0), (0, 0))}),  # empty
]


def _pair_cases(second_shape):
    return [((case[0][0], second_shape(case[0][0], case[1])), case[1]) for case in POOL_CASES]


def _pooled_shape(shape, p):
    return shape[:-3] + tuple(out_size(n, k, s, d, pad) for n, k, s, d, pad in
                              zip(shape[-3:-1], p["ksize"], p["strides"],
                                  p.get("dilations", _ONE), p["pads"])) + shape[-1:]


MAX_POOL = Primitive(
    "MaxPool", _max_pool_forward,
    (lambda g, ans, x, **p: max_pool_grad(x, g, **p),),
    saves="inputs", domain=(-2.0, 2.0), label="max_pool({0})", cases=POOL_CASES,
    doc="d max = 1 at each window's first maximum, 0 elsewhere: MaxPoolGrad(x, g)")
MAX_POOL_GRAD = Primitive(
    "MaxPoolGrad", _max_pool_grad_forward,
    (lambda h, ans, x, g, **p: _zeros_for(x, h, ans),
     lambda h, ans, x, g, **p: _fit(max_pool_grad_grad(x, h, **p), g, h, ans)),
    saves="inputs", domain=(-2.0, 2.0), label="max_pool_grad({0}, {1})",
    cases=_pair_cases(lambda shape, p: _pooled_shape(shape, p)),
    doc="linear in g (dg = MaxPoolGradGrad(x, h)); piecewise constant in x (zeros)")
MAX_POOL_GRAD_GRAD = Primitive(
    "MaxPoolGradGrad", _max_pool_grad_grad_forward,
    (lambda k, ans, x, h, **p: _zeros_for(x, k, ans),
     lambda k, ans, x, h, **p: _fit(max_pool_grad(x, k, **p), h, k, ans)),
    saves="inputs", domain=(-2.0, 2.0), label="max_pool_grad_grad({0}, {1})",
    cases=_pair_cases(lambda shape, p: shape),
    doc="linear in h (dh = MaxPoolGrad(x, k)); piecewise constant in x (zeros)")


def max_pool_grad(x, g, **p):
    """``g`` routed back to each window's maximum of ``x`` (``p``: MaxPool's params)."""
    return MAX_POOL_GRAD(x, g, **p)


def max_pool_grad_grad(x, h, **p):
    """``h`` (shaped like ``x``) read at each window's maximum of ``x``."""
    return MAX_POOL_GRAD_GRAD(x, h, **p)


# ---- average pooling ----------------------------------------------------------------------
def _counts(xp, hw, ksize, strides, pads, dtype, dilations):
    """(Ho, Wo, 1): how many input cells each window covers (fewer at padded edges)."""
    ones = xp.ones(tuple(hw) + (1,), dtype=dtype)
    return xp.sum(patches(xp, ones, ksize[0], ksize[1], strides, dilations, pads), axis=-2)


def _avg_pool_forward(xp, x, ksize, strides, pads, dilations=_ONE):
    if _blocks(xp, x, ksize=ksize, strides=strides, pads=pads, dilations=dilations):
        return pool_kernels.avg_pool(x, ksize)
    cols = patches(xp, x, ksize[0], ksize[1], strides, dilations, pads)
    return (xp.sum(cols, axis=-2) / _counts(xp, x.shape[-3:-1], ksize, strides, pads,
                                             x.dtype, dilations)).astype(x.dtype, copy=False)


def _avg_pool_grad_forward(xp, g, ksize, strides, pads, input_hw, dilations=_ONE):
    if (xp is np and g.ndim == 4 and pool_kernels.tiles(
            (g.shape[0],) + tuple(input_hw) + g.shape[-1:], ksize, strides, pads, dilations)):
        return pool_kernels.avg_pool_grad(g, ksize, input_hw)
    share = g / _counts(xp, input_hw, ksize, strides, pads, g.dtype, dilations)
    cols = xp.broadcast_to(share[..., None, :], share.shape[:-1] + (ksize[0] * ksize[1],
                                                                  share.shape[-1]))
    return col2im(xp, cols.astype(g.dtype, copy=False), input_hw, ksize[0], ksize[1], strides,
                  dilations, pads)


AVG_POOL = Primitive(
    "AvgPool", _avg_pool_forward,
    (lambda g, ans, x, **p: avg_pool_grad(g, tuple(x._value.shape[-3:-1]), **p),),
    saves="shapes", domain=(-2.0, 2.0), label="avg_pool({0})", cases=POOL_CASES,
    doc="linear: each window's g is spread evenly over its cells (AvgPoolGrad)")
AVG_POOL_GRAD = Primitive(
    "AvgPoolGrad", _avg_pool_grad_forward,
    (lambda h, ans, g, input_hw, **p: AVG_POOL(h, **p),),
    saves="shapes", domain=(-2.0, 2.0), label="avg_pool_grad({0})",
    cases=[((_pooled_shape(c[0][0], c[1]),), {**c[1], "input_hw": c[0][0][1:3]})
           for c in POOL_CASES],
    doc="the adjoint of AvgPool, linear: its VJP is AvgPool")


def avg_pool_grad(g, input_hw, **p):
    """The gradient of AvgPool: each ``g`` spread evenly over its window."""
    return AVG_POOL_GRAD(g, input_hw=tuple(input_hw), **p)


# ---- the public functions -----------------------------------------------------------------
def pool2d(op, input, ksize, strides, padding, data_format="NHWC", dilations=_ONE):  # noqa: A002
    """``MaxPool`` or ``AvgPool`` (``op``) of a 4-D NHWC input, TensorFlow's arguments checked.

    ``ksize``, ``strides`` and ``dilations``: an int or a list of 1, 2 or 4 ints. A
    window that overhangs the input by less than a stride gives an empty output; one
    that overhangs it more raises InvalidArgumentError, as in TensorFlow.
    """
    if data_format not in ("NHWC", None):
        raise InvalidArgumentError(f"{op}: only data_format='NHWC' is supported, "
                                   f"got {data_format!r}")
    x = convert_to_tensor(input)
    if x.ndim != 4:
        raise InvalidArgumentError(f"{op}: input must be 4-D [batch, height, width, "
                                   f"channels], got shape {tuple(x.shape)}")
    if isinstance(ksize, (list, tuple)) and len(ksize) == 4 and ksize[0] != 1:
        raise InvalidArgumentError(f"{op}: pooling over the batch axis is not supported "
                                   f"(ksize={list(ksize)})")
    ksize = spatial_pair(ksize, "ksize", op)
    strides = spatial_pair(strides, "strides", op)
    dilations = spatial_pair(dilations, "dilations", op)
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"{op}: padding must be 'SAME' or 'VALID', got {padding!r}")
    if op == "AvgPool" and not x.dtype.is_floating:
        raise InvalidArgumentError(f"AvgPool: input must be floating, not {x.dtype.name} "
                                   f"(shape {tuple(x.shape)})")
    hw = tuple(x.shape[1:3])
    pads = resolve_padding(padding, hw, ksize, strides, dilations, op)
    check_out_sizes(op, [out_size(n, k, s, d, p) for n, k, s, d, p in
                         zip(hw, ksize, strides, dilations, pads)],
                    x, ksize, strides, dilations, padding)
    params = {"ksize": ksize, "strides": strides, "pads": pads}
    if dilations != _ONE:
        params["dilations"] = dilations
    return (MAX_POOL if op == "MaxPool" else AVG_POOL)(x, **params)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The maximum of each window, as ``tf.nn.max_pool2d``.

    Args:
        input: ``[batch, height, width, channels]``.
        ksize: the window, an int or a list of 1, 2 or 4 ints (``[1, kh, kw, 1]``).
        strides: the step between windows, same forms.
        padding: ``'SAME'`` or ``'VALID'``; a window larger than the input by
            less than a stride gives an empty output, as in TensorFlow.
        data_format: only ``'NHWC'``.

    Returns:
        ``[batch, out_height, out_width, channels]``; the gradient goes to each
        window's first maximum.

    >>> x = ad.reshape(ad.range(16.0), [1, 4, 4, 1])
    >>> ad.reshape(ad.nn.max_pool2d(x, 2, 2, "VALID"), [-1]).numpy()
    array([ 5.,  7., 13., 15.], dtype=float32)
    """
    return pool2d("MaxPool", input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The mean of each window, as ``tf.nn.avg_pool2d`` (SAME: padded cells not counted).

    Args: as ``max_pool2d``; the input must be floating.

    >>> x = ad.reshape(ad.range(16.0), [1, 4, 4, 1])
    >>> ad.reshape(ad.nn.avg_pool2d(x, 2, 2, "VALID"), [-1]).numpy()
    array([ 2.5,  4.5, 10.5, 12.5], dtype=float32)
    """
    return pool2d("AvgPool", input, ksize, strides, padding, data_format)


from . import pool_kernels  # noqa: E402
from ..broadcast import sum_to  # noqa: E402
from .creation import zeros  # noqa: E402
