"""Static forms of the player: the self-contained HTML page and the SVG snapshot.

No browser and no kernel: the HTML is parsed with ``html.parser`` (scripts,
inline JSON, no network references) and the SVG with ``xml.etree``.
"""

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import autodiff as ad
import widgets
from widgets.player.drawing.svg import frame_state, replay_svg
from widgets.player.page.html_export import export_html, html_snippet, read_page_model


def _x_squared():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x ** 2
    return tape, x, y


class _Collector(HTMLParser):
    """Collects script blocks (with their attributes) and every attribute value."""

    def __init__(self):
        super().__init__()
        self.scripts, self.attributes, self._in = [], [], None

    def handle_starttag(self, tag, attrs):
        self.attributes.extend(v or "" for _, v in attrs)
        if tag == "script":
            self._in = [dict(attrs), ""]

    def handle_data(self, data):
        if self._in is not None:
            self._in[1] += data

    def handle_endtag(self, tag):
        if tag == "script" and self._in is not None:
            self.scripts.append(tuple(self._in))
            self._in = None


def parse_html(html):
    """Script blocks ``(attrs, body)`` and all attribute values of ``html``."""
    parser = _Collector()
    parser.feed(html)
    parser.close()
    return parser


def test_exported_html_is_self_contained_and_round_trips_the_replay(tmp_path):
    tape, x, y = _x_squared()
    rep = widgets.replay(tape, y, x, names={"y": y})
    path = tmp_path / "x2.html"
    html = export_html(rep, path, classroom=True, frame=2)
    assert path.read_text(encoding="utf-8") == html
    assert not re.search(r"https?://", html)
    assert "<link" not in html and " src=" not in html
    parsed = parse_html(html)
    by_class = {attrs.get("class"): body for attrs, body in parsed.scripts}
    assert json.loads(by_class["tp-data"]) == rep.data == read_page_model(html)
    assert json.loads(by_class["tp-state"]) == {"frame": 2, "playing": False, "speed": 1.0,
                                                "classroom": True}
    code = by_class[None]
    assert "function render(" in code and "export default" not in code
    assert "<title>Tape player: dy/dx = 6.0</title>" in html


def test_html_survives_names_that_look_like_markup():
    x = ad.Variable(2.0, name="x")
    with ad.GradientTape() as tape:
        y = x * x
    rep = widgets.replay(tape, y, x, names={"</script><b>": y})
    html = export_html(rep)
    assert html.count("</script>") == 3          # data, state, code: nothing closes early
    parsed = parse_html(html)
    data = next(json.loads(b) for a, b in parsed.scripts if a.get("class") == "tp-data")
    assert data == rep.data


def test_export_from_a_tape_needs_target_and_sources():
    tape, x, y = _x_squared()
    with pytest.raises(ValueError):
        export_html(tape)
    html = export_html(tape, target=y, sources=x)
    assert "tp-static" in html


def test_snippet_shows_a_static_svg_until_the_script_runs():
    tape, x, y = _x_squared()
    snippet = html_snippet(tape, y, x)
    assert '<div class="tp-fallback"><svg' in snippet


def test_players_built_by_different_kernels_have_different_ids_and_find_their_own_element(
        monkeypatch):
    """Every lesson is built by a kernel of its own: the first player of each got the id
    tp-static-0, and in JupyterLab (one page for every open notebook) a restored tab's
    script started the player in another notebook's element (issue 35, item 4)."""
    import itertools
    import re

    from widgets.player.page import html_export

    ids = []
    for power in (2.0, 3.0):
        monkeypatch.setattr(html_export, "_ids", itertools.count())
        x = ad.Variable(1.5, name="x")
        with ad.GradientTape() as tape:
            y = x ** power
        snippet = html_snippet(tape, y, x)
        ids.append(re.search(r'<div class="tp-static" id="([^"]+)">', snippet).group(1))
        # the script takes its own element from document.currentScript, before any await
        assert "(async function (me) {" in snippet and "})(document.currentScript);" in snippet
        assert 'const host = (me && me.closest(".tp-static")) || document.getElementById(' \
            f'"{ids[-1]}");' in snippet
    assert ids[0] != ids[1] and all(i.startswith("tp-static-0-") for i in ids)


# ---- the Python SVG snapshot ------------------------------------------------
def _svg_nodes(svg):
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    nodes = {}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if "tp-node" in g.get("class", "").split():
            texts = {t.get("class"): (t.text or "") for t in g.findall("s:text", ns)}
            nodes[g.get("data-id")] = (g.get("class").split(), texts)
    return root, nodes


def test_svg_snapshot_shows_every_node_with_its_label():
    tape, x, y = _x_squared()
    rep = widgets.replay(tape, y, x, names={"y": y})
    root, nodes = _svg_nodes(replay_svg(rep, -1))
    assert root.get("data-phase") == "result"
    assert set(nodes) == {n["id"] for n in rep.nodes}
    x_classes, x_texts = nodes[f"t{x._id}"]
    assert x_texts["tp-name"] == "x" and x_texts["tp-value"] == "3.0"
    assert x_texts["tp-grad"] == "g = 6.0"
    assert {"tp-f-variable", "tp-f-source"} <= set(x_classes)
    assert "variable" in x_texts["tp-tags"] and "source" in x_texts["tp-tags"]
    op_classes, op_texts = nodes["op0"]
    assert op_texts["tp-optype"] == "Pow" and op_texts["tp-label"] == "x ** v0"
    y_classes, y_texts = nodes[f"t{y._id}"]
    assert y_texts["tp-name"] == "y" and "tp-f-target" in y_classes


def test_svg_frames_mark_the_current_record_and_the_flowing_edges():
    tape, x, y = _x_squared()
    rep = widgets.replay(tape, y, x)
    _, first = _svg_nodes(replay_svg(rep, 0))
    assert "tp-current" in first["op0"][0]
    assert first[f"t{x._id}"][1]["tp-grad"] == ""          # no gradient yet
    backward = next(k for k, f in enumerate(rep.frames) if f["phase"] == "backward")
    state = frame_state(rep.data, backward)
    flowing = {e for e, classes in state["edges"].items() if "tp-flow" in classes}
    x_edge = next(e["id"] for e in rep.edges if e["tensor"] == f"t{x._id}")
    const_edge = next(e["id"] for e in rep.edges if e["kind"] == "in" and e["slot"] == 1)
    assert x_edge in flowing and const_edge not in flowing
    assert "tp-receiving" in state["nodes"][f"t{x._id}"]
    svg = replay_svg(rep, backward, standalone=False)
    assert "xmlns" not in svg and "tp-flow" in svg


def test_nested_tapes_are_coloured_by_group_in_the_svg():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as outer:
        with ad.GradientTape(persistent=True) as inner:
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    rep = widgets.replay([outer, inner], dy_dx, x)
    _, nodes = _svg_nodes(replay_svg(rep))
    groups = [next(c for c in nodes[n["id"]][0] if c.startswith("tp-group-"))
              for n in rep.nodes if n["type"] == "op"]
    assert groups[:2] == ["tp-group-0", "tp-group-0"] and set(groups[2:]) == {"tp-group-1"}


def test_the_inline_script_is_valid_javascript(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the browser test covers the script too)")
    tape, x, y = _x_squared()
    scripts = parse_html(export_html(tape, target=y, sources=x)).scripts
    code = next(body for attrs, body in scripts if "type" not in attrs)
    path = tmp_path / "player.js"
    path.write_text(code, encoding="utf-8")
    result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
