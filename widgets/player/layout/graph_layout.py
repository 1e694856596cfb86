"""Where the player draws a replay's nodes and edges (the ``layout`` of its JSON).

``graph_layout(nodes, edges)`` turns the replay's tensor and op nodes into
positions and SVG paths: ``scope_tree`` folds them into boxes by name scope,
and ``placement`` places every box's content in layers wrapped into bands
(``bands.flow_layout``), so a long tape fills a screen-shaped drawing. It
owns what is particular to tapes:

- **Copies of widely read inputs.** A variable or constant that many ops
  read (the ``W`` of an unrolled RNN) would be one node with a fan of long
  edges reaching across the whole drawing, and every such edge becomes a
  chain of dummy nodes, one per layer it crosses: quadratic in the tape's
  length. Instead, the node is drawn at its first use and each further
  reading op gets a small copy next to it (``layout["copies"]``), so every
  edge is short and the layout stays linear in the records.
- node sizes, ports on the sides, and fanned-out input edges (``x * x``
  shows two edges); an edge into a later band goes back under its band
  (``route``, which ``static/tree.js`` mirrors).

Pure Python, deterministic, computed once: nodes never move between frames.

    >>> from widgets import replay
    >>> from widgets.player.layout.graph_layout import graph_layout
    >>> x = ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     y = ad.sin(x) * x                 # x read twice: two edges
    >>> rep = replay(tape, y, x)
    >>> lay = graph_layout(rep.nodes, rep.edges)
    >>> sorted(lay)
    ['copies', 'edges', 'height', 'nodes', 'tree', 'width']
"""

from .placement import place
from .scope_tree import ancestors, build_tree

__all__ = ["graph_layout", "route", "TENSOR_SIZE", "OP_SIZE", "COPY_SIZE", "OP_RADIUS",
           "COPY_MIN_USES", "ASPECT"]

# Sizes of the drawn nodes (SVG user units); the layout and both renderers use them.
TENSOR_SIZE = (132.0, 90.0)  # a 56-high box, flags above it, its gradient below
OP_SIZE = (96.0, 84.0)   # a circle of OP_RADIUS with the op's label underneath
COPY_SIZE = (84.0, 30.0)  # a small tag naming the input read here
OP_RADIUS = 26.0
COPY_MIN_USES = 3        # an input read by this many ops or more is drawn once per use
ASPECT = 16 / 9          # the shape of a screen: what the drawing wraps to


def graph_layout(nodes, edges, aspect=ASPECT, geometry=True):
    """Positions for every node (and input copy), an SVG path for every edge, and the
    scope tree the player folds the graph into.

    Args:
        nodes: the replay's node dicts (``id``, ``type``; ops ``scope`` and ``order``).
        edges: the replay's edge dicts (``id``, ``from``, ``to``, ``kind``,
            ``op``, ``slot``).
        aspect: the shape (width / height) the drawing should take.
        geometry: False gives only the tree and the copies (sized, not placed):
            what the page needs, as it places the tree itself. Placing every
            node with every box open and routing every edge was a sixth of a
            10,000-record export that threw them away.

    Returns:
        ``{"width", "height", "nodes": {id: {x, y, w, h}},
        "copies": [{"id", "node", "op", x, y, w, h}], "edges": {edge id: path},
        "tree": [box, ...]}``: positions with every box open (``scope_tree``).
        Without geometry, ``{"copies": [{"id", "node", "op", w, h}], "tree"}``.

    >>> import widgets
    >>> from widgets.player.layout.graph_layout import graph_layout
    >>> x = ad.constant([1.0, 2.0])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = ad.reduce_sum(x * x)
    >>> rep = widgets.replay(tape, y, x)
    >>> sorted(graph_layout(rep.nodes, rep.edges, geometry=False))
    ['copies', 'tree']
    """
    ends, copies = _copy_inputs(edges)
    tree = build_tree(nodes, edges, ends, copies)
    if not geometry:
        return {"copies": [{**c, "w": COPY_SIZE[0], "h": COPY_SIZE[1]} for c in copies],
                "tree": tree.to_json()}
    sizes = {n["id"]: TENSOR_SIZE if n["type"] == "tensor" else OP_SIZE for n in nodes}
    for c in copies:
        sizes[c["id"]] = COPY_SIZE
    rects, width, height = place(tree, sizes, set(range(len(tree.boxes))), aspect)
    n_inputs = {}
    for e in edges:
        if e["kind"] == "in":
            n_inputs[e["op"]] = n_inputs.get(e["op"], 0) + 1
    paths, chains = {}, {}
    for e, (a, b) in zip(edges, ends):
        # fan the inputs out at the op, so x * x shows two edges
        fan = (e["slot"] - (n_inputs[e["op"]] - 1) / 2) * 12 if e["kind"] == "in" else 0.0
        paths[e["id"]] = route(rects[a], rects[b], _port(a, sizes), _port(b, sizes), fan,
                               _gap(tree, rects, a, b, chains))
    boxes = {n: {"x": r["x"], "y": r["y"], "w": sizes[n][0], "h": sizes[n][1]}
             for n, r in rects.items() if n in sizes}
    return {"width": round(width, 1), "height": round(height, 1),
            "nodes": {n["id"]: boxes[n["id"]] for n in nodes},
            "copies": [{**c, **boxes[c["id"]]} for c in copies],
            "edges": paths, "tree": tree.to_json()}


