"""How the three convolution ops compute on NumPy: the formulations, and which one runs.

``conv.py`` declares the ops (``Conv2D``, ``Conv2DBackpropInput``,
``Conv2DBackpropFilter``) and their derivatives; this module owns only their
arithmetic. Every formulation computes the same sums in a different order
of memory traffic, so which one is fastest depends on the shape:

- ``reference``: ``conv.patches`` stacks ``kh * kw`` strided slices into an
  im2col matrix and makes one matmul; ``col2im`` adds them back. Written
  with slicing, ``pad``, ``stack`` and ``matmul`` only, so it runs on every
  backend (NumPy, CuPy, the strict test backend) and any extra leading axes.
- ``im2col``: the same matrix read through ``sliding_window_view``, a view
  of the padded input with strides and dilations as steps, copied once by
  the reshape in the order the HWIO filters need (no list of slices, no
  stack), then one matmul.
- ``taps``: stride 1 only. On the padded input flattened to rows
  ``(N * Hp * Wp, C)``, the filter tap ``(i, j)`` reads the rows shifted by
  ``i * dh * Wp + j * dw``: a contiguous slice, no copy at all. The output
  is ``kh * kw`` matmuls of those slices with the tap's ``(C, Co)`` matrix,
  summed, computed on the padded grid and cut to ``(Ho, Wo)`` (the rows in
  between are junk nobody reads). The filter gradient is one ``(C, R) @
  (R, Co)`` matmul per tap against the cotangent laid out on that grid; the
  input gradient adds ``g @ w[i, j].T`` into the shifted rows. Those two
  also multiply the zero cotangents of the junk rows, so they are used only
  when the other operand is finite (``0 * inf`` would be NaN where the true
  gradient has nothing); otherwise im2col runs.

The filter gradient's product ``rows.T @ g`` has a long inner dimension
and a small result, which OpenBLAS runs at half speed; it is summed over
blocks of 512 rows instead (``_rows_t_matmul``). A compiled training step
hands the forward's im2col rows to the filter gradient of the same input
(``conv(..., keep_rows=True)``, ``backprop_filter(..., rows=...)``,
``compiler/conv_rows.py``) instead of building them twice.

    >>> from autodiff.ops.conv_kernels import choose
    >>> choose("Conv2DBackpropInput", (32, 16, 16, 16), (3, 3, 16, 32), (1, 1), (1, 1),
    ...        ((1, 1), (1, 1)))
    'taps'

``choose`` picks by a cost model (elements copied and added, checked
against CPU-time measurements of every form), and ``describe`` says what each op of a convolution runs,
which the benchmark prints. The fast forms run on NumPy arrays of rank 4;
everything else (other backends, a Jacobian's extra leading axes, an empty
output) takes the reference. Tests compare every form with the reference
and with TensorFlow (``tests/autodiff/test_conv_kernels.py``,
``tests/conformance/test_conf_conv_kernels.py``).
"""

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["FORMS", "choose", "describe", "conv", "backprop_input", "backprop_filter"]

FORMS = ("reference", "im2col", "taps")
OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")


def _sizes(hw, kernel, strides, dilations, pads):
    return tuple(out_size(n, k, s, d, p) for n, k, s, d, p in
                 zip(hw, kernel, strides, dilations, pads))


def choose(op, x_shape, w_shape, strides, dilations, pads):
    """The formulation ``op`` runs for an NHWC input and HWIO filters of these shapes.

    With stride 1, taps reads the input in place but sums ``kh * kw`` partial
    products of ``Co`` values per padded position, where im2col copies ``kh *
    kw * C`` values per output position (the matmuls' arithmetic is the same):
    the forward and the filter gradient take taps when ``Co * Hp * Wp < C *
    Ho * Wo``. The input gradient's partial products have ``C`` values, and
    taps adds them into contiguous rows where im2col adds strided slices, so
    it takes taps whenever the stride is 1. Measured in CPU time on NumPy
    with OpenBLAS, one thread (``benchmarks/README.md``).

    >>> from autodiff.ops.conv_kernels import choose
    >>> choose("Conv2D", (32, 16, 16, 3), (3, 3, 3, 16), (1, 1), (1, 1), ((1, 1), (1, 1)))
    'im2col'
    """
    if len(x_shape) != 4 or len(w_shape) != 4:
        return "reference"
    kh, kw, c, co = w_shape
    ho, wo = _sizes(x_shape[1:3], (kh, kw), strides, dilations, pads)
    if min(ho, wo, x_shape[0], c, co) <= 0:
        return "reference"
    if kh * kw == 1 or tuple(strides) != (1, 1):
        return "im2col"
    if op == "Conv2DBackpropInput":
        return "taps"
    grid = (x_shape[1] + sum(pads[0])) * (x_shape[2] + sum(pads[1]))
    return "taps" if co * grid < c * ho * wo else "im2col"


