"""Where the player puts each node: layers, wrapped into bands, folded into boxes.

Reading order: ``layers.py`` (a small Sugiyama-style layout: layers, their
order, few crossings, heights; nodes are ids, edges pairs), ``bands.py``
(layers wrapped into bands, so a long drawing fills a screen),
``scope_tree.py`` (name scopes as nested boxes, cut into calls and chunks
so every level stays small), ``placement.py`` (which boxes are open at
first, and where each box and node goes), ``graph_layout.py`` (a replay's
nodes and edges to positions and edge paths: the ``layout`` of its JSON).
``static/tree.js`` runs placement and bands again in the browser when a box
opens or closes.

May import: nothing outside this package, not even the engine: it works on
the replay's node and edge dicts, never on a tape, a frame or a drawing.
"""
