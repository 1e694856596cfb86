"""The player's saved picture (PNG in the bundle) and its captions' names and numbers."""

import base64
import struct

import pytest

import autodiff as ad
from widgets.player.data.sentences import rule_text
from widgets.player.drawing.png import DENSITY, replay_png
from widgets.player.page.html_export import player_css, player_js
from widgets.player.replay import replay

pytest.importorskip("anywidget")
from widgets.player.page.tape_player import TapePlayer  # noqa: E402


def _png_size(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def _lesson_1(persistent=False):
    x = ad.Variable(1.5, name="x")
    with ad.GradientTape(persistent=persistent) as tape:
        y = x ** 3 - 2.0 * x
    return tape, x, y


# ---- the PNG in the saved bundle ----------------------------------------------------
def test_bundle_carries_a_2x_png_an_img_fallback_and_a_short_text():
    tape, x, y = _lesson_1()
    data, metadata = TapePlayer(tape, y, x, names={"y": y})._repr_mimebundle_()
    png = base64.b64decode(data["image/png"])
    width, height = metadata["image/png"]["width"], metadata["image/png"]["height"]
    assert _png_size(png) == (width * DENSITY, height * DENSITY)       # crisp at 2x
    assert 300 < width <= 1200 and height > 100
    html = data["text/html"]
    assert '<img class="tp-picture"' in html and "data:image/png;base64," in html
    assert "<svg" not in html.split("<script")[0]   # no SVG whose text a sanitizer leaves behind
    text = data["text/plain"]
    assert "\n" not in text and len(text) < 120, text
    assert text == "Tape player (3 records, 8 frames). result: dy/dx = 4.75"
    assert "application/vnd.jupyter.widget-view+json" in data     # the live view where JS runs


def test_png_draws_any_frame_in_both_modes():
    tape, x, y = _lesson_1(persistent=True)
    r = replay(tape, y, x, names={"y": y})
    first, size = replay_png(r, 0)
    last, _ = replay_png(r, -1, classroom=True)
    assert first != last and _png_size(first) == (size[0] * DENSITY, size[1] * DENSITY)


def test_a_wide_graph_is_drawn_smaller_not_wider():
    x = ad.Variable(0.5, name="x")
    with ad.GradientTape() as tape:
        h = x
        for _ in range(40):
            h = ad.sin(h)
    png, (width, _) = replay_png(replay(tape, h, x), -1)
    assert width == 1200 and _png_size(png)[0] == 2400


def test_derivative_explorer_saves_its_picture():
    from widgets.plots.derivative_plot import DerivativeExplorer
    data, _ = DerivativeExplorer(ad.sin, num=51)._repr_mimebundle_()
    assert base64.b64decode(data["image/png"])[:4] == b"\x89PNG"
    assert data["text/plain"].startswith("Derivative explorer: sin")


# ---- captions: the tape's own names, numbered from 1, unique across tapes -------------
@pytest.mark.parametrize("doc,names,expected", [
    ("d(x y) = y dx + x dy", ["v2", "x"], "d(v2·x) = x·dv2 + v2·dx"),
    ("d(x y) = y dx + x dy", ["y", "x"], "d(y·x) = x·dy + y·dx"),        # names swap places
    ("d/dx sin x = cos x", ["v0"], "d/dv0 sin v0 = cos v0"),
    ("d(x + y) = dx + dy", ["a", "b"], "d(a + b) = da + db"),
    ("d(A B) = dA B + A dB, so dA = g B^T and dB = A^T g", ["h", "W"],
     "d(h·W) = dh·W + h·dW, so dh = g W^T and dW = h^T g"),
    ("sum the cotangent over the broadcast copies", ["x"],
     "sum the cotangent over the broadcast copies"),                       # not a formula
])
def test_rules_are_written_in_the_records_names(doc, names, expected):
    assert rule_text(doc, names) == expected


def test_backward_sentence_uses_the_lessons_names_not_generic_x_y():
    x = ad.Variable(2.0, name="x")
    with ad.GradientTape() as tape:
        v = x + 1.0
        y = v * x
    r = replay(tape, y, x, names={"y": y, "v2": v})
    mul = next(f for f in r.frames if f["phase"] == "backward" and f["vjp"]["op_type"] == "Mul")
    assert "d(v2·x) = x·dv2 + v2·dx" in mul["sentence"]
    assert "d(x y)" not in mul["sentence"]
    assert mul["vjp"]["rule"] == "d(v2·x) = x·dv2 + v2·dx"


def test_records_and_backward_steps_count_from_1():
    tape, x, y = _lesson_1()
    r = replay(tape, y, x, names={"y": y})
    forward = [f for f in r.frames if f["phase"] == "forward"]
    assert [f["title"].split(":")[0] for f in forward] == ["record 1", "record 2", "record 3"]
    assert forward[0]["sentence"].startswith("Record 1: ")
    backward = [f for f in r.frames if f["phase"] == "backward"]
    assert backward[0]["title"].startswith("backward 1: Sub (record 3)")


def test_two_tapes_give_unique_record_names():
    x = ad.Variable(1.5, name="x")
    with ad.GradientTape() as outer:
        with ad.GradientTape(persistent=True) as inner:
            y = x ** 3
        dy_dx = inner.gradient(y, x)
    r = replay([outer, inner], dy_dx, x)
    titles = [f["title"].split(":")[0] for f in r.frames if f["phase"] == "forward"]
    assert titles[0] == "tape 1, record 1"
    assert len(set(titles)) == len(titles), titles
    assert [t["name"] for t in r.tapes] == ["tape 1", "tape 2"]


def test_pause_and_play_icons_are_drawn_not_glyphs():
    js = player_js()
    assert "\u23f8" not in js                       # the pause glyph many fonts lack
    assert "tp-icon-pause" in js and ".tp-icon-pause" in player_css()
