"""A static SVG snapshot of one frame of a replay (Python side).

The live player draws in the browser (``static/player.js``); this module
draws the same picture, with the same CSS classes, as an SVG string. It
serves where no JavaScript runs: the README screenshot fallback, the
placeholder inside the exported HTML before its script starts (and on
pages that strip scripts), and tests that parse the drawing with
``xml.etree``.

``frame_state`` decides which nodes and edges are done, pending, current
or carrying the cotangent in a frame; ``createFrameState`` in
``static/graph.js`` mirrors it line by line. A long tape (more than
``placement.SMALL_TAPE`` ops in name scopes) is drawn as the player opens
it: ``overview`` places its scope boxes, closed, and the edges between them.

    >>> import widgets
    >>> x = ad.Variable([1.0, 2.0])
    >>> with ad.GradientTape() as tape:
    ...     y = ad.reduce_sum(ad.exp(x))
    >>> svg = widgets.replay_svg(widgets.replay(tape, y, x), frame=-1)   # gradients shown
    >>> svg.startswith("<svg")
    True
    >>> with open("tape.svg", "w", encoding="utf-8") as f:
    ...     _ = f.write(svg)
"""

from html import escape
from pathlib import Path

from ..data.frames import grads_at
from ..data.scopes import group_boxes
from ..layout.graph_layout import OP_RADIUS, OP_SIZE, TENSOR_SIZE, graph_layout, route
from ..layout.placement import SMALL_TAPE, default_open, place
from ..layout.scope_tree import boxes_only, from_json, outer_closed, rep

__all__ = ["replay_svg", "frame_state", "title_text", "node_sizes", "overview", "with_geometry",
           "FLAG_TEXT"]

SVG_NS = "http://www.w3.org/2000/svg"
BOX_HEIGHT = 56.0
# Flags in the order a node's tag line shows them (player.js uses the same words).
FLAG_TEXT = {"variable": "variable", "watched": "watched", "constant": "constant",
             "source": "source", "target": "target", "integer": "integer",
             "unconnected": "unconnected", "stopped": "stopped"}
_CSS = Path(__file__).parents[1] / "static" / "player.css"


def frame_state(data, k, only=None):
    """CSS classes of every node and edge in frame ``k`` of a replay dict.

    ``only``: a set of node and edge ids to answer for (a long tape's overview
    shows a few); None for all.

    Returns:
        ``{"nodes": {id: [class, ...]}, "edges": {id: [class, ...]}}``.
    """
    frames = data["frames"]
    frame = frames[k % len(frames)]
    done = frame["done_ops"]
    if only is None:
        order = {n["id"]: n["order"] for n in data["nodes"] if n["type"] == "op"}
        producer = {e["to"]: order[e["op"]] for e in data["edges"] if e["kind"] == "out"}
        shown_nodes, shown_edges = data["nodes"], data["edges"]
    else:
        # an overview's few: one pass over the edges and one over the nodes pick them
        # out, with the order of only the ops they need (a long tape has 10,000)
        made_by, shown_edges = {}, []
        for e in data["edges"]:
            if e["id"] in only:
                shown_edges.append(e)
            if e["kind"] == "out" and e["to"] in only:
                made_by[e["to"]] = e["op"]
        wanted = set(made_by.values())
        wanted.update(e["op"] for e in shown_edges)
        order, shown_nodes = {}, []
        for n in data["nodes"]:
            nid = n["id"]
            if nid in only:
                shown_nodes.append(n)
                if n["type"] == "op":
                    order[nid] = n["order"]
            elif nid in wanted and n["type"] == "op":
                order[nid] = n["order"]
        producer = {t: order[op] for t, op in made_by.items()}
    receiving = {c["node"] for c in frame["contributions"] if c["value"] is not None}
    highlighted = set(frame["nodes"])
    nodes = {}
    for n in shown_nodes:
        nid = n["id"]
        step = order.get(nid, producer.get(nid, -1))
        classes = ["tp-pending" if step >= done else "tp-done"]
        if nid == frame["op"]:
            classes.append("tp-current")
        if nid in highlighted:
            classes.append("tp-hl")
        if nid in receiving:
            classes.append("tp-receiving")
        nodes[nid] = classes
    lit = set(frame["edges"])
    edges = {}
    for e in shown_edges:
        classes = ["tp-pending" if order[e["op"]] >= done else "tp-done"]
        if e["id"] in lit:
            classes.append("tp-active" if frame["phase"] == "forward" else "tp-flow")
        edges[e["id"]] = classes
    return {"nodes": nodes, "edges": edges}


