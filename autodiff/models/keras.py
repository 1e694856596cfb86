"""``ad.keras``: the names a Keras 3 custom training loop uses, on this engine.

``keras.`` becomes ``ad.keras.``: ``Sequential``, ``Model`` (subclassing),
``Input``, ``layers``, ``optimizers`` (with ``schedules``), ``losses`` and ``metrics``.
There is one implementation: ``ad.keras.layers`` is ``ad.layers`` and
``ad.keras.optimizers`` is ``ad.optimizers``. What is not here (``compile``
and ``fit``, the functional API) is Keras' training machinery;
this toolkit is for the loop you write yourself, where the tape is visible.
"""

from . import layers, losses, metrics, optimizers
from .model import Input, InputLayer, Model, Sequential

__all__ = ["Sequential", "Model", "Input", "InputLayer", "layers", "optimizers", "losses",
           "metrics"]


def __dir__():
    return __all__