def route(a, b, port_a, port_b, fan=0.0, gap=None):
    """An SVG path from box ``a``'s right side to box ``b``'s left side.

    Forward (``b`` to the right): one smooth curve. Backward (``b`` starts a
    later band): out to the right, down to ``gap`` (below ``a``'s band), back
    left along it, and into ``b`` from its left, so it crosses no node.
    """
    x0, y0 = a["x"] + port_a, a["y"]
    x1, y1 = b["x"] - port_b, b["y"] + fan
    if x1 >= x0 + 8 or gap is None:
        return _curve([(x0, y0), (x1, y1)])
    r = 24.0
    return (f"M{x0:.1f},{y0:.1f} C{x0 + r:.1f},{y0:.1f} {x0 + r:.1f},{gap:.1f} {x0:.1f},{gap:.1f} "
            f"L{x1:.1f},{gap:.1f} C{x1 - r:.1f},{gap:.1f} {x1 - r:.1f},{y1:.1f} {x1:.1f},{y1:.1f}")


def _gap(tree, rects, a, b, chains=None):
    """The y between bands where an edge from ``a`` back to ``b`` runs: under the band of
    ``a``'s item in the box that holds both ends. ``chains``: a dict that keeps each
    box's ancestors between calls (most edges stay inside one box)."""
    chains = {} if chains is None else chains
    home_a, home_b = tree.home.get(a, 0), tree.home.get(b, 0)
    for k in (home_a, home_b):
        if k not in chains:
            up = [f"b{j}" for j in ancestors(tree.boxes, k)]
            chains[k] = (up, set(up))
    up_a, up_b = [a] + chains[home_a][0], chains[home_b][1]
    for item, parent in zip(up_a, up_a[1:]):
        if parent in up_b or parent == b:
            return rects[item]["band"] + 28.0 if item in rects else None
    return None


def _copy_inputs(edges):
    """Each edge's drawn ends, with widely read inputs replaced by per-use copies.

    Returns:
        ``(ends, copies)``: one ``(from, to)`` per edge, and the copies made.
    """
    produced = {e["to"] for e in edges if e["kind"] == "out"}
    readers = {}
    for e in edges:
        if e["kind"] == "in" and e["from"] not in produced:
            ops = readers.setdefault(e["from"], [])
            if e["op"] not in ops:
                ops.append(e["op"])
    copy_of, copies = {}, []
    for tensor, ops in readers.items():
        if len(ops) >= COPY_MIN_USES:
            for op in ops[1:]:           # the node itself stays at its first use
                cid = f"{tensor}@{op}"
                copy_of[tensor, op] = cid
                copies.append({"id": cid, "node": tensor, "op": op})
    ends = [(copy_of.get((e["from"], e["op"]), e["from"]) if e["kind"] == "in" else e["from"],
             e["to"]) for e in edges]
    return ends, copies


def _port(node_id, sizes):
    """Distance from a node's centre to where edges attach (its left/right side)."""
    return OP_RADIUS if node_id.startswith("op") else sizes[node_id][0] / 2


def _curve(points):
    """A smooth left-to-right SVG path through ``points`` (horizontal tangents)."""
    (x0, y0), d = points[0], [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for x1, y1 in points[1:]:
        mid = (x1 - x0) / 2
        d.append(f"C{x0 + mid:.1f},{y0:.1f} {x1 - mid:.1f},{y1:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return " ".join(d)
