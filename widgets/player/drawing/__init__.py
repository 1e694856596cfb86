"""One frame of a replay as a picture drawn in Python: for where no JavaScript runs.

Reading order: ``svg.py`` (which nodes and edges are done, pending or
current in a frame, and the frame as an SVG string with the live player's
CSS classes from ``static/player.css``: the exported page's placeholder, the
README's fallback, what tests parse), ``png.py`` (the same picture drawn
with matplotlib, for pages that strip HTML: an untrusted notebook, a code
host's preview).

May import: ``data/`` and ``layout/`` (a frame's gradients, the positions);
not ``replay.py`` (a drawing takes a replay's data, never a tape) and not
``page/``. matplotlib only inside ``png.py``'s functions.
"""
