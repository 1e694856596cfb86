"""Callbacks that watch a logged value: EarlyStopping, ReduceLROnPlateau, TerminateOnNaN.

A monitored value (``'val_loss'`` by default) *improves* when it moves past
the best so far by more than ``min_delta`` in the right direction:
``mode='min'`` for losses, ``'max'`` for accuracies, ``'auto'`` guesses
from the name as Keras does (``'max'`` for names with "acc", "auc" or
"precision"... in them, else ``'min'``).

    >>> ad.random.set_seed(0)
    >>> x, y = ad.random.normal([20, 3]), ad.random.normal([20, 1])   # nothing to learn
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(1)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> stop = ad.keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    >>> history = model.fit(x, y, validation_split=0.2, epochs=100, callbacks=[stop],
    ...                     verbose=0)
    >>> len(history.history["val_loss"])    # epoch 0 was best; two more without gain
    3
"""

import math
import warnings

from ...variable import Variable
from .base import Callback

__all__ = ["EarlyStopping", "ReduceLROnPlateau", "TerminateOnNaN"]

_MAX_WORDS = ("acc", "auc", "precision", "recall", "f1", "iou")


class _Monitor(Callback):
    """The shared part: which value, which direction, how much counts as better."""

    def __init__(self, monitor, mode, min_delta):
        super().__init__()
        self.monitor = monitor
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode {mode!r} is unknown, fallback to auto "
                          f"mode.", stacklevel=3)
            mode = "auto"
        if mode == "auto":
            name = monitor.removeprefix("val_")
            mode = "max" if any(w in name for w in _MAX_WORDS) else "min"
        self.mode = mode
        self.min_delta = abs(min_delta)

    def _improved(self, value, reference):
        if reference is None:
            return True
        if self.mode == "min":
            return value < reference - self.min_delta
        return value > reference + self.min_delta

    def _current(self, logs):
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"{type(self).__name__} is conditioned on metric `{self.monitor}` "
                          f"which is not available. Available metrics are: "
                          f"{','.join(sorted(logs or {}))}", stacklevel=3)
        return value


class EarlyStopping(_Monitor):
    """Stops training when ``monitor`` has not improved for ``patience`` epochs.

    Args:
        monitor: the logged value to watch (default ``'val_loss'``).
        min_delta: the least change that counts as an improvement.
        patience: epochs without improvement before stopping.
        verbose: 1 prints a line when it stops.
        mode: ``'auto'``, ``'min'`` or ``'max'``.
        baseline: a value to beat; training stops if it is not beaten within
            ``patience`` epochs.
        restore_best_weights: at the end, set the weights of the best epoch.
        start_from_epoch: epochs to wait before watching.
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.stopped_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch = 0, 0
        self.best, self.best_weights, self.best_epoch = None, None, 0

    def on_epoch_end(self, epoch, logs=None):
        current = self._current(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._improved(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improved(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ReduceLROnPlateau(_Monitor):
    """Multiplies the learning rate by ``factor`` when ``monitor`` stops improving.

    Args:
        monitor: the logged value to watch (default ``'val_loss'``).
        factor: the factor (< 1) the rate is multiplied by.
        patience: epochs without improvement before reducing.
        mode, min_delta: as ``EarlyStopping``.
        cooldown: epochs to wait after a reduction before watching again.
        min_lr: the rate never goes below this.
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. "
                             f"Received factor={factor}")
        super().__init__(monitor, mode, kwargs.pop("epsilon", min_delta))
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def on_train_begin(self, logs=None):
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(_rate(optimizer))
        current = self._current(logs)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(_rate(optimizer))
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    optimizer.learning_rate = new
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate "
                              f"to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


def _rate(optimizer):
    rate = optimizer.learning_rate
    return rate.numpy() if isinstance(rate, Variable) or hasattr(rate, "numpy") else rate


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True
