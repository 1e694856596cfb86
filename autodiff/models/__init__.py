"""Building models: ``ad.Module`` and ``ad.keras`` (layers, models, losses, optimizers,
training, saving), on the engine's ops.

Reading order: ``module.py`` (a container that finds its variables),
``initializers.py``, ``activations.py`` and ``regularizers.py`` (Keras 3's
named pieces a layer is made with), ``layers/`` (Keras layers: variables
made on the first call; ``base.py`` first), ``functional/`` (``Input`` and
``Model(inputs, outputs)``), ``model.py`` (``Model`` subclassing and
``Sequential``), ``losses/`` (Keras' losses, what a training step
minimizes), ``metrics.py`` (running means and accuracies a training loop
reports), ``optimizers/`` (gradients to variable updates, outside every
tape, one indivisible step per call; with ``schedules.py``, learning rates
that follow the optimizer's step counter), ``callbacks/`` and ``training/``
(``compile``, ``fit``, ``evaluate``, ``predict``), ``saving/`` (Keras 3's
``.weights.h5`` and ``.keras`` files), ``ops.py``, ``random.py`` and ``utils.py`` (the
``keras.ops``, ``keras.random`` and ``keras.utils`` namespaces), and ``keras.py`` (the
``ad.keras`` namespace that gathers them).

May import: the engine; ``training/`` also imports ``tracing`` (``fit``
runs its step through ``ad.function``), and ``saving/`` imports h5py when a
file is read or written. The compiler and saved models do not come in here;
``autodiff.saved_model`` imports ``module.py``.
"""

from . import keras, layers, optimizers
from .module import Module

__all__ = ["Module", "keras", "layers", "optimizers"]
