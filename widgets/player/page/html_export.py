"""The tape player as self-contained HTML: no kernel, no network.

``export_html(tape_or_replay, path)`` writes one HTML file holding
everything the player needs inline: the stylesheet (``static/player.css``),
the view (``static/graph.js``, ``tree.js``, ``scene.js``... joined into one
module, ``JS_PARTS``), the replay as JSON (floats cut to 7 significant
digits; frames hold gradient deltas, so the page grows linearly with the
tape), and a static SVG of the last frame (a long tape's overview of boxes)
that shows until the script starts (or instead of it, where a page strips
scripts). It plays in any browser with the network off. A long replay
(more than ``PACK_ABOVE`` frames) travels as its ``page_model`` gzipped:
about 0.3 kB a record instead of 6.

``html_snippet`` is the same player as an HTML fragment: what a notebook
shows when no widget manager is running (a static render of a notebook,
nbconvert to HTML), via ``TapePlayer._repr_mimebundle_``.

How the ES module runs without a module loader: the joined module is written
for anywidget (``render({model, el})`` plus a final ``export default``
line). Here that last line is dropped, the module body goes inside a
function, and a tiny stand-in for anywidget's model (``get``, ``set``,
``on``, ``save_changes``) holds the frame, speed and play state locally.

    >>> import widgets
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> html = widgets.export_html(tape, "tape.html", target=y, sources=x)
    >>> html.startswith("<!DOCTYPE html>")
    True
"""

import base64
import hashlib
import gzip
import itertools
import json
from html import escape
from pathlib import Path

from ..data.frame_rows import FrameRows
from ..drawing.svg import replay_svg
from ..replay import Replay, gc_paused, replay as _replay

__all__ = ["export_html", "html_snippet", "describe", "player_js", "player_css", "page_model",
           "read_page_model"]

STATIC = Path(__file__).parents[1] / "static"
_EXPORT_LINE = "export default { render };"
_ids = itertools.count()


# The module's parts (each under ~400 lines), joined in this order into one ES module (anywidget's
# ``_esm`` is one string, and the export inlines one script).
JS_PARTS = ("graph.js", "tree.js", "flow.js", "scene.js", "viewport.js", "groups.js", "health.js",
            "words.js", "controls.js", "stage.js", "player.js")


def player_js():
    """The player's ES module source (what ``TapePlayer._esm`` holds)."""
    return "\n".join((STATIC / name).read_text(encoding="utf-8") for name in JS_PARTS)


def player_css():
    """The player's stylesheet."""
    return (STATIC / "player.css").read_text(encoding="utf-8")


def as_replay(tape_or_replay, target=None, sources=None, **replay_kwargs):
    """A Replay from a Replay, its data dict, or a tape plus target and sources.

    A page made straight from a tape (``export_html``, ``html_snippet``) passes
    ``geometry=False`` and ``words=False``: the page places the scope tree
    itself (the picture shown before the script starts places what it draws,
    ``svg.with_geometry``), and writes each record's and step's title and
    sentence itself (``static/words.js``).
    """
    if isinstance(tape_or_replay, Replay):
        return tape_or_replay
    if isinstance(tape_or_replay, dict) and "frames" in tape_or_replay:
        return Replay(tape_or_replay, None)
    if target is None or sources is None:
        raise ValueError("pass a Replay, or a tape together with target= and sources=")
    return _replay(tape_or_replay, target, sources, **replay_kwargs)


_PAGE_ONLY = {"geometry": False, "words": False}    # what only a Python reader of a replay needs


def _compact(value):
    """``value`` with every float cut to 7 significant digits (what a page shows).

    Full ``repr`` floats (``0.49844551276879775``) made up about half of a
    long tape's page; the player shows 4 digits and its tooltips 4 as well.
    """
    if isinstance(value, float):
        return float(f"{value:.7g}")
    if isinstance(value, list):
        return [_compact(v) for v in value]
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items()}
    return value


_FRAME_DEFAULTS = {"op": None, "record": None, "tape": None, "nodes": [], "edges": [],
                   "cotangents": [], "vjp": None, "contributions": [], "totals": [],
                   "gradients": [], "grads_new": {}}
_NAMED = ("cotangents", "contributions", "totals", "gradients", "outputs")


