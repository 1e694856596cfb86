"""Classroom mode on a projector: readable type, one toolbar row, nothing below the fold.

Exports players in classroom mode and opens them in Debian's Chromium at
1280x720 and 1920x1080: two lessons' graphs (lesson 1's ``y = x ** 3 - 2 x``
and the second derivative of ``x ** 3`` through nested tapes, the widest
graph of the lessons) and three real models (lesson 14's MLP, four scopes in
a Keras model; a Keras GRU unrolled 50 steps, and 435 steps: 10,010
records, an overview too wide to read whole at 1280x720, so classroom mode
shows it at the readable zoom around the current record instead of
shrinking it). On the first frame, a backward frame and the last one:

- the toolbar is one row, and the toolbar, the debugging tools (search,
  first NaN/Inf, lost gradient), title, stage, health panel, sentence,
  gradients and legend lie inside the window (nothing needed below the fold); the
  title takes at most two lines, however many gradients the result has, and is
  whole: its text no taller than its box, no line clamp, no ellipsis (also in
  normal mode, on the result);
- playing follows the current record at a readable zoom: it lies inside
  the stage, and every text on screen, HTML or SVG, the health panel's
  included, is at least 18px (a model's box is opened to read its nodes);
- classroom mode never draws a text smaller than normal mode does;
- the stage is one height on the three frames (a teacher stepping through
  sees no jump), at least ``STAGE_PX`` beside a health panel, and never
  taller than the window (its height is bounded by the room it is given).

Then normal mode: no text on screen, HTML or SVG, is smaller than 16px.
Screenshots ``classroom_<graph>_<w>x<h>.png`` go to the artifacts folder.
"""

import pytest

import autodiff as ad
from benchmarks.chromium import MEASURE, SVG_TYPE   # what the benchmark reports too
from player_pages import open_player
from widgets import export_html

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1920, 1080)]
STAGE_PX = 300      # the graph area beside a health panel, on every frame

# Every element that shows text, with its on-screen font size (SVG text times the zoom).
TYPE_SIZES = """() => {
  const root = document.querySelector(".tp-root");
  const zoom = Number(root.querySelector(".tp-stage").dataset.scale);
  return [...root.querySelectorAll("*")]
    .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
    .filter((e) => e.getClientRects().length && !e.closest(".tp-minimap, title"))
    .map((e) => [e.textContent.trim().slice(0, 30),
                 parseFloat(getComputedStyle(e).fontSize) * (e.closest("svg.tp-svg") ? zoom : 1)]);
}"""


# The box around the legend's items (in classroom mode they flow on after the
# gradients, the legend itself drawing no box).
LEGEND = """() => { const items = [...document.querySelectorAll(".tp-root .tp-legend-item")]
    .filter((e) => e.getClientRects().length).map((e) => e.getBoundingClientRect());
  return items.length ? [Math.min(...items.map((b) => b.left)), Math.min(...items.map((b) => b.top)),
    Math.max(...items.map((b) => b.right)), Math.max(...items.map((b) => b.bottom))] : null; }"""

# The title's text height against its box, its line clamp and text overflow: it wraps, never cut.
TITLE = """() => { const t = document.querySelector(".tp-root .tp-title"); const s = getComputedStyle(t);
  return [t.scrollHeight, t.clientHeight, s.webkitLineClamp, s.textOverflow, t.textContent]; }"""


def _check_title(page, where):
    tall, shown, clamp, overflow, text = page.evaluate(TITLE)
    assert tall <= shown + 1 and clamp in ("none", "") and overflow != "ellipsis", \
        f"{where}: the title is cut ({tall}px of text in {shown}px, line clamp {clamp!r}, {overflow}): {text!r}"


def _lesson_1():
    x = ad.Variable(1.5, name="x")
    with ad.GradientTape() as tape:
        y = x ** 3 - 2.0 * x
    return tape, y, x, {"y": y}


def _second_derivative():
    x = ad.Variable(1.5, name="x")
    with ad.GradientTape() as outer:
        with ad.GradientTape(persistent=True) as inner:
            y = x ** 3
        dy_dx = inner.gradient(y, x)
    return [outer, inner], dy_dx, x, {"y": y, "dy_dx": dy_dx}


def _lesson_14_mlp():
    """Lesson 14's model: an ad.keras.Model, Dense 2 -> 16 -> 16 -> 2, and its loss scope."""
    from benchmarks.model_tapes import lesson14_mlp
    tape, loss, variables = lesson14_mlp()
    return tape, loss, variables, {"loss": loss}


def _gru(records):
    def make():
        from benchmarks.model_tapes import gru_tape
        tape, loss, variables = gru_tape(records)
        return tape, loss, variables, {"loss": loss}
    return make


GRAPHS = {"lesson1": _lesson_1, "second_derivative": _second_derivative,
          "mlp14": _lesson_14_mlp, "gru50": _gru(1155), "gru435": _gru(10_010)}


def _inside(box, frame, slack=1.0):
    return (box[0] >= frame[0] - slack and box[1] >= frame[1] - slack
            and box[2] <= frame[2] + slack and box[3] <= frame[3] + slack)


