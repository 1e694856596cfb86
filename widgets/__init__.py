"""Views of the autodiff engine: watch a tape record and its gradients flow.

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

The widgets read only the engine's public data (``tape.records``,
``tape.names()``, ``tape.backward_trace``); ``autodiff`` never imports this
package. Names that need ipywidgets, anywidget or matplotlib are imported
on first use, so ``import widgets`` stays cheap and works without them.

    >>> import widgets
    >>> player = widgets.TapePlayer(tape, y, x)     # in a notebook: display(player)
    >>> recorder = widgets.TrainingRecorder()
    >>> recorder.record(grads, model)               # each step: one line in the loop
"""

import importlib

# Imported now: pure Python. (Importing ``replay`` the function here also keeps
# ``widgets.replay`` the function, not the submodule of the same name.)
from .health import group_health
from .html_export import export_html
from .replay import Replay, replay
from .svg import replay_svg
from .training_plot import plot_recorder
from .training_recorder import TrainingRecorder

__all__ = ["replay", "Replay", "TapePlayer", "export_html", "replay_svg",
           "plot_derivatives", "DerivativeExplorer",
           "jacobian_image", "hessian_image", "batch_jacobian_patches",
           "explain_none_gradient", "group_health", "TrainingRecorder", "plot_recorder"]

# name -> module that defines it, imported on first access.
_LAZY = {
    "TapePlayer": ".tape_player",
    "plot_derivatives": ".derivative_plot",
    "DerivativeExplorer": ".derivative_plot",
    "jacobian_image": ".jacobian_view",
    "hessian_image": ".jacobian_view",
    "batch_jacobian_patches": ".jacobian_view",
    "explain_none_gradient": ".explain",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
