"""Views of the autodiff engine: watch a tape record and its gradients flow.

A reader's map, in reading order (each package's ``__init__`` names its files):

    player/          the tape player: ``replay`` (a tape as frames of data) ->
                     layout -> drawing (SVG, PNG) -> the HTML page and ``TapePlayer``
    health/          gradient health: rows per layer, the rules that flag them,
                     ``TrainingRecorder`` over training steps, its plot
    explain/         "why is my gradient None?": the break, named
    plots/           derivatives, Jacobians and Hessians as pictures
    tape_names.py    every name a view shows for a tensor (read by player, health, explain)
    exercises.py     the lessons' ``check`` (its rules live in ``tapeschool/answers.py``)
    tape_player.py, derivative_plot.py   old paths of two moved modules (below)

Imports run one way: the player may import ``health`` and ``explain``; those
two and ``plots`` import no other package; all may import ``tape_names.py``
(tests/test_package_layout.py keeps it so). The widgets read only the
engine's public data (``tape.records``, ``tape.names()``,
``tape.backward_trace``); ``autodiff`` never imports this package.

The public names, and nothing else:

- ``replay(tape, target, sources)`` -> a ``Replay`` (frames, pure Python),
  ``TapePlayer`` (the animated widget), ``export_html`` (the same player
  as a self-contained HTML file that needs no kernel and no network) and
  ``replay_svg`` (one frame as a static SVG);
- ``plot_derivatives``, ``DerivativeExplorer`` (f and its derivatives),
  ``jacobian_image``, ``hessian_image``, ``batch_jacobian_patches``;
- ``explain_none_gradient`` ("why is my gradient None?");
- gradient health: ``group_health`` (one row per scope group of a replay,
  NaN/Inf and None rows included, with norms, ratios and flagged reasons:
  what ``replay(...).data["debug"]["health"]`` holds and the player's panel
  shows), ``TrainingRecorder`` (per-layer statistics over training steps,
  one line in a training loop) and ``plot_recorder`` (its trends and
  histograms as a matplotlib Figure; also ``recorder.plot()``).

Names that need ipywidgets or anywidget are imported on first use, and
matplotlib only inside the functions that draw, so ``import widgets`` stays
cheap and works without them.

    >>> import widgets
    >>> x = ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     y = ad.sin(x * x)
    >>> player = widgets.TapePlayer(tape, y, x)     # in a notebook: display(player)
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(1)])
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.reduce_mean(model(ad.ones([4, 3])) ** 2)
    >>> grads = tape.gradient(loss, model.trainable_variables)
    >>> recorder = widgets.TrainingRecorder()
    >>> _ = recorder.record(grads, model)           # each step: one line in the loop
    >>> recorder.steps
    [0]
"""

import importlib
import sys as _sys

# Imported now: pure Python. (Importing ``replay`` the function here also keeps
# ``widgets.replay`` the function, not the module of the same name.)
from .explain import explain_none_gradient
from .health import TrainingRecorder, group_health, plot_recorder
from .player.drawing.svg import replay_svg
from .player.page.html_export import export_html
from .player.replay import Replay, replay
from .plots.jacobian_view import batch_jacobian_patches, hessian_image, jacobian_image

__all__ = ["replay", "Replay", "TapePlayer", "export_html", "replay_svg",
           "plot_derivatives", "DerivativeExplorer",
           "jacobian_image", "hessian_image", "batch_jacobian_patches",
           "explain_none_gradient", "group_health", "TrainingRecorder", "plot_recorder"]

# name -> module that defines it, imported on first access (ipywidgets, anywidget).
_LAZY = {
    "TapePlayer": ".player.page.tape_player",
    "plot_derivatives": ".plots.derivative_plot",
    "DerivativeExplorer": ".plots.derivative_plot",
}

# The paths of the flat layout this package had (``from widgets.replay import gc_paused``,
# ``from widgets.explain_history import record_history``) name the modules that moved,
# as ``autodiff.layers`` names ``autodiff.models.layers``. ``widgets.health`` and
# ``widgets.explain`` are packages of the same name; the two modules that need
# ipywidgets or anywidget keep their old paths as files (tape_player.py, derivative_plot.py).
_MOVED = {
    "frames": "player.data.frames", "sentences": "player.data.sentences",
    "scopes": "player.data.scopes", "layout": "player.layout.layers",
    "bands": "player.layout.bands", "scope_tree": "player.layout.scope_tree",
    "placement": "player.layout.placement", "graph_layout": "player.layout.graph_layout",
    "replay": "player.replay", "svg": "player.drawing.svg", "png": "player.drawing.png",
    "html_export": "player.page.html_export", "outliers": "health.outliers",
    "training_recorder": "health.recorder", "training_plot": "health.plot",
    "explain_history": "explain.history", "explanation": "explain.explanation",
    "jacobian_view": "plots.jacobian_view",
}
for _old, _new in _MOVED.items():
    _sys.modules[f"{__name__}.{_old}"] = importlib.import_module(f".{_new}", __name__)
del _old, _new


def __getattr__(name):
    if name in _MOVED:   # ``widgets.svg`` after ``import widgets.svg``: the moved module
        return _sys.modules[f"{__name__}.{name}"]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
