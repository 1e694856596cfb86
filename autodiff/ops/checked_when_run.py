"""Ops whose checks wait, while ``ad.function`` records them, for the graph to run.

A trace is recorded on the first call's numbers (or a saved model's probe values: ones,
sizes of 1), where TensorFlow traces symbolically and checks only when the graph runs.
An op built with ``CheckedWhenRun`` knows, through ``recording()``, that its inputs come
from the function's arguments while it is recorded: it may then skip a check that those
numbers fail (``traced_slice.py``: a box that does not fit; ``gather_dynamic.py``: a row
of an empty ``x`` in ``for row in x``) and give a stand-in of the right shape. The trace
then runs its graph, where the check is strict, on every call, the first one included.
"""

import threading

from .. import validate as _validate
from ..registry import Primitive
from ..tensor import Tensor

__all__ = ["CheckedWhenRun", "recording"]

_state = threading.local()


def recording():
    """Whether a ``CheckedWhenRun`` op is being recorded from values a trace follows."""
    return getattr(_state, "recording", False)


class CheckedWhenRun(Primitive):
    """A Primitive whose forward may leave its checks to the graph while it is recorded."""

    def __call__(self, *args, **params):
        before = recording()
        _state.recording = any(isinstance(a, Tensor) and _validate.traced(a) for a in args)
        try:
            return super().__call__(*args, **params)
        finally:
            _state.recording = before
