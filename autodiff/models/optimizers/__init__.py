"""``ad.optimizers`` (also ``ad.keras.optimizers``): Keras 3's optimizers and schedules.

Reading order: ``base.py`` (what every optimizer shares: the learning
rate, ``iterations``, slots, clipping, weight decay, ``apply_gradients``),
``atomic.py`` (why one ``apply_gradients`` is one indivisible step, even
under threads and inside ``ad.function``), then the update rules:
``gradient_descent.py`` (SGD, RMSprop, Adagrad) and ``adam.py`` (Adam,
AdamW, Lion); ``schedules.py`` (learning rates that follow the step).

    >>> w = ad.Variable([3.0, 4.0])
    >>> grads = [ad.constant([30.0, 40.0])]         # norm 50: clipped to norm 1
    >>> opt = ad.optimizers.Adam(learning_rate=0.01, global_clipnorm=1.0)
    >>> opt.apply_gradients(zip(grads, [w]))
    <ad.Variable 'adam/iteration:0' shape=() dtype=int64, numpy=1>
    >>> w.numpy().round(4)                          # Adam's first step: lr * sign(g)
    array([2.99, 3.99], dtype=float32)
"""

from . import schedules
from .adam import Adam, AdamW, Lion
from .base import Optimizer
from .gradient_descent import SGD, Adagrad, RMSprop

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Lion", "schedules",
           "get"]

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad,
            "lion": Lion}


def get(identifier):
    """An optimizer from its Keras name (``'adam'``) or an optimizer itself (Keras' ``get``).

    >>> type(ad.optimizers.get("rmsprop")).__name__
    'RMSprop'
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r} "
                     f"(known names: {sorted(_BY_NAME)})")


def __dir__():   # dir(ad.optimizers) shows the optimizers, not this package's modules
    return __all__
