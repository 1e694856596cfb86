"""``ad.TensorArray``: the list of tensors that TensorFlow code fills in a loop and then stacks.

    >>> ta = ad.TensorArray(ad.float32, size=0, dynamic_size=True)
    >>> for i in range(3):
    ...     ta = ta.write(i, float(i) * 2.0)
    >>> ta.stack().numpy()
    array([0., 2., 4.], dtype=float32)

This module owns the class and how a ``while_loop`` carries one. It holds its
elements in one of two ways, as TensorFlow 2 does:

- **Eagerly, a Python list of element tensors** (None where nothing was
  written). ``write`` stores the tensor and returns the same array (TensorFlow's
  eager TensorArray is mutable too); ``read`` gives the stored tensor back;
  ``stack`` is one ``Pack``. A tape records only ``stack``/``unstack``/``gather``,
  so a gradient flows through the stored tensors themselves.
- **Inside ``ad.function``, one buffer tensor** of shape ``[size, *element_shape]``
  (TensorFlow's TensorList). ``write(i, v)`` and ``scatter`` make a new buffer:
  grown with zero rows when ``dynamic_size`` needs it, then each row written
  replaced, through a ``where``, by the last value written to it; ``unstack``
  makes its value the buffer; ``read`` and ``gather`` are ``Gather`` ops. An index
  outside the array raises InvalidArgumentError when the graph runs (on a
  device, where the engine's gathers do not check, it writes nothing). Every step is an
  ordinary op of the engine, so gradients (any order, forward mode), the
  compiler and sizes that change from call to call need nothing more. Until an
  element is written with an unknown element shape, the buffer is a vector of
  ``size`` zeros that only carries the size.

``while_loop`` carries a TensorArray as its buffer (``to_flows``/``from_flows``,
what TensorFlow calls the array's *flow*), with a shape invariant that lets the
first dimension grow. Where the element shape is unknown before the loop, the
body is traced once first to learn it (``settle_element_shapes``). Limitations:
that shape is the trace's, held as a constant, so elements whose own size changes
from call to call cost one trace per size (the values stay right: the function
sees the graphs differ). An ``if`` on a tensor carries an array the same way
(``branch_arrays.py``).
"""

from .. import dtypes, nest
from ..errors import InvalidArgumentError, OutOfRangeError
from ..ops import (cast, concat, equal, gather, identity, maximum, reduce_max,
                   reshape, stack, unstack, where, zeros)
from ..ops import range as range_
from ..ops.shape import shape as shape_of
from ..tensor import Tensor, TensorShape, convert_to_tensor
from .staged import current_tracer, trace_function

__all__ = ["TensorArray", "has_tensor_arrays", "to_flows", "from_flows", "flow_invariants",
           "settle_element_shapes"]


