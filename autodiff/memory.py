"""What a tape holds in memory: its records, and the arrays they keep for the backward pass.

Reverse mode must keep, from the forward pass, whatever the VJPs will read:
``Sin`` keeps its input (``d/dx sin x = cos x``), ``Exp`` its output, an
``AddV2`` nothing but shapes (``registry.py``: each op's ``saves``). A
record's inputs and outputs are Tensors; those whose data the tape does not
need are shape-and-dtype placeholders (``tensor.ArraySpec``), and values of
at most ``tape.KEEP_VALUES_UP_TO_BYTES`` are kept whole (a placeholder would
cost as much). ``tape_memory`` counts what is left, each array once:

    >>> x = ad.ones([1000])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = ad.reduce_sum(ad.sin(x) + 1.0)
    >>> print(ad.debugging.tape_memory(tape))
    3 records keep 3 arrays, 4,008 bytes

(``Sin`` keeps ``x``, 4000 bytes; ``AddV2`` and ``Sum`` keep only shapes of
their large tensors, and the two 4-byte scalars whole.) A custom
gradient's record also keeps the call's results; its ``grad_fn`` may hold
more in its closure (``ad.recompute_grad`` keeps the call's inputs, to run
the function again), which is not counted.

This module only reads a tape's public records; it changes nothing.
"""

from typing import NamedTuple

from .tensor import ArraySpec

__all__ = ["TapeMemory", "tape_memory"]


class TapeMemory(NamedTuple):
    """How much a tape holds.

    Attributes:
        records: how many records.
        arrays: how many distinct arrays with data they keep.
        bytes: the size of those arrays.
        per_record: for each record, the bytes of the arrays it is the first to keep.
    """

    records: int
    arrays: int
    bytes: int
    per_record: tuple

    def __str__(self):
        return (f"{self.records} record{'s' if self.records != 1 else ''} keep "
                f"{self.arrays} array{'s' if self.arrays != 1 else ''}, {self.bytes:,} bytes")


def tape_memory(tape):
    """Counts the records of ``tape`` and the arrays (with data) they keep.

    Args:
        tape: an ``ad.GradientTape`` whose records are not freed yet (a
            persistent tape, or one before its ``gradient`` call).

    Returns:
        A ``TapeMemory(records, arrays, bytes, per_record)``; an array kept
        by several records (or twice by one) counts once, for the first.

    Raises:
        RuntimeError: the tape is non-persistent and already used.

    >>> x = ad.Variable(np.ones(1000, np.float32))
    >>> with ad.GradientTape() as tape:
    ...     y = ad.reduce_sum(ad.sin(x) + 1.0)
    >>> ad.debugging.tape_memory(tape).per_record      # Sin, AddV2, Sum
    (4000, 4, 4)
    """
    records = tape.records
    seen, per_record = set(), []
    for record in records:
        kept = 0
        for tensor in _held(record):
            value = tensor._value
            if not isinstance(value, ArraySpec) and id(value) not in seen:
                seen.add(id(value))
                kept += value.nbytes
        per_record.append(kept)
    return TapeMemory(len(records), len(seen), sum(per_record), tuple(per_record))


def _held(record):
    """The tensors ``record`` keeps: its inputs and outputs, and, for a custom gradient,
    the results of the call (its primitive keeps them, for ``ad.function``)."""
    return record.inputs + record.outputs + tuple(getattr(record.primitive, "custom_results", ()))
