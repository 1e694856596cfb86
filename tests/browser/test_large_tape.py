"""A 1,000-record tape in the exported player (issue 12).

It opens fitted to the view with its 201 scope groups collapsed, zooms and
pans (keys, buttons, drag, wheel), expands and collapses a group, finds a
tensor by name, and jumps to a planted NaN. One page load for all of it.
"""

import time

import pytest

from benchmarks.player import rnn_tape
from widgets import export_html

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def big_page_path(tmp_path_factory):
    tape, loss, sources = rnn_tape(1000, nan_at=150)     # 200 scoped steps, a NaN planted
    path = tmp_path_factory.mktemp("big") / "rnn_1000.html"
    export_html(tape, path, target=loss, sources=sources)
    return path


@pytest.fixture
def page(chromium):
    context = chromium.new_context(offline=True, viewport={"width": 1100, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(15_000)
    try:
        yield page, errors
    finally:
        context.close()


def _view(page):
    return page.evaluate("""() => {
      const svg = document.querySelector('.tp-stage > .tp-svg');
      const [x, y, w, h] = svg.getAttribute('viewBox').split(' ').map(Number);
      const stage = document.querySelector('.tp-stage');
      return {x, y, w, h, scale: Number(stage.dataset.scale)};
    }""")


def test_a_1000_record_tape_opens_fitted_and_zooms_and_pans(page, big_page_path, artifacts_dir):
    page, errors = page
    start = time.perf_counter()
    page.goto(big_page_path.as_uri())
    page.locator(".tp-root[data-frame]").wait_for()
    opened = time.perf_counter() - start
    fitted = _view(page)
    lay_w = page.evaluate(
        "() => Number(document.querySelector('.tp-minimap').viewBox.baseVal.width)")
    assert fitted["w"] >= lay_w - 1          # the whole drawing is in view
    assert fitted["x"] <= 0.5
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
    assert after["x"] == pytest.approx(before["x"] - 120 / before["scale"], rel=1e-2, abs=1)
    page.mouse.wheel(0, -300)
    assert _view(page)["scale"] > after["scale"]
    root.focus()
    before = _view(page)
    page.keyboard.press("Shift+ArrowRight")              # shift+arrows pan by 80 pixels
    assert _view(page)["x"] == pytest.approx(before["x"] + 80 / before["scale"], abs=0.2)
    mini = page.locator(".tp-minimap").bounding_box()
    page.mouse.click(mini["x"] + mini["width"] * 0.9, mini["y"] + mini["height"] / 2)
    jumped = _view(page)
    assert jumped["x"] + jumped["w"] / 2 == pytest.approx(0.9 * lay_w, rel=0.02)
    page.click(".tp-fit")
    assert _view(page)["scale"] == pytest.approx(fitted["scale"], rel=1e-3)
    root.focus()
    page.keyboard.press("End")
    assert root.get_attribute("data-phase") == "result"
    assert opened < 10, f"the page took {opened:.1f}s to open"
    assert errors == []


def test_groups_collapse_expand_search_and_the_planted_nan(page, big_page_path, artifacts_dir):
    page, errors = page
    page.goto(big_page_path.as_uri())
    root = page.locator(".tp-root")
    root.wait_for()
    assert root.get_attribute("data-groups") == "201"
    assert root.get_attribute("data-collapsed") == "201"     # a big tape opens collapsed
    cover = page.locator('.tp-group-cover[data-group="g3"]')
    assert "tp-hidden" not in cover.get_attribute("class")
    member = page.locator('.tp-node[data-id="op15"]')             # step 3's first op
    assert "tp-hidden" in member.get_attribute("class")
    page.evaluate("""() => document.querySelector('.tp-group-cover[data-group="g3"]')
                         .dispatchEvent(new MouseEvent('click', {bubbles: true}))""")
    assert root.get_attribute("data-collapsed") == "200"
    assert "tp-hidden" not in member.get_attribute("class")
    assert "tp-hidden" in cover.get_attribute("class")
    page.evaluate("""() => document
        .querySelector('.tp-group-frame[data-group="g3"] .tp-group-label')
        .dispatchEvent(new MouseEvent('click', {bubbles: true}))""")
    assert root.get_attribute("data-collapsed") == "201"
    assert "tp-hidden" in member.get_attribute("class")

    # playing, a collapsed group is one step: frames 0 -> 5 -> 10 (five records a step)
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
    assert page.evaluate("window.__seen.slice(0, 3)") == [0, 5, 10]

    page.fill(".tp-search", "step_42")
    page.press(".tp-search", "Enter")
    assert root.get_attribute("data-found") == "g42"

    page.click(".tp-nan")
    frame = int(root.get_attribute("data-frame"))
    title = page.locator(".tp-title").inner_text()
    assert title.startswith("record 752: ")       # step 150: its x_t @ U (150 * 5 + 1, from 1)
    assert "first NaN/Inf" in page.locator(".tp-debug").inner_text()
    assert root.get_attribute("data-collapsed") == "200"        # its group opened
    current = page.locator(".tp-node.tp-current")
    assert current.count() == 1 and "tp-hidden" not in current.get_attribute("class")
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