class TensorArray:
    """A list of same-dtype tensors, written one at a time (``tf.TensorArray``).

    Args:
        dtype: the dtype of every element.
        size: the number of elements (an int, or an int32 scalar tensor).
        dynamic_size: whether writing past the end grows the array (default False).
        clear_after_read: accepted; TensorFlow 2 ignores it eagerly, and so does this.
        element_shape: the shape every element must have (None: learnt from the first write).
        infer_shape: whether the first write fixes the element shape (default True).
        tensor_array_name, name, colocate_with_first_write_call: accepted, unused.

    Raises:
        ValueError: no ``size``.

    >>> ta = ad.TensorArray(ad.float32, size=2).unstack([[1.0, 2.0], [3.0, 4.0]])
    >>> ta.read(1).numpy(), int(ta.size())
    (array([3., 4.], dtype=float32), 2)
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if size is None and flow is None:
            raise ValueError("TensorArray: size must be declared (TensorArray(dtype, size=...))")
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = None if element_shape is None else TensorShape(element_shape)
        self._elements = self._buffer = None
        self._shaped = True    # traced: whether the buffer has the element dimensions yet
        if flow is not None:      # from_flows: a buffer carried through a loop
            self._buffer = flow
            self._static_size = None
        elif current_tracer() is None:
            self._elements = [None] * int(size)
            self._static_size = int(size)
        else:
            self._static_size = size if isinstance(size, int) else None
            self._shaped = self._known()
            self._buffer = _zeros([size] + (list(self._element_shape) if self._shaped else []),
                                  self._dtype)

    # ---- what the array is -----------------------------------------------------------------
    @property
    def dtype(self):
        """The dtype of the elements."""
        return self._dtype

    @property
    def element_shape(self):
        """The elements' shape, a TensorShape (None sizes unknown); None while nothing is
        known (TensorFlow's ``TensorShape(None)``)."""
        return self._element_shape

    @property
    def dynamic_size(self):
        return self._dynamic

    def _known(self):
        return self._element_shape is not None and None not in self._element_shape

    def _placeholder(self):
        """Traced, and the buffer only carries the size (no element shape yet)."""
        return self._buffer is not None and not self._shaped

    def _like(self, buffer, element_shape=None, shaped=True):
        out = TensorArray(self._dtype, dynamic_size=self._dynamic, infer_shape=self._infer_shape,
                          element_shape=element_shape or self._element_shape, flow=buffer)
        out._static_size, out._shaped = self._static_size, shaped
        return out

    def size(self, name=None):
        """The number of elements, an int32 scalar tensor."""
        if self._elements is not None:
            return convert_to_tensor(len(self._elements), dtype=dtypes.int32)
        return shape_of(self._buffer, out_type=dtypes.int32)[0]

    def identity(self):
        """The same elements (traced: a new array after an ``Identity`` of the buffer)."""
        return self if self._elements is not None else self._like(identity(self._buffer))

    def close(self, name=None):
        """Accepted, as in TensorFlow 2; it does nothing."""

    # ---- writing ---------------------------------------------------------------------------
    def _checked(self, value, rows=False):
        """``value`` as a tensor of the array's dtype whose shape (or, with ``rows``, its
        rows' shape) fits the element shape, which it fixes (``infer_shape``)."""
        value = convert_to_tensor(value, dtype_hint=self._dtype)
        if value.dtype != self._dtype:
            raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is "
                                       f"trying to write dtype {value.dtype.name}")
        if rows and len(value.shape) == 0:
            raise ValueError("TensorArray: unstack and scatter need a value of at least one "
                             "dimension, got a scalar")
        shape = TensorShape(value.shape[1:] if rows else value.shape)
        if self._infer_shape:
            if self._element_shape is not None and not _compatible(self._element_shape, shape):
                raise ValueError(f"Incompatible shape for value ({tuple(shape)}), "
                                 f"expected ({tuple(self._element_shape)})")
            self._element_shape = shape
        return value

    def write(self, index, value, name=None):
        """Element ``index`` set to ``value``; returns the array to use from now on.

        Raises:
            OutOfRangeError: a negative ``index``, or one past the end without
                ``dynamic_size`` (traced: InvalidArgumentError when the graph runs).
            InvalidArgumentError: ``value`` has another dtype.
            ValueError: ``value``'s shape differs from the element shape.
        """
        element_shape = self._element_shape
        if self._elements is not None:
            k = _index(index, "write to")
            if k >= len(self._elements) and not self._dynamic:
                raise OutOfRangeError(f"Tried to write to index {k} but array is not "
                                      f"resizeable and size is: {len(self._elements)}")
        value = self._checked(value)
        if self._elements is None:
            index = reshape(convert_to_tensor(index, dtype_hint=dtypes.int32), [1])
            row = reshape(value, concat([[1], shape_of(value, out_type=dtypes.int32)], 0))
            return self._like(_scatter_buffer(self, index, row),
                              element_shape=self._element_shape or element_shape)
        self._elements += [None] * (k + 1 - len(self._elements))
        self._elements[k] = value
        return self

    def unstack(self, value, name=None):
        """The rows of ``value`` as the elements (the array then has ``len(value)`` of them).

        Raises:
            ValueError: more rows than a fixed-size array holds, or a scalar ``value``.
        """
        value = convert_to_tensor(value, dtype_hint=self._dtype)
        n = value.shape[0] if len(value.shape) else 0
        if not self._dynamic and self._static_size is not None and n > self._static_size:
            raise ValueError(f"Cannot unstack {n} tensors into a TensorArray of static size "
                             f"{self._static_size}")
        value = self._checked(value, rows=True)
        if self._elements is not None:   # TensorFlow's eager unstack: these are the elements
            self._elements = list(unstack(value)) if n else []
            return self
        return self._like(identity(value), shaped=True)

    def scatter(self, indices, value, name=None):
        """``value[j]`` written at ``indices[j]`` for every j (the last write to an index wins)."""
        value = self._checked(value, rows=True)
        if self._elements is None:
            return self._like(_scatter_buffer(self, _int_vector(indices), value))
        out = self
        for index, row in zip(_to_list(indices), unstack(value) if value.shape[0] else []):
            out = out.write(index, row)
        return out

    # ---- reading ---------------------------------------------------------------------------
    def read(self, index, name=None):
        """Element ``index`` (zeros if never written and the element shape is known).

        Raises:
            OutOfRangeError: a negative index or one past the end (traced:
                InvalidArgumentError when the graph runs).
            ValueError: the element was never written and its shape is unknown.
        """
        if self._elements is None:
            self._require_shape("read")
            return gather(self._buffer, convert_to_tensor(index, dtype_hint=dtypes.int32))
        k = _index(index, "read from")
        if k >= len(self._elements):
            raise OutOfRangeError(f"Tried to read from index {k} but array size is: "
                                  f"{len(self._elements)}")
        return self._elements[k] if self._elements[k] is not None else self._zeros("read")

    def stack(self, name=None):
        """Every element stacked along a new first dimension."""
        if self._elements is None:
            return identity(self._buffer)
        if not self._elements:
            return _zeros([0] + (list(self._element_shape) if self._known() else []), self._dtype)
        return stack([e if e is not None else self._zeros("stack") for e in self._elements])

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        if self._elements is None:
            self._require_shape("gather")
            return gather(self._buffer, _int_vector(indices))
        return stack([self.read(i) for i in nest.flatten(_to_list(indices))])

    def concat(self, name=None):
        """The elements joined along their first dimension (each must be at least a vector).

        Raises:
            InvalidArgumentError: a scalar element, or no elements.
        """
        if self._elements is None:
            self._require_shape("concat")
            if len(self._buffer.shape) < 2:
                raise InvalidArgumentError("TensorArray.concat: the elements are scalars; "
                                           "concat requires at least vectors")
            rest = shape_of(self._buffer, out_type=dtypes.int32)[2:]
            return reshape(self._buffer, concat([[-1], rest], 0))
        elements = [e if e is not None else self._zeros("concat") for e in self._elements]
        if not elements or any(len(e.shape) == 0 for e in elements):
            raise InvalidArgumentError("TensorArray.concat: concat requires at least one "
                                       "element, and each at least a vector (not a scalar)")
        return concat(elements, 0)

    def _zeros(self, what):
        if not self._known():
            raise ValueError(f"TensorArray.{what}: an element was never written and the "
                             f"element shape {self.element_shape} is not fully known, so it "
                             f"cannot be zeros; give element_shape= or write every element")
        return _zeros(list(self._element_shape), self._dtype)

    def _require_shape(self, what):
        if self._placeholder():
            raise ValueError(f"TensorArray.{what}: no element was written, and the element "
                             f"shape is unknown; give element_shape= to TensorArray")

    def __repr__(self):
        return (f"<ad.TensorArray dtype={self._dtype.name} element_shape={self.element_shape}"
                f"{' dynamic_size' if self._dynamic else ''}>")


