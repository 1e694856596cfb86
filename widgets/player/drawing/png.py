"""A PNG picture of one frame of a replay, drawn with matplotlib (Python side).

Where no JavaScript runs and HTML is sanitized (an untrusted notebook in
JupyterLab, a code host's notebook preview, nbviewer without scripts) the
live player and its inline SVG are stripped, and only plain text and images
survive. ``replay_png`` draws what the player would show there: the same
layout (``data["layout"]``, the positions ``svg.replay_svg`` uses; for a
long tape its overview of scope boxes, ``svg.overview``, with box names
never under 13px when shown 1,280 pixels wide), the
same node kinds, flags and gradients, the frame's title above and its
sentence below, at twice the pixel density so it stays crisp on a high-DPI
screen and on a projector. ``TapePlayer`` puts it into every saved output
(``image/png`` in the mime bundle, and as an ``<img>`` inside the HTML
fallback); where the widget runs, the live view replaces it.

This module only draws: it reads the replay dict and ``svg.frame_state``,
never a tape. matplotlib is imported lazily (``widgets`` itself needs none).

    >>> from widgets import replay
    >>> from widgets.player.drawing.png import replay_png
    >>> x, w = ad.Variable(3.0), ad.Variable(0.5)
    >>> with ad.GradientTape() as tape:
    ...     y = ad.tanh(w * x)
    >>> png, (width, height) = replay_png(replay(tape, y, [x, w]), frame=-1)   # size in px
    >>> png[:4]
    b'\x89PNG'
    >>> with open("tape.png", "wb") as f:
    ...     _ = f.write(png)
"""

import io
import textwrap

from ..data.frames import grads_at
from ..layout.graph_layout import OP_RADIUS
from ..layout.scope_tree import rep
from .svg import (BOX_HEIGHT, FLAG_TEXT, _clip_end, _edges, _shown, frame_state, node_sizes,
                  overview, title_text, with_geometry)

__all__ = ["replay_png", "MAX_WIDTH"]

MAX_WIDTH = 1200.0    # logical pixels: a wider graph is drawn smaller
DENSITY = 2           # device pixels per logical pixel (crisp at 2x)
TEXT_ABOVE = 400      # more nodes than this: boxes and edges only, no labels
_TOP, _LINE = 34.0, 19.0
_PALETTE = {False: {"fg": "#1f2328", "muted": "#6e7781", "line": "#8c959f", "box": "#f6f8fa",
                    "op": "#fff4dc", "op_line": "#b07a00", "flow": "#d55e00", "stroke": 1.5},
            True: {"fg": "#000000", "muted": "#000000", "line": "#000000", "box": "#ffffff",
                   "op": "#ffe7b3", "op_line": "#000000", "flow": "#d55e00", "stroke": 2.5}}
_FLAG_LINE = {"variable": ("#0072b2", 3.5, "-"), "target": ("#e69f00", 3.5, "-"),
              "unconnected": ("#cc79a7", 3.5, "--"), "constant": ("#8c959f", 1.5, "--"),
              "integer": ("#6e7781", 1.5, ":"), "stopped": ("#6e7781", 1.5, "--"),
              "watched": ("#0072b2", 2.5, "-")}


def replay_png(replay, frame=-1, *, classroom=False, max_width=MAX_WIDTH):
    """Frame ``frame`` of ``replay`` as PNG bytes, with its size in logical pixels.

    Args:
        replay: a Replay (or its ``data`` dict).
        frame: the frame index (negative counts from the end; -1: the result).
        classroom: high-contrast colours, as the player's classroom mode.
        max_width: the widest the picture is shown, in logical pixels.

    Returns:
        ``(png_bytes, (width, height))``; the bitmap has ``DENSITY`` times as
        many pixels each way, so give ``width`` and ``height`` to the display.
    """
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    data = getattr(replay, "data", replay)
    k = frame % len(data["frames"])
    f = data["frames"][k]
    view = overview(data, node_sizes(data))     # a long tape: its boxes, as the player opens
    lay = (data if view is not None else with_geometry(data))["layout"]
    W, H = (lay["width"], lay["height"]) if view is None else (view["width"], view["height"])
    W, H = max(float(W), 200.0), float(H)
    scale = min(1.0, max_width / W)
    chars = int(W * scale / 7.5)
    lines = textwrap.wrap(f["sentence"] or "", max(chars, 40))[:4]
    bottom = 14.0 + _LINE * len(lines)
    width_px, height_px = W * scale, (H + _TOP / scale + bottom / scale) * scale
    fig = Figure(figsize=(width_px / 100, height_px / 100), dpi=100 * DENSITY)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, W)
    ax.set_ylim(H + (_TOP + bottom) / scale, 0)
    ax.axis("off")
    pal = _PALETTE[bool(classroom)]
    pt = 0.72 * scale           # points per layout unit (1 unit = 1 logical px at scale 1)
    top = _TOP / scale
    ax.text(10 / scale, 22 / scale, _clip(title_text(f), chars), fontsize=14 * 0.72, family="monospace",
            weight="bold", color=pal["fg"], va="baseline", clip_on=False)
    for i, line in enumerate(lines):
        ax.text(10 / scale, top + H + (_LINE * (i + 1)) / scale, line, fontsize=14 * 0.72,
                color=pal["fg"], va="baseline", weight="bold" if classroom else "normal")
    _draw_graph(ax, data, k, pal, pt, top, view)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100 * DENSITY, facecolor="white")
    return buffer.getvalue(), (round(width_px), round(height_px))


