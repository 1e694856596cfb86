"""The tape player: a tape's forward and backward pass, shown frame by frame.

``replay(tape, target, sources)`` turns what the engine recorded and traced
into plain, JSON-able data (a ``Replay``); everything after it draws that
data, in Python (an SVG, a PNG) or in the browser (``static/``), and
nothing differentiates. Reading order, from the tape to the page:

    data/          what each frame says: frames, their sentences, scope groups
    layout/        where each node goes: layers, bands, the scope tree's boxes
    replay.py      the two together: ``replay`` -> a ``Replay`` (start here)
    replay_builder.py  ``replay``'s nodes, edges, frames and layout from what it read
    drawing/       one frame as a picture in Python: ``svg.py``, ``png.py``
    page/          the player as an HTML page and as a notebook widget
    static/        the browser's half: the player's JavaScript and stylesheet

May import: ``widgets.tape_names`` (the names every view shows), ``health``
(``replay`` puts each group's health rows in its data) and ``explain`` (why a
source's gradient is None, asked by ``data/scopes.py``). Inside, each part
imports only the parts above it in this list: ``data/`` no layout, drawing or
page code, ``layout/`` nothing outside itself, ``drawing/`` no ``page/``.
"""
