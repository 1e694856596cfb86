"""A 1,000-record tape in the exported player (issue 12, and issue 21's overview).

It opens fitted to the view at the level of its scopes (``rnn`` holding 200
step scopes in 5 ranges, and ``loss``), zooms and pans (keys, buttons, drag,
wheel, minimap), opens and closes boxes, plays box by box, finds a scope by
name, and jumps to a planted NaN. One page load for all of it.
"""

import time

import pytest

from benchmarks.player import rnn_tape
from widgets import export_html

from player_pages import player_page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def big_page_path(tmp_path_factory):
    tape, loss, sources = rnn_tape(1000, nan_at=150)     # 200 scoped steps, a NaN planted
    path = tmp_path_factory.mktemp("big") / "rnn_1000.html"
    export_html(tape, path, target=loss, sources=sources)
    return path


@pytest.fixture
def page(chromium):
    with player_page(chromium, 1100, 800, timeout=15_000) as opened:
        yield opened


def _view(page):
    return page.evaluate("""() => {
      const svg = document.querySelector('.tp-stage > .tp-svg');
      const [x, y, w, h] = svg.getAttribute('viewBox').split(' ').map(Number);
      const stage = document.querySelector('.tp-stage');
      const [W, H] = document.querySelector('.tp-root').tp.tree.size();
      return {x, y, w, h, W, H, scale: Number(stage.dataset.scale)};
    }""")


def _click_box(page, gid, label=False):
    sel = f'.tp-group-frame[data-group="{gid}"] .tp-group-label' if label else \
        f'.tp-group-cover[data-group="{gid}"]'
    page.evaluate(f"""() => document.querySelector('{sel}')
                         .dispatchEvent(new MouseEvent('click', {{bubbles: true}}))""")


def _closed_shown(page):
    """How many closed boxes show (drawn or not: the page draws those in view)."""
    return page.evaluate("""() => [...document.querySelector('.tp-root').tp.rects().values()]
        .filter((r) => r.open === false).length""")


def _box_of(page, label):
    """The id of the box with this label."""
    return page.evaluate(f"""() => document.querySelector('.tp-root').tp.tree.boxes
        .find((b) => b.label === {label!r}).id""")


def test_a_1000_record_tape_opens_fitted_and_zooms_and_pans(page, big_page_path, artifacts_dir):
    page, errors = page
    start = time.perf_counter()
    page.goto(big_page_path.as_uri())
    page.locator(".tp-root[data-frame]").wait_for()
    opened = time.perf_counter() - start
    fitted = _view(page)
    assert fitted["w"] >= fitted["W"] - 1 and fitted["h"] >= fitted["H"] - 1   # all of it in view
    assert fitted["x"] <= 0.5
    assert page.locator(".tp-minimap").get_attribute("class").count("tp-hidden") == 1
    page.screenshot(path=str(artifacts_dir / "large_tape_fitted.png"))
    root = page.locator(".tp-root")
    root.focus()
    page.keyboard.press("+")
    zoomed = _view(page)
    assert zoomed["scale"] == pytest.approx(fitted["scale"] * 1.4, rel=1e-3)
    page.click(".tp-zoom-in")
    assert _view(page)["scale"] > zoomed["scale"]
    before = _view(page)
    stage = page.locator(".tp-stage").bounding_box()
    cx, cy = stage["x"] + stage["width"] / 3, stage["y"] + stage["height"] / 3
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 120, cy, steps=4)
    page.mouse.up()
    after = _view(page)
    # the first 4 px of a drag only tell it from a click
    assert after["x"] == pytest.approx(before["x"] - 120 / before["scale"], abs=5 / before["scale"])
    page.mouse.wheel(0, -300)
    assert _view(page)["scale"] > after["scale"]
    root.focus()
    before = _view(page)
    page.keyboard.press("Shift+ArrowRight")              # shift+arrows pan by 80 pixels
    assert _view(page)["x"] == pytest.approx(before["x"] + 80 / before["scale"], abs=0.2)
    mini = page.locator(".tp-minimap")
    assert "tp-hidden" not in mini.get_attribute("class")     # zoomed in: the map shows
    box = mini.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    jumped = _view(page)
    # centred there, as far as the drawing allows (the view stays inside it)
    centre = min(0.9 * jumped["W"], jumped["W"] - jumped["w"] / 2)
    assert jumped["x"] + jumped["w"] / 2 == pytest.approx(centre, rel=0.05)
    page.click(".tp-fit")
    assert _view(page)["scale"] == pytest.approx(fitted["scale"], rel=1e-3)
    root.focus()
    page.keyboard.press("End")
    assert root.get_attribute("data-phase") == "result"
    assert opened < 10, f"the page took {opened:.1f}s to open"
    assert errors == []


