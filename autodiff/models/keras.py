"""``ad.keras``: Keras 3's names, on this engine.

``keras.`` becomes ``ad.keras.``: ``Sequential``, ``Model`` (subclassing and
``Model(inputs, outputs)``), ``Input``, ``layers``, ``optimizers`` (with
``schedules``), ``losses``, ``metrics``, ``callbacks``, ``initializers``,
``activations``, ``regularizers``, ``ops``, ``random``, ``utils``, ``models``
(``load_model``), ``saving``, ``backend`` (``clear_session``) and ``Variable``. There is one implementation:
``ad.keras.layers`` is ``ad.layers`` and ``ad.keras.optimizers`` is
``ad.optimizers``. ``compile``/``fit`` run Keras' loop (``training/``); the
loop written by hand, where the tape is visible, works as before.
"""

import types as _types

from . import activations, callbacks, initializers, layers, losses, metrics, optimizers
from . import regularizers
from . import ops, random, utils
from .functional.keras_tensor import KerasTensor
from .model import Input, InputLayer, Model, Sequential
from .layers.weights import StandaloneVariable as Variable
from .saving.model_io import load_model

models = _types.ModuleType("autodiff.keras.models", "ad.keras.models: Model, Sequential, "
                           "load_model (Keras 3's keras.models).")
models.Model, models.Sequential, models.load_model = Model, Sequential, load_model
models.__all__ = ["Model", "Sequential", "load_model"]
saving = _types.ModuleType("autodiff.keras.saving", "ad.keras.saving: load_model "
                           "(Keras 3's keras.saving).")
saving.load_model = load_model
saving.__all__ = ["load_model"]
backend = _types.ModuleType("autodiff.keras.backend", "ad.keras.backend: clear_session "
                            "(Keras 3's keras.backend.clear_session).")
backend.clear_session = utils.clear_session
backend.__all__ = ["clear_session"]

__all__ = ["Sequential", "Model", "Input", "InputLayer", "KerasTensor", "layers", "optimizers",
           "losses", "metrics", "callbacks", "initializers", "activations", "regularizers",
           "ops", "random", "utils", "models", "saving", "backend", "Variable"]


def __dir__():
    return __all__
