"""Gather with indices that are a tensor input of the op: what ``ad.function`` records.

``ad.gather`` usually turns its indices into a constant key of a ``GatherV2``
op (``slicing.py``). Inside ``ad.function`` indices computed from the
function's arguments change from call to call, so they must stay an input:
``GatherTake(params, indices, axis)`` takes ``params`` along ``axis`` at
``indices``, and ``GatherTakeGrad(g, indices, shape, axis)`` adds ``g`` back
into zeros at the same places (repeated indices add up). Each is the other's
VJP, so every order of derivative works, and both accept cotangents with
leading batch axes (``n_batch``), as the vectorized ``jacobian`` sends.
"""

import numpy as np

from ..errors import InvalidArgumentError
from ..registry import Primitive

__all__ = []


def _check_range(xp, indices, size):
    bad = (indices < 0) | (indices >= size)
    if xp.any(bad).item():   # one boolean read from the device, as TensorFlow's CPU kernel checks
        first = int(xp.argmax(bad.reshape(-1)).item())
        raise InvalidArgumentError(f"GatherV2: indices[{first}] (flattened) = "
                                   f"{int(indices.reshape(-1)[first].item())} is not in [0, {size})")


def _take_forward(xp, x, indices, axis, n_batch=0):
    _check_range(xp, indices, x.shape[n_batch + axis])
    return xp.take(x, indices, axis=n_batch + axis)


def _put_forward(xp, g, indices, shape, axis, n_batch=0):
    out = xp.zeros(g.shape[:n_batch] + tuple(shape), dtype=g.dtype)
    key = (slice(None),) * (n_batch + axis) + (indices,)
    xp.add.at(out, key, g)
    return out


def _n_batch(g, ans, n_batch):
    return g._value.ndim - ans._value.ndim + n_batch


def _index_inputs(rng, shapes):
    """A float array, then indices into its axis 0 (repeats included), for the op table."""
    x = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [x, rng.integers(0, shapes[0][0], size=shapes[1]).astype(np.int64)]


def _put_inputs(rng, shapes):
    g = rng.uniform(-2.0, 2.0, size=shapes[0])
    return [g, rng.integers(0, 4, size=shapes[1]).astype(np.int64)]


GATHER_TAKE = Primitive(
    "GatherTake", _take_forward,
    (lambda g, ans, x, indices, axis, n_batch=0: GATHER_TAKE_GRAD(
        g, indices, shape=x._value.shape[n_batch:], axis=axis, n_batch=_n_batch(g, ans, n_batch)),
     lambda g, ans, x, indices, axis, n_batch=0: None),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="gather({0}, {1})",
    cases=[(((4,), (3,)), {"axis": 0}), (((4, 3), (2, 2)), {"axis": 0})],
    doc="d x[indices] = dx[indices]: g is added back at the indices (repeats add up)")
GATHER_TAKE.make_inputs = _index_inputs
GATHER_TAKE_GRAD = Primitive(
    "GatherTakeGrad", _put_forward,
    (lambda gg, ans, g, indices, shape, axis, n_batch=0: GATHER_TAKE(
        gg, indices, axis=axis, n_batch=_n_batch(gg, ans, n_batch)),
     lambda gg, ans, g, indices, shape, axis, n_batch=0: None),
    saves="inputs", dtype_args=(0,), domain=(-2.0, 2.0), label="scatter_add({0}, {1})",
    cases=[(((3,), (3,)), {"shape": (4,), "axis": 0}),
           (((2, 2, 3), (2, 2)), {"shape": (4, 3), "axis": 0})],
    doc="linear in g (added into zeros at the indices); its VJP gathers the cotangent")
GATHER_TAKE_GRAD.make_inputs = _put_inputs


def gather_traced(x, indices, axis):
    """``x`` gathered along ``axis`` at ``indices`` (an integer tensor), as a recorded input."""
    if not indices.dtype.is_integer:
        raise TypeError(f"GatherV2: indices must be integers, not {indices.dtype.name}")
    return GATHER_TAKE(x, indices, axis=axis)