def replay_svg(replay, frame=-1, *, standalone=True, caption=True):
    """One frame of ``replay`` as an SVG document (a string).

    A long tape (more than ``placement.SMALL_TAPE`` ops, in name scopes) is
    drawn as the player opens it: its overview of scope boxes, closed.

    Args:
        replay: a Replay (or its ``data`` dict).
        frame: the frame index (negative counts from the end; -1: the result).
        standalone: include the ``xmlns`` and the player's CSS (for a .svg
            file); False gives an element to inline in HTML.
        caption: draw the frame's title above and its sentence below.

    Returns:
        The SVG markup.
    """
    data = getattr(replay, "data", replay)
    k = frame % len(data["frames"])
    f = data["frames"][k]
    view = overview(data, _Sizes(data) if "nodes" not in data["layout"] else node_sizes(data))
    lay = (data if view is not None else with_geometry(data))["layout"]
    only = None if view is None else _shown(data, view)
    state = frame_state(data, k, only)
    grads = grads_at(data, k, only)
    top = 30.0 if caption else 0.0
    bottom = 40.0 if caption else 0.0
    W, H = (lay["width"], lay["height"]) if view is None else (view["width"], view["height"])
    width, height = W, H + top + bottom
    groups = {g: i for i, g in enumerate(data.get("tape_groups", []))}
    multi = len(groups) > 1
    out = [f'<svg {f"xmlns={_q(SVG_NS)} " if standalone else ""}class="tp-svg tp-root tp-static-svg" '
           f'viewBox="0 0 {width:.1f} {height:.1f}" width="{width:.0f}" height="{height:.0f}" '
           f'role="img" aria-label={_q(f["title"])} data-frame="{k}" data-phase="{f["phase"]}">']
    if standalone and _CSS.exists():
        out.append(f"<style>{escape(_CSS.read_text(), quote=False)}</style>")
    out.append('<rect class="tp-background" x="0" y="0" '
               f'width="{width:.1f}" height="{height:.1f}" fill="#ffffff"/>')
    # Presentation attributes are the fallback where a page strips the <style>
    # (a static notebook viewer); the player's CSS overrides them everywhere else.
    out.append('<g font-family="sans-serif" font-size="11" text-anchor="middle">')
    if caption:
        out.append(f'<text class="tp-caption-title" x="12" y="20" text-anchor="start">'
                   f'{escape(title_text(f))}</text>')
    out.append(f'<g transform="translate(0,{top:.1f})">')
    positions = {**lay["nodes"], **{c["id"]: c for c in lay.get("copies", ())}} if view is None \
        else view["rects"]
    if view is not None:
        out.append('<g class="tp-group-frames">')
        out.extend(_frame(view["tree"].boxes[int(i[1:])], r) for i, r in view["rects"].items()
                   if r.get("open"))
        out.append("</g>")
    out.append('<g class="tp-edges">')
    for e, path in _edges(data, view):
        classes = " ".join(["tp-edge", f"tp-edge-{e['kind']}"] + state["edges"][e["id"]])
        out.append(f'<path class="{classes}" data-id="{e["id"]}" d="{path}" '
                   'fill="none" stroke="#8c959f"/>')
    out.append('</g><g class="tp-nodes">')
    copies = [c for c in lay.get("copies", ()) if c["id"] in positions]
    by_id = {n["id"]: n for n in data["nodes"]} if copies else {}
    for c in copies:     # where a widely read input is read again
        out.append(_copy(by_id[c["node"]], {**c, **positions[c["id"]]}, state["nodes"][c["node"]]))
    for n in data["nodes"]:
        if n["id"] not in positions:
            continue
        box = positions[n["id"]]
        classes = state["nodes"][n["id"]]
        if n["type"] == "tensor":
            out.append(_tensor(n, box, classes, grads.get(n["id"])))
        else:
            group = groups.get(n.get("group"), 0)
            out.append(_op(n, box, classes, group if multi else None))
    if view is not None:
        current = rep(view["tree"], f["op"], view["opened"]) if f.get("op") else None
        out.extend(_cover(view["tree"].boxes[int(i[1:])], r, i == current)
                   for i, r in view["rects"].items() if r.get("open") is False)
    out.append("</g></g>")
    if caption:
        y = top + H + 24
        out.append(f'<text class="tp-caption-sentence" x="12" y="{y:.1f}" text-anchor="start">'
                   f'{escape(_clip(f["sentence"], int(width / 6.5)))}</text>')
    out.append("</g></svg>")
    return "\n".join(out)


def _shown(data, view):
    """The node and edge ids an overview draws (their states are all it needs)."""
    ids = {n["id"] for n in data["nodes"] if n["id"] in view["rects"]}
    ids.update(c["node"] for c in data["layout"].get("copies", ()) if c["id"] in view["rects"])
    ids.update(ids_[0] for _, _, ids_ in view["edges"])
    return ids


