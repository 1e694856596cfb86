"""``ad.keras.callbacks``: Keras 3's hooks into ``fit``, ``evaluate`` and ``predict``.

Reading order: ``base.py`` (the hooks, in the order ``fit`` calls them;
``History``), ``progbar.py`` (what ``verbose`` prints), ``monitoring.py``
(EarlyStopping, ReduceLROnPlateau, TerminateOnNaN: acting on a watched
value), ``schedule_and_files.py`` (LearningRateScheduler, ModelCheckpoint,
CSVLogger, LambdaCallback).
"""

from .base import Callback, CallbackList, History
from .monitoring import EarlyStopping, ReduceLROnPlateau, TerminateOnNaN
from .progbar import ProgbarLogger
from .schedule_and_files import CSVLogger, LambdaCallback, LearningRateScheduler, ModelCheckpoint

__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger", "EarlyStopping",
           "ReduceLROnPlateau", "TerminateOnNaN", "LearningRateScheduler", "ModelCheckpoint",
           "CSVLogger", "LambdaCallback"]


def __dir__():
    return __all__