def page_model(data):
    """What a page needs of a replay's data, without what it can rebuild.

    The player (``unpackModel`` in ``static/player.js``) restores the rest:
    edges travel as ``[from, to, slot]``; an op's doc line is kept once per
    op type (``docs``). The frames travel as columns (``frames`` below):
    a forward record's frame is not sent at all (its op, record, outputs and
    edges are the op node's and its edges'), and a backward step is one row
    of its op's rank, its record and the values it moved. Values keep their
    preview (what the page shows), not their numbers, and node positions stay
    out (the page places the scope tree itself). A 10,000-record tape's model
    is then about a tenth of the replay's.

    ``frames``: ``{"forward": n, "seed": frame, "backward": [[op rank, record,
    cotangents, contributions, totals], ...], "result": frame}``: cotangents
    by the op's output slot, contributions by its input slot, totals as
    ``[tensor id, value, ...]``; a value is ``null`` (None), its preview (a
    string; the shape is its node's) or ``{"preview", "shape"}``.

    >>> from widgets import replay
    >>> from widgets.player.page.html_export import page_model
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> edge = page_model(replay(tape, y, x).data)["edges"][0]
    >>> edge == [f"t{x._id}", "op0", 0]               # x ** 2: from x into op0, slot 0
    True
    """
    docs, nodes, shapes = {}, [], {}
    for n in data["nodes"]:
        m = n.copy()          # a dict's own copy, then a key out: the order stays
        m.pop("data", None)
        if n["type"] == "tensor":
            shapes[n["id"]] = n["shape"]
        elif n["type"] == "op":
            doc = n.get("doc", "")
            if docs.setdefault(n["op_type"], doc) == doc:
                m.pop("doc", None)
        nodes.append(m)
    lay = data["layout"]
    return {**{k: v for k, v in data.items() if k not in ("nodes", "edges", "frames", "layout")},
            "debug": _page_debug(data.get("debug", {})), "packed": 2, "docs": docs, "nodes": nodes,
            "edges": [[e["from"], e["to"], e["slot"]] for e in data["edges"]],
            "frames": _frame_columns(data["frames"], shapes),
            "layout": {"width": lay.get("width"), "height": lay.get("height"), "tree": lay["tree"]}}


_ROUNDED = ("group_norms", "health")


def _page_debug(debug):
    """``_compact(debug)``, but the group norms and the health rows as they are:
    ``scopes.debug_marks`` rounds each norm to 4 significant digits already, and
    ``health.rows`` each number of a row (4 significant digits, or 4 places for a
    fraction), so cutting such a float to 7 changes nothing (walking a 10,000-record
    tape's 20,000 norms took 0.2 s; its 1,823 health rows, 34,000 items, 0.03 s)."""
    return {k: v if k in _ROUNDED else _compact(v) for k, v in debug.items()}


def _frame_columns(frames, shapes):
    """The frames as ``page_model`` sends them (``unpackModel`` rebuilds each dict):
    from a ``FrameRows`` (what ``replay(..., words=False)`` makes) as they are kept;
    any other list travels frame by frame."""
    if not isinstance(frames, FrameRows):
        return [_pack_frame(f, shapes) for f in frames]
    rows = []
    by_tid = {int(k[1:]): shape for k, shape in shapes.items()}

    def pack(i, value):          # _pack_value, with the node's shape by tensor id
        if value is None or value.__class__ is not dict:
            return value
        if value["preview"] is not None and value.get("shape") == by_tid.get(i):
            return value["preview"]
        return {"preview": value["preview"], "shape": value.get("shape")}

    for op, record, cotangents, contributions, totals in frames.rows:
        flat = []
        for x_id, value in totals:
            flat += (x_id, pack(x_id, value))
        rows.append([op["order"], record, [pack(i, v) for i, v in cotangents],
                     [pack(i, v) for i, v in contributions], flat])
    return {"forward": frames.n_forward, "seed": _pack_frame(frames.seed, shapes),
            "backward": rows, "result": _pack_frame(frames.result, shapes)}


def _pack_value(value, shape):
    if value is None:
        return None
    if value.__class__ is not dict:
        return value
    # The shape only where a sentence cannot take its node's (words.js says a big
    # value by its shape).
    if value["preview"] is not None and value.get("shape") == shape:
        return value["preview"]
    return {"preview": value["preview"], "shape": value.get("shape")}


