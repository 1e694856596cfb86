"""Classroom mode on a projector: the whole graph and its caption in view.

Exports the players of two lessons (lesson 1's ``y = x ** 3 - 2 x`` and the
second derivative of ``x ** 3`` through nested tapes, the widest graph of
the lessons) in classroom mode, opens them in Debian's Chromium at
1280x720 and 1920x1080, and checks on the first frame, a backward frame and
the last one that every node of the graph lies inside the stage and the
window, and that the toolbar, the title and the sentence do too (nothing
below the fold). Then normal mode: no text on screen, HTML or SVG, is
smaller than 16px. Screenshots ``classroom_<graph>_<w>x<h>.png`` go to the
artifacts folder.
"""

import pytest

import autodiff as ad
from widgets import export_html

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1920, 1080)]

# Rectangles in CSS pixels: [left, top, right, bottom].
MEASURE = """() => {
  const root = document.querySelector(".tp-root");
  const rect = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  return {
    nodes: [...root.querySelectorAll(".tp-svg .tp-node")].map(rect),
    stage: rect(root.querySelector(".tp-stage")),
    toolbar: rect(root.querySelector(".tp-toolbar")),
    title: rect(root.querySelector(".tp-title")),
    sentence: rect(root.querySelector(".tp-sentence")),
    window: [0, 0, window.innerWidth, window.innerHeight],
    frame: Number(root.dataset.frame),
  };
}"""

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


GRAPHS = {"lesson1": _lesson_1, "second_derivative": _second_derivative}


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
        page.goto(path.as_uri())
        page.locator(".tp-root .tp-stage").wait_for()
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.mark.parametrize("width,height", SIZES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_classroom_mode_fits_graph_and_caption_in_the_window(page_of, artifacts_dir, name,
                                                             width, height):
    page = page_of(name, width, height)
    root = page.locator(".tp-root")
    n_frames = int(page.evaluate("() => JSON.parse(document.querySelector('script.tp-data')"
                                 ".textContent).frames.length"))
    backward = n_frames - 3
    for key, frame in (("Home", 0), (None, backward), ("End", n_frames - 1)):
        root.focus()
        if key:
            page.keyboard.press(key)
        else:
            page.locator(".tp-scrub").fill(str(frame))
        page.wait_for_function(f"() => document.querySelector('.tp-root').dataset.frame === '{frame}'")
        m = page.evaluate(MEASURE)
        assert m["nodes"], "the graph has no nodes"
        for box in m["nodes"]:
            assert _inside(box, m["stage"]), f"frame {frame}: a node {box} lies outside the stage {m['stage']}"
        for part in ("stage", "toolbar", "title", "sentence"):
            assert _inside(m[part], m["window"]), \
                f"frame {frame}: the {part} {m[part]} is not inside the {width}x{height} window"
    page.keyboard.press("Home")
    page.screenshot(path=str(artifacts_dir / f"classroom_{name}_{width}x{height}.png"))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_normal_mode_type_is_at_least_16px(page_of, artifacts_dir, name):
    page = page_of(name, 1280, 720, classroom=False)
    page.locator(".tp-root").focus()
    page.keyboard.press("End")                    # gradients and details shown too
    sizes = page.evaluate(TYPE_SIZES)
    assert sizes
    small = [(text, round(px, 1)) for text, px in sizes if px < 16 - 1e-6]
    assert not small, f"text smaller than 16px on screen: {small[:10]}"
    page.screenshot(path=str(artifacts_dir / f"normal_{name}_1280x720.png"))
