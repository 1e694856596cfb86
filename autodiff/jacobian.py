"""Jacobians from a tape: one backward pass carrying a stack of cotangents.

``gradient`` seeds the target with ones and gets the gradient of the *sum*.
The Jacobian needs one backward pass per target element instead: row ``i``
is the gradient of ``y[i]``, i.e. the backward pass seeded with the one-hot
cotangent ``e_i``. Every VJP rule accepts leading batch axes, so all those
passes run as **one** pass whose cotangent is the identity, shape
``(n,) + y.shape``:

    >>> x = ad.constant([1.0, 2.0, 3.0])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> tape.jacobian(y, x).numpy()          # diag(2x)
    array([[2., 0., 0.],
           [0., 4., 0.],
           [0., 0., 6.]], dtype=float32)

``batch_jacobian`` is the same trick for a batch of independent examples:
it seeds one cotangent per *output position*, set to 1 in every example at
once, and relies on example ``b``'s output depending only on example ``b``'s
input. Like TensorFlow it does not check that; ``ad.testing.
check_batch_independence`` does (BatchNormalization in training mode, which
mixes the batch, is the classic case where the answer is silently wrong).
"""

import collections
import os
import threading

import numpy as np

from . import backend, nest
from .backward import backward
from .errors import InvalidArgumentError, ResourceExhaustedError
from .tensor import Tensor, convert_to_tensor

__all__ = ["jacobian", "batch_jacobian", "JacobianMemoryError"]


class JacobianMemoryError(ResourceExhaustedError):
    """A Jacobian whose cotangent stack or result would not fit in memory."""


def _available_bytes():
    """Bytes a new array may take: free physical memory, capped by what the
    address-space limit (``ulimit -v``, RLIMIT_AS) leaves this process."""
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        available = 1 << 62
    return min(available, _address_space_left())


def _address_space_left():
    try:
        import resource
        limit, _ = resource.getrlimit(resource.RLIMIT_AS)
        if limit == resource.RLIM_INFINITY:
            return 1 << 62
        with open("/proc/self/statm") as statm:   # first field: the mapped size, in pages
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, AttributeError):
        return 1 << 62
    return max(limit - mapped, 0)


def _check_fits(op, n_rows, chunk, row_bytes, result_bytes):
    """Refuse before allocating when the work would not fit in free memory."""
    needed = result_bytes + 2 * chunk * row_bytes  # the result, plus a chunk's cotangents in flight
    available = _available_bytes()
    if needed > available:
        hint = ("" if chunk < n_rows or n_rows <= 1 else
                f"; pass parallel_iterations=k to push only k of the {n_rows} cotangents at a time")
        raise JacobianMemoryError(
            f"{op} needs about {needed / 2**30:.2f} GiB ({n_rows} rows) but only "
            f"{available / 2**30:.2f} GiB is available (free memory, within the process's "
            f"address-space limit){hint}")