def with_geometry(data):
    """A replay's data dict with its layout's positions and edge paths, and its
    groups' boxes: placed now if ``replay(..., geometry=False)`` left them out (as
    an export from a tape does) and a picture of the fully open graph needs them.
    Returns ``data``."""
    if "nodes" not in data["layout"]:
        data["layout"] = graph_layout(data["nodes"], data["edges"])
        group_boxes(data.get("groups", []), data["layout"])
    return data


def node_sizes(data):
    """``node or copy id -> (w, h)`` as the layout drew them."""
    lay = data["layout"]
    if "nodes" not in lay:       # no geometry: the sizes graph_layout gives each kind
        return {**{n["id"]: TENSOR_SIZE if n["type"] == "tensor" else OP_SIZE
                   for n in data["nodes"]},
                **{c["id"]: (c["w"], c["h"]) for c in lay.get("copies", ())}}
    return {**{n: (b["w"], b["h"]) for n, b in lay["nodes"].items()},
            **{c["id"]: (c["w"], c["h"]) for c in lay.get("copies", ())}}


class _Sizes(dict):
    """``node_sizes`` of a layout without geometry, each size made when first asked for:
    an overview places the few nodes of its open boxes, not a long tape's 23,000."""

    def __init__(self, data):
        super().__init__((c["id"], (c["w"], c["h"])) for c in data["layout"].get("copies", ()))

    def __missing__(self, node_id):
        if node_id[:1] == "t":
            return TENSOR_SIZE
        if node_id[:2] == "op":
            return OP_SIZE
        raise KeyError(node_id)


def title_text(frame):
    """The title line; a result with many gradients names two and counts the rest
    (``titleText`` in static/graph.js), so it stays on one or two lines."""
    if frame["phase"] != "result" or len(frame["gradients"]) <= 2:
        return frame["title"]
    shown = ", d".join(frame["title"].split(", d")[:2])
    return f"{shown}, … ({len(frame['gradients']) - 2} more below)"


def _edges(data, view):
    """``(edge, path)`` for every edge drawn: each edge of the layout, or in an
    overview one per pair of shown ends (the first edge stands for the others)."""
    if view is None:
        return [(e, data["layout"]["edges"][e["id"]]) for e in data["edges"]]
    first = {ids[0] for _, _, ids in view["edges"]}
    by_id = {e["id"]: e for e in data["edges"] if e["id"] in first}
    rects, out = view["rects"], []
    for a, b, ids in view["edges"]:
        ra, rb = rects[a], rects[b]
        port_a = OP_RADIUS if a.startswith("op") and "@" not in a else ra["w"] / 2
        port_b = OP_RADIUS if b.startswith("op") and "@" not in b else rb["w"] / 2
        out.append((by_id[ids[0]], route(ra, rb, port_a, port_b, 0.0, ra["band"] + 28.0)))
    return out


def overview(data, sizes, aspect=16 / 9, small=SMALL_TAPE):
    """The boxes a long tape opens with, placed, and the edges between what shows.

    ``sizes``: node and copy id -> (w, h) (``svg.node_sizes``).

    Returns:
        ``None`` when every box is open (draw the replay's own layout), else
        ``{"tree", "opened", "rects", "width", "height", "edges"}`` where
        ``edges`` is a list of ``(from, to, [edge ids])``, one per pair of
        shown ends.
    """
    boxes = data["layout"]["tree"]
    if boxes[0]["ops"] <= small:
        return None
    tree = boxes_only(boxes)         # which boxes open needs no items or edges
    opened = default_open(tree, small)
    if len(opened) == len(tree.boxes):
        return None
    tree = from_json(boxes, data["nodes"], data["edges"], opened)
    rects, width, height = place(tree, sizes, opened, aspect)
    shown, outer, home = {}, outer_closed(tree, opened), tree.home
    for e, (a, b) in zip(data["edges"], tree.ends):     # what shows for each end (rep)
        ra, rb = outer[home.get(a, 0)] or a, outer[home.get(b, 0)] or b
        if ra != rb and ra in rects and rb in rects:
            shown.setdefault((ra, rb), []).append(e["id"])
    return {"tree": tree, "opened": opened, "rects": rects, "width": width, "height": height,
            "edges": [(a, b, ids) for (a, b), ids in shown.items()]}


def _q(text):
    return '"' + escape(str(text), quote=True) + '"'


def _clip(text, limit):
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:max(limit - 1, 1)] + "…"


def _clip_end(text, limit):
    """A name that does not fit keeps its distinguishing end (``clip`` in static/graph.js)."""
    text = "" if text is None else str(text)
    return text if len(text) <= limit else "…" + text[len(text) - max(limit - 1, 1):]


