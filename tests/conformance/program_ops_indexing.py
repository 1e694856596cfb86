"""Random programs' gathers with indices as arrays: batched, gather_nd, and traced.

The indices are plain data (``idx``, flat, and ``ishape``) written into the
template as ``np.asarray(idx, dtype=np.int32).reshape(ishape)``, so an empty
index array keeps its integer dtype (a bare ``[]`` is float32 to TensorFlow).
Each gen reads the params' shape and picks ``batch_dims``, the axis and
indices in range, with an empty index array whenever an axis it indexes has
size 0 (zero-size shapes are part of what is tested).

- ``gather_batched``: ``gather(params, indices, axis, batch_dims)``, batch_dims
  sometimes negative (counted from the rank of ``indices``);
- ``gather_nd``: ``gather_nd(params, indices, batch_dims)``, with K >= 1
  index columns (TensorFlow cannot differentiate K = 0, and fails to
  differentiate 1-D indices without batch axes: the README's deliberate
  differences; nor can its forward mode take 2-D indices with K = 1, whose
  gradient is IndexedSlices: ``jvp_refused``);
- ``gather_traced``: ``gather`` inside ``m.function`` with the indices an
  argument, so ad must keep them an input of the op (``GatherTake``). The
  params go in through ``identity``: TensorFlow's forward mode fails on a
  Variable passed to a ``tf.function``.
"""

import numpy as np

_INDICES = "np.asarray({idx}, dtype=np.int32).reshape({ishape})"


def _rest(rng, must_be_empty, at_least_one=False):
    """The indices' own axes: rank 0 to 2, one of size 0 when they must be empty."""
    rank = int(rng.choice([0, 1, 1, 2]))
    if at_least_one or must_be_empty:
        rank = max(rank, 1)
    dims = [int(rng.integers(1, 4)) for _ in range(rank)]
    if must_be_empty:
        dims[int(rng.integers(rank))] = 0
    return dims


def _values(rng, ishape, sizes):
    """Flat int values for an index array of ``ishape`` whose last axis (or all of it when
    ``sizes`` is one size) indexes axes of those ``sizes``."""
    n = int(np.prod(ishape))
    if n == 0:
        return []
    if len(sizes) == 1:
        return [int(v) for v in rng.integers(0, sizes[0], size=n)]
    cols = [rng.integers(0, s, size=n // len(sizes)) for s in sizes]
    return [int(v) for v in np.stack(cols, axis=-1).reshape(-1)]


def _gather(rng, shape, f64):
    r = len(shape)
    if r == 0:
        return None
    b = int(rng.integers(0, r))
    axis = int(rng.integers(b, r))
    batch = list(shape[:b])
    rest = _rest(rng, shape[axis] == 0 and 0 not in batch)
    ishape = batch + rest
    idx = _values(rng, ishape, [shape[axis]])
    batch_dims = b - len(ishape) if rng.random() < 0.2 else b
    axis = axis - r if rng.random() < 0.2 else axis
    return None, {"idx": idx, "ishape": ishape, "axis": axis, "b": batch_dims}


def _gather_nd(rng, shape, f64):
    r = len(shape)
    if r == 0:
        return None
    b = int(rng.integers(0, r))
    k = int(rng.integers(1, r - b + 1))
    batch, sizes = list(shape[:b]), list(shape[b:b + k])
    rest = _rest(rng, 0 in sizes and 0 not in batch, at_least_one=(b == 0))
    ishape = batch + rest + [k]
    return None, {"idx": _values(rng, ishape, sizes), "ishape": ishape, "b": b}


def jvp_refused(spec):
    """Whether TensorFlow's forward mode fails on the program: a gather_nd whose gradient
    TensorFlow makes IndexedSlices (2-D indices, K = 1, no batch axes)."""
    return any(op["op"] == "gather_nd" and op["params"]["b"] == 0
               and len(op["params"]["ishape"]) == 2 and op["params"]["ishape"][-1] == 1
               for op in spec["ops"])


def _gather_traced(rng, shape, f64):
    # not of a zero-size params: TensorFlow's graph gradient of GatherV2 then fails
    # (UnsortedSegmentSum: "data.shape does not start with segment_ids.shape")
    return None if 0 in shape else _gather(rng, shape, f64)


_TRACED = ("m.function(lambda p, i: m.gather(p, i, axis={axis}, batch_dims={b}), "
           "autograph=False)(m.identity({0}), m.constant(" + _INDICES + "))")

OPS = {
    "gather_batched": ("m.gather({0}, " + _INDICES + ", axis={axis}, batch_dims={b})", _gather),
    "gather_nd": ("m.gather_nd({0}, " + _INDICES + ", batch_dims={b})", _gather_nd),
    "gather_traced": (_TRACED, _gather_traced),
}
