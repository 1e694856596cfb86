""""Why is my gradient None?": the break between a source and a target, named.

Reading order: ``none_gradient.py`` (``explain_none_gradient``: what it
checks, in order, reading the tape without using it up; ``tape_sweeps.py``:
the sweeps over the records it reads), ``history.py``
(``record_history``: a flight recorder that keeps every op, the ones a tape
drops included, and the answer read from it), ``explanation.py`` (what comes
back: a reason code from ``REASONS``, a paragraph, the path with the break
marked, as text and as HTML).

May import: ``widgets.tape_names`` (the names in the paragraph); no other
widgets package. The player asks it (``player/data/scopes.py``), never the
other way round.
"""

from .explanation import REASONS, Explanation, PathStep
from .history import History, record_history
from .none_gradient import explain_none_gradient

__all__ = ["explain_none_gradient", "Explanation", "PathStep", "REASONS", "record_history",
           "History"]