def describe(x_shape, w_shape, strides, dilations, pads):
    """{op: form} for the three ops of one convolution: what the benchmark prints."""
    return {op: choose(op, x_shape, w_shape, strides, dilations, pads) for op in OPS}


def _numpy_form(xp, op, x_shape, w_shape, strides, dilations, pads, form):
    if xp is not np:
        return "reference"
    return form or choose(op, x_shape, w_shape, strides, dilations, pads)


# ---- shared pieces ----------------------------------------------------------------------
def _padded(x, pads):
    """``x`` with zero rows and columns around it: a fresh C-contiguous array (or x)."""
    (t, b), (left, r) = pads
    if not (t or b or left or r) and x.flags.c_contiguous:
        return x
    n, h, w, c = x.shape
    out = np.zeros((n, h + t + b, w + left + r, c), x.dtype)
    out[:, t:t + h, left:left + w] = x
    return out


def _window_view(x, kernel, strides, dilations, pads, out_hw, writeable=False):
    """(N, Ho, Wo, kh, kw, C): each output's receptive field, a view of the padded x
    (``writeable``: of x itself, which then must need no padding)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    view = sliding_window_view(_padded(x, pads), span, axis=(1, 2),   # (N, H', W', C, ., .)
                                writeable=writeable)
    view = view[:, :(out_hw[0] - 1) * sh + 1:sh, :(out_hw[1] - 1) * sw + 1:sw, :, ::dh, ::dw]
    return view.transpose(0, 1, 2, 4, 5, 3)


def _rows(x, kernel, strides, dilations, pads, out_hw):
    """The im2col matrix (N * Ho * Wo, kh * kw * C), HWC order as the filters: one copy."""
    view = _window_view(x, kernel, strides, dilations, pads, out_hw)
    return view.reshape(math.prod(view.shape[:3]), -1)


def _offsets(kernel, dilations, wp):
    (kh, kw), (dh, dw) = kernel, dilations
    return [(i, j, i * dh * wp + j * dw) for i in range(kh) for j in range(kw)]


_BLOCK = 512


def _rows_t_matmul(a, b):
    """``a.T @ b`` for tall ``a`` (R, K) and ``b`` (R, M): the sum over blocks of 512 rows.

    OpenBLAS's single-threaded sgemm runs such a product (a long inner dimension,
    a small result) at half its speed for the same work with R up to 512: measured
    5.2 against 3.0 ms for the filter gradient's (144, 8192) @ (8192, 32). One
    batched matmul over the blocks and a sum over them costs the latter.
    """
    k = a.shape[0] // _BLOCK
    if k < 2:
        return a.T @ b
    cut = k * _BLOCK
    blocks = np.matmul(a[:cut].reshape(k, _BLOCK, -1).transpose(0, 2, 1),
                       b[:cut].reshape(k, _BLOCK, -1))
    out = blocks.sum(axis=0)
    if cut < a.shape[0]:
        out += a[cut:].T @ b[cut:]
    return out


def _on_grid(g, grid_hw):
    """The cotangent (N, Ho, Wo, Co) written into zeros (N, Hp, Wp, Co), flattened to rows."""
    n, ho, wo, co = g.shape
    out = np.zeros((n,) + tuple(grid_hw) + (co,), g.dtype)
    out[:, :ho, :wo] = g
    return out.reshape(-1, co)


# ---- Conv2D -------------------------------------------------------------------------------
def conv(xp, x, w, strides, dilations, pads, form=None, keep_rows=False):
    """Conv2D's forward: ``x`` (N, H, W, C), ``w`` (kh, kw, C, Co) -> (N, Ho, Wo, Co).

    ``keep_rows=True`` returns ``(y, rows)``: the im2col matrix this form built, for
    ``backprop_filter(..., rows=rows)`` of the same ``x`` (a compiled training step
    keeps it, ``compiler/conv_rows.py``), or None when another form ran or the
    matrix is over ``KEEP_ROWS_BYTES``.
    """
    form = _numpy_form(xp, "Conv2D", x.shape, w.shape, strides, dilations, pads, form)
    rows = None
    if form == "reference":
        y = _reference_conv(xp, x, w, strides, dilations, pads)
    else:
        y, rows = _fast_conv(x, w, strides, dilations, pads, form)
    if not keep_rows:
        return y
    return y, (rows if rows is not None and rows.nbytes <= KEEP_ROWS_BYTES else None)


KEEP_ROWS_BYTES = 64 << 20   # above this, the filter gradient builds its rows again


def _fast_conv(x, w, strides, dilations, pads, form):
    kh, kw, c, co = w.shape
    out_hw = _sizes(x.shape[1:3], (kh, kw), strides, dilations, pads)
    if form == "im2col":
        rows = _rows(x, (kh, kw), strides, dilations, pads, out_hw)
        return (rows @ w.reshape(-1, co)).reshape(x.shape[0], out_hw[0], out_hw[1], co), rows
    padded = _padded(x, pads)
    n, hp, wp, _ = padded.shape
    rows = padded.reshape(-1, c)
    taps = _offsets((kh, kw), dilations, wp)
    span = rows.shape[0] - taps[-1][2]
    full = np.empty((rows.shape[0], co), np.result_type(x, w))
    np.matmul(rows[:span], w[0, 0], out=full[:span])
    part = np.empty((span, co), full.dtype)
    for i, j, offset in taps[1:]:
        np.matmul(rows[offset:offset + span], w[i, j], out=part)
        full[:span] += part
    return full.reshape(n, hp, wp, co)[:, :out_hw[0], :out_hw[1]], None


# ---- Conv2DBackpropFilter ----------------------------------------------------------------
def backprop_filter(xp, x, g, strides, dilations, pads, filter_hw, form=None, rows=None):
    """Conv2DBackpropFilter's forward: d<g, conv(x, w)>/dw, shape (kh, kw, C, Co).

    ``rows``: the im2col matrix of this ``x`` and geometry that ``conv(...,
    keep_rows=True)`` returned (None: build it when the im2col form runs).
    """
    w_shape = tuple(filter_hw) + (x.shape[-1], g.shape[-1])
    if rows is not None and g.ndim == 4:   # a g with batch axes (a Jacobian's) runs the reference
        return _rows_t_matmul(rows, g.reshape(-1, w_shape[-1])).reshape(w_shape)
    form = (_numpy_form(xp, "Conv2DBackpropFilter", x.shape, w_shape, strides, dilations,
                        pads, form) if g.ndim == 4 else "reference")
    if form == "reference":
        return _reference_backprop_filter(xp, x, g, strides, dilations, pads, filter_hw)
    kh, kw, c, co = w_shape
    if form == "taps" and not np.isfinite(x).all():
        form = "im2col"   # the junk rows' zero cotangents would meet x's inf: NaN
    if form == "im2col":
        rows = _rows(x, (kh, kw), strides, dilations, pads, g.shape[1:3])
        return _rows_t_matmul(rows, g.reshape(-1, co)).reshape(w_shape)
    padded = _padded(x, pads)
    rows = padded.reshape(-1, c)
    taps = _offsets((kh, kw), dilations, padded.shape[2])
    span = rows.shape[0] - taps[-1][2]
    g_rows = _on_grid(g, padded.shape[1:3])[:span]
    dw = np.empty(w_shape, np.result_type(x, g))
    for i, j, offset in taps:
        dw[i, j] = _rows_t_matmul(rows[offset:offset + span], g_rows)
    return dw


# ---- Conv2DBackpropInput -----------------------------------------------------------------
def backprop_input(xp, g, w, strides, dilations, pads, input_hw, form=None):
    """Conv2DBackpropInput's forward: d<g, conv(x, w)>/dx, shape (N, H, W, C)."""
    x_shape = (g.shape[0],) + tuple(input_hw) + (w.shape[2],)
    form = (_numpy_form(xp, "Conv2DBackpropInput", x_shape, w.shape, strides, dilations,
                        pads, form) if g.ndim == 4 else "reference")
    if form == "reference":
        return _reference_backprop_input(xp, g, w, strides, dilations, pads, input_hw)
    kh, kw, c, co = w.shape
    if form == "taps" and not np.isfinite(w).all():
        form = "im2col"   # the junk rows' zero cotangents would meet w's inf: NaN
    h, wd = input_hw
    (t, b), (left, r) = pads
    grid = (h + t + b, wd + left + r)
    if form == "im2col":
        cols = (g.reshape(-1, co) @ w.reshape(-1, co).T).reshape(g.shape[:3] + (kh, kw, c))
        padded = np.zeros((g.shape[0],) + grid + (c,), cols.dtype)
        target = _window_view(padded, (kh, kw), strides, dilations, ((0, 0), (0, 0)),
                              g.shape[1:3], writeable=True)
        for i in range(kh):            # each tap's slice of the windows is a plain strided
            for j in range(kw):        # view of padded, so += writes where it belongs
                target_ij = target[:, :, :, i, j]
                np.add(target_ij, cols[:, :, :, i, j], out=target_ij)
        return padded[:, t:t + h, left:left + wd]
    taps = _offsets((kh, kw), dilations, grid[1])
    length = g.shape[0] * grid[0] * grid[1]
    span = length - taps[-1][2]
    g_rows = _on_grid(g, grid)[:span]
    padded = np.zeros((length, c), np.result_type(g, w))
    part = np.empty((span, c), padded.dtype)
    for i, j, offset in taps:
        np.matmul(g_rows, w[i, j].T, out=part)
        padded[offset:offset + span] += part
    return padded.reshape((g.shape[0],) + grid + (c,))[:, t:t + h, left:left + wd]


from .conv import (_reference_backprop_filter, _reference_backprop_input,  # noqa: E402
                   _reference_conv, out_size)
