"""The player as people open it: a self-contained HTML page, and the notebook widget.

Reading order: ``html_export.py`` (``export_html``: the replay's JSON, the
``static/`` scripts and stylesheet and an SVG placeholder in one file that
needs no kernel and no network; the HTML snippet a notebook shows),
``tape_player.py`` (``TapePlayer``: an anywidget whose synced traitlets are
its state, drawn and animated by ``static/player.js``; needs anywidget).

May import: the player's other parts (``replay.py``, ``drawing/``, and
``data/`` and ``layout/`` through them).
"""