def _index(index, what):
    k = index.numpy().item() if isinstance(index, Tensor) else int(index)
    if k < 0:
        verb = "Writing to" if what == "write to" else "Reading from"
        raise OutOfRangeError(f"{verb} negative indices (index {k}) is not allowed.")
    return k


def _compatible(expected, shape):
    return len(expected) == len(shape) and all(e is None or e == s for e, s in zip(expected, shape))


def _int_vector(indices):
    """Indices as an int32 vector tensor (a list may hold scalar tensors computed in the trace)."""
    if isinstance(indices, Tensor) or not any(isinstance(i, Tensor) for i in indices):
        return convert_to_tensor(indices, dtype_hint=dtypes.int32)
    return stack([convert_to_tensor(i, dtype_hint=dtypes.int32) for i in indices])


def _to_list(indices):
    return indices.numpy().tolist() if isinstance(indices, Tensor) else indices


def _zeros(shape, dtype):
    return zeros(shape, dtype=dtype)


def _scatter_buffer(ta, indices, values):
    """The traced write of ``values``' rows at ``indices`` (module docstring): grow if dynamic,
    check the indices, then each row of the buffer from the last value written to it, through
    ``where``. A leading zero row and index -1 keep every gather non-empty."""
    int32 = dtypes.int32
    buffer, rank = ta._buffer, len(values.shape)
    if not ta._shaped:   # the first write gives the buffer its element dimensions
        buffer = zeros(concat([shape_of(buffer, out_type=int32)[:1],
                               shape_of(values, out_type=int32)[1:]], 0), dtype=ta._dtype)
    n = shape_of(buffer, out_type=int32)[0]
    if ta._dynamic:
        extra = maximum(reduce_max(concat([indices + 1, [0]], 0)) - n, 0)
        grown = concat([reshape(extra, [1]), shape_of(buffer, out_type=int32)[1:]], 0)
        buffer = concat([buffer, zeros(grown, dtype=ta._dtype)], 0)
        n = shape_of(buffer, out_type=int32)[0]
    # An index outside [0, n) raises InvalidArgumentError in the gather when the graph runs, on
    # the host; on a device (gather_dynamic.py: no copy to check) it matches no row, unwritten.
    indices = indices + gather(range_(n), indices) * 0
    padded = concat([zeros(concat([[1], shape_of(values, out_type=int32)[1:]], 0),
                           dtype=ta._dtype), values], 0)
    m = shape_of(padded, out_type=int32)[0]
    hits = equal(reshape(range_(n), [-1, 1]), reshape(concat([[-1], indices], 0), [1, -1]))
    source = reduce_max(cast(hits, int32) * reshape(range_(m), [1, -1]), axis=1)   # 0: not hit
    rows = reshape(source > 0, [-1] + [1] * (rank - 1))
    return where(rows, gather(padded, source), buffer)


