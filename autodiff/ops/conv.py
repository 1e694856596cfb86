"""Convolutions (``ad.nn.conv2d``, ``conv1d``): NHWC inputs, HWIO filters, as TensorFlow.

The forward is *im2col*: every output position's receptive field is cut
out of the (padded) input as one row, with ``kh * kw`` strided slices, and
the convolution becomes one matrix product with the filters reshaped to
``(kh * kw * in_channels, out_channels)``. Slices, ``pad``, ``stack`` and
``matmul`` exist on NumPy and CuPy alike, so one forward serves both.

A convolution is linear in its input and linear in its filters, so both
VJPs are convolutions again, three op types that close under
differentiation (TensorFlow has the same three):

    Conv2D(x, w)                    y
    Conv2DBackpropInput(g, w)       d<g, Conv2D(x, w)>/dx  (the transposed conv)
    Conv2DBackpropFilter(x, g)      d<g, Conv2D(x, w)>/dw

Each one's VJPs are the other two, so second derivatives are exact. Every
array may carry extra leading axes before N (batch axes of a Jacobian's
cotangents): the matmuls broadcast over them.

``padding`` is resolved into explicit ``((top, bottom), (left, right))``
amounts before the op runs (SAME: ``out = ceil(in / stride)``, the extra
row or column going at the bottom or right, as TensorFlow).
"""

import math

from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["conv2d", "conv1d"]


# ---- im2col and its adjoint (shared with pooling.py) ----------------------------------
def out_size(size, k, stride, dilation, pad):
    """Output length along one axis, as TensorFlow computes it: ``(size + pads - (dilated
    kernel) + stride) / stride``, rounded toward zero. 0 when the window just misses (a
    3-wide window over 2 cells); negative when it misses by a stride or more, which the
    public functions refuse (``check_out_sizes``), as TensorFlow does."""
    n = size + pad[0] + pad[1] - (k - 1) * dilation - 1 + stride
    return n // stride if n >= 0 else -(-n // stride)


def check_out_sizes(op, out, x, kernel, strides, dilations, padding):
    """Raises InvalidArgumentError, naming the op and the shapes, when an output size is
    negative (TensorFlow: "Computed output size would be negative")."""
    if min(out) < 0:
        raise InvalidArgumentError(
            f"{op}: the output size would be negative ({list(out)}): input shape "
            f"{tuple(x.shape)}, window {tuple(kernel)}, strides {tuple(strides)}, dilations "
            f"{tuple(dilations)}, padding {padding!r}")


def patches(xp, x, kh, kw, strides, dilations, pads, pad_value=0):
    """``x`` (..., N, H, W, C) -> (..., N, Ho, Wo, kh * kw, C): each output's receptive field."""
    (sh, sw), (dh, dw) = strides, dilations
    ho = out_size(x.shape[-3], kh, sh, dh, pads[0])
    wo = out_size(x.shape[-2], kw, sw, dw, pads[1])
    if ho <= 0 or wo <= 0:   # no window fits: an empty result (a slice would wrap around)
        return xp.zeros(x.shape[:-3] + (max(ho, 0), max(wo, 0), kh * kw, x.shape[-1]),
                        dtype=x.dtype)
    if any(pads[0]) or any(pads[1]):
        x = xp.pad(x, [(0, 0)] * (x.ndim - 3) + [tuple(pads[0]), tuple(pads[1]), (0, 0)],
                   constant_values=pad_value)
    cols = [x[..., i * dh:i * dh + (ho - 1) * sh + 1:sh, j * dw:j * dw + (wo - 1) * sw + 1:sw, :]
            for i in range(kh) for j in range(kw)]
    return xp.stack(cols, axis=-2)


