"""``TrainingRecorder`` inside ``model.fit``: a Keras callback that records every step.

    >>> import widgets
    >>> ad.random.set_seed(0)
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(4),
    ...                              ad.keras.layers.Dense(1)], name="mlp")
    >>> x, y = ad.random.normal([8, 3]), ad.random.normal([8, 1])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> recorder = widgets.TrainingRecorder()
    >>> history = model.fit(x, y, epochs=3, callbacks=[recorder.callback()], verbose=0)
    >>> print(recorder)          # the same table as in a custom loop
    TrainingRecorder: 3 steps (0..2), 2 layers; at step 2:
      layer            |grad| |weights|    grad/w  update/w  zero   NaN
      mlp/dense ...
      mlp/dense_1 ...
    no layer flagged
    >>> fig = recorder.plot()

``fit`` runs its step compiled, so the callback cannot take the gradients
itself: it says ``wants_gradients``, and ``fit`` then traces a step that also
hands out each batch's gradients (``autodiff/models/training/trainer.py``),
which it passes to ``on_train_batch_gradients`` before the batch's other hooks.
The variables are the model's, named by module path, as ``record(grads, model)``
names them in a custom loop. One difference from a loop that records before
``apply_gradients``: fit's step is one piece, so the weights (and their norms)
are read after the step's update.
"""

from autodiff.models.callbacks import Callback

__all__ = ["RecorderCallback"]


class RecorderCallback(Callback):
    """Records each training step's gradients into a ``TrainingRecorder``.

    Args:
        recorder: the TrainingRecorder.
        every: record one step in ``every`` (default: each).
    """

    wants_gradients = True

    def __init__(self, recorder, every=1):
        super().__init__()
        if int(every) < 1:
            raise ValueError(f"RecorderCallback: every must be a positive number of steps, "
                             f"got {every!r}")
        self.recorder, self.every = recorder, int(every)
        self._step = 0

    def on_train_batch_gradients(self, batch, grads, logs=None):
        if self._step % self.every == 0:
            self.recorder.record(grads, self.model, step=self._step)
        self._step += 1
