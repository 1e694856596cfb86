"""Jacobian and Hessian images: matrices of derivatives as zero-centred pictures.

Owns three views, each returning a matplotlib Figure (the static form):

- ``jacobian_image(j)``: one Jacobian, flattened to (outputs, inputs);
- ``batch_jacobian_patches(j)``: a full ``(batch, out, batch, in)`` Jacobian
  as a batch-by-batch grid of out-by-in patches. When each example's
  output depends only on its own input the off-diagonal patches are zero,
  and ``tape.batch_jacobian`` (which keeps only the diagonal patches) is
  right. When they are not zero (BatchNormalization in training mode mixes
  the examples) the image says so and a warning is raised;
- ``hessian_image(blocks)``: a Hessian over several variables, flattened into
  one matrix with its blocks ``H[i][j]`` separated and labelled.

Colours: a diverging map centred on zero (vmin = -vmax), so white is an exact
zero and the sign reads at a glance. The image arrays are the engine's
numbers, converted to NumPy at this boundary (so a GPU tape works too).
"""

import math
import warnings

import numpy as np

from autodiff import AutodiffWarning, Tensor
from autodiff.backend import to_numpy

__all__ = ["jacobian_image", "batch_jacobian_patches", "hessian_image", "flatten_jacobian",
           "off_diagonal_blocks"]

CMAP = "RdBu_r"             # red positive, blue negative; readable with red-green deficiencies
SEPARATOR = "#333333"
WARNING_COLOUR = "#D55E00"  # Okabe-Ito vermillion


def _array(value):
    """A NumPy array for a Tensor, a backend array or anything array-like."""
    if value is None:
        raise ValueError("got None instead of a Jacobian (the target does not depend on the "
                         "source; ask for unconnected_gradients='zero')")
    if isinstance(value, Tensor):
        return np.asarray(value.numpy())
    return np.asarray(to_numpy(value))


def flatten_jacobian(j, n_out_dims=None):
    """Reshapes an ``out_shape + in_shape`` Jacobian into a (n_out, n_in) matrix.

    Args:
        j: the Jacobian (Tensor or array).
        n_out_dims: how many leading axes belong to the output. By default:
            0-D -> 1x1, 1-D -> one row (a gradient), 2-D as it is, and an even
            number of axes is split in half (``tape.jacobian`` of a target
            shaped like its source). An odd rank above 2 needs it.

    Returns:
        A 2-D NumPy array.

    >>> from widgets.plots.jacobian_view import flatten_jacobian
    >>> flatten_jacobian(np.zeros((7, 10, 5, 10))).shape
    (70, 50)
    """
    j = _array(j)
    if n_out_dims is None:
        if j.ndim <= 1:
            n_out_dims = 0
        elif j.ndim % 2 == 0:
            n_out_dims = j.ndim // 2
        else:
            raise ValueError(f"jacobian_image: cannot tell the output axes from the input axes of a "
                             f"Jacobian of shape {j.shape}; pass n_out_dims")
    n_out_dims = int(n_out_dims)
    if not 0 <= n_out_dims <= j.ndim:
        raise ValueError(f"jacobian_image: n_out_dims={n_out_dims} for a Jacobian of shape {j.shape}")
    rows = math.prod(j.shape[:n_out_dims])
    return j.reshape(rows, math.prod(j.shape[n_out_dims:]))


def _new_axes(ax, shape):
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure
    rows, cols = shape
    # Roughly square cells, within a readable size.
    width = min(10.0, max(4.5, 1.5 + 0.25 * cols))
    height = min(9.0, max(3.5, 1.0 + 0.25 * rows))
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _limit(m):
    finite = np.abs(m[np.isfinite(m)])
    lim = float(finite.max()) if finite.size else 0.0
    return lim if lim > 0 else 1.0