def _path(d, dy):
    """An SVG path of M, C and L commands (graph_layout.route) as a matplotlib Path."""
    from matplotlib.path import Path
    verts, codes = [], []
    kinds = {"M": Path.MOVETO, "C": Path.CURVE4, "L": Path.LINETO}
    for token in d.replace("M", " M ").replace("C", " C ").replace("L", " L ").split():
        if token in kinds:
            code = kinds[token]
            continue
        x, y = token.split(",")
        verts.append((float(x), float(y) + dy))
        codes.append(code)
    return Path(verts, codes)


def _draw_graph(ax, data, k, pal, pt, dy, view=None):
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Circle, FancyBboxPatch

    lay = data["layout"]
    state = frame_state(data, k, None if view is None else _shown(data, view))
    grads = grads_at(data, k)
    positions = {**lay["nodes"], **{c["id"]: c for c in lay.get("copies", ())}} if view is None \
        else view["rects"]
    if view is not None:
        _draw_boxes(ax, data["frames"][k], view, pal, pt, dy)
    done = {"edges": [], "pending": [], "lit": []}
    for e, path in _edges(data, view):
        classes = state["edges"][e["id"]]
        key = "lit" if ("tp-flow" in classes or "tp-active" in classes) else \
            "pending" if "tp-pending" in classes else "edges"
        done[key].append(_path(path, dy))
    for key, colour, width, alpha in (("pending", pal["line"], pal["stroke"], 0.25),
                                      ("edges", pal["line"], pal["stroke"], 1.0),
                                      ("lit", pal["flow"], 4.0, 1.0)):
        if done[key]:
            ax.add_collection(PathCollection(done[key], facecolor="none", edgecolor=colour,
                                             linewidth=width * pt, alpha=alpha))
    labels = sum(1 for n in data["nodes"] if n["id"] in positions) <= TEXT_ABOVE
    by_id = {n["id"]: n for n in data["nodes"]}
    for c in lay.get("copies", ()):
        if c["id"] not in positions:
            continue
        n = by_id[c["node"]]
        c = {**c, **positions[c["id"]]}
        ax.add_patch(FancyBboxPatch((c["x"] - c["w"] / 2, c["y"] - c["h"] / 2 + dy), c["w"], c["h"],
                                    boxstyle="round,pad=0,rounding_size=6", facecolor=pal["box"],
                                    edgecolor=pal["line"], linestyle="--", linewidth=pal["stroke"] * pt))
        if labels:
            _text(ax, c["x"], c["y"] + dy + 4, _clip_end(n["name"], 10), 10 * pt, pal["fg"])
    for n in data["nodes"]:
        if n["id"] not in positions:
            continue
        b = positions[n["id"]]
        x, y = b["x"], b["y"] + dy
        classes = state["nodes"][n["id"]]
        alpha = 0.3 if "tp-pending" in classes else 1.0
        current = "tp-current" in classes
        if n["type"] == "tensor":
            colour, width, style = pal["line"], pal["stroke"], "-"
            for flag in ("variable", "target", "unconnected", "watched", "constant", "integer",
                         "stopped"):
                if flag in n["flags"]:
                    colour, width, style = _FLAG_LINE[flag]
                    break
            if "tp-receiving" in classes:
                colour, width = pal["flow"], 4.0
            if current:
                colour, width, style = pal["fg"], 5.0, "-"
            fill = "#dcefff" if "variable" in n["flags"] else pal["box"]
            ax.add_patch(FancyBboxPatch((x - b["w"] / 2, y - BOX_HEIGHT / 2), b["w"], BOX_HEIGHT,
                                        boxstyle="round,pad=0,rounding_size=8", facecolor=fill,
                                        edgecolor=colour, linestyle=style, linewidth=width * pt,
                                        alpha=alpha))
            if labels:
                _tensor_text(ax, n, x, y, pt, pal, alpha, grads.get(n["id"]))
        else:
            edge = pal["fg"] if current else pal["op_line"]
            ax.add_patch(Circle((x, y), OP_RADIUS, facecolor=pal["op"], edgecolor=edge,
                                linewidth=(5.0 if current else pal["stroke"]) * pt, alpha=alpha,
                                linestyle="--" if "stopped" in n["flags"] else "-"))
            if labels:
                _text(ax, x, y + 4, _clip(n["op_type"], 11), 11 * pt, pal["fg"], alpha, "bold")
                _text(ax, x, y + OP_RADIUS + 14, _clip(n["label"], 16), 10 * pt, pal["muted"],
                      alpha, family="monospace")


