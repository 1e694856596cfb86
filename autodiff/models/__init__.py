"""Building models: ``ad.Module`` and ``ad.keras`` (layers, models, losses, optimizers), on the engine's ops.

Reading order: ``module.py`` (a container that finds its variables),
``layers/`` (Keras layers: variables made on the first call; ``base.py``
first), ``model.py`` (``Model`` subclassing and ``Sequential``),
``losses/`` (Keras' losses, what a training step minimizes),
``metrics.py`` (running means and accuracies a training loop reports),
``optimizers/`` (gradients to variable updates, outside every tape, one
indivisible step per call; with ``schedules.py``, learning rates that follow
the optimizer's step counter),
and ``keras.py`` (the ``ad.keras`` namespace that gathers them).

May import: the engine only. Traced functions, the compiler and saved
models do not come in here; ``autodiff.saved_model`` imports ``module.py``.
"""

from . import keras, layers, optimizers
from .module import Module

__all__ = ["Module", "keras", "layers", "optimizers"]
