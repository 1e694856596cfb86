"""``verbose=1``: Keras 3's progress bar; ``verbose=2``: one line per epoch.

    Epoch 1/2
    3/3 ━━━━━━━━━━━━━━━━━━━━ 0s 2ms/step - accuracy: 0.6000 - loss: 0.8241 - val_loss: 0.96

The bar is redrawn in place with a carriage return after each batch, as
Keras does; values print with 4 decimals (``%.4e`` when tiny), and the time
is the epoch's so far with the mean time per step.
"""

import sys
import time

from .base import Callback

__all__ = ["ProgbarLogger"]

_WIDTH = 20


def _value(v):
    return f"{v:.4e}" if v != 0 and abs(v) < 1e-3 else f"{v:.4f}"


def _duration(seconds):
    return f"{seconds:.0f}s" if seconds >= 1 or seconds == 0 else "0s"


def _per_step(seconds):
    if seconds >= 1:
        return f"{seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


class ProgbarLogger(Callback):
    """Prints progress as Keras 3 does (``fit`` adds one for ``verbose`` 1 or 2)."""

    def __init__(self, verbose=1, stream=None):
        super().__init__()
        self.verbose = verbose
        self.stream = stream
        self._start = self._steps = None

    def _write(self, text):
        stream = self.stream or sys.stdout
        stream.write(text)
        stream.flush()

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()
        epochs = self.params.get("epochs", 1)
        if self.verbose:
            self._write(f"Epoch {epoch + 1}/{epochs}\n")

    def _line(self, step, logs, final):
        steps = self.params.get("steps") or step
        elapsed = time.perf_counter() - self._start
        metrics = "".join(f" - {k}: {_value(v)}" for k, v in sorted((logs or {}).items()))
        if self.verbose == 2:
            return f"{steps}/{steps} - {_duration(elapsed)} - {_per_step(elapsed / max(step, 1))}" \
                   f"{metrics}"
        filled = _WIDTH if final else _WIDTH * step // max(steps, 1)
        bar = "━" * filled + " " * (_WIDTH - filled)
        return f"{step}/{steps} {bar} {_duration(elapsed)} {_per_step(elapsed / max(step, 1))}" \
               f"{metrics}"

    def on_train_batch_end(self, batch, logs=None):
        if self.verbose == 1:
            self._write("\r" + self._line(batch + 1, logs, False))

    def on_epoch_end(self, epoch, logs=None):
        steps = self.params.get("steps") or 1
        if self.verbose == 1:
            self._write("\r" + self._line(steps, logs, True) + "\n")
        elif self.verbose == 2:
            self._write(self._line(steps, logs, True) + "\n")
