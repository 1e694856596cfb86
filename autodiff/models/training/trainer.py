"""``compile``, ``fit``, ``evaluate`` and ``predict``: Keras 3's training loop, on this engine.

    >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
    ...               metrics=["accuracy"])
    >>> history = model.fit(x, y, batch_size=32, epochs=5, validation_split=0.1)
    >>> history.history["val_accuracy"][-1]

One training step is the custom loop a reader would write, and it is
Keras 3's ``train_step`` (TensorFlow backend) line for line:

    with ad.GradientTape() as tape:
        y_pred = model(x, training=True)
        loss = compiled_loss(y, y_pred, sample_weight) + sum(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    then the loss's running mean (weighted by batch size) and the metrics

By default the step runs compiled, as Keras 3 runs it (``jit_compile='auto'``
there means XLA where it can): here ``ad.function(jit_compile=True)``, falling
back to a plain trace when the compiler refuses the step
(``jit_compile=False``), and eagerly with ``run_eagerly=True``. The state the
step changes (weights, optimizer slots and step, metric totals, batch
normalization's statistics) is the same Variables in the three modes, so
eager and compiled ``fit`` end at the same weights.
"""

import warnings

import numpy as np

from ... import nest
from ...tape import GradientTape
from ...tensor import Tensor, convert_to_tensor
from .. import optimizers as _optimizers
from ..callbacks import CallbackList, History, ProgbarLogger
from ..metrics import Mean
from ..module import not_recorded
from .compile_utils import CompileLoss, CompileMetrics, total_regularization
from .data import ArrayData, class_weight_to_sample_weight, split_validation

__all__ = ["Trainer"]