def _checked_parallel_iterations(value, who):
    """``parallel_iterations`` must be None or a positive int (rows per backward pass)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{who}: parallel_iterations must be None or a positive int, "
                        f"not {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{who}: parallel_iterations must be None or a positive int, not {value}")
    return int(value)


def _chunks(n, parallel_iterations):
    """``(start, stop)`` row ranges of at most ``parallel_iterations`` rows (all at once if None)."""
    size = max(1, n if not parallel_iterations else int(parallel_iterations))
    return [(start, min(n, start + size)) for start in range(0, n, size)] or [(0, 0)]


# batch_jacobian's default chunk: about this many bytes of seed cotangents per
# backward pass. Measured on W4: chunks that stay in cache beat one pass over
# the whole stack (1.2x vs 1.5x the NumPy baseline); jacobian's result-sized
# concatenation makes chunking a loss there, so jacobian is unchunked by default.
BATCH_JACOBIAN_CHUNK_BYTES = 1 << 20


def jacobian(tape, target, sources, unconnected_gradients, parallel_iterations,
             experimental_use_pfor):
    """``tape.jacobian``: the (target.shape + source.shape) Jacobian for each source."""
    from .tape import UnconnectedGradients, _normalize_unconnected

    unconnected = _normalize_unconnected(unconnected_gradients)
    parallel_iterations = _checked_parallel_iterations(parallel_iterations, "jacobian")
    if target is None:
        raise TypeError("jacobian: target is None; pass the tensor to differentiate")
    target = _single_target(target, "jacobian")
    flat_sources = nest.flatten(sources)
    for s in flat_sources:
        if not isinstance(s, Tensor):
            raise ValueError(f"sources must be Tensors or Variables; got {type(s).__name__} {s!r}")
    t_shape = tuple(target._value.shape)
    n = int(np.prod(t_shape, dtype=np.int64))

    if not experimental_use_pfor:
        rows = _rows_by_loop(tape, target, flat_sources, n, unconnected)
    else:
        tape._begin_backward()
        itemsize = target._value.dtype.itemsize
        row_bytes = itemsize * (n + sum(s._value.size for s in flat_sources))
        _check_fits("jacobian", n, min(n, parallel_iterations or n), row_bytes,
                    n * itemsize * sum(s._value.size for s in flat_sources))
        rows = _rows_vectorized(tape, target, flat_sources, n, parallel_iterations)
        tape._end_backward()

    results = []
    for s, r in zip(flat_sources, rows):
        if r is None:
            if unconnected is UnconnectedGradients.ZERO or not s.dtype.is_differentiable:
                r = None if not s.dtype.is_differentiable else \
                    ops.zeros(t_shape + tuple(s._value.shape), dtype=s.dtype)
            results.append(r)
            continue
        results.append(ops.reshape(r, t_shape + tuple(s._value.shape)))
    return nest.pack_sequence_as(sources, results)


# The one-hot seed blocks of the last few Jacobians, kept for the next call:
# building a (n, n) identity costs as much as a small Jacobian (64 MiB for
# W3), and the same blocks come back every training step. Arrays are never
# written after they are made, so sharing them is safe.
_SEED_CACHE = collections.OrderedDict()
SEED_CACHE_ENTRIES = 4
SEED_CACHE_MAX_BYTES = 64 << 20
_SEED_LOCK = threading.Lock()


def _identity_rows(start, stop, n, dtype):
    """Rows ``start..stop`` of the n-by-n identity, as a backend array (cached)."""
    xp = backend.xp
    key = (start, stop, n, str(dtype), backend.get_backend())
    with _SEED_LOCK:
        eye = _SEED_CACHE.get(key)
        if eye is not None:
            _SEED_CACHE.move_to_end(key)
            return eye
    eye = xp.zeros((stop - start, n), dtype=dtype)
    eye[xp.arange(stop - start), xp.arange(start, stop)] = 1
    if eye.nbytes <= SEED_CACHE_MAX_BYTES:
        with _SEED_LOCK:
            _SEED_CACHE[key] = eye
            while len(_SEED_CACHE) > SEED_CACHE_ENTRIES or \
                    sum(e.nbytes for e in _SEED_CACHE.values()) > SEED_CACHE_MAX_BYTES:
                _SEED_CACHE.popitem(last=False)
    return eye


def _one_hot_rows(start, stop, n, target):
    """Rows ``start..stop`` of the identity, shaped ``(rows,) + target.shape``."""
    eye = _identity_rows(start, stop, n, target._value.dtype)
    return Tensor(eye.reshape((stop - start,) + tuple(target._value.shape)))


def _rows_vectorized(tape, target, sources, n, parallel_iterations):
    """Per source: a (n,) + source.shape stack of gradient rows, or None."""
    records, source_ids = tape._records, tape._watched_source_ids(sources)
    pieces = [[] for _ in sources]
    chunks = _chunks(n, parallel_iterations)
    for start, stop in chunks:
        seed = _one_hot_rows(start, stop, n, target)
        grads = backward(records, {target._id: seed}, source_ids, n_batch=1)
        for k, s in enumerate(sources):
            pieces[k].append(grads.get(s._id) if s._id in source_ids else None)
    rows = []
    for s, parts in zip(sources, pieces):
        if all(p is None for p in parts):
            rows.append(None)
            continue
        parts = [ops.zeros((stop - start,) + tuple(s._value.shape), dtype=s.dtype) if p is None
                 else p for p, (start, stop) in zip(parts, chunks)]
        rows.append(parts[0] if len(parts) == 1 else ops.concat(parts, axis=0))
    return rows


def _rows_by_loop(tape, target, sources, n, unconnected):
    """The row loop (``experimental_use_pfor=False``): one gradient call per element."""
    if not tape._persistent:
        raise RuntimeError("jacobian(experimental_use_pfor=False) calls gradient once per "
                           "element of the target, so the tape must be created with "
                           "persistent=True")
    rows = [[] for _ in sources]
    for i in range(n):
        seed = _one_hot_rows(i, i + 1, n, target)
        grads = tape.gradient(target, sources, output_gradients=[ops.reshape(seed, target.shape)])
        for k, g in enumerate(grads):
            rows[k].append(g)
    stacked = []
    for s, column in zip(sources, rows):
        if n == 0:
            stacked.append(ops.zeros((0,) + tuple(s._value.shape), dtype=s.dtype))
            continue
        if all(g is None for g in column):
            stacked.append(None)
            continue
        column = [ops.zeros(s._value.shape, dtype=s.dtype) if g is None else g for g in column]
        stacked.append(ops.stack(column))
    return stacked


def _single_target(target, method):
    """``target`` as one tensor; a list, tuple or dict of targets raises AttributeError, the
    exception TensorFlow raises (it looks for the target's ``.shape``)."""
    if isinstance(target, (list, tuple, dict)):
        raise AttributeError(
            f"'{type(target).__name__}' object has no attribute 'shape': {method} takes a "
            f"single target tensor (one Jacobian per target: call it once per target)")
    return convert_to_tensor(target)


def batch_jacobian(tape, target, source, unconnected_gradients, parallel_iterations,
                   experimental_use_pfor):
    """``tape.batch_jacobian``: per example ``b``, d target[b] / d source[b]."""
    from .tape import _normalize_unconnected

    _normalize_unconnected(unconnected_gradients)
    parallel_iterations = _checked_parallel_iterations(parallel_iterations, "batch_jacobian")
    target = _single_target(target, "batch_jacobian")
    if not isinstance(source, Tensor):
        raise ValueError(f"batch_jacobian: source must be a Tensor or Variable, not {source!r}")
    t_shape, s_shape = tuple(target._value.shape), tuple(source._value.shape)
    for what, shape in (("target", t_shape), ("source", s_shape)):
        if len(shape) < 2:
            raise ValueError(f"batch_jacobian: the {what} has shape {list(shape)}, but it must "
                             "have rank at least 2 (a batch axis and at least one more)")
    if t_shape[0] != s_shape[0]:
        raise InvalidArgumentError(
            f"batch_jacobian: the target's shape {list(t_shape)} and the source's shape "
            f"{list(s_shape)} must have the same first (batch) dimension")
    batch = t_shape[0]
    m = int(np.prod(t_shape[1:], dtype=np.int64))
    out_shape = (batch,) + t_shape[1:] + s_shape[1:]

    if not experimental_use_pfor:
        if not tape._persistent:
            raise RuntimeError("batch_jacobian(experimental_use_pfor=False) calls gradient once "
                               "per output position, so the tape must be created with "
                               "persistent=True")
        columns = []
        for j in range(m):
            seed = _position_seed(j, j + 1, m, target)
            g = tape.gradient(target, source, output_gradients=ops.reshape(seed, t_shape))
            columns.append(ops.zeros(s_shape, dtype=source.dtype) if g is None else g)
        stacked = ops.stack(columns, axis=1) if columns else ops.zeros((batch, 0) + s_shape[1:])
        return ops.reshape(stacked, out_shape)

    tape._begin_backward()
    itemsize = target._value.dtype.itemsize
    if parallel_iterations is None:
        seed_bytes_per_position = itemsize * int(np.prod(t_shape, dtype=np.int64))
        parallel_iterations = max(1, BATCH_JACOBIAN_CHUNK_BYTES // max(1, seed_bytes_per_position))
    _check_fits("batch_jacobian", m, min(m, parallel_iterations or m),
                itemsize * batch * (m + int(np.prod(s_shape[1:], dtype=np.int64))),
                itemsize * int(np.prod(out_shape, dtype=np.int64)))
    pieces = []
    for start, stop in _chunks(m, parallel_iterations):
        seed = _position_seed(start, stop, m, target)
        grads = backward(tape._records, {target._id: seed},
                         tape._watched_source_ids([source]), n_batch=1)
        g = grads.get(source._id)
        pieces.append(ops.zeros((stop - start,) + s_shape, dtype=source.dtype) if g is None else g)
    tape._end_backward()
    stacked = pieces[0] if len(pieces) == 1 else ops.concat(pieces, axis=0)  # (m, batch) + s_shape[1:]
    perm = [1, 0] + list(range(2, stacked.ndim))
    return ops.reshape(ops.transpose(stacked, perm), out_shape)


def _position_seed(start, stop, m, target):
    """Cotangents for output positions ``start..stop``, 1 in every example at once.

    Shape ``(stop - start, batch) + target.shape[1:]``.
    """
    t_shape = tuple(target._value.shape)
    eye = _identity_rows(start, stop, m, target._value.dtype).reshape((stop - start, 1) + t_shape[1:])
    return Tensor(backend.xp.broadcast_to(eye, (stop - start,) + t_shape).copy())


from . import ops  # noqa: E402