# ---- carrying arrays through a while_loop --------------------------------------------------
def has_tensor_arrays(structure):
    return any(isinstance(leaf, TensorArray) for leaf in nest.flatten(structure))


def _flow(ta):
    if ta._elements is not None:      # an eager array entering a trace
        known = ta._known() or any(e is not None for e in ta._elements)
        return ta.stack() if known else _zeros([len(ta._elements)], ta._dtype)
    return ta._buffer


def to_flows(structure):
    """``structure`` with each TensorArray replaced by its buffer (the loop carries that)."""
    return nest.map_structure(lambda leaf: _flow(leaf) if isinstance(leaf, TensorArray)
                              else leaf, structure)


def from_flows(template, flows):
    """``flows`` with each buffer where ``template`` has a TensorArray made an array again."""
    flat = [ta._like(flow, shaped=ta._shaped) if isinstance(ta, TensorArray) else flow
            for ta, flow in zip(nest.flatten(template), nest.flatten(flows))]
    return nest.pack_sequence_as(template, flat)


def flow_invariants(template, invariants):
    """Shape invariants for the flows: an array's buffer may grow along its first dimension."""
    flat = nest.flatten(template)
    given = invariants if invariants is not None else [None] * len(flat)
    return [TensorShape([None] + list(_flow(leaf).shape[1:])) if isinstance(leaf, TensorArray)
            else shape for leaf, shape in zip(flat, given)]


def settle_element_shapes(template, body):
    """``template`` with arrays of unknown element shape given the shape the body writes
    (one trace of the body, thrown away; see the module docstring)."""
    flat = nest.flatten(template)
    if not any(isinstance(t, TensorArray) and t._placeholder() for t in flat):
        return template
    probe = trace_function(lambda *vs: body(*from_flows(template, vs)), to_flows(template),
                           "probe", lambda value, label: value).outputs
    settled = []
    for before, after in zip(flat, nest.flatten(probe)):
        if isinstance(before, TensorArray) and before._placeholder() and \
                isinstance(after, TensorArray) and not after._placeholder():
            size = shape_of(_flow(before), out_type=dtypes.int32)[:1]
            rest = convert_to_tensor(list(after._buffer.shape[1:]), dtype=dtypes.int32)
            before = before._like(_zeros(concat([size, rest], 0), before._dtype),
                                  after._element_shape)
        settled.append(before)
    return nest.pack_sequence_as(template, settled)