@pytest.fixture
def page_of(chromium, tmp_path):
    contexts = []

    def open_page(name, width, height, classroom=True):
        tape, target, sources, names = GRAPHS[name]()
        path = tmp_path / f"{name}.html"
        export_html(tape, path, target=target, sources=sources, names=names, classroom=classroom)
        context = chromium.new_context(offline=True, viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        open_player(page, path)
        return page

    yield open_page
    for context in contexts:
        context.close()


def _check_frame(m, width, height, frame):
    assert max(m["tops"]) - min(m["tops"]) <= 4, f"frame {frame}: the toolbar wraps {m['tops']}"
    parts = ("toolbar", "tools", "title", "stage", "sentence", "gradients") + (("panel",) if m["panel"] else ())
    for part in parts:
        assert _inside(m[part], m["window"]), \
            f"frame {frame}: the {part} {m[part]} is not inside the {width}x{height} window"
    assert m["title"][3] - m["title"][1] <= 2.6 * m["titleFont"] * 1.25, \
        f"frame {frame}: the title takes more than two lines"
    assert m["current"] is None or _inside(m["current"], m["stage"], slack=4), \
        f"frame {frame}: the current record {m['current']} is outside the stage {m['stage']}"


@pytest.mark.parametrize("width,height", SIZES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_classroom_mode_is_readable_and_above_the_fold(page_of, artifacts_dir, name, width, height):
    page = page_of(name, width, height)
    root = page.locator(".tp-root")
    if name == "mlp14":      # the model opens as its scopes' boxes: open the first layer
        first = page.evaluate("""() => document.querySelector('.tp-root').tp.tree.boxes
            .find((b) => b.label === 'hidden1').id""")
        page.locator(f'.tp-group-cover[data-group="{first}"]').click()
    n_frames = int(page.evaluate("() => document.querySelector('.tp-scrub').max")) + 1
    backward = n_frames - 3
    stage_px = []
    for key, frame in (("Home", 0), (None, backward), ("End", n_frames - 1)):
        root.focus()
        if key:
            page.keyboard.press(key)
        else:
            page.locator(".tp-scrub").fill(str(frame))
        page.wait_for_function(f"() => document.querySelector('.tp-root').dataset.frame === '{frame}'")
        m = page.evaluate(MEASURE)
        _check_frame(m, width, height, frame)
        stage_px.append(round(m["stage"][3] - m["stage"][1]))
        assert not m["panel"] or stage_px[-1] >= STAGE_PX, f"frame {frame}: a {stage_px[-1]}px graph beside the panel"
        _check_title(page, f"frame {frame}")
        legend = page.evaluate(LEGEND)
        assert legend is not None and _inside(legend, [0, 0, width, height]), \
            f"frame {frame}: the legend {legend} is not inside the {width}x{height} window"
        sizes = page.evaluate(SVG_TYPE)
        assert sizes, "nothing drawn"
        assert min(sizes.values()) >= 18 - 0.01, f"frame {frame}: graph text under 18px: {sizes}"
        small = [(text, round(px, 1)) for text, px in page.evaluate(TYPE_SIZES) if px < 18 - 0.01]
        assert not small, f"frame {frame}: text under 18px on screen: {small[:10]}"
    assert max(stage_px) - min(stage_px) <= 1, f"the stage's height changes while stepping: {stage_px}px"
    if name in ("lesson1", "mlp14"):
        assert "tp-name" in sizes and "tp-value" in sizes         # nodes, not only boxes
    page.keyboard.press("Home")
    page.screenshot(path=str(artifacts_dir / f"classroom_{name}_{width}x{height}.png"))


@pytest.mark.parametrize("name", ["lesson1", "mlp14"])
def test_classroom_type_is_never_smaller_than_normal_type(page_of, name):
    page = page_of(name, 1280, 720, classroom=False)
    if name == "mlp14":
        first = page.evaluate("""() => document.querySelector('.tp-root').tp.tree.boxes
            .find((b) => b.label === 'hidden1').id""")
        page.locator(f'.tp-group-cover[data-group="{first}"]').click()
    page.locator(".tp-root").focus()
    page.keyboard.press("End")
    normal = page.evaluate(SVG_TYPE)
    page.locator(".tp-classroom-box").check()
    page.wait_for_function("() => document.querySelector('.tp-root').classList.contains('tp-classroom')")
    page.locator(".tp-root").focus()
    page.keyboard.press("ArrowRight")           # follow the record again at classroom zoom
    classroom = page.evaluate(SVG_TYPE)
    shared = set(normal) & set(classroom)
    assert {"tp-name", "tp-value"} <= shared
    smaller = {c: (round(normal[c], 1), round(classroom[c], 1)) for c in shared
               if classroom[c] < normal[c] - 0.01}
    assert not smaller, f"classroom text smaller than normal (normal, classroom px): {smaller}"


@pytest.mark.parametrize("name", ["lesson1", "second_derivative"])
def test_normal_mode_type_is_at_least_16px(page_of, artifacts_dir, name):
    page = page_of(name, 1280, 720, classroom=False)
    page.locator(".tp-root").focus()
    page.keyboard.press("End")                    # gradients and details shown too
    _check_title(page, f"{name}, normal mode, the result")
    sizes = page.evaluate(TYPE_SIZES)
    assert sizes
    small = [(text, round(px, 1)) for text, px in sizes if px < 16 - 1e-6]
    assert not small, f"text smaller than 16px on screen: {small[:10]}"
    page.screenshot(path=str(artifacts_dir / f"normal_{name}_1280x720.png"))
