"""A step's scalars (the learning rate, Adam's bias correction, momentum ...) as 0-d
arrays of a variable's dtype: made with ops (``_scalar``), or, when nothing can see
the step (``raw_scalars``), on host 0-d NumPy arrays with the very ufuncs those ops'
forwards call, so the floats are the same without an op's overhead a scalar.

    >>> from autodiff.models.optimizers.step_scalars import _scalar_value
    >>> v = ad.Variable(np.zeros(3, np.float32))
    >>> _scalar_value(0.5, v)
    array(0.5, dtype=float32)
"""

import numpy as np

from ... import tape as _tape
from ...ops import elementwise
from ...tensor import Tensor, convert_to_tensor

__all__ = ["raw_scalars"]


def _scalar(value, variable):
    """A 0-d tensor of the variable's dtype (Keras casts its hyperparameters so)."""
    if isinstance(value, Tensor):
        return elementwise.cast(value, variable.dtype) if value.dtype != variable.dtype else value
    return convert_to_tensor(value, dtype=variable.dtype)


def _scalar_value(value, variable):
    """``_scalar(value, variable)._value``, where ``value`` may also be a raw 0-d NumPy
    array (a rate from ``raw_rate``): then Cast's forward, ``astype``, on it."""
    if isinstance(value, (np.ndarray, np.generic)):
        dtype = variable._value.dtype
        return value if value.dtype == dtype else value.astype(dtype)
    return _scalar(value, variable)._value


def raw_scalars(variable):
    """True when a step's scalars may be computed on host 0-d NumPy arrays instead of ops:
    ``variable`` is on NumPy, and no tape records and nothing observes this thread (so no
    record of those ops could be missed: a compiled step's node runs unobserved)."""
    state = _tape.thread_state
    return isinstance(variable._value, np.ndarray) and not state.active \
        and not state.observers
