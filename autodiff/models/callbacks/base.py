"""``Callback``, the list ``fit`` calls, and ``History``: Keras 3's hooks into the loop.

``fit`` calls each callback's hooks in this order (``logs`` is the dict of
the running loss and metrics, sorted by name, Python floats):

    on_train_begin
      on_epoch_begin(epoch)
        on_train_batch_begin(batch) / on_train_batch_end(batch, logs)   per batch
        on_test_begin ... on_test_end                                    validation
      on_epoch_end(epoch, logs)           logs hold val_* after validation
    on_train_end

``evaluate`` calls the ``on_test_*`` hooks and ``predict`` the
``on_predict_*`` hooks. Setting ``model.stop_training = True`` in a hook
ends ``fit`` after the current batch (or epoch).

    >>> class Printer(ad.keras.callbacks.Callback):
    ...     def on_epoch_end(self, epoch, logs=None):
    ...         print(epoch, round(logs["loss"], 3))
"""

__all__ = ["Callback", "CallbackList", "History"]

_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
          "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
          "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
          "on_predict_batch_begin", "on_predict_batch_end")


class Callback:
    """The base class: every hook does nothing; ``model`` and ``params`` are set by ``fit``."""

    def __init__(self):
        self.params = {}
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model


for _hook in _HOOKS:
    setattr(Callback, _hook, lambda self, *args, **kwargs: None)
# Keras' older names for the training batch hooks
Callback.on_batch_begin = lambda self, batch, logs=None: None
Callback.on_batch_end = lambda self, batch, logs=None: None


class History(Callback):
    """Records each epoch's logs: ``history.history['loss']`` is the loss per epoch.

    Attributes:
        history: ``{name: [value per epoch]}``.
        epoch: the epoch numbers recorded.
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        self.model.history = self


class CallbackList:
    """Calls a hook on every callback, in order (yours, then History, then the progress bar)."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"callbacks must be ad.keras.callbacks.Callback instances; got "
                                f"{type(callback).__name__}")
            callback.set_model(model)
            callback.set_params(params)

    def call(self, hook, *args):
        for callback in self.callbacks:
            getattr(callback, hook)(*args)
            if hook == "on_train_batch_begin":
                callback.on_batch_begin(*args)
            elif hook == "on_train_batch_end":
                callback.on_batch_end(*args)