def _tensor_text(ax, n, x, y, pt, pal, alpha, grad):
    tags = " · ".join(FLAG_TEXT[flag] for flag in FLAG_TEXT if flag in n["flags"])
    shape = "(" + ", ".join(str(d) for d in n["shape"]) + ("," if len(n["shape"]) == 1 else "") + ")"
    name_colour = "#009e73" if "source" in n["flags"] else pal["fg"]
    _text(ax, x, y - BOX_HEIGHT / 2 - 5, tags, 9.5 * pt, pal["muted"], alpha)
    _text(ax, x, y - 9, _clip_end(n["name"], 16), 14 * pt, name_colour, alpha, "bold")
    _text(ax, x, y + 6, _clip(f"{shape} {n['dtype']}", 22), 10 * pt, pal["muted"], alpha)
    _text(ax, x, y + 21, _clip(n.get("preview") or "", 20), 11 * pt, pal["fg"], alpha,
          family="monospace")
    if grad:
        _text(ax, x, y + BOX_HEIGHT / 2 + 15, _clip("g = " + grad, 20), 12 * pt, pal["flow"],
              alpha, "bold", "monospace")


def _text(ax, x, y, text, size, colour, alpha=1.0, weight="normal", family="sans-serif"):
    if text:
        ax.text(x, y, text, fontsize=size, color=colour, alpha=alpha, weight=weight,
                family=family, ha="center", va="baseline")


def _clip(text, limit):
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:max(limit - 1, 1)] + "…"


def _draw_boxes(ax, frame, view, pal, pt, dy):
    """The overview's boxes: open ones dashed with their name on top, closed ones
    filled with their name and what they hold, in type that stays readable when
    the picture is shown 1,280 pixels wide (never under 11 px)."""
    from matplotlib.patches import FancyBboxPatch

    current = rep(view["tree"], frame["op"], view["opened"]) if frame.get("op") else None
    px = pt / 0.72              # logical pixels per layout unit
    shown = [(item, r) for item, r in view["rects"].items() if item[:1] == "b" and "open" in r]
    # outer frames first (a box is placed after the boxes in it), closed boxes on top
    shown.sort(key=lambda ir: (not ir[1]["open"], -ir[1]["w"] * ir[1]["h"]))
    for item, r in shown:
        box = view["tree"].boxes[int(item[1:])]
        x0, y0 = r["x"] - r["w"] / 2, r["y"] - r["h"] / 2 + dy
        if r["open"]:
            ax.add_patch(FancyBboxPatch((x0, y0), r["w"], r["h"], boxstyle="round,pad=0,rounding_size=10",
                                        facecolor="#f7fbff", edgecolor="#8fb8e8", linestyle="--",
                                        linewidth=1.2 * pt))
            ax.text(x0 + 10, y0 + 20, f"▾ {_clip_end(box['label'], 60)} · {box['sub']}",
                    fontsize=max(11 * px, 11) * 0.72, color="#0969da", ha="left", va="baseline")
            continue
        hot = item == current
        ax.add_patch(FancyBboxPatch((x0, y0), r["w"], r["h"], boxstyle="round,pad=0,rounding_size=10",
                                    facecolor="#fff1e5" if hot else "#eef5fd",
                                    edgecolor="#bc4c00" if hot else "#0969da",
                                    linewidth=(3.0 if hot else 1.5) * pt))
        _text(ax, r["x"], r["y"] + dy - 5, "▸ " + _clip_end(box["label"], 30),
              max(14 * px, 13) * 0.72, pal["fg"], weight="bold")
        _text(ax, r["x"], r["y"] + dy + 16, box["sub"], max(11 * px, 11) * 0.72, pal["muted"])