def _pack_frame(frame, shapes):
    out = {}
    backward = frame["phase"] == "backward"
    for k, v in frame.items():
        if k == "index" or (k == "vjp" and backward):
            continue
        if k in _FRAME_DEFAULTS and v == _FRAME_DEFAULTS[k]:
            continue
        out[k] = [_pack_named(c, shapes) for c in v] if k in _NAMED else v
    return out


def _pack_named(entry, shapes):
    out = entry.copy()
    out.pop("name", None)
    value = out.get("value")
    if value.__class__ is dict:
        packed = _pack_value(value, shapes.get(entry["node"]))
        out["value"] = {"preview": packed} if packed.__class__ is str else packed
    return out


PACK_ABOVE = 400       # frames: a longer replay goes into the page packed and gzipped


def _json_for_script(data):
    """Compact JSON that is safe inside <script>: no '</script>', no '<!--'."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _data_script(data):
    """The model's <script>: the replay's JSON as it is, or for a long replay its
    ``page_model`` gzipped in base64 (the browser inflates it with its own
    DecompressionStream): about 6 kB a record becomes about 0.3 kB."""
    if len(data["frames"]) <= PACK_ABOVE:
        data = {**data, "frames": list(data["frames"])}     # a FrameRows makes its frames
        return f'<script type="application/json" class="tp-data">{_json_for_script(_compact(data))}</script>'
    # check_circular=False: the model is plain data made here (no cycles to look for:
    # 0.27 s instead of 0.31 for the 10,017-record transformer's 11 MB)
    text = json.dumps(page_model(data), allow_nan=False, separators=(",", ":"),
                      check_circular=False)
    # Level 2, not 6: a 10,017-record transformer's 11 MB model packs in 0.10 s instead
    # of 0.33, to 1.99 MB instead of 1.60 (level 3: 0.13 s, 1.92 MB; the browser inflates
    # any of them at once).
    packed = base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=2, mtime=0))
    return f'<script type="application/gzip-base64" class="tp-data">{packed.decode("ascii")}</script>'


def read_page_model(html):
    """The model a page holds (JSON or gzipped), as a dict: for tests and tools."""
    start = html.index('class="tp-data">') + len('class="tp-data">')
    body = html[start:html.index("</script>", start)]
    if 'type="application/gzip-base64" class="tp-data"' in html:
        body = gzip.decompress(base64.b64decode(body)).decode("utf-8")
    return json.loads(body)


def _module_body():
    source = player_js()
    if _EXPORT_LINE not in source:
        raise RuntimeError(f"player.js must end with the line {_EXPORT_LINE!r}")
    body = source.replace(_EXPORT_LINE, "")
    if "</script" in body.lower() or "<!--" in body:
        raise RuntimeError("player.js must not contain '</script' or '<!--' (it is inlined in HTML)")
    return body


def html_snippet(tape_or_replay, target=None, sources=None, *, frame=0, classroom=False,
                 speed=1.0, autoplay=False, picture=None, **replay_kwargs):
    """The player as an HTML fragment (styles, data, script and a static SVG).

    Args:
        tape_or_replay: a Replay, or a tape (then pass ``target`` and ``sources``).
        frame: the frame to show first.
        classroom: start in classroom mode (large type, high contrast).
        speed: frames per second.
        autoplay: start playing at once.
        picture: ``(png_bytes, (width, height))`` from ``png.replay_png``: the
            fallback is then that picture (an ``<img>``, which survives an
            HTML sanitizer) instead of the inline SVG (whose text a sanitizer
            leaves behind as run-on words).

    Returns:
        An HTML string with no external references.
    """
    rep = as_replay(tape_or_replay, target, sources, **{**_PAGE_ONLY, **replay_kwargs})
    state = {"frame": int(frame) % len(rep.frames), "playing": bool(autoplay),
             "speed": float(speed), "classroom": bool(classroom)}
    data = _data_script(rep.data)
    # The script finds its own element (document.currentScript, taken before the
    # first await). The id is only a fallback, and differs between players: a
    # counter alone gave "tp-static-1" to the first player of EVERY lesson, and in
    # JupyterLab, which keeps every open notebook in one page, each restored tab's
    # script then started the player of the first lesson's element, not its own.
    digest = hashlib.sha1(f"{data}{state}".encode("utf-8")).hexdigest()[:10]
    uid = f"tp-static-{next(_ids)}-{digest}"
    return f"""<div class="tp-static" id="{uid}">
