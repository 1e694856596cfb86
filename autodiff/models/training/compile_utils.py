"""What ``compile()`` turns its arguments into: the loss of every output, and the metrics.

As Keras 3: a loss is given by name (``'mse'``, ``'sparse_categorical_crossentropy'``),
as a Loss object or as a function ``fn(y_true, y_pred)``; a model with
several outputs takes a list (in output order) or a dict (by output name)
of them, and ``loss_weights`` to weigh them. Metrics are names
(``'accuracy'`` becomes the binary, categorical or sparse categorical
accuracy from the shapes of the first batch, as Keras decides), metric
objects or functions; their logs are named as given (``'mae'``,
``'accuracy'``), prefixed by the output's name when there are several.
"""

from ... import nest
from ...ops import reduce
from .. import losses as _losses
from .. import metrics as _metrics

__all__ = ["CompileLoss", "CompileMetrics", "get_loss"]

# Keras' loss names: the class (compile(loss=...)) and the function (a metric of that name)
_BY_NAME = {
    "mean_squared_error": (_losses.MeanSquaredError, _losses.mean_squared_error),
    "mean_absolute_error": (_losses.MeanAbsoluteError, _losses.mean_absolute_error),
    "binary_crossentropy": (_losses.BinaryCrossentropy, _losses.binary_crossentropy),
    "categorical_crossentropy": (_losses.CategoricalCrossentropy,
                                 _losses.categorical_crossentropy),
    "sparse_categorical_crossentropy": (_losses.SparseCategoricalCrossentropy,
                                        _losses.sparse_categorical_crossentropy),
    "huber": (_losses.Huber, _losses.huber),
}
_BY_NAME.update(mse=_BY_NAME["mean_squared_error"], mae=_BY_NAME["mean_absolute_error"],
                huber_loss=_BY_NAME["huber"])
_LOSS_NAMES = {name: pair[0] for name, pair in _BY_NAME.items()}
_FUNCTIONS = {name: pair[1] for name, pair in _BY_NAME.items()}


def get_loss(identifier):
    """A Loss object for a name, a Loss, or a function ``fn(y_true, y_pred)``.

    Raises:
        ValueError: an unknown name, naming the known ones.
    """
    if identifier is None or isinstance(identifier, _losses.Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _LOSS_NAMES:
            return _LOSS_NAMES[identifier]()
        raise ValueError(f"Could not interpret loss identifier: {identifier!r} (known: "
                         f"{sorted(_LOSS_NAMES)})")
    if callable(identifier):
        return _FunctionLoss(identifier)
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


class _FunctionLoss(_losses.Loss):
    """A plain function ``fn(y_true, y_pred) -> per-sample losses`` as a Loss (Keras'
    LossFunctionWrapper)."""

    def __init__(self, fn):
        super().__init__(name=getattr(fn, "__name__", "loss"))
        self.fn = fn

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred)


def by_output(value, names):
    """Targets given as a dict by output name, put in the outputs' order (a list as is)."""
    if not isinstance(value, dict):
        return value
    missing = sorted(set(names) - set(value))
    if missing:
        raise ValueError(f"The targets are missing the outputs {missing}; the model's outputs "
                         f"are {names}")
    return [value[name] for name in names]


def _per_output(value, names, what):
    """``value`` as one entry per output: a list in output order, or a dict by output name."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"compile: {what} has keys {unknown}, which are not outputs of the "
                             f"model; its outputs are {names}")
        return [value.get(n) for n in names]
    if isinstance(value, (list, tuple)) and len(names) > 1:
        if len(value) != len(names):
            raise ValueError(f"compile: {what} has {len(value)} entries for the model's "
                             f"{len(names)} outputs {names}")
        return list(value)
    return [value] * len(names)   # one loss (or metric list) for every output, as Keras


class CompileLoss:
    """The total loss: each output's loss, weighted, summed (Keras 3's CompileLoss).

    Args:
        loss: one loss, or a list/dict with one per output.
        loss_weights: None, or one weight per output (list or dict).
        output_names: the model's output names, in order.
    """

    def __init__(self, loss, loss_weights, output_names):
        self.output_names = list(output_names)
        self.losses = [get_loss(entry) for entry in _per_output(loss, self.output_names, "loss")]
        weights = [1.0] * len(self.output_names) if loss_weights is None else \
            _per_output(loss_weights, self.output_names, "loss_weights")
        self.weights = [1.0 if w is None else float(w) for w in weights]

    def __call__(self, y_true, y_pred, sample_weight=None):
        """``(total, per-output losses)``; outputs without a loss are skipped."""
        y_true = by_output(y_true, self.output_names)
        sample_weight = by_output(sample_weight, self.output_names) \
            if isinstance(sample_weight, dict) else sample_weight
        y_true, y_pred = nest.flatten(y_true), nest.flatten(y_pred)
        if len(y_true) != len(y_pred):
            raise ValueError(f"The model has {len(y_pred)} outputs but {len(y_true)} targets "
                             f"were given")
        weights = nest.flatten(sample_weight) if isinstance(sample_weight, (list, tuple)) \
            else [sample_weight] * len(y_pred)
        parts, total = [], None
        for loss, w, yt, yp, sw in zip(self.losses, self.weights, y_true, y_pred, weights):
            if loss is None:
                parts.append(None)
                continue
            value = loss(yt, yp, sample_weight=sw)
            parts.append(value)
            total = value * w if total is None else total + value * w
        return total, parts


class _MeanMetricWrapper(_metrics.Mean):
    """The running mean of ``fn(y_true, y_pred)`` per example (Keras' MeanMetricWrapper)."""

    def __init__(self, fn, name):
        super().__init__(name=name)
        self.fn = fn

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self.fn(y_true, y_pred), sample_weight)


