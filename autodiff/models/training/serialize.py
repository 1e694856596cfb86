"""``compile()``'s arguments as Keras 3 stores them in a ``.keras`` file, and back.

Names stay names (``"adam"``, ``"mse"``, ``["accuracy"]``); objects become
Keras' dicts (``{"module": "keras.optimizers", "class_name": "Adam",
"config": {...}}``). Reading maps each ``class_name`` to this library's
class; Keras' own keys that this library does not use are accepted at their
default values and refused otherwise (NotImplementedError naming them).
"""

import inspect

from .. import losses as _losses
from .. import metrics as _metrics
from .. import optimizers as _optimizers
from ..optimizers import schedules as _schedules

__all__ = ["serialize_compile", "compile_from_config", "serialize_optimizer",
           "deserialize_optimizer"]

_OPTIMIZER_DEFAULTS = {"use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                       "loss_scale_factor": None, "gradient_accumulation_steps": None}


def _object(module, obj, config):
    return {"module": module, "class_name": type(obj).__name__, "config": config,
            "registered_name": None}


def serialize_optimizer(optimizer):
    """Keras 3's dict for ``optimizer``."""
    config = dict(optimizer.get_config(), **_OPTIMIZER_DEFAULTS)
    rate = optimizer._learning_rate
    if isinstance(rate, _schedules.LearningRateSchedule):
        config["learning_rate"] = _object("keras.optimizers.schedules", rate, rate.get_config())
    return _object("keras.optimizers", optimizer, config)


def _by_class(table, entry, what):
    cls = table.get(entry.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown {what}: {entry.get('class_name')!r} (known: {sorted(table)})")
    return cls


def _accepted(cls, config):
    """The config's keys ``cls`` takes; the rest must hold Keras' defaults."""
    parameters = inspect.signature(cls.__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(config)
    return {k: v for k, v in config.items() if k in parameters}


def deserialize_optimizer(entry):
    """The optimizer a Keras 3 dict (or a name) describes."""
    if isinstance(entry, str):
        return _optimizers.get(entry)
    table = {name: getattr(_optimizers, name) for name in
             ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Lion")}
    cls = _by_class(table, entry, "optimizer")
    config = dict(entry.get("config") or {})
    rate = config.get("learning_rate")
    if isinstance(rate, dict):
        schedules = {name: getattr(_schedules, name) for name in _schedules.__all__}
        schedule_cls = _by_class(schedules, rate, "learning rate schedule")
        config["learning_rate"] = schedule_cls(**_accepted(schedule_cls, rate.get("config", {})))
    config.pop("is_legacy_optimizer", None)
    return cls(**config)


def _nested(value, leaf):
    """Keras' nesting of losses and metrics: None and names stay as they are, lists and
    dicts (one entry per output) go entry by entry, and ``leaf`` takes the rest (an
    object, or a stored ``{"class_name": ...}``)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [_nested(v, leaf) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _nested(v, leaf) for k, v in value.items()}
    return leaf(value)


def _loss_entry(loss):
    if isinstance(loss, _losses.Loss):
        return _object("keras.losses", loss, loss.get_config())
    raise ValueError(f"model.save: the loss {loss!r} cannot be saved (give it by name or as "
                     f"a Keras loss class)")


def _metric_entry(metric):
    if isinstance(metric, _metrics.Metric):
        return _object("keras.metrics", metric, {"name": metric.name,
                                                 "dtype": metric.dtype.name})
    raise ValueError(f"model.save: the metric {metric!r} cannot be saved (give it by name)")


def _from_entry(table, what):
    """Makes the ``what`` a stored entry names, from ``table`` only (never code)."""
    def make(entry):
        cls = _by_class(table, entry, what)
        return cls(**_accepted(cls, entry.get("config") or {}))
    return make


def _deserialize_loss(entry):
    table = {name: getattr(_losses, name) for name in _losses.__all__
             if isinstance(getattr(_losses, name), type)}
    return _nested(entry, _from_entry(table, "loss"))


def _deserialize_metric(entry):
    table = {name: getattr(_metrics, name) for name in _metrics.__all__}
    return _nested(entry, _from_entry(table, "metric"))


def serialize_compile(model):
    """Keras 3's ``compile_config`` for ``model`` ({} when it was never compiled)."""
    args = getattr(model, "_ad_compile_args", None)
    if not getattr(model, "compiled", False) or args is None:
        return {}
    return {"optimizer": serialize_optimizer(model.optimizer),
            "loss": _nested(args["loss"], _loss_entry), "loss_weights": args["loss_weights"],
            "metrics": _nested(args["metrics"], _metric_entry),
            "weighted_metrics": _nested(args["weighted_metrics"], _metric_entry),
            "run_eagerly": args["run_eagerly"], "steps_per_execution": 1,
            "jit_compile": args["jit_compile"], "auto_scale_loss": True}


def compile_from_config(model, config):
    """Compiles ``model`` as a stored ``compile_config`` says."""
    jit = config.get("jit_compile", "auto")
    model.compile(optimizer=deserialize_optimizer(config.get("optimizer") or "rmsprop"),
                  loss=_deserialize_loss(config.get("loss")),
                  loss_weights=config.get("loss_weights"),
                  metrics=_deserialize_metric(config.get("metrics")),
                  weighted_metrics=_deserialize_metric(config.get("weighted_metrics")),
                  run_eagerly=bool(config.get("run_eagerly", False)),
                  jit_compile="auto" if jit in (None, "auto") else bool(jit))
