"""Many values looked at together: previews, NaN/Inf checks and norms.

A replay shows each value by a short preview (``'[0.25, 1.0, 2.0, …]'``),
marks the ones that hold a NaN or an Inf, and takes the norm of what each
backward step sends. ``_inspect`` below does that for one value; a
10,000-record tape of a real model has about 13,000 tensor nodes and 14,000
backward values, nearly all floats of a few thousand numbers, and asked one
by one, Python's cost per value (calls, small lists, one formatting call per
preview) was most of the work. ``look_many`` takes a list of values and:

- formats the previews of every float value of more than four numbers with
  ONE ``%`` over a template of as many previews (their first four numbers
  gathered into one float64 array), splits the text, and adds ``.0`` to the
  whole numbers (a regex over the previews with fewer than four points);
- takes each such value's NaN/Inf check and, where asked, its float64 sum of
  squares, exactly as ``_inspect`` does (``np.dot`` on the same array, so the
  same bits);
- keeps the numbers of those of at most ``MAX_DATA`` numbers when they are
  finite, as ``_inspect`` does;
- hands every other value (four numbers or fewer; integers; complex;
  placeholders) to ``_inspect`` itself.

The results are ``_inspect``'s, value for value (``tests/widgets/test_looks.py``).
Pure NumPy over values the engine already computed; nothing here differentiates.

    >>> from widgets.player.data.looks import look_many
    >>> [v["preview"] for v, *_ in look_many([ad.constant(np.arange(100.0))])]
    ['[0.0, 1.0, 2.0, 3.0, …]']
"""

import re

import numpy as np

from autodiff import backend
from autodiff.tensor import ArraySpec

__all__ = ["look_many", "float_previews", "preview", "value_of", "MAX_DATA"]

MAX_DATA = 64          # values with more elements keep only a preview in the JSON


def preview(value, limit=4):
    """A short text for a value: ``'6.0'``, ``'[0.25, 1.0, 2.0, …]'``, None if unknown."""
    if value is None:
        return None
    return _preview_of(np.asarray(backend.to_numpy(value)), limit)


# Four floats as _number writes them, in one formatting call (most previews): a whole
# number gets '.0' ('6' -> '6.0'; not '1e+05', 'nan' or 'inf').
_FOUR = ", ".join(["%.4g"] * 4)


def _preview_of(array, limit=4):
    flat = array.reshape(-1)
    # .tolist(): Python numbers (a float32 becomes the float it holds), formatted
    # without NumPy's per-scalar machinery (a 10,000-record tape makes 70,000 previews)
    if limit == 4 and flat.size >= 4 and array.dtype.kind == "f":
        a, b, c, d = flat[:4].tolist()
        shown = _FOUR % (a + 0.0, b + 0.0, c + 0.0, d + 0.0)
        if shown.count(".") < 4:          # some number has no point: a whole one?
            shown = ", ".join(p + ".0" if p.lstrip("-").isdigit() else p for p in shown.split(", "))
    else:
        shown = ", ".join(map(_number, flat[:limit].tolist()))
    if array.ndim == 0:
        return shown
    return f"[{shown}{', …' if flat.size > limit else ''}]"


def _number(v):
    if type(v) is float:       # the common case first
        text = f"{v + 0.0:.4g}"    # + 0.0: no '-0.0' for a zero gradient
        return text + ".0" if text.lstrip("-").isdigit() else text
    if isinstance(v, (bool, int)):
        return str(v)
    if isinstance(v, complex):
        return f"{v:.4g}".strip("()")
    if not isinstance(v, float):      # a NumPy scalar, or anything else that says it is a number
        return _number(v.item()) if hasattr(v, "item") else str(v)
    text = f"{v + 0.0:.4g}"    # + 0.0: no '-0.0' for a zero gradient
    return text + ".0" if text.lstrip("-").isdigit() else text


def value_of(tensor):
    """``{preview, data, shape}`` of a Tensor's value (data only when small and finite)."""
    if tensor is None:
        return None
    value = tensor._value
    if isinstance(value, ArraySpec):
        return {"preview": None, "data": None, "shape": list(value.shape)}
    array = np.asarray(backend.to_numpy(value))
    return _described(array, array.size <= MAX_DATA and _bad(array))


def _described(array, bad):
    data = array.tolist() if array.size <= MAX_DATA and array.dtype.kind in "fiub" and not bad \
        else None
    return {"preview": _preview_of(array), "data": data, "shape": list(array.shape)}


def _bad(array, square_sum=None):
    """Whether a float array holds a NaN or an Inf. A finite sum of squares
    (``np.dot``, one pass, no temporary) proves it holds neither; only an
    infinite or NaN one (or an overflow) is looked at value by value."""
    kind = array.dtype.kind
    if kind not in "fc":
        return False
    if kind == "f":
        if square_sum is None:
            flat = array.reshape(-1)
            square_sum = np.dot(flat, flat)
        if square_sum - square_sum == 0:     # finite
            return False
    return not np.isfinite(array).all()