class Trainer:
    """What ``Model`` gains from Keras' ``Trainer``: compile, fit, evaluate, predict."""

    optimizer = None
    stop_training = False
    compiled = False

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """Sets the optimizer, loss and metrics ``fit`` will use (Keras 3's arguments).

        Args:
            optimizer: a name (``'adam'``) or an optimizer.
            loss: a name, a Loss, a function; a list or dict for several outputs.
            loss_weights: one weight per output.
            metrics, weighted_metrics: names, metric objects or functions
                (``weighted_metrics`` see the sample weights).
            run_eagerly: True runs every step as plain Python (debuggable).
            jit_compile: ``'auto'`` or True compiles the step; False traces it only.

        Raises:
            NotImplementedError: ``steps_per_execution`` other than 1.
        """
        if steps_per_execution != 1:
            raise NotImplementedError("compile: steps_per_execution other than 1 is not "
                                      "implemented")
        self.optimizer = _optimizers.get(optimizer)
        self.loss = loss
        names = self._output_names()
        self._ad_compile_args = dict(optimizer=optimizer, loss=loss, loss_weights=loss_weights,
                                     metrics=metrics, weighted_metrics=weighted_metrics,
                                     run_eagerly=run_eagerly, jit_compile=jit_compile)
        self._ad_compile_loss = None if loss is None else CompileLoss(loss, loss_weights, names)
        self._ad_compile_metrics = CompileMetrics(metrics, weighted_metrics, names)
        self._ad_loss_tracker = Mean(name="loss")
        self._ad_output_loss_trackers = [Mean(name=f"{n}_loss") for n in names] \
            if len(names) > 1 and self._ad_compile_loss is not None else []
        self.run_eagerly = bool(run_eagerly)
        self.jit_compile = jit_compile
        self._ad_steps = {}
        self._ad_tap_gradients = False   # fit sets it when a callback wants each step's gradients
        self.compiled = True
        self.stop_training = False

    def _output_names(self):
        outputs = getattr(self, "_ad_outputs", None)
        if outputs:
            return [t._ad_history[0].layer.name for t in outputs]
        return ["output_0"]

    def _require_compiled(self, what):
        if not self.compiled:
            # Keras 3 raises ValueError here
            raise ValueError(f"You must call `compile()` before using the model's {what}.")

    # ---- the steps ---------------------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus ``sum(model.losses)`` (Keras 3's ``compute_loss``)."""
        total = None
        if self._ad_compile_loss is not None:
            total, parts = self._ad_compile_loss(y, y_pred, sample_weight)
            for tracker, part in zip(self._ad_output_loss_trackers, parts):
                if part is not None:
                    # The plain mean over batches, as Keras 3's compiled step keeps it (its
                    # traced batch size is None); its eager step weighs by batch size.
                    tracker.update_state(part)
        penalty = total_regularization(self.losses, None)
        if penalty is not None:
            total = penalty if total is None else total + penalty
        if total is None:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return total

    def train_step(self, x, y, sample_weight=None):
        """One step on one batch; returns the logs (running loss and metrics)."""
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
        self._ad_loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        variables = list(self.trainable_variables)
        grads = None
        if variables:
            grads = tape.gradient(loss, variables)
            self.optimizer.apply_gradients(zip(grads, variables))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        logs = self.compute_metrics(x, y, y_pred, sample_weight)
        if self._ad_tap_gradients and grads is not None:
            # handed to the callbacks that ask for them (``wants_gradients``), not logged
            logs = dict(logs, **{GRADIENTS_KEY: [None if g is None else convert_to_tensor(g)
                                                 for g in grads]})
        return logs

    def test_step(self, x, y, sample_weight=None):
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        self._ad_loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, x):
        return self(x, training=False)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self._ad_compile_metrics.update_state(y, y_pred, sample_weight)
        logs = {"loss": self._ad_loss_tracker.result()}
        logs.update({t.name: t.result() for t in self._ad_output_loss_trackers})
        logs.update(self._ad_compile_metrics.results())
        return logs

    @property
    def metrics(self):
        """The loss tracker, then the compiled metrics (built on the first batch)."""
        if not self.compiled:
            return []
        compiled = [m for m, _, _ in self._ad_compile_metrics.metrics or ()]
        return [self._ad_loss_tracker] + self._ad_output_loss_trackers + compiled

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    def _step(self, kind, batch):
        """Runs the ``kind`` step on ``batch``, traced and compiled unless run_eagerly."""
        method = {"train": self.train_step, "test": self.test_step,
                  "predict": self.predict_step}[kind]
        args = batch if kind != "predict" else batch[:1]
        if kind != "predict" and self._ad_compile_metrics.metrics is None:
            with not_recorded():   # builds the model and the metrics eagerly, once
                self._ad_compile_metrics.build(batch[1], self(batch[0], training=False))
        if self.run_eagerly:
            return method(*args)
        from ...tracing.function import CompileError, function
        cache = (kind, self._ad_tap_gradients)   # a step that hands out gradients is another trace
        step = self._ad_steps.get(cache)
        if step is None:
            jit = self.jit_compile in ("auto", True)
            step = self._ad_steps[cache] = function(method, jit_compile=jit, autograph=False)
        try:
            return step(*args)
        except CompileError as err:
            if self.jit_compile is True:
                raise
            warnings.warn(f"fit: the step could not be compiled ({err}); it runs traced "
                          f"instead (jit_compile=False)", stacklevel=3)
            self._ad_steps[cache] = function(method, jit_compile=False, autograph=False)
            return self._ad_steps[cache](*args)

    # ---- the loops ---------------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        """Trains for ``epochs`` passes over the data; returns the ``History``.

        Args: Keras 3's. ``x``/``y``/``sample_weight`` are arrays (or lists
            or dicts of them); ``validation_data`` is ``(x_val, y_val)`` or
            ``(x_val, y_val, sample_weight_val)``.

        Raises:
            ValueError: ``compile()`` was not called, arrays of different lengths,
                or both ``class_weight`` and ``sample_weight``.
        """
        self._require_compiled("fit()")
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError("You cannot `class_weight` and `sample_weight` at the same "
                                 "time.")
        data = ArrayData(x, y, sample_weight)
        val = None
        if validation_data is not None:
            val = ArrayData(*validation_data)
        elif validation_split:
            data, val = split_validation(data, validation_split)
        if class_weight is not None:
            data.sample_weight = class_weight_to_sample_weight(data.y, class_weight)
        batch_size = batch_size or 32
        steps = data.steps(batch_size) if steps_per_epoch is None else \
            min(steps_per_epoch, data.steps(batch_size))
        verbose = 1 if verbose == "auto" else verbose
        self.history = History()
        listed = list(callbacks or []) + [self.history]   # Keras' order: History after yours
        if verbose:
            listed.append(ProgbarLogger(verbose))
        hooks = CallbackList(listed, self, {"verbose": verbose, "epochs": epochs,
                                            "steps": steps})
        self.stop_training = False
        tappers = [c for c in listed if getattr(c, "wants_gradients", False)]
        self._ad_tap_gradients = bool(tappers)
        hooks.call("on_train_begin", None)
        logs = {}
        # With steps_per_epoch, as in Keras 3, an epoch goes on from where the last one
        # stopped; a pass that reaches the end of the data ends its epoch, and the next
        # epoch starts a fresh (reshuffled) pass.
        passes = _Passes(data, batch_size, bool(shuffle), steps_per_epoch is not None)
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            hooks.call("on_epoch_begin", epoch, None)
            for step, batch in enumerate(passes.epoch(steps)):
                hooks.call("on_train_batch_begin", step, None)
                raw = self._step("train", batch)
                grads = raw.pop(GRADIENTS_KEY, None)
                logs = _floats(raw)
                if grads is not None:
                    for callback in tappers:
                        callback.on_train_batch_gradients(step, grads, logs)
                hooks.call("on_train_batch_end", step, logs)
                if self.stop_training:
                    break
            epoch_logs = dict(logs)
            if val is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._evaluate(val, validation_batch_size or batch_size,
                                          validation_steps, hooks)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            hooks.call("on_epoch_end", epoch, epoch_logs)
            if self.stop_training:
                break
        self._ad_tap_gradients = False
        hooks.call("on_train_end", epoch_logs if epochs > initial_epoch else None)
        return self.history

    def _evaluate(self, data, batch_size, steps, hooks):
        self.reset_metrics()
        hooks.call("on_test_begin", None)
        logs = {}
        for step, batch in enumerate(data.batches(batch_size)):
            if steps is not None and step >= steps:
                break
            hooks.call("on_test_batch_begin", step, None)
            logs = _floats(self._step("test", batch))
            hooks.call("on_test_batch_end", step, logs)
        hooks.call("on_test_end", logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):
        """The loss and metrics over the data: a list ``[loss, metric, ...]`` (a float when
        there is only the loss), or a dict with ``return_dict=True``."""
        self._require_compiled("evaluate()")
        data = ArrayData(x, y, sample_weight)
        batch_size = batch_size or 32
        hooks = CallbackList(list(callbacks or []), self, {"verbose": verbose, "epochs": 1,
                                                          "steps": data.steps(batch_size)})
        logs = self._evaluate(data, batch_size, steps, hooks)
        if return_dict:
            return logs
        values = [logs[name] for name in self._ordered_log_names() if name in logs]
        return values[0] if len(values) == 1 else values

    def _ordered_log_names(self):
        return [m.name for m in self.metrics]

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for ``x``, batch by batch, as NumPy arrays (one per output)."""
        data = ArrayData(x)
        batch_size = batch_size or 32
        hooks = CallbackList(list(callbacks or []), self, {"verbose": verbose, "epochs": 1,
                                                          "steps": data.steps(batch_size)})
        hooks.call("on_predict_begin", None)
        outputs = []
        for step, batch in enumerate(data.batches(batch_size)):
            if steps is not None and step >= steps:
                break
            hooks.call("on_predict_batch_begin", step, None)
            out = self._predict_batch(batch[0])
            outputs.append(nest.map_structure(lambda t: t.numpy(), out))
            hooks.call("on_predict_batch_end", step, {"outputs": outputs[-1]})
        hooks.call("on_predict_end", None)
        joined = [np.concatenate(parts) for parts in zip(*[nest.flatten(o) for o in outputs])]
        return nest.pack_sequence_as(outputs[0], joined)

    def _predict_batch(self, x):
        if getattr(self, "run_eagerly", False):
            return self.predict_step(x)
        from ...tracing.function import function
        steps = self.__dict__.setdefault("_ad_steps", {})
        if "predict" not in steps:
            jit = getattr(self, "jit_compile", "auto") in ("auto", True)
            steps["predict"] = function(self.predict_step, jit_compile=jit, autograph=False)
        return steps["predict"](x)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        """One training step on one batch; the logs after it (Keras' ``train_on_batch``)."""
        self._require_compiled("train_on_batch()")
        self.reset_metrics()   # the logs of this batch alone, as Keras 3
        data = ArrayData(x, y, sample_weight)
        if class_weight is not None:
            data.sample_weight = class_weight_to_sample_weight(data.y, class_weight)
        logs = _floats(self._step("train", next(data.batches(data.size))))
        return logs if return_dict else self._as_list(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._require_compiled("test_on_batch()")
        self.reset_metrics()
        data = ArrayData(x, y, sample_weight)
        logs = _floats(self._step("test", next(data.batches(data.size))))
        return logs if return_dict else self._as_list(logs)

    def predict_on_batch(self, x):
        return nest.map_structure(lambda t: t.numpy(), self._predict_batch(
            next(ArrayData(x).batches(len(nest.flatten(ArrayData(x).x)[0])))[0]))

    def _as_list(self, logs):
        values = [logs[n] for n in self._ordered_log_names() if n in logs]
        return values[0] if len(values) == 1 else values


def _batch_size(x):
    first = nest.flatten(x)[0]
    return float(first.shape[0])


# The key under which a train step hands its gradients to fit (never logged).
GRADIENTS_KEY = "_ad_gradients"


def _floats(logs):
    """The step's logs as Python floats, sorted by name (as Keras 3's callbacks see them)."""
    return {k: float(v.numpy() if isinstance(v, Tensor) else convert_to_tensor(v).numpy())
            for k, v in sorted(logs.items())}


class _Passes:
    """The batches of ``fit``'s epochs: a new pass over the data each epoch, or, with
    ``steps_per_epoch`` (``carry_on``), one pass spread over epochs (Keras 3's EpochIterator)."""

    def __init__(self, data, batch_size, shuffle, carry_on):
        self.data, self.batch_size, self.shuffle, self.carry_on = data, batch_size, shuffle, carry_on
        self.total = data.steps(batch_size)
        self.batches, self.seen = None, 0

    def epoch(self, steps):
        if self.batches is None or not self.carry_on:
            self.batches, self.seen = iter(self.data.batches(self.batch_size,
                                                             shuffle=self.shuffle)), 0
        for _ in range(steps):
            if self.seen >= self.total:
                break
            self.seen += 1
            yield next(self.batches)
        if self.seen >= self.total:
            self.batches = None