def _show(ax, m, title, colorbar=True):
    """The zero-centred diverging image every view here draws."""
    lim = _limit(m)
    image = ax.imshow(m, cmap=CMAP, vmin=-lim, vmax=lim, interpolation="nearest",
                      aspect="equal" if max(m.shape) <= 4 * min(m.shape) else "auto")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.85)
    if title:
        ax.set_title(title)
    return image


def jacobian_image(j, ax=None, title=None, n_out_dims=None):
    """A zero-centred diverging image of a Jacobian (or any matrix).

    Args:
        j: the Jacobian, shaped ``out_shape + in_shape`` (a Tensor or array);
            more than two axes are flattened (see ``flatten_jacobian``).
        ax: a matplotlib Axes to draw into (default: a new Figure).
        title: the axes title (default: names the shape).
        n_out_dims: how many leading axes are the output's.

    Returns:
        The Figure; ``fig.axes[0].images[0].get_array()`` is the flattened
        Jacobian and its colour limits are ``(-m, m)`` with m the largest
        magnitude.

    >>> import widgets
    >>> ad.random.set_seed(0)
    >>> layer, x = ad.keras.layers.Dense(10), ad.random.normal([7, 5])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = layer(x)                          # x: (7, 5), y: (7, 10)
    >>> fig = widgets.jacobian_image(tape.jacobian(y, x))
    >>> fig.axes[0].images[0].get_array().shape     # a 70 x 35 image
    (70, 35)
    """
    raw = _array(j)
    m = flatten_jacobian(raw, n_out_dims)
    fig, ax = _new_axes(ax, m.shape)
    if title is None:
        title = f"Jacobian {raw.shape}" if raw.ndim != 2 else f"Jacobian {m.shape[0]} x {m.shape[1]}"
    _show(ax, m, title)
    _integer_ticks(ax)
    ax.set_xlabel("input (flattened)")
    ax.set_ylabel("output (flattened)")
    return fig


