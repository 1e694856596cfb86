"""The exported HTML player plays in headless Chromium with the network blocked.

``export_html`` promises one self-contained file: no CDN, no fonts, no
kernel. Here the page is opened from ``file://`` in an offline browser
context whose every non-file request is aborted and recorded; the test
presses Play and watches the records light up in order until the gradient
dy/dx = 6.0 appears, then asserts that nothing tried to reach the network.
"""

import re

import pytest

import autodiff as ad
from widgets import export_html

pytestmark = pytest.mark.browser

# Every change of the highlighted record, recorded in the page as it happens
# (a frame lasts only 1/speed seconds, too short to poll reliably).
WATCH_FRAMES = """() => {
  const root = document.querySelector(".tp-root");
  const seen = window.__tpSeen = [];
  const note = () => {
    const cur = root.querySelector(".tp-node.tp-current");
    seen.push({frame: Number(root.dataset.frame), phase: root.dataset.phase,
               current: cur ? cur.dataset.id : null,
               title: root.querySelector(".tp-title").textContent});
  };
  note();
  new MutationObserver(note).observe(root, {attributes: true, attributeFilter: ["data-frame"]});
}"""


def _x_squared_page(tmp_path, **options):
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x ** 2
    path = tmp_path / "x_squared.html"
    export_html(tape, path, target=y, sources=x, names={"y": y}, **options)
    return path


@pytest.fixture
def offline_page(chromium):
    """A page in an offline context that aborts, and records, every non-file request."""
    context = chromium.new_context(offline=True, viewport={"width": 1000, "height": 720})
    attempted, errors = [], []

    def guard(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            attempted.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    page.on("websocket", lambda ws: attempted.append(ws.url))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.set_default_timeout(15_000)
    try:
        yield page, attempted, errors
    finally:
        context.close()


def test_exported_html_plays_offline_to_the_gradient(offline_page, tmp_path, artifacts_dir):
    from playwright.sync_api import expect

    page, attempted, errors = offline_page
    page.goto(_x_squared_page(tmp_path, speed=4).as_uri())
    root = page.locator(".tp-root")
    root.wait_for()
    assert page.locator(".tp-fallback").count() == 0      # the script replaced the static SVG
    assert root.get_attribute("data-frame") == "0"
    assert "6.0" not in page.locator(".tp-gradients").inner_text()

    page.evaluate(WATCH_FRAMES)
    page.click(".tp-play")
    page.wait_for_function("document.querySelector('.tp-root').dataset.phase === 'result'")
    seen = page.evaluate("window.__tpSeen")

    assert [s["frame"] for s in seen] == [0, 1, 2, 3]
    assert [s["phase"] for s in seen] == ["forward", "seed", "backward", "result"]
    assert [s["current"] for s in seen] == ["op0", None, "op0", None]
    assert page.locator(".tp-gradients").inner_text() == "grad x = 6.0"
    assert "dy/dx = 6.0" in page.locator(".tp-sentence").inner_text()
    expect(page.locator(".tp-play")).to_have_text(re.compile(r"^\s*Play$"))   # it stops at the last frame
    page.screenshot(path=str(artifacts_dir / "exported_player.png"), full_page=True)
    assert attempted == [], f"the exported page tried to reach the network: {attempted}"
    assert errors == [], f"script errors in the exported page: {errors}"


def test_exported_html_keyboard_and_classroom_mode(offline_page, tmp_path):
    page, attempted, errors = offline_page
    page.goto(_x_squared_page(tmp_path, classroom=True).as_uri())
    root = page.locator(".tp-root")
    root.wait_for()
    assert "tp-classroom" in root.get_attribute("class")
    root.focus()
    page.keyboard.press("End")
    assert root.get_attribute("data-phase") == "result"
    page.keyboard.press("ArrowLeft")
    assert root.get_attribute("data-frame") == "2"
    assert "tp-current" in page.locator('.tp-node[data-id="op0"]').get_attribute("class")
    assert "sends 6.0 to x" in page.locator(".tp-sentence").inner_text()
    page.keyboard.press("Home")
    assert root.get_attribute("data-frame") == "0"
    page.keyboard.press(" ")                                 # space plays (speed 1: 1 frame/s)
    page.wait_for_function("Number(document.querySelector('.tp-root').dataset.frame) >= 1")
    page.keyboard.press(" ")                                 # and pauses
    assert "tp-playing" not in root.get_attribute("class")
    assert attempted == [] and errors == []
