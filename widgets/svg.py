"""A static SVG snapshot of one frame of a replay (Python side).

The live player draws in the browser (``static/player.js``); this module
draws the same picture, with the same CSS classes, as an SVG string. It
serves where no JavaScript runs: the README screenshot fallback, the
placeholder inside the exported HTML before its script starts (and on
pages that strip scripts), and tests that parse the drawing with
``xml.etree``.

``frame_state`` decides which nodes and edges are done, pending, current
or carrying the cotangent in a frame; ``player.js`` mirrors it line by line.

    >>> svg = replay_svg(r, frame=-1)          # the last frame: gradients shown
    >>> open("tape.svg", "w").write(svg)
"""

from html import escape
from pathlib import Path

from .frames import grads_at
from .graph_layout import OP_RADIUS
from .scopes import COLLAPSE_ABOVE_OPS

__all__ = ["replay_svg", "frame_state", "FLAG_TEXT"]

SVG_NS = "http://www.w3.org/2000/svg"
BOX_HEIGHT = 56.0
# Flags in the order a node's tag line shows them (player.js uses the same words).
FLAG_TEXT = {"variable": "variable", "watched": "watched", "constant": "constant",
             "source": "source", "target": "target", "integer": "integer",
             "unconnected": "unconnected", "stopped": "stopped"}
_CSS = Path(__file__).with_name("static") / "player.css"


def frame_state(data, k):
    """CSS classes of every node and edge in frame ``k`` of a replay dict.

    Returns:
        ``{"nodes": {id: [class, ...]}, "edges": {id: [class, ...]}}``.
    """
    frames = data["frames"]
    frame = frames[k % len(frames)]
    done = frame["done_ops"]
    order = {n["id"]: n["order"] for n in data["nodes"] if n["type"] == "op"}
    producer = {e["to"]: order[e["op"]] for e in data["edges"] if e["kind"] == "out"}
    receiving = {c["node"] for c in frame["contributions"] if c["value"] is not None}
    highlighted = set(frame["nodes"])
    nodes = {}
    for n in data["nodes"]:
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
    for e in data["edges"]:
        classes = ["tp-pending" if order[e["op"]] >= done else "tp-done"]
        if e["id"] in lit:
            classes.append("tp-active" if frame["phase"] == "forward" else "tp-flow")
        edges[e["id"]] = classes
    return {"nodes": nodes, "edges": edges}


def replay_svg(replay, frame=-1, *, standalone=True, caption=True):
    """One frame of ``replay`` as an SVG document (a string).

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
    state = frame_state(data, k)
    grads = grads_at(data, k)
    lay = data["layout"]
    top = 30.0 if caption else 0.0
    bottom = 40.0 if caption else 0.0
    width, height = lay["width"], lay["height"] + top + bottom
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
                   f'{escape(f["title"])}</text>')
    out.append(f'<g transform="translate(0,{top:.1f})">')
    group_of = _collapsed(data)
    out.append('<g class="tp-edges">')
    for e in data["edges"]:
        a = f'{e["from"]}@{e["op"]}' if e["kind"] == "in" and f'{e["from"]}@{e["op"]}' in group_of \
            else e["from"]
        if group_of.get(a) is not None and group_of.get(a) == group_of.get(e["to"]):
            continue                     # inside a collapsed group
        classes = " ".join(["tp-edge", f"tp-edge-{e['kind']}"] + state["edges"][e["id"]])
        out.append(f'<path class="{classes}" data-id="{e["id"]}" d="{lay["edges"][e["id"]]}" '
                   'fill="none" stroke="#8c959f"/>')
    out.append('</g><g class="tp-nodes">')
    by_id = {n["id"]: n for n in data["nodes"]}
    for c in lay.get("copies", ()):     # where a widely read input is read again
        if c["id"] not in group_of:
            out.append(_copy(by_id[c["node"]], c, state["nodes"][c["node"]]))
    for n in data["nodes"]:
        if n["id"] in group_of:
            continue
        box = lay["nodes"][n["id"]]
        classes = state["nodes"][n["id"]]
        if n["type"] == "tensor":
            out.append(_tensor(n, box, classes, grads.get(n["id"])))
        else:
            group = groups.get(n.get("group"), 0)
            out.append(_op(n, box, classes, group if multi else None))
    for g in data.get("groups", ()) if group_of else ():
        out.append(_cover(g, frame_of=f))
    out.append("</g></g>")
    if caption:
        y = top + lay["height"] + 24
        out.append(f'<text class="tp-caption-sentence" x="12" y="{y:.1f}" text-anchor="start">'
                   f'{escape(_clip(f["sentence"], int(width / 6.5)))}</text>')
    out.append("</g></svg>")
    return "\n".join(out)


def _q(text):
    return '"' + escape(str(text), quote=True) + '"'


def _clip(text, limit):
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:max(limit - 1, 1)] + "…"


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
             f'<text class="tp-name" y="-9">{escape(_clip(n["name"], 16))}</text>',
             f'<text class="tp-meta" y="6">{escape(_clip(_shape(n["shape"]) + " " + n["dtype"], 22))}'
             "</text>",
             f'<text class="tp-value" y="21">{escape(_clip(n.get("preview") or "", 20))}</text>',
             f'<text class="tp-grad" y="{h / 2 + 15}">'
             f'{escape(_clip("g = " + grad, 20)) if grad else ""}</text>',
             "</g>"]
    return "".join(parts)


def _collapsed(data):
    """``member id -> group id`` of the groups drawn collapsed (as the player opens)."""
    n_ops = sum(1 for n in data["nodes"] if n["type"] == "op")
    if n_ops <= COLLAPSE_ABOVE_OPS:
        return {}
    return {m: g["id"] for g in data.get("groups", ()) for m in g["members"]}


def _cover(g, frame_of):
    b = g["box"]
    current = " tp-current" if frame_of.get("op") in g["ops"] else ""
    label = f'{_clip(g["scope"], 40)} · {len(g["ops"])} op{"" if len(g["ops"]) == 1 else "s"}'
    return (f'<g class="tp-group-cover{current}" data-group="{g["id"]}">'
            f'<rect x="{b["x"]}" y="{b["y"]}" width="{b["w"]}" height="{b["h"]}" rx="10" '
            f'fill="#eef5fd" stroke="#0969da"/><text x="{b["x"] + b["w"] / 2}" '
            f'y="{b["y"] + b["h"] / 2 + 5}">▸ {escape(label)}</text></g>')


def _copy(n, c, classes):
    cls = " ".join(["tp-node", "tp-tensor", "tp-copy"] + [f"tp-f-{f}" for f in n["flags"]] + classes)
    return (f'<g class="{cls}" data-id="{c["id"]}" data-copy-of="{n["id"]}" '
            f'transform="translate({c["x"]},{c["y"]})"><title>{escape(n["name"])} (read again here)'
            f'</title><rect class="tp-box" x="{-c["w"] / 2}" y="{-c["h"] / 2}" width="{c["w"]}" '
            f'height="{c["h"]}" rx="6" fill="#f6f8fa" stroke="#8c959f"/>'
            f'<text class="tp-name" y="4">{escape(_clip(n["name"], 10))}</text></g>')


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
