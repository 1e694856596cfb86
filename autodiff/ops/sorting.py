"""Sorting: ``top_k``, ``sort`` and ``argsort``, with TensorFlow's gradient.

``top_k(x, k)`` finds, along the last axis, the positions of the k largest
values (``TopKIndices``: integers, not differentiable; ties go to the lower
index, as in TensorFlow) and takes the values there (``TakeAlongAxis``).
The gradient of taking is putting: the cotangent of each value goes back to
the position it came from (``PutAlongAxis``, into zeros), and the gradient
of putting is taking again, so every order of derivative works. The
positions are an input of both ops, not a constant: a traced ``ad.function``
sorts each call's own values.

``sort`` and ``argsort`` are TensorFlow's compositions: the axis moved last,
``top_k`` over the whole axis, negated for ascending order.

    >>> values, indices = ad.math.top_k(ad.constant([1.0, 3.0, 2.0]), k=2)
    >>> values.numpy(), indices.numpy()
    (array([3., 2.], dtype=float32), array([1, 2], dtype=int32))
"""

import collections

import numpy as _np

from .. import dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import convert_to_tensor

__all__ = ["sort", "argsort"]

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])

_LAST_AXIS_CASES = [(((5,), (3,)), {}), (((2, 4), (2, 2)), {})]


def _top_k_indices_forward(xp, x, k):
    # a stable sort of -x: the k largest first, equal values in index order
    key = -x.astype(_np.float64) if x.dtype.kind in "iu" else -x
    return xp.argsort(key, axis=-1, kind="stable")[..., :k].astype(_np.int32)


TOP_K_INDICES = Primitive("TopKIndices", _top_k_indices_forward, NotDifferentiable,
                          saves="shapes", domain=(-2.0, 2.0), cases=[(((5,),), {"k": 3})],
                          doc="integer positions: not differentiable")


def _broadcast_indices(xp, indices, ndim):
    """``indices`` with leading axes added, to line up with an array of rank ``ndim``."""
    return indices.reshape((1,) * (ndim - indices.ndim) + indices.shape)


def _take_forward(xp, x, indices):
    return xp.take_along_axis(x, _broadcast_indices(xp, indices, x.ndim), axis=-1)


def _put_forward(xp, g, indices, n):
    out = xp.zeros(g.shape[:-1] + (n,), dtype=g.dtype)
    full = xp.broadcast_to(_broadcast_indices(xp, indices, g.ndim), g.shape)
    xp.put_along_axis(out, full, g, axis=-1)
    return out


def _index_inputs(rng, shapes):
    """A float array, then distinct positions along its last axis (for the op table)."""
    x = rng.uniform(-2.0, 2.0, size=shapes[0])
    k = shapes[1][-1]
    order = _np.argsort(rng.uniform(size=shapes[0]), axis=-1)[..., :k]
    return [x, order.astype(_np.int32)]


def _put_inputs(rng, shapes):
    g = rng.uniform(-2.0, 2.0, size=shapes[0])
    order = _np.argsort(rng.uniform(size=shapes[0][:-1] + (5,)), axis=-1)[..., :shapes[0][-1]]
    return [g, order.astype(_np.int32)]


TAKE_ALONG_AXIS = Primitive(
    "TakeAlongAxis", _take_forward,
    (lambda g, ans, x, indices: PUT_ALONG_AXIS(g, indices, n=x._value.shape[-1]),
     lambda g, ans, x, indices: None),
    saves="inputs", domain=(-2.0, 2.0), cases=_LAST_AXIS_CASES, label="take({0}, {1})",
    dtype_args=(0,),
    doc="d x[..., i] = dx[..., i]: the cotangent goes back to the positions taken")
TAKE_ALONG_AXIS.make_inputs = _index_inputs
PUT_ALONG_AXIS = Primitive(
    "PutAlongAxis", _put_forward,
    (lambda g, ans, values, indices, n: TAKE_ALONG_AXIS(g, indices),
     lambda g, ans, values, indices, n: None),
    saves="inputs", domain=(-2.0, 2.0), dtype_args=(0,),
    cases=[(((3,), (3,)), {"n": 5}), (((2, 2), (2, 2)), {"n": 5})], label="put({0}, {1})",
    doc="linear in the values (put into zeros); its VJP takes the cotangent back")
PUT_ALONG_AXIS.make_inputs = _put_inputs


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """The k largest values along the last axis, and their positions (ties: lower index first).

    Returns:
        ``(values, indices)``, each shaped ``input.shape[:-1] + (k,)``; values sorted
        in decreasing order.
    """
    x = convert_to_tensor(input)
    if x.dtype._np.kind not in "fi":
        raise InvalidArgumentError(f"TopKV2: input must be a real number tensor, got "
                                   f"{x.dtype.name} of shape {tuple(x.shape)}")
    k = _validate.as_int("TopKV2", "k", k)
    if x._value.ndim == 0 or not 0 <= k <= x._value.shape[-1]:
        size = x._value.shape[-1] if x._value.ndim else 0
        raise InvalidArgumentError(f"TopKV2: k={k} must be in [0, {size}] (the last axis of "
                                   f"input, shape {tuple(x.shape)})")
    indices = TOP_K_INDICES(x, k=k)
    return TopKV2(TAKE_ALONG_AXIS(x, indices), cast(indices, index_type))


def _along_last(values, axis, op_name):
    x = convert_to_tensor(values)
    ndim = x._value.ndim
    if ndim == 0:
        raise InvalidArgumentError(f"{op_name}: values must have at least one axis")
    axis = normalize_axis(axis, ndim, op_name)
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return x, perm


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (``'ASCENDING'`` or ``'DESCENDING'``)."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"sort: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    x, perm = _along_last(values, axis, "sort")
    moved = transpose(x, perm)
    if direction == "ASCENDING":
        out = -top_k(-moved, k=moved._value.shape[-1]).values
    else:
        out = top_k(moved, k=moved._value.shape[-1]).values
    return transpose(out, perm)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The positions that sort ``values`` along ``axis`` (int32; ties keep their order)."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"argsort: direction must be 'ASCENDING' or 'DESCENDING', got "
                         f"{direction!r}")
    x, perm = _along_last(values, axis, "argsort")
    moved = transpose(x, perm)
    key = -moved if direction == "ASCENDING" else moved
    return transpose(top_k(key, k=moved._value.shape[-1]).indices, perm)


from .elementwise import cast  # noqa: E402
from .reduce import normalize_axis  # noqa: E402
from .shape import transpose  # noqa: E402
