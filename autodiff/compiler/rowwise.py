"""Per-channel elementwise ops in compiled programs: NumPy's inner loop made wide.

A batch norm, a conv bias or a layer's scale meets a whole activation with
one value per channel: ``x * scale`` with ``x`` of shape ``(32, 16, 16, 16)``
and ``scale`` of shape ``(16,)``. NumPy runs that broadcast with an inner
loop 16 elements long, once per row: 1.7-2x what the wide form below
costs (one thread, 32 x 16 x 16 x 16 float32: 122-204 us against 68-121 us
on a loaded machine; the wide form costs about what ``x * y`` of two such
arrays does). The backward pass of a mean does the
same with ``BroadcastTo(g, x.shape) / n`` (a read-only view of stride 0,
divided element by element).

Seen as 512 rows of 1,024 values, ``x`` meets ``scale`` tiled 64 times,
and the inner loop is 1,024 long::

    v17 = rowwise(xp.multiply, v1, v13, 64, False)  # v1 * v13, v13 a channel row

    def rowwise(ufunc, full, row, tile, row_first):  # (roughly, row_first False)
        wide = full.reshape(-1, tile * row.size)
        return ufunc(wide, tiled(row, tile)).reshape(full.shape)

Each element meets the same value with the same ufunc, so the result equals
the broadcast one bit for bit (NaN, inf and signed zeros included). A
``BroadcastTo`` of a channel row is written the same way, as a fresh array
(``broadcast_rows``), which later steps may then overwrite (``passes.py``:
buffer reuse).

``rewrite(steps, spec)`` marks the steps where this applies (``step.rowwise =
tile``): float arrays of at least ``MIN_SIZE`` elements whose last axis is at
most ``MAX_ROW`` long, met by a row that broadcasts along the leading axes
only. At run time an array that is not a C-contiguous NumPy array (a view,
another backend) takes NumPy's own broadcast, as before.
"""

import numpy as np

__all__ = ["rewrite", "rowwise", "broadcast_rows", "BINARY", "MIN_SIZE", "MAX_ROW"]

# The binary ops written inline (``inline.py``) and the ufuncs they are.
BINARY = {"AddV2": "xp.add", "Sub": "xp.subtract", "Mul": "xp.multiply",
          "RealDiv": "xp.true_divide"}
MIN_SIZE = 1 << 14    # below this the broadcast costs little
MAX_ROW = 64          # a longer last axis already makes a wide enough inner loop
_WIDE = 1024          # the inner loop's length after tiling


def rewrite(steps, spec):
    """Sets ``step.rowwise = tile`` on the steps written wide; see the module docstring."""
    for step in steps:
        if step.kind != "op" or not step.inputs:
            continue
        node = step.node
        out = (getattr(node, "specs", None) or [None])[0]
        if out is None or not node.runs_builtin(node.op_type):
            continue
        sources = [spec(s) for s in step.inputs]
        if None in sources or any(s[1] != out[1] for s in sources):
            continue
        if node.op_type in BINARY and not node.params and len(sources) == 2:
            full = [tuple(s[0]) == tuple(out[0]) for s in sources]
            if full.count(True) == 1 and _is_row(sources[full.index(False)][0], out[0]):
                step.rowwise = _tile(out) or None
        elif node.op_type == "BroadcastTo" and _is_row(sources[0][0], out[0]):
            step.rowwise = _tile(out) or None


def _is_row(shape, full_shape):
    """Whether ``shape`` broadcasts to ``full_shape`` along its leading axes only: ``(C,)`` or
    ``(1, ..., 1, C)`` with ``C`` the last axis of a large, narrow float array."""
    shape, full_shape = tuple(shape), tuple(full_shape)
    if len(full_shape) < 2 or not shape or shape[-1] != full_shape[-1]:
        return False
    return all(d == 1 for d in shape[:-1]) and len(shape) <= len(full_shape)


def _tile(out_spec):
    """How many copies of the row make one wide row (0: not worth it, or not possible)."""
    shape, dtype = tuple(out_spec[0]), np.dtype(out_spec[1])
    channels = shape[-1]
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.kind != "f" or size < MIN_SIZE or not 0 < channels <= MAX_ROW:
        return 0
    rows = size // channels
    tile = 1
    while tile * 2 * channels <= _WIDE and rows % (tile * 2) == 0:
        tile *= 2
    return tile if tile > 1 else 0


def _tiled(row, tile):
    flat = row.reshape(-1)
    wide = np.empty((tile, flat.size), dtype=flat.dtype)
    wide[...] = flat
    return wide.reshape(-1)


def rowwise(ufunc, x, y, tile, row_first, out=None):
    """``ufunc(x, y, out=out)`` where ``x`` (``row_first``) or ``y`` is a channel row (see
    the module docstring): the same floats, with a wide inner loop when the other is a
    C-contiguous NumPy array."""
    full, row = (y, x) if row_first else (x, y)
    if type(full) is not np.ndarray or type(row) is not np.ndarray \
            or not full.flags.c_contiguous or (out is not None and not out.flags.c_contiguous):
        return ufunc(x, y) if out is None else ufunc(x, y, out=out)
    width = tile * row.size
    wide, tiled = full.reshape(-1, width), _tiled(row, tile)
    target = None if out is None else out.reshape(-1, width)
    result = ufunc(tiled, wide, out=target) if row_first else ufunc(wide, tiled, out=target)
    return result.reshape(full.shape) if out is None else out


def broadcast_rows(xp, row, shape, tile):
    """``row`` (a channel row) copied to a fresh C-contiguous array of ``shape``: what
    ``xp.broadcast_to(row, shape)`` holds, as an array later steps may overwrite."""
    if type(row) is not np.ndarray:
        return xp.ascontiguousarray(xp.broadcast_to(row, shape))
    result = np.empty(shape, dtype=row.dtype)
    result.reshape(-1, tile * row.shape[-1])[...] = _tiled(row, tile)
    return result