def test_boxes_open_close_play_search_and_the_planted_nan(page, big_page_path, artifacts_dir):
    page, errors = page
    page.goto(big_page_path.as_uri())
    root = page.locator(".tp-root")
    root.wait_for()
    # rnn (5 ranges of 40 step scopes), loss: 1 + 5 + 200 + 1 boxes, rnn open
    assert root.get_attribute("data-groups") == "207"
    assert root.get_attribute("data-collapsed") == "206"
    assert _closed_shown(page) == 6                              # 5 ranges and loss
    assert page.locator(".tp-group-cover").count() == 6
    assert page.locator(".tp-node").count() == 0                 # nodes hide in the boxes
    first = _box_of(page, "step_0 … step_39")
    _click_box(page, first)
    assert root.get_attribute("data-collapsed") == "205"
    assert page.locator(f'.tp-group-frame[data-group="{first}"]').count() == 1
    assert _closed_shown(page) == 45                             # its 40 steps show
    # ... and only those in view (and a margin) are in the page
    assert 0 < page.locator(".tp-group-cover").count() <= 45
    step3 = _box_of(page, "step_3")
    shows = """() => document.querySelector('.tp-root').tp.tree.rep('op15')"""   # step 3's first op
    assert page.evaluate(shows) == step3
    _click_box(page, step3)
    assert page.evaluate(shows) == "op15"
    assert page.locator(".tp-node").count() > 0
    _click_box(page, step3, label=True)
    assert page.evaluate(shows) == step3
    _click_box(page, first, label=True)
    assert root.get_attribute("data-collapsed") == "206"

    # playing, a closed box is one step: frames 0 -> 200 -> 400 (200 records a range)
    page.evaluate("""() => {
      const root = document.querySelector('.tp-root');
      window.__seen = [Number(root.dataset.frame)];
      new MutationObserver(() => window.__seen.push(Number(root.dataset.frame)))
        .observe(root, {attributes: true, attributeFilter: ['data-frame']});
    }""")
    page.select_option(".tp-speed", "4")
    page.click(".tp-play")
    page.wait_for_function("window.__seen.length >= 3")
    page.click(".tp-play")
    assert page.evaluate("window.__seen.slice(0, 3)") == [0, 200, 400]

    page.fill(".tp-search", "step_42")
    page.press(".tp-search", "Enter")
    step42 = _box_of(page, "step_42")
    assert root.get_attribute("data-found") == step42
    assert page.locator(f'.tp-group-cover[data-group="{step42}"].tp-found').count() == 1

    page.click(".tp-nan")
    frame = int(root.get_attribute("data-frame"))
    title = page.locator(".tp-title").inner_text()
    assert title.startswith("record 752: ")       # step 150: its x_t @ U (150 * 5 + 1, from 1)
    assert "first NaN/Inf" in page.locator(".tp-debug").inner_text()
    current = page.locator(".tp-node.tp-current")
    assert current.count() == 1                   # its boxes opened, it is drawn
    assert page.evaluate("""() => { const r = document.querySelector('.tp-root');
      return r.tp.tree.rep(r.querySelector('.tp-node.tp-current').dataset.id); }""") == "op751"
    page.screenshot(path=str(artifacts_dir / "large_tape_nan.png"))
    assert frame > 0 and errors == []


def test_lost_gradient_button_and_value_tooltips(page, tmp_path):
    import numpy as np

    import autodiff as ad

    page, errors = page
    w = ad.Variable(np.array([[0.5, -1.0], [2.0, 0.0]]), name="w")
    v = ad.Variable(np.float64(2.0), name="v")
    with ad.GradientTape() as tape:
        h = ad.tanh(w)
        y = ad.reduce_sum(ad.stop_gradient(h * v) + h)
    path = tmp_path / "lost.html"
    export_html(tape, path, target=y, sources=[w, v])
    page.goto(path.as_uri())
    root = page.locator(".tp-root")
    root.wait_for()
    page.click(".tp-lost")
    assert "stop_gradient" in page.locator(".tp-debug").inner_text()
    found = root.get_attribute("data-found")
    assert found and found != "" and "tp-found" in page.locator(
        f'.tp-node[data-id="{found}"]').get_attribute("class")
    tip = page.locator(f'.tp-node[data-id="t{w._id}"] > title').text_content()
    assert "min -1  max 2  mean 0.375" in tip
    page.click(".tp-nan")
    assert page.locator(".tp-debug").inner_text() == "no NaN or Inf in this replay"
    assert errors == []


def test_expand_all_shows_the_placement_made_ahead_which_equals_placing_anew(page, big_page_path):
    """The page places every box open while it waits (tree.js, warm); expand all then
    shows that placement. Closing and opening a box afterwards places the boxes around
    it anew: every rectangle and every edge is where the ready-made placement had it."""
    pg, errors = page
    pg.goto(big_page_path.resolve().as_uri())
    pg.wait_for_selector(".tp-root[data-frame]")
    pg.wait_for_function("() => document.querySelector('.tp-root').tp.tree.expandedReady()")
    snap = """() => { const t = document.querySelector('.tp-root').tp.tree;
      return { rects: [...t.rects()].map(([k, r]) => [k, r.x, r.y, r.w, r.h, r.band, r.open === undefined ? null : r.open]),
               edges: t.shownEdges().map((s) => [s.id, s.from, s.to, s.order]), size: t.size(),
               closed: [...t.rects().values()].filter((r) => r.open === false).length }; }"""
    before = pg.evaluate(snap)
    pg.click(".tp-expand-all")
    ready = pg.evaluate(snap)
    gid = pg.evaluate("""() => document.querySelector('.tp-group-frame:last-of-type').dataset.group""")
    _click_box(pg, gid, label=True)
    assert pg.evaluate(snap)["closed"] == 1
    _click_box(pg, gid)
    anew = pg.evaluate(snap)
    assert before["closed"] > 0 and ready["closed"] == 0
    assert len(ready["rects"]) > len(before["rects"]) and len(ready["edges"]) > len(before["edges"])
    assert ready["size"] == anew["size"]
    assert ready["rects"] == anew["rects"]
    assert ready["edges"] == anew["edges"]
    assert errors == []
