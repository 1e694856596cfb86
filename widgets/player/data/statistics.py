"""Statistics of tensor values for the player's tooltips: min, max, mean, histogram.

``value_stats(tensor)`` takes one tensor's; ``many_stats(tensors)`` takes
every tensor's of a replay at once. A 10,000-record tape of a real model
holds about 8,500 float tensors of a few thousand numbers each, in a handful
of sizes: asked one by one, NumPy's fixed cost per call (min, max, mean, the
histogram's passes) was most of the work. ``many_stats`` stacks the tensors
of one size into the rows of a block (at most ``CHUNK`` numbers, small
enough to stay in a core's cache over the block's dozen passes) and reduces
along the rows: a dozen NumPy calls per block instead of per tensor. The
histogram counts the numbers at or above each of np.histogram's edges (the
same float64 edges), so its bins hold what np.histogram's do. A float32
block stays float32: its min and max are exact, its sum is taken in float64
(the same bits as the sum of a float64 copy), and ``x >= edge`` is asked as
``x >= the least float32 >= edge``, the same answer for every float32. Tensors
it cannot take that way (integers, a NaN or an Inf, a range too wide to
subtract) go through ``value_stats``.

Pure NumPy over values the engine already computed; nothing here differentiates.

    >>> from widgets.player.data.statistics import value_stats
    >>> value_stats(ad.constant([0.0, 1.0, 1.0, 2.0]))["hist"]
    [1, 0, 0, 0, 2, 0, 0, 1]
"""

import numpy as np

from autodiff import backend

__all__ = ["value_stats", "many_stats", "histogram", "BINS"]

BINS = 8
CHUNK = 1 << 18          # numbers per block in many_stats (1 MB of float32: in a core's L2)


def _array(tensor):
    value = getattr(tensor, "_value", None)
    if value.__class__ is np.ndarray:      # NumPy's own array (most): as it is
        return value
    if value is None or not hasattr(value, "dtype") or not hasattr(value, "size"):
        return None
    return np.asarray(backend.to_numpy(value))


def value_stats(tensor, bins=BINS):
    """Min, max, mean (4 digits) and an 8-bin histogram of a float tensor, for tooltips.

    Returns None for a tensor without a concrete float value. The histogram
    counts as ``np.histogram`` does.

    >>> from widgets.player.data.statistics import value_stats
    >>> value_stats(ad.constant([0.0, 1.0, 1.0, 2.0, np.nan]))["nonfinite"]
    1
    """
    array = _array(tensor)
    if array is None or array.dtype.kind not in "fiu" or array.size == 0:
        return None
    flat = array.reshape(-1)
    if array.dtype.kind == "f":
        ok = np.isfinite(flat)
        finite = flat if ok.all() else flat[ok]
    else:
        finite = flat
    stats = {"nonfinite": int(flat.size - finite.size)}
    if finite.size == 0:
        return {**stats, "min": None, "max": None, "mean": None, "hist": [0] * bins}
    lo, hi = float(finite.min()), float(finite.max())
    return _stats(stats["nonfinite"], lo, hi, float(finite.mean()), histogram(finite, lo, hi, bins))


def _stats(nonfinite, lo, hi, mean, hist):
    return {"nonfinite": nonfinite, "min": float(f"{lo:.4g}"), "max": float(f"{hi:.4g}"),
            "mean": float(f"{mean:.4g}"), "hist": hist}


