"""What the player shows, as data: one dict per frame, its sentence, the scope groups.

Reading order: ``frames.py`` (the frames: forward records, the seed,
backward steps and the result, each with what to highlight and the numbers
from the engine's trace; ``frame_rows.py`` keeps them as rows for a page,
making each frame's dict when it is read), ``looks.py`` (a value's preview,
NaN/Inf check and norm, many values at once), ``sentences.py`` (the sentence classroom mode
shows under each frame, a rule written in the tape's own names),
``scopes.py`` (records grouped by name scope, and what a debugger jumps to:
the first NaN/Inf, the gradients that never arrive), ``statistics.py`` (each
tensor's min, max, mean and histogram for its tooltip, a block of tensors of
one size at a time), ``nodes.py`` (a node's dtype in words, its op's params
as one line, the tapes that recorded it).

May import: the engine's public data (``autodiff``) and ``widgets.explain``
(``scopes.py`` asks why a gradient is None). No layout, drawing or page code:
nothing here knows where a node goes or what it looks like.
"""