<style>{player_css()}</style>
<div class="tp-fallback">{_fallback(rep, picture)}</div>
{data}
<script type="application/json" class="tp-state">{_json_for_script(state)}</script>
<script>
(async function (me) {{
{_module_body()}
  const host = (me && me.closest(".tp-static")) || document.getElementById("{uid}");
  if (!host || host.dataset.started) return;                // none, or started already
  host.dataset.started = "1";
  const state = JSON.parse(host.querySelector("script.tp-state").textContent);
  const script = host.querySelector("script.tp-data");
  if (script.type === "application/gzip-base64") {{
    const text = atob(script.textContent.trim());
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    state.model = JSON.parse(await new Response(stream).text());
  }} else state.model = JSON.parse(script.textContent);
  const listeners = {{}};
  const model = {{
    get: (key) => state[key],
    set: (key, value) => {{
      const old = state[key];
      state[key] = value;
      if (old !== value) (listeners["change:" + key] || []).slice().forEach((cb) => cb());
    }},
    save_changes: () => {{}},
    on: (event, cb) => {{ (listeners[event] = listeners[event] || []).push(cb); }},
    off: (event, cb) => {{
      listeners[event] = (listeners[event] || []).filter((f) => cb && f !== cb);
    }},
  }};
  const el = document.createElement("div");
  host.appendChild(el);
  const fallback = host.querySelector(".tp-fallback");
  if (fallback) fallback.remove();
  render({{ model, el }});
}})(document.currentScript);
</script>
</div>"""


def _fallback(rep, picture):
    if picture is None:
        return replay_svg(rep, -1, standalone=False)
    png, (width, height) = picture
    alt = escape(describe(rep), quote=True)
    return (f'<img class="tp-picture" alt="{alt}" width="{width}" height="{height}" '
            f'style="max-width:100%;height:auto" '
            f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">')


def describe(rep):
    """A short plain-text description of a replay (``text/plain``, the picture's alt text).

    >>> import widgets
    >>> from widgets.player.page.html_export import describe
    >>> x = ad.Variable(3.0, name="x")
    >>> with ad.GradientTape(persistent=True) as tape:
    ...     y = x ** 2
    >>> describe(widgets.replay(tape, y, x, names={"y": y}))
    'Tape player (1 record, 4 frames). result: dy/dx = 6.0'
    """
    n = sum(t["records"] for t in rep.data.get("tapes", ())) or \
        sum(1 for f in rep.frames if f["phase"] == "forward")
    tapes = len(rep.data.get("tapes", ()))
    where = f"{tapes} tapes, " if tapes > 1 else ""
    last = rep.frames[-1]["title"] if rep.frames else ""
    return (f"Tape player ({where}{n} record{'' if n == 1 else 's'}, {len(rep.frames)} frames). "
            f"{last}")


def export_html(tape_or_replay, path=None, target=None, sources=None, *, title=None,
                frame=0, classroom=False, speed=1.0, autoplay=False, **replay_kwargs):
    """A self-contained HTML page that plays the tape (no CDN, no network at all).

    Args:
        tape_or_replay: a Replay, or a tape (then pass ``target`` and ``sources``;
            a non-persistent tape is used up, as by ``tape.gradient``).
        path: where to write the page (None: only return it).
        title: the page title.
        frame, classroom, speed, autoplay: the player's starting state.
        **replay_kwargs: passed to ``replay`` (``names=``, ``output_gradients=``...).

    Returns:
        The HTML text.

    >>> import widgets
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> html = widgets.export_html(tape, "x_squared.html", target=y, sources=x)
    >>> open("x_squared.html", encoding="utf-8").read() == html
    True
    """
    # The collector stays paused for the whole export (replay and page: many small
    # containers, no cycles), and the replay made here is freed before it runs again:
    # re-enabled over a live replay, its first pass walked every object of it (0.19 s
    # CPU at 10,017 records).
    with gc_paused():
        rep = as_replay(tape_or_replay, target, sources, **{**_PAGE_ONLY, **replay_kwargs})
        title = title or "Tape player: " + rep.frames[-1]["title"].replace("result: ", "")
        snippet = html_snippet(rep, frame=frame, classroom=classroom, speed=speed,
                               autoplay=autoplay)
        del rep
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>body {{ margin: 1.5rem; background: #fff; }}</style>
</head>
<body>
{snippet}
</body>
</html>
"""
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page
