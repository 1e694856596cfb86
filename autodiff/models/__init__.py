"""Building models: ``ad.Module``, ``ad.layers`` and ``ad.optimizers``, written with the engine's ops.

Reading order: ``module.py`` (a container that finds its variables),
``layers.py`` (Keras layers: variables made on the first call),
``optimizers.py`` (gradients to variable updates, outside every tape),
``schedules.py`` (learning rates that follow the optimizer's step counter).

May import: the engine only. Traced functions, the compiler and saved
models do not come in here; ``autodiff.saved_model`` imports ``module.py``.
"""

from . import layers, optimizers
from .module import Module

__all__ = ["Module", "layers", "optimizers"]
