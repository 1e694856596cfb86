"""Gradient health: which layer's gradients vanish, explode, turn NaN or never arrive.

Reading order: ``rows.py`` (``group_health``: one row per scope group of a
replay, NaN and None rows kept, with norms, ratios and the flags of the rules
a row breaks on its own), ``outliers.py`` (the rules that compare a row with
the median of the others, and ``compact``: a number as the panel writes it),
``triage.py`` (``triage``: each row's rank, cause first, its plain word,
and the flags that stay quiet; ``cause_order``), ``recorder.py``
(``TrainingRecorder``: per-layer statistics over training steps, one line in
a training loop), ``fit_callback.py`` (the recorder as a ``model.fit``
callback), ``plot.py`` (``plot_recorder``: the recorder's trends and
histograms as a matplotlib Figure). The player shows
the rows in its health panel (``player/static/health.js``).

May import: ``widgets.tape_names`` (a layer's name), and ``ad.keras``'s
``Callback`` base class (``fit_callback.py``). Not the player: the rows
read the data dict of a replay that the player hands over. matplotlib only
inside ``plot.py``'s functions.
"""

from .plot import plot_recorder
from .recorder import TrainingRecorder
from .rows import NAN_RULES, ZERO_SHARE, group_health
from .triage import cause_order

__all__ = ["group_health", "cause_order", "ZERO_SHARE", "NAN_RULES", "TrainingRecorder",
           "plot_recorder"]
