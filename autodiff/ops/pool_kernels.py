"""How the pooling ops compute on NumPy when their windows tile the input: blocks, no copies.

``pooling.py`` declares ``MaxPool``, ``MaxPoolGrad``, ``MaxPoolGradGrad``,
``AvgPool`` and ``AvgPoolGrad`` with a reference forward that cuts every
window out with ``conv.patches`` (a copy of the input per window cell) and
adds gradients back with ``col2im``. In the common case, a 2x2 pool with
stride 2, the windows are disjoint blocks: with stride == window, dilation
1 and no padding, ``x[:, :Ho*kh, :Wo*kw]`` reshaped to ``(N, Ho, kh, Wo,
kw, C)`` is a view whose axes 2 and 4 run over each window. Then

- the forward is one reduction over those axes (``max`` or ``sum``);
- MaxPool's gradient walks the ``kh * kw`` cells of every window at once
  (one vectorised step per cell, never per window), marking where the
  cell equals the maximum and no earlier cell did: the first maximum in
  row-major order, TensorFlow's tie rule, as ``argmax`` in the reference;
  ``g`` times that mark is written into each cell (a NaN or inf in ``g``
  instead is copied into zeros where it is routed, as the reference's
  ``where``);
- AvgPool's gradient writes ``g / (kh * kw)`` into every cell by broadcasting.

    >>> from autodiff.ops.pool_kernels import tiles
    >>> tiles((2, 8, 8, 3), (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
    True

A maximum that is NaN (where the reference's argmax picks the first NaN)
and every other case (overlapping windows, padding, other backends, a
Jacobian's extra leading axes) take the reference formulation. The tests
compare both with each other and with TensorFlow.
"""

import numpy as np

__all__ = ["tiles", "max_pool", "max_pool_grad", "max_pool_grad_grad", "avg_pool",
           "avg_pool_grad"]


def tiles(x_shape, ksize, strides, pads, dilations):
    """Whether the windows are disjoint blocks that start at the origin (see above)."""
    return (len(x_shape) == 4 and tuple(ksize) == tuple(strides) and tuple(dilations) == (1, 1)
            and not any(pads[0]) and not any(pads[1])
            and x_shape[1] >= ksize[0] and x_shape[2] >= ksize[1] and min(x_shape) > 0)


def _blocks(x, ksize):
    """(N, Ho, kh, Wo, kw, C): a view of x (splitting an axis never copies)."""
    (kh, kw), (n, h, w, c) = ksize, x.shape
    ho, wo = h // kh, w // kw
    return x[:, :ho * kh, :wo * kw].reshape(n, ho, kh, wo, kw, c)


def _cells(blocks):
    """Each window cell's values, (N, Ho, Wo, C) views, in row-major order."""
    return [blocks[:, :, i, :, j] for i in range(blocks.shape[2]) for j in range(blocks.shape[4])]


def _maximum(cells):
    """The elementwise maximum of the cells, NaN-propagating as ``max``: one ufunc call per
    cell over the output's size (faster than ``max`` over the view's two short axes)."""
    top = cells[0].copy()
    for cell in cells[1:]:
        np.maximum(top, cell, out=top)
    return top


def max_pool(x, ksize):
    """The maximum of each block: (N, Ho, Wo, C)."""
    return _maximum(_cells(_blocks(x, ksize)))


def _first_maxima(x, ksize):
    """One boolean (N, Ho, Wo, C) per window cell, row-major: True where that cell is its
    window's first maximum; None when a maximum is NaN (the reference handles that)."""
    cells = _cells(_blocks(x, ksize))
    top = _maximum(cells)
    if top.dtype.kind == "f" and np.isnan(top).any():
        return None
    free = np.ones(top.shape, bool)
    hits = []
    for cell in cells:
        hit = cell == top
        hit &= free
        free ^= hit              # hit lies inside free: this clears it there
        hits.append(hit)
    return hits


def max_pool_grad(x, g, ksize):
    """``g`` (N, Ho, Wo, C) routed to each block's first maximum, x's shape; None: NaN.

    With a finite ``g`` each cell of the result is ``g * hit``, written once (no
    zeros first, no masked copy: 3.5x faster at W8's 32x16x16x32); a zero there
    may carry the sign of ``g``. A NaN or inf in ``g`` must not leak into the
    cells it is not routed to (``inf * 0``), so then it is copied where it hits.
    """
    cells = _first_maxima(x, ksize)
    if cells is None:
        return None
    (kh, kw), (h, w) = ksize, x.shape[1:3]
    if np.isfinite(g).all():
        dx = (np.empty if h % kh == 0 and w % kw == 0 else np.zeros)(x.shape, g.dtype)
        for cell, hit in zip(_cells(_blocks(dx, ksize)), cells):
            np.multiply(g, hit, out=cell)
        return dx
    dx = np.zeros(x.shape, g.dtype)
    for cell, hit in zip(_cells(_blocks(dx, ksize)), cells):
        np.copyto(cell, g, where=hit)
    return dx


def max_pool_grad_grad(x, h, ksize):
    """``h`` (x's shape) read at each block's first maximum: (N, Ho, Wo, C); None: NaN."""
    cells = _first_maxima(x, ksize)
    if cells is None:
        return None
    out = np.zeros(cells[0].shape, h.dtype)
    for cell, hit in zip(_cells(_blocks(h, ksize)), cells):
        np.copyto(out, cell, where=hit)
    return out


def avg_pool(x, ksize):
    """The mean of each block (every window is whole: it divides by kh * kw)."""
    total = _blocks(x, ksize).sum(axis=(2, 4))
    return (total / np.asarray(ksize[0] * ksize[1], x.dtype)).astype(x.dtype, copy=False)


def avg_pool_grad(g, ksize, input_hw):
    """``g / (kh * kw)`` spread over each block; zeros in rows and columns no block reads."""
    n, c = g.shape[0], g.shape[-1]
    dx = np.zeros((n,) + tuple(input_hw) + (c,), g.dtype)
    share = g / np.asarray(ksize[0] * ksize[1], g.dtype)
    _blocks(dx, ksize)[...] = share[:, :, None, :, None, :]
    return dx