def _integer_ticks(ax):
    """Rows and columns are indices: tick them 0, 1, 2..., never 0.0, 2.5."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


# ---- batch Jacobians ------------------------------------------------------

def _patches(j_full):
    """``(batch, out..., batch, in...)`` -> ``(batch, n_out, batch, n_in)``."""
    j = _array(j_full)
    if j.ndim < 2 or j.ndim % 2:
        raise ValueError(f"batch_jacobian_patches: expected a (batch, out..., batch, in...) Jacobian "
                         f"from tape.jacobian, got shape {j.shape}")
    half = j.ndim // 2
    batch = j.shape[0]
    if j.shape[half] != batch:
        raise ValueError(f"batch_jacobian_patches: the batch axes differ ({j.shape[0]} and "
                         f"{j.shape[half]}) in a Jacobian of shape {j.shape}")
    return j.reshape(batch, math.prod(j.shape[1:half]), batch, math.prod(j.shape[half + 1:]))


def off_diagonal_blocks(j_full, atol=None):
    """The ``(b, c)`` pairs, b != c, whose patch of a batch Jacobian is not zero.

    Args:
        j_full: a ``(batch, out..., batch, in...)`` Jacobian.
        atol: what counts as zero (default: 1e-6 of the largest magnitude).

    Returns:
        A list of ``(b, c)``: output example b depends on input example c.
        Empty means block-diagonal: ``batch_jacobian`` is then exact.
    """
    p = _patches(j_full)
    if atol is None:
        atol = 1e-6 * _limit(p.reshape(p.shape[0] * p.shape[1], -1))
    size = np.abs(np.nan_to_num(p, nan=np.inf)).max(axis=(1, 3), initial=0.0)
    return [(b, c) for b, c in zip(*np.nonzero(size > atol)) if b != c]


def batch_jacobian_patches(j_full, ax=None, title=None, atol=None):
    """The "patches" view of a full batch Jacobian: a grid of batch x batch blocks.

    Patch ``(b, c)`` is d output[b] / d input[c] (out x in). For a function
    that treats examples independently only the diagonal patches are
    non-zero; they are exactly what ``tape.batch_jacobian`` returns.

    Args:
        j_full: ``tape.jacobian(y, x)`` with y ``(batch, out...)`` and x
            ``(batch, in...)``, i.e. shaped ``(batch, out..., batch, in...)``.
        ax: a matplotlib Axes to draw into (default: a new Figure).
        title: the axes title.
        atol: what counts as zero off the diagonal (see ``off_diagonal_blocks``).

    Returns:
        The Figure. ``fig.axes[0].images[0].get_array()`` is the Jacobian as a
        ``(batch*out, batch*in)`` matrix. If an off-diagonal patch is not zero,
        those patches are outlined, the image carries the warning "not
        block-diagonal: batch_jacobian would be wrong", and an
        ``ad.AutodiffWarning`` is raised.

    >>> import warnings, widgets
    >>> ad.random.set_seed(0)
    >>> bn, x = ad.keras.layers.BatchNormalization(), ad.random.normal([4, 3])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = bn(x, training=True)                # mixes the examples
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fig = widgets.batch_jacobian_patches(tape.jacobian(y, x))
    >>> caught[0].category.__name__                 # it warns, and says so on the image
    'AutodiffWarning'
    """
    from matplotlib.patches import Rectangle

    p = _patches(j_full)
    batch, n_out, _, n_in = p.shape
    m = p.reshape(batch * n_out, batch * n_in)
    fig, ax = _new_axes(ax, m.shape)
    _show(ax, m, title or f"Jacobian patches: {batch} x {batch} blocks of {n_out} x {n_in}")
    for k in range(1, batch):
        ax.axhline(k * n_out - 0.5, color=SEPARATOR, linewidth=1.0)
        ax.axvline(k * n_in - 0.5, color=SEPARATOR, linewidth=1.0)
    ax.set_xticks([c * n_in + (n_in - 1) / 2 for c in range(batch)], [str(c) for c in range(batch)])
    ax.set_yticks([b * n_out + (n_out - 1) / 2 for b in range(batch)], [str(b) for b in range(batch)])
    ax.set_xlabel("input example (each patch: inputs)")
    ax.set_ylabel("output example (each patch: outputs)")
    coupled = off_diagonal_blocks(j_full, atol)
    if coupled:
        for b, c in coupled:
            ax.add_patch(Rectangle((c * n_in - 0.5, b * n_out - 0.5), n_in, n_out, fill=False,
                                   edgecolor=WARNING_COLOUR, linewidth=2.0, linestyle="--"))
        message = "not block-diagonal: batch_jacobian would be wrong"
        # The warning is the title's second line, boxed: it covers no patch and is never cut.
        ax.set_title(f"{ax.get_title()}\n⚠ " + message.replace(": ", ":\n"), pad=12,
                     fontsize=10, fontweight="bold", color="black",
                     bbox={"boxstyle": "round,pad=0.3", "facecolor": "#F0E442",
                           "edgecolor": WARNING_COLOUR, "linewidth": 2})
        warnings.warn(f"{message}: output example {coupled[0][0]} depends on input example "
                      f"{coupled[0][1]} ({len(coupled)} off-diagonal patches are non-zero); "
                      f"use tape.jacobian", AutodiffWarning, stacklevel=2)
    return fig


# ---- Hessians ----------------------------------------------------------------

def _hessian_blocks(h):
    """Nested blocks ``H[i][j]`` as NumPy arrays (None kept) and the size of each variable."""
    if isinstance(h, (list, tuple)):
        blocks = [[None if b is None else _array(b) for b in row] for row in h]
    else:
        blocks = [[_array(h)]]
    n = len(blocks)
    if any(not isinstance(row, list) or len(row) != n for row in blocks):
        raise ValueError("hessian_image: expected one Hessian or a square nest of blocks H[i][j]")
    sizes = [None] * n
    for i in range(n):  # a diagonal block is shape + shape: its size is the square root
        d = blocks[i][i]
        if d is not None:
            sizes[i] = math.prod(d.shape[:d.ndim // 2]) if d.ndim % 2 == 0 else None
            if d.ndim % 2:
                raise ValueError(f"hessian_image: block H[{i}][{i}] has shape {d.shape}, not "
                                 f"shape + shape")
    for i in range(n):  # a missing diagonal block (None): its size from its row
        if sizes[i] is None:
            for j in range(n):
                if blocks[i][j] is not None and sizes[j]:
                    sizes[i] = blocks[i][j].size // sizes[j]
                    break
        if sizes[i] is None:
            raise ValueError(f"hessian_image: cannot tell the size of variable {i} (all its blocks "
                             f"are None)")
    return blocks, sizes


def hessian_image(h_blocks, names=None, ax=None, title=None):
    """A Hessian over one or several variables as one labelled image.

    Args:
        h_blocks: one Hessian shaped ``s + s`` (``tape.hessian(y, x)``), or the
            nested blocks ``H[i][j]`` shaped ``s_i + s_j`` that
            ``tape.hessian(y, [w, b])`` or ``ad.functional.hessian(f,
            argnums=(0, 1))`` return. None blocks (unconnected) are drawn as zeros.
        names: one name per variable (default ``x0``, ``x1``...; ``x`` for one).
        ax: a matplotlib Axes to draw into (default: a new Figure).
        title: the axes title.

    Returns:
        The Figure; ``fig.axes[0].images[0].get_array()`` is the whole
        flattened Hessian, block ``(i, j)`` at rows of variable i and columns
        of variable j. Blocks are separated by lines and labelled on both axes.

    >>> import widgets
    >>> ad.random.set_seed(0)
    >>> x = ad.random.normal([2, 3])
    >>> w, b = ad.Variable(ad.random.normal([3, 2])), ad.Variable(ad.zeros([2]))
    >>> with ad.GradientTape(persistent=True) as tape:
    ...     loss = ad.reduce_sum(ad.tanh(x @ w + b))
    >>> fig = widgets.hessian_image(tape.hessian(loss, [w, b]), names=["w", "b"])
    >>> fig.axes[0].images[0].get_array().shape     # 6 + 2 parameters
    (8, 8)
    """
    blocks, sizes = _hessian_blocks(h_blocks)
    n = len(blocks)
    if names is None:
        names = ["x"] if n == 1 else [f"x{i}" for i in range(n)]
    names = [str(name) for name in names]
    if len(names) != n:
        raise ValueError(f"hessian_image: {len(names)} names for {n} variables")
    rows = []
    for i in range(n):
        row = []
        for j in range(n):
            b = blocks[i][j]
            if b is not None and b.size != sizes[i] * sizes[j]:
                raise ValueError(f"hessian_image: block H[{i}][{j}] has shape {b.shape}, expected "
                                 f"{sizes[i]} x {sizes[j]} values")
            row.append(np.zeros((sizes[i], sizes[j])) if b is None else b.reshape(sizes[i], sizes[j]))
        rows.append(row)
    m = np.block(rows)
    fig, ax = _new_axes(ax, m.shape)
    _show(ax, m, title or ("Hessian" if n == 1 else "Hessian blocks"))
    edges = np.concatenate([[0], np.cumsum(sizes)])
    for e in edges[1:-1]:
        ax.axhline(e - 0.5, color=SEPARATOR, linewidth=1.5)
        ax.axvline(e - 0.5, color=SEPARATOR, linewidth=1.5)
    centres = [(lo + hi - 1) / 2 for lo, hi in zip(edges[:-1], edges[1:])]
    ax.set_xticks(centres, names)
    ax.set_yticks(centres, names)
    ax.tick_params(length=0)
    if n > 1:
        # Block (i, j) is H[names[i], names[j]]: rows are named on the left, columns above
        # and below, so no label covers a cell of the data.
        ax.tick_params(top=True, labeltop=True, labelsize=11)
        ax.set_title(title or "Hessian blocks H[row, column]", pad=22)
    return fig
