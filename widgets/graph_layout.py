"""Where the player draws a replay's nodes and edges (the ``layout`` of its JSON).

``graph_layout(nodes, edges)`` turns the replay's tensor and op nodes into
positions and SVG paths, through the generic ``layout.layered_layout``. It
owns what is particular to tapes:

- **Copies of widely read inputs.** A variable or constant that many ops
  read (the ``W`` of an unrolled RNN) would be one node with a fan of long
  edges reaching across the whole drawing, and every such edge becomes a
  chain of dummy nodes, one per layer it crosses: quadratic in the tape's
  length. Instead, the node is drawn at its first use and each further
  reading op gets a small copy next to it (``layout["copies"]``), so every
  edge is short and the layout stays linear in the records.
- node sizes, ports on the sides, and fanned-out input edges (``x * x``
  shows two edges).

Pure Python, deterministic, computed once: nodes never move between frames.

    >>> lay = graph_layout(rep.nodes, rep.edges)
    >>> sorted(lay)
    ['copies', 'edges', 'height', 'nodes', 'width']
"""

from . import layout as _layout

__all__ = ["graph_layout", "TENSOR_SIZE", "OP_SIZE", "COPY_SIZE", "OP_RADIUS", "COPY_MIN_USES"]

# Sizes of the drawn nodes (SVG user units); the layout and both renderers use them.
TENSOR_SIZE = (132.0, 90.0)  # a 56-high box, flags above it, its gradient below
OP_SIZE = (96.0, 84.0)   # a circle of OP_RADIUS with the op's label underneath
COPY_SIZE = (84.0, 30.0)  # a small tag naming the input read here
OP_RADIUS = 26.0
COPY_MIN_USES = 3        # an input read by this many ops or more is drawn once per use


def graph_layout(nodes, edges):
    """Positions for every node (and input copy) and an SVG path for every edge.

    Args:
        nodes: the replay's node dicts (``id``, ``type``).
        edges: the replay's edge dicts (``id``, ``from``, ``to``, ``kind``,
            ``op``, ``slot``).

    Returns:
        ``{"width", "height", "nodes": {id: {x, y, w, h}},
        "copies": [{"id", "node", "op", x, y, w, h}], "edges": {edge id: path}}``.
    """
    sizes = {n["id"]: TENSOR_SIZE if n["type"] == "tensor" else OP_SIZE for n in nodes}
    ends, copies = _copy_inputs(edges)
    for c in copies:
        sizes[c["id"]] = COPY_SIZE
    ids = [n["id"] for n in nodes]
    ids[len(ids):] = [c["id"] for c in copies]
    lay = _layout.layered_layout(ids, ends, sizes=sizes)
    n_inputs = {}
    for e in edges:
        if e["kind"] == "in":
            n_inputs[e["op"]] = n_inputs.get(e["op"], 0) + 1
    paths = {}
    for e, (a, b), route in zip(edges, ends, lay.routes):
        points = [list(p) for p in route]
        points[0][0] += _port(a, sizes)
        points[-1][0] -= _port(b, sizes)
        if e["kind"] == "in":  # fan the inputs out at the op, so x * x shows two edges
            points[-1][1] += (e["slot"] - (n_inputs[e["op"]] - 1) / 2) * 12
        paths[e["id"]] = _curve(points)
    boxes = {n: {"x": round(x, 1), "y": round(y, 1), "w": sizes[n][0], "h": sizes[n][1]}
             for n, (x, y) in lay.positions.items()}
    return {"width": round(lay.width, 1), "height": round(lay.height, 1),
            "nodes": {n: boxes[n] for n in ids[:len(nodes)]},
            "copies": [{**c, **boxes[c["id"]]} for c in copies],
            "edges": paths}


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
    return sizes[node_id][0] / 2 if node_id.startswith("t") else OP_RADIUS


def _curve(points):
    """A smooth left-to-right SVG path through ``points`` (horizontal tangents)."""
    (x0, y0), d = points[0], [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for x1, y1 in points[1:]:
        mid = (x1 - x0) / 2
        d.append(f"C{x0 + mid:.1f},{y0:.1f} {x1 - mid:.1f},{y1:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return " ".join(d)