def _accuracy_for(y_true, y_pred, name):
    """Keras 3's choice for ``'accuracy'``: binary, sparse categorical or categorical."""
    if y_pred.shape[-1] == 1 or y_pred.ndim == 1:
        return _metrics.BinaryAccuracy(name=name)
    if y_true.ndim < y_pred.ndim or (y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1):
        return _metrics.SparseCategoricalAccuracy(name=name)
    return _metrics.CategoricalAccuracy(name=name)


def _metric(identifier, y_true, y_pred, prefix):
    if isinstance(identifier, _metrics.Metric):
        if prefix:
            identifier.name = prefix + identifier.name
        return identifier
    if identifier in ("accuracy", "acc"):
        return _accuracy_for(y_true, y_pred, prefix + identifier)
    named = {"binary_accuracy": _metrics.BinaryAccuracy,
             "categorical_accuracy": _metrics.CategoricalAccuracy,
             "sparse_categorical_accuracy": _metrics.SparseCategoricalAccuracy,
             "root_mean_squared_error": _metrics.RootMeanSquaredError}
    if identifier in named:
        return named[identifier](name=prefix + identifier)
    if isinstance(identifier, str) and identifier in _FUNCTIONS:
        return _MeanMetricWrapper(_FUNCTIONS[identifier], prefix + identifier)
    if callable(identifier):
        return _MeanMetricWrapper(identifier, prefix + getattr(identifier, "__name__", "metric"))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


class CompileMetrics:
    """The compiled metrics, made on the first batch (when the shapes are known)."""

    def __init__(self, metrics, weighted_metrics, output_names):
        self.output_names = list(output_names)
        self._spec = (metrics, weighted_metrics)
        self.metrics = None   # (metric, output index, weighted) once built

    def build(self, y_true, y_pred):
        y_true, y_pred = nest.flatten(by_output(y_true, self.output_names)), nest.flatten(y_pred)
        self.metrics = []
        for spec, weighted in zip(self._spec, (False, True)):
            if not spec:
                continue
            nested = isinstance(spec, dict) or (len(self.output_names) > 1 and any(
                isinstance(s, (list, tuple)) or s is None for s in spec))
            per_output = _per_output(spec, self.output_names, "metrics") if nested \
                else [spec] * len(self.output_names)
            for k, entries in enumerate(per_output):
                prefix = f"{self.output_names[k]}_" if len(self.output_names) > 1 else ""
                for entry in nest.flatten(entries) if entries is not None else []:
                    self.metrics.append((_metric(entry, y_true[k], y_pred[k], prefix), k,
                                         weighted))

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.metrics is None:
            self.build(y_true, y_pred)
        y_true, y_pred = nest.flatten(by_output(y_true, self.output_names)), nest.flatten(y_pred)
        for metric, k, weighted in self.metrics:
            metric.update_state(y_true[k], y_pred[k], sample_weight if weighted else None)

    def results(self):
        return {metric.name: metric.result() for metric, _, _ in self.metrics or ()}

    def reset_state(self):
        for metric, _, _ in self.metrics or ():
            metric.reset_state()


def total_regularization(losses, dtype):
    """``sum(model.losses)``, each penalty cast to the loss's dtype (Keras' compute_loss)."""
    total = None
    for loss in losses:
        loss = reduce.reduce_sum(loss)
        total = loss if total is None else total + loss
    return total