def many_stats(tensors, bins=BINS):
    """``[value_stats(t) for t in tensors]``, computed a block of tensors at a time.

    >>> from widgets.player.data.statistics import many_stats
    >>> [s["max"] for s in many_stats([ad.constant([1.0, 2.0]), ad.constant([3.0])])]
    [2.0, 3.0]
    """
    out = [None] * len(tensors)
    same = {}               # (size, dtype) -> [(index, flat float array)]
    for i, tensor in enumerate(tensors):
        array = _array(tensor)
        if array is None or array.size == 0 or array.dtype.kind not in "fiu":
            continue
        if array.dtype.kind != "f":
            out[i] = value_stats(tensor, bins)
            continue
        same.setdefault((array.size, array.dtype), []).append((i, array.reshape(-1)))
    for (size, _), group in same.items():
        rows = max(1, CHUNK // size)
        for start in range(0, len(group), rows):
            _block(group[start:start + rows], out, bins)
    for i, tensor in enumerate(tensors):       # NaN, Inf or a range too wide: one at a time
        if out[i] is False:
            out[i] = value_stats(tensor, bins)
    return out


def _block(block, out, bins):
    """Stats of each ``(index, flat float array)`` of ``block`` (all of one size) into
    ``out`` (False: value_stats must redo it)."""
    with np.errstate(all="ignore"):     # a bad row's numbers are thrown away below
        if block[0][1].dtype == np.float32:     # compared as they are: half the bytes
            x = np.stack([flat for _, flat in block])
            lo, hi = x.min(axis=1).astype(np.float64), x.max(axis=1).astype(np.float64)
            total = x.sum(axis=1, dtype=np.float64)      # the float64 copy's sum, bit for bit
        else:
            x = np.stack([flat for _, flat in block], dtype=np.float64)     # one copy, exact
            lo, hi, total = x.min(axis=1), x.max(axis=1), x.sum(axis=1)
        # A NaN or an Inf anywhere in a row makes its sum non-finite; so can an
        # overflow, which value_stats then sorts out.
        good = np.isfinite(total) & np.isfinite(hi - lo)
        # value_stats' edges: np.linspace's arithmetic, hi = lo + 1 for a constant tensor
        top = np.where(hi > lo, hi, lo + 1.0)
        edges = _steps(bins)[None, :] * ((top - lo) / bins)[:, None] + lo[:, None]
        edges[:, -1] = top
        # np.histogram's bins hold edges[j] <= x < edges[j + 1] (the last one x == hi too):
        # count the numbers at or above each edge, and take differences.
        if x.dtype == np.float32:      # x >= edge is x >= the least float32 >= edge
            near = edges.astype(np.float32)
            edges = np.where(near < edges, np.nextafter(near, np.float32(np.inf)), near)
        above = np.empty((len(block), bins + 1), dtype=np.intp)
        above[:, 0], above[:, bins] = x.shape[1], 0
        hit = np.empty(x.shape, dtype=bool)      # one buffer; its bytes summed as uint8
        # counted in uint16 where a row's count fits (4x faster than in intp)
        count = np.uint16 if x.shape[1] < 1 << 16 else np.intp
        for j in range(1, bins):
            np.greater_equal(x, edges[:, j:j + 1], out=hit)
            above[:, j] = hit.view(np.uint8).sum(axis=1, dtype=count)
    counts = (above[:, :-1] - above[:, 1:]).tolist()
    n, good = len(block), good.tolist()
    # every row's min, max and mean cut to 4 digits as _stats cuts them, in one go
    cut = _four_digits(lo.tolist() + hi.tolist() + (total / x.shape[1]).tolist())
    for k, (i, _) in enumerate(block):
        out[i] = {"nonfinite": 0, "min": cut[k], "max": cut[n + k], "mean": cut[2 * n + k],
                  "hist": counts[k]} if good[k] else False


def _four_digits(values):
    """``[float(f"{v:.4g}") for v in values]`` (what ``_stats`` keeps of a number), with
    one ``%`` for all of them and one ``float`` per number."""
    if not values:
        return []
    return list(map(float, ("\n".join(["%.4g"] * len(values)) % tuple(values)).split("\n")))


_STEPS = {}


def _steps(bins):
    if bins not in _STEPS:
        _STEPS[bins] = np.arange(bins + 1.0)
    return _STEPS[bins]


def histogram(values, lo, hi, bins):
    """``np.histogram(values, bins, range=(lo, hi if hi > lo else lo + 1))[0]`` as a
    list, for finite ``values`` within ``[lo, hi]``: the same index arithmetic and
    edge correction, without its checks.

    >>> from widgets.player.data.statistics import histogram
    >>> histogram(np.array([0.0, 1.0, 1.0, 2.0]), 0.0, 2.0, 4)
    [1, 0, 2, 1]
    """
    if hi <= lo:
        hi = lo + 1.0
    x = values.astype(np.float64, copy=False)
    if not np.isfinite(hi - lo):      # -1e308 to 1e308 (np.histogram refuses): halve all
        x, lo, hi = x * 0.5, lo * 0.5, hi * 0.5
    edges = _steps(bins) * ((hi - lo) / bins) + lo     # np.linspace's arithmetic
    edges[-1] = hi
    index = ((x - lo) / (hi - lo) * bins).astype(np.intp)
    index[index == bins] -= 1
    index[x < edges[index]] -= 1            # rounding put a value one bin too high
    index[(x >= edges[index + 1]) & (index != bins - 1)] += 1    # or one too low
    return np.bincount(index, minlength=bins).tolist()