def col2im(xp, cols, hw, kh, kw, strides, dilations, pads):
    """The adjoint of ``patches``: adds each (..., N, Ho, Wo, kh * kw, C) row back into
    an (..., N, H, W, C) array (overlapping fields add up)."""
    (sh, sw), (dh, dw) = strides, dilations
    ho, wo = cols.shape[-4], cols.shape[-3]
    h, w = hw
    if ho == 0 or wo == 0:
        return xp.zeros(cols.shape[:-4] + (h, w, cols.shape[-1]), dtype=cols.dtype)
    padded = xp.zeros(cols.shape[:-4] + (h + sum(pads[0]), w + sum(pads[1]), cols.shape[-1]),
                      dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            padded[..., i * dh:i * dh + (ho - 1) * sh + 1:sh,
                   j * dw:j * dw + (wo - 1) * sw + 1:sw, :] += cols[..., i * kw + j, :]
    return padded[..., pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w, :]


# ---- the three ops (the reference formulation; conv_kernels.py holds the fast ones) ------
def _count(axes):
    """How many rows ``axes`` (N, Ho, Wo) make: spelled out, since a reshape to -1 is
    ambiguous when another axis has size 0."""
    return math.prod(axes)


def _reference_conv(xp, x, w, strides, dilations, pads):
    kh, kw, c, co = w.shape[-4:]
    cols = patches(xp, x, kh, kw, strides, dilations, pads)
    lead = cols.shape[:-2]                                   # (..., N, Ho, Wo)
    rows = cols.reshape(cols.shape[:-5] + (_count(cols.shape[-5:-2]), kh * kw * c))
    y = xp.matmul(rows, w.reshape(w.shape[:-4] + (kh * kw * c, co)))
    return y.reshape(y.shape[:-2] + lead[-3:] + (co,))


def _reference_backprop_filter(xp, x, g, strides, dilations, pads, filter_hw):
    kh, kw = filter_hw
    c, co = x.shape[-1], g.shape[-1]
    cols = patches(xp, x, kh, kw, strides, dilations, pads)
    rows = cols.reshape(cols.shape[:-5] + (_count(cols.shape[-5:-2]), kh * kw * c))
    g_rows = g.reshape(g.shape[:-4] + (_count(g.shape[-4:-1]), co))
    dw = xp.matmul(xp.swapaxes(rows, -1, -2), g_rows)
    return dw.reshape(dw.shape[:-2] + (kh, kw, c, co))


def _reference_backprop_input(xp, g, w, strides, dilations, pads, input_hw):
    kh, kw, c, co = w.shape[-4:]
    rows = xp.matmul(g.reshape(g.shape[:-4] + (_count(g.shape[-4:-1]), co)),
                     xp.swapaxes(w.reshape(w.shape[:-4] + (kh * kw * c, co)), -1, -2))
    cols = rows.reshape(rows.shape[:-2] + g.shape[-4:-1] + (kh * kw, c))
    return col2im(xp, cols, input_hw, kh, kw, strides, dilations, pads)


def _n_batch(g, ans):
    return g._value.ndim - ans._value.ndim


def _fit(grad, x, g, ans):
    """Sums axes the input was broadcast over (its own leading axes are fewer)."""
    return sum_to(grad, x._value.shape, _n_batch(g, ans))


def _hw(t, first):
    return tuple(t._value.shape[first:first + 2])


CONV_PARAMS = {"strides": (1, 1), "dilations": (1, 1), "pads": ((0, 0), (0, 0))}
CONV_CASES = [
    (((2, 5, 4, 3), (3, 2, 3, 2)), CONV_PARAMS),
    (((1, 6, 5, 2), (3, 3, 2, 3)), {"strides": (2, 1), "dilations": (1, 1),
                                    "pads": ((1, 1), (1, 1))}),
    (((1, 7, 6, 1), (2, 2, 1, 2)), {"strides": (2, 2), "dilations": (2, 1),
                                    "pads": ((0, 1), (1, 0))}),
    (((0, 4, 4, 2), (2, 2, 2, 1)), CONV_PARAMS),          # an empty batch
    (((1, 2, 4, 1), (3, 2, 1, 2)), CONV_PARAMS),          # the filter overhangs: height 0
]


def _conv(x, w, **p):
    return CONV2D(x, w, **p)


CONV2D = Primitive(
    "Conv2D", lambda xp, x, w, **p: conv_kernels.conv(xp, x, w, **p),
    (lambda g, ans, x, w, **p: _fit(conv2d_backprop_input(g, w, _hw(x, -3), **p), x, g, ans),
     lambda g, ans, x, w, **p: _fit(conv2d_backprop_filter(x, g, _hw(w, -4), **p), w, g, ans)),
    saves="inputs", domain=(-2.0, 2.0), label="conv2d({0}, {1})", cases=CONV_CASES,
    doc="linear in each input: dx = Conv2DBackpropInput(g, w), dw = Conv2DBackpropFilter(x, g)")
CONV2D_BACKPROP_INPUT = Primitive(
    "Conv2DBackpropInput", lambda xp, g, w, **p: conv_kernels.backprop_input(xp, g, w, **p),
    (lambda h, ans, g, w, input_hw, **p: _fit(_conv(h, w, **p), g, h, ans),
     lambda h, ans, g, w, input_hw, **p: _fit(conv2d_backprop_filter(h, g, _hw(w, -4), **p),
                                              w, h, ans)),
    saves="inputs", domain=(-2.0, 2.0), label="conv2d_backprop_input({0}, {1})",
    cases=[(((2, 5, 3, 2), (3, 2, 3, 2)), {**CONV_PARAMS, "input_hw": (7, 4)}),
           (((1, 3, 5, 3), (3, 3, 2, 3)), {**CONV_CASES[1][1], "input_hw": (6, 5)})],
    doc="the adjoint of Conv2D in x: dg = Conv2D(h, w), dw = Conv2DBackpropFilter(h, g)")
CONV2D_BACKPROP_FILTER = Primitive(
    "Conv2DBackpropFilter",
    lambda xp, x, g, **p: conv_kernels.backprop_filter(xp, x, g, **p),
    (lambda k, ans, x, g, filter_hw, **p: _fit(conv2d_backprop_input(g, k, _hw(x, -3), **p),
                                               x, k, ans),
     lambda k, ans, x, g, filter_hw, **p: _fit(_conv(x, k, **p), g, k, ans)),
    saves="inputs", domain=(-2.0, 2.0), label="conv2d_backprop_filter({0}, {1})",
    cases=[(((2, 5, 4, 3), (2, 3, 3, 2)), {**CONV_PARAMS, "filter_hw": (3, 2)}),
           (((1, 6, 5, 2), (1, 3, 5, 3)), {**CONV_CASES[1][1], "filter_hw": (3, 3)})],
    doc="the adjoint of Conv2D in w: dx = Conv2DBackpropInput(g, k), dg = Conv2D(x, k)")


def conv2d_backprop_input(g, w, input_hw, strides, dilations, pads):
    """The gradient of Conv2D with respect to its input (a transposed convolution)."""
    return CONV2D_BACKPROP_INPUT(g, w, strides=strides, dilations=dilations, pads=pads,
                                 input_hw=tuple(input_hw))


def conv2d_backprop_filter(x, g, filter_hw, strides, dilations, pads):
    """The gradient of Conv2D with respect to its filters."""
    return CONV2D_BACKPROP_FILTER(x, g, strides=strides, dilations=dilations, pads=pads,
                                  filter_hw=tuple(filter_hw))


# ---- argument checking, TensorFlow's forms ----------------------------------------------
def spatial_pair(value, what, op):
    """An int, or a list of 1, 2 or 4 (``[1, h, w, 1]``) ints -> ``(h, w)`` (positive)."""
    values = [value] if isinstance(value, int) else [int(v) for v in value]
    if len(values) == 4:
        if values[0] != 1 or values[3] != 1:
            raise InvalidArgumentError(f"{op}: {what} on the batch and channel axes must be 1, "
                                       f"got {what}={values}")
        values = values[1:3]
    if len(values) not in (1, 2):
        raise InvalidArgumentError(f"{op}: {what} must be an int or a list of 1, 2 or 4 ints, "
                                   f"got {what}={value!r}")
    pair = (values[0], values[0]) if len(values) == 1 else tuple(values)
    if min(pair) < 1:
        raise InvalidArgumentError(f"{op}: {what} must be positive, got {what}={value!r}")
    return pair


def resolve_padding(padding, hw, kernel, strides, dilations, op):
    """'SAME', 'VALID' or explicit ``[[0, 0], [t, b], [l, r], [0, 0]]`` -> ((t, b), (l, r))."""
    if isinstance(padding, str):
        if padding == "VALID":
            return ((0, 0), (0, 0))
        if padding == "SAME":
            pads = []
            for size, k, s, d in zip(hw, kernel, strides, dilations):
                total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
    elif isinstance(padding, (list, tuple)) and len(padding) == 4:
        pairs = [tuple(int(v) for v in p) for p in padding]
        if pairs[0] == pairs[3] == (0, 0) and all(len(p) == 2 and min(p) >= 0 for p in pairs):
            return (pairs[1], pairs[2])
    raise InvalidArgumentError(f"{op}: padding must be 'SAME', 'VALID' or a list of 4 "
                               f"non-negative [before, after] pairs with zeros for the batch "
                               f"and channel axes, got padding={padding!r}")


def _check_nhwc(data_format, op):
    if data_format not in ("NHWC", None):
        raise InvalidArgumentError(f"{op}: only data_format='NHWC' is supported (as "
                                   f"TensorFlow on CPU), got {data_format!r}")


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
           name=None):
    """2-D convolution (cross-correlation, as every deep-learning library), as ``tf.nn.conv2d``.

    Args:
        input: ``[batch, height, width, in_channels]`` (NHWC), a float tensor.
        filters: ``[filter_height, filter_width, in_channels, out_channels]`` (HWIO).
        strides: an int or a list of 1, 2 or 4 ints (``[1, sh, sw, 1]``).
        padding: ``'SAME'`` (output ``ceil(in / stride)``), ``'VALID'`` (no
            padding) or explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.
            A filter that overhangs the input by less than a stride gives an empty
            output (size 0), one that overhangs more is an error, as in TensorFlow.
        data_format: only ``'NHWC'``.
        dilations: like ``strides``; spacing between filter taps (default 1).

    Returns:
        ``[batch, out_height, out_width, out_channels]``.

    >>> x = ad.ones([1, 4, 4, 1]); w = ad.ones([3, 3, 1, 2])
    >>> ad.nn.conv2d(x, w, strides=1, padding="VALID").shape
    TensorShape([1, 2, 2, 2])
    """
    op = "Conv2D"
    _check_nhwc(data_format, op)
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    if x.ndim != 4 or w.ndim != 4:
        raise InvalidArgumentError(f"{op}: input must be 4-D [batch, height, width, channels] "
                                   f"and filters 4-D [height, width, in, out]; got input shape "
                                   f"{tuple(x.shape)} and filters shape {tuple(w.shape)}")
    if x.shape[-1] != w.shape[2]:
        raise InvalidArgumentError(f"{op}: input has {x.shape[-1]} channels but the filters "
                                   f"expect {w.shape[2]} (input shape {tuple(x.shape)}, "
                                   f"filters shape {tuple(w.shape)})")
    if not (x.dtype.is_floating and w.dtype.is_floating):
        raise InvalidArgumentError(f"{op}: input and filters must be floating, got "
                                   f"{x.dtype.name} and {w.dtype.name}")
    if w.shape[2] == 0:
        raise InvalidArgumentError(f"{op}: the filters' depth (in_channels) must be positive, "
                                   f"got filters shape {tuple(w.shape)}")
    strides = spatial_pair(strides, "strides", op)
    dilations = spatial_pair(1 if dilations is None else dilations, "dilations", op)
    kernel = tuple(w.shape[:2])
    pads = resolve_padding(padding, tuple(x.shape[1:3]), kernel, strides, dilations, op)
    check_out_sizes(op, [out_size(n, k, s, d, p) for n, k, s, d, p in
                         zip(x.shape[1:3], kernel, strides, dilations, pads)],
                    x, kernel, strides, dilations, padding)
    return CONV2D(x, w, strides=strides, dilations=dilations, pads=pads)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
           name=None):
    """1-D convolution, as ``tf.nn.conv1d``: a conv2d over a height-1 image.

    Args:
        input: ``[batch, width, in_channels]`` (NWC).
        filters: ``[filter_width, in_channels, out_channels]``.
        stride: an int (or a list of 1 or 3 ints, ``[1, s, 1]``).
        padding: ``'SAME'`` or ``'VALID'``.
        dilations: an int (or list), spacing between filter taps.

    Returns:
        ``[batch, out_width, out_channels]``.

    >>> ad.nn.conv1d(ad.ones([2, 9, 3]), ad.ones([3, 3, 5]), stride=2, padding="SAME").shape
    TensorShape([2, 5, 5])
    """
    if data_format not in ("NWC", None):
        raise InvalidArgumentError(f"Conv1D: only data_format='NWC' is supported, "
                                   f"got {data_format!r}")
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    if x.ndim != 3 or w.ndim != 3:
        raise InvalidArgumentError(f"Conv1D: input must be 3-D [batch, width, channels] and "
                                   f"filters 3-D [width, in, out]; got input shape "
                                   f"{tuple(x.shape)} and filters shape {tuple(w.shape)}")

    def widen(v, what):
        values = [v] if isinstance(v, int) else [int(a) for a in v]
        if len(values) == 3:
            values = values[1:2] if values[0] == values[2] == 1 else values
        if len(values) != 1:
            raise InvalidArgumentError(f"Conv1D: {what} must be an int or a list of 1 or 3 "
                                       f"ints, got {v!r}")
        return [1, values[0]]

    if not isinstance(padding, str):   # TypeError, as TensorFlow ("Expected string")
        raise TypeError(f"Conv1D: padding must be 'SAME' or 'VALID', got {padding!r}")
    y = conv2d(expand_dims(x, -3), expand_dims(w, 0), strides=widen(stride, "stride"),
               padding=padding, dilations=widen(1 if dilations is None else dilations,
                                                "dilations"))
    return squeeze(y, [-3])


from . import conv_kernels  # noqa: E402
from ..broadcast import sum_to  # noqa: E402
from .shape import expand_dims, squeeze  # noqa: E402
