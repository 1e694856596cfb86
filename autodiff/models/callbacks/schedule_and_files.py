"""Callbacks that act each epoch: LearningRateScheduler, ModelCheckpoint, CSVLogger, LambdaCallback.

    >>> callbacks = [
    ...     ad.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.9),
    ...     ad.keras.callbacks.ModelCheckpoint("best.keras", save_best_only=True),
    ...     ad.keras.callbacks.CSVLogger("log.csv"),
    ... ]

Files are written as ``model.save`` / ``save_weights`` write them: whole or
not at all (``saving/``).
"""

import csv
import os

from .base import Callback
from .monitoring import _Monitor, _rate

__all__ = ["LearningRateScheduler", "ModelCheckpoint", "CSVLogger", "LambdaCallback"]


class LearningRateScheduler(Callback):
    """Sets the learning rate at each epoch's start to ``schedule(epoch, lr)``.

    Args:
        schedule: ``schedule(epoch, lr) -> new lr`` (a float).
        verbose: 1 prints the new rate.
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        rate = self.schedule(epoch, float(_rate(optimizer)))
        if not isinstance(rate, (float, int)) and not hasattr(rate, "numpy"):
            raise ValueError(f'The output of the "schedule" function should be a float. Got: '
                             f"{rate}")
        optimizer.learning_rate = float(rate)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{float(rate)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(_rate(self.model.optimizer))


class ModelCheckpoint(_Monitor):
    """Saves the model (or its weights) after each epoch or every N batches, or only when
    ``monitor`` improves.

    Args:
        filepath: ending in ``.keras`` (``model.save``) or, with
            ``save_weights_only=True``, ``.weights.h5``; may hold format
            fields (``'model_{epoch:02d}_{val_loss:.2f}.keras'``, epoch from 1,
            and with an int ``save_freq`` also ``{batch}``, from 1 in its epoch).
        monitor, mode: as ``EarlyStopping``.
        save_best_only: save only when ``monitor`` improves on the best so far.
        save_weights_only: ``save_weights`` instead of ``save``.
        save_freq: ``'epoch'``, or an int N: save after every N batches, counted
            across epochs (Keras 3's count: an epoch's last batches carry over).
        initial_value_threshold: the value to beat first.

    Raises:
        ValueError: a file name that does not end as Keras 3 requires, or a
            ``save_freq`` that is neither ``'epoch'`` nor an int.

    Each save writes a temporary file and renames it over ``filepath``, so an
    interrupted save never leaves a broken checkpoint.
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__(monitor, mode, 0)
        self.filepath = os.fspath(filepath)
        self.verbose, self.save_best_only = verbose, save_best_only
        self.save_weights_only = save_weights_only
        if save_freq != "epoch" and (isinstance(save_freq, bool) or
                                     not isinstance(save_freq, int)):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                             f"'epoch' or integer values")
        self.save_freq = save_freq
        self._batches_seen_since_last_saving, self._last_batch_seen = 0, None
        self._current_epoch = 0
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(f"When using `save_weights_only=True` in `ModelCheckpoint`, the "
                             f"filepath provided must end in `.weights.h5` (Keras weights "
                             f"format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError(f"The filepath provided must end in `.keras` (Keras model "
                             f"format). Received: filepath={self.filepath}")
        self.best = initial_value_threshold

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _should_save_on_batch(self, batch):
        """Keras 3's count: batches since the last save, across epochs (``batch`` restarts
        at 0 each epoch)."""
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            added = batch + 1   # a new epoch
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _save(self, epoch, batch, logs):
        logs = logs or {}
        if batch is None or "batch" in logs:
            path = self.filepath.format(epoch=epoch + 1, **logs)
        else:
            path = self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        if self.save_best_only:
            current = self._current(logs)
            if current is None or not self._improved(current, self.best) or \
                    (self.best is not None and current == self.best):
                if self.verbose > 0 and current is not None:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best} to "
                      f"{current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)


class CSVLogger(Callback):
    """Writes one row per epoch (``epoch`` and every logged value, sorted) to a CSV file.

    Args:
        filename: the file.
        separator: between fields (default ``','``).
        append: add to an existing file instead of replacing it.
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.keys, self._file, self._writer = None, None, None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and \
            os.path.getsize(self.filename) > 0
        self._has_header = exists
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self.keys, self._writer = None, None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if not any(key.startswith("val_") for key in self.keys):
                # as Keras: val_ columns from the start (NA until validation runs)
                self.keys += ["val_" + key for key in self.keys]
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self.keys,
                                          delimiter=self.sep)
            if not self._has_header:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update({k: logs.get(k, "NA") for k in self.keys})
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = None


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(self, **hooks):
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_"):
                raise ValueError(f"LambdaCallback: {name!r} is not a callback hook")
            setattr(self, name, fn)