def _inspect(tensor, with_norm=False):
    """``(value_of(tensor), whether it holds a NaN or an Inf, its norm or None, its
    float64 sum of squares or None)``, from one look at it (the norm only ``with_norm``)."""
    if tensor is None:
        return None, False, None, None
    value = tensor._value
    if isinstance(value, ArraySpec):
        return {"preview": None, "data": None, "shape": list(value.shape)}, False, None, None
    array = np.asarray(backend.to_numpy(value))
    norm = square_sum = None
    if with_norm:
        norm, square_sum = _norm(array)
    bad = _bad(array, square_sum)
    return _described(array, bad), bad, norm, square_sum


def _norm(array):
    """``(norm, sum of squares)`` of a value in float64 (0.0 and None for integers)."""
    if array.dtype.kind not in "fc":
        return 0.0, None
    flat = (np.abs(array) if array.dtype.kind == "c" else array).reshape(-1).astype(np.float64)
    square_sum = np.dot(flat, flat)
    return float(square_sum ** 0.5), square_sum


_ONE = "[%.4g, %.4g, %.4g, %.4g, …]"
# A whole number among them ('6', '-3'; not '1e+05', 'nan' or 'inf'), after '[' or
# ', ' and before ',' or ']': it gets '.0', as _number writes it. (The char before it
# is in the match: a lookbehind at every place took twice as long.)
_WHOLE = re.compile(r"([\[ ]-?[0-9]+)(?=[,\]])")


def float_previews(heads):
    """The previews of values of more than four floats, from their first four numbers.

    ``heads`` is a float64 array of ``4 * n`` numbers (value by value); returns
    the ``n`` previews ``_preview_of`` writes: one ``%`` for all of them, and
    ``'.0'`` after a whole number (``'6'`` -> ``'6.0'``; not ``'1e+05'``, ``'nan'``),
    by a regex over the previews that can hold one.

    >>> from widgets.player.data.looks import float_previews
    >>> float_previews(np.array([1.0, -0.0, 0.5, 1e5]))
    ['[1.0, 0.0, 0.5, 1e+05, …]']
    """
    n = len(heads) // 4
    if n == 0:
        return []
    # + 0.0: no '-0.0' for a zero gradient (as _preview_of)
    text = ("\n".join([_ONE] * n)) % tuple((heads + 0.0).tolist())
    # A preview with four points has no whole number (each number holds one, and none
    # holds two): most of them, which the regex need not read (one pass over all the
    # text took 10 ms of a 10,017-record tape's 14,000 previews).
    sub = _WHOLE.sub
    return [shown if shown.count(".") == 4 else sub(r"\1.0", shown) for shown in text.split("\n")]


def look_many(tensors, norms=None, checks=True):
    """``[_inspect(t, with_norm) for t, with_norm in zip(tensors, norms)]``, in bulk.

    Args:
        tensors: Tensors (or None).
        norms: one bool per tensor, whether its norm and float64 sum of squares
            are wanted (None: no norms).
        checks: False when only the values are wanted: a float value of more than
            ``MAX_DATA`` numbers (which keeps no numbers) is then not checked for
            NaN/Inf, and its ``bad`` is None.

    Returns:
        One ``(value, bad, norm, square_sum)`` per tensor: ``value`` as
        ``frames.value_of`` writes it, whether it holds a NaN or an Inf, and
        the norm and sum of squares (None where not asked for).
    """
    out = [None] * len(tensors)
    big, heads = [], []      # (index, array, square sum, norm?) of float values; their heads
    to_numpy, asarray, dot, f64, ndarray = backend.to_numpy, np.asarray, np.dot, np.float64, \
        np.ndarray
    for i, tensor in enumerate(tensors):
        with_norm = bool(norms and norms[i])
        value = None if tensor is None else tensor._value
        if value is None or isinstance(value, ArraySpec):
            out[i] = _inspect(tensor, with_norm)
            continue
        array = value if value.__class__ is ndarray else asarray(to_numpy(value))
        if array.dtype.kind != "f" or array.size <= 4:
            out[i] = _inspect(tensor, with_norm)
            continue
        flat = array.reshape(-1)
        if with_norm:
            wide = flat.astype(f64)
            square_sum = dot(wide, wide)
        elif checks or array.size <= MAX_DATA:
            square_sum = dot(flat, flat)      # _bad's check, in the value's own dtype
        else:
            square_sum = None
        big.append((i, array, square_sum, with_norm))
        heads.append(flat[:4])
    if not big:
        return out
    previews = float_previews(np.concatenate(heads, dtype=f64))
    isfinite = np.isfinite
    for (i, array, square_sum, with_norm), shown in zip(big, previews):
        # a finite sum of squares proves there is no NaN or Inf (_bad)
        if square_sum is None:
            out[i] = ({"preview": shown, "data": None, "shape": list(array.shape)}, None,
                      None, None)
            continue
        bad = not square_sum - square_sum == 0 and not isfinite(array).all()
        data = array.tolist() if array.size <= MAX_DATA and not bad else None
        value = {"preview": shown, "data": data, "shape": list(array.shape)}
        if with_norm:
            out[i] = (value, bad, float(square_sum ** 0.5), square_sum)
        else:
            out[i] = (value, bad, None, None)
    return out