def _shape(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _tensor(n, box, classes, grad):
    w = box["w"]
    flags = [f"tp-f-{flag}" for flag in n["flags"]]
    tags = " · ".join(FLAG_TEXT[flag] for flag in FLAG_TEXT if flag in n["flags"])
    cls = " ".join(["tp-node", "tp-tensor"] + flags + classes)
    h = BOX_HEIGHT
    parts = [f'<g class="{cls}" data-id="{n["id"]}" transform="translate({box["x"]},{box["y"]})">',
             f"<title>{escape(n['name'])}: {escape(_shape(n['shape']))} {escape(n['dtype'])}"
             f"{' = ' + escape(n['preview']) if n.get('preview') else ''}</title>",
             f'<rect class="tp-box" x="{-w / 2}" y="{-h / 2}" width="{w}" height="{h}" rx="8" '
             'fill="#f6f8fa" stroke="#8c959f"/>',
             f'<text class="tp-tags" y="{-h / 2 - 5}">{escape(tags)}</text>',
             f'<text class="tp-name" y="-9">{escape(_clip_end(n["name"], 16))}</text>',
             f'<text class="tp-meta" y="6">{escape(_clip(_shape(n["shape"]) + " " + n["dtype"], 22))}'
             "</text>",
             f'<text class="tp-value" y="21">{escape(_clip(n.get("preview") or "", 20))}</text>',
             f'<text class="tp-grad" y="{h / 2 + 15}">'
             f'{escape(_clip("g = " + grad, 20)) if grad else ""}</text>',
             "</g>"]
    return "".join(parts)


def _cover(box, r, current):
    """A closed box: its name (its distinguishing end) and what it holds."""
    x, y = r["x"] - r["w"] / 2, r["y"] - r["h"] / 2
    return (f'<g class="tp-group-cover{" tp-current" if current else ""}" data-group="{box["id"]}">'
            f'<title>{escape(box["path"] or box["label"])}: {escape(box["sub"])}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{r["w"]:.1f}" height="{r["h"]:.1f}" rx="10" '
            f'fill="#eef5fd" stroke="#0969da"/>'
            f'<text class="tp-box-name" x="{r["x"]:.1f}" y="{r["y"] - 5:.1f}" font-size="14" '
            f'font-weight="700">▸ {escape(_clip_end(box["label"], 30))}</text>'
            f'<text class="tp-box-sub" x="{r["x"]:.1f}" y="{r["y"] + 16:.1f}">'
            f'{escape(box["sub"])}</text></g>')


def _frame(box, r):
    """An open box: a dashed frame, its name on top."""
    x, y = r["x"] - r["w"] / 2, r["y"] - r["h"] / 2
    return (f'<g class="tp-group-frame" data-group="{box["id"]}"><rect x="{x:.1f}" y="{y:.1f}" '
            f'width="{r["w"]:.1f}" height="{r["h"]:.1f}" rx="10" fill="none" stroke="#8fb8e8" '
            f'stroke-dasharray="5 3"/><text class="tp-group-label" x="{x + 10:.1f}" y="{y + 20:.1f}" '
            f'text-anchor="start">▾ {escape(_clip_end(box["label"], 60))} · {escape(box["sub"])}'
            f'</text></g>')


def _copy(n, c, classes):
    cls = " ".join(["tp-node", "tp-tensor", "tp-copy"] + [f"tp-f-{f}" for f in n["flags"]] + classes)
    return (f'<g class="{cls}" data-id="{c["id"]}" data-copy-of="{n["id"]}" '
            f'transform="translate({c["x"]},{c["y"]})"><title>{escape(n["name"])} (read again here)'
            f'</title><rect class="tp-box" x="{-c["w"] / 2}" y="{-c["h"] / 2}" width="{c["w"]}" '
            f'height="{c["h"]}" rx="6" fill="#f6f8fa" stroke="#8c959f"/>'
            f'<text class="tp-name" y="5">{escape(_clip_end(n["name"], 10))}</text></g>')


def _op(n, box, classes, group):
    cls = ["tp-node", "tp-op"] + [f"tp-f-{flag}" for flag in n["flags"]] + classes
    if group is not None:
        cls.append(f"tp-group-{group % 7}")
    tapes = ", ".join(str(t) for t in sorted(set(n["tapes"])))
    return "".join([
        f'<g class="{" ".join(cls)}" data-id="{n["id"]}" transform="translate({box["x"]},{box["y"]})">',
        f"<title>{escape(n['op_type'])}: {escape(n['label'])} (tape {tapes})"
        f"{' — ' + escape(n['doc']) if n['doc'] else ''}</title>",
        f'<circle class="tp-circle" r="{OP_RADIUS}" fill="#fff4dc" stroke="#b07a00"/>',
        f'<text class="tp-optype" y="4">{escape(_clip(n["op_type"], 11))}</text>',
        f'<text class="tp-label" y="{OP_RADIUS + 14}">{escape(_clip(n["label"], 16))}</text>',
        f'<text class="tp-tags" y="{-OP_RADIUS - 5}">{"stopped" if "stopped" in n["flags"] else ""}'
        "</text>",
        "</g>"])
