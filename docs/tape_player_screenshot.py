"""Regenerates docs/tape_player.png, the README's picture of the tape player.

The guide's two-tape example (tape0 watches x0 through sin, tape1 watches
x1 through sigmoid, both record the sum), replayed for tape0 with sources
x0 and x1 and paused mid-backward-pass, where AddV2 sends the cotangent to
y0 and nothing to y1. The page is the exported HTML (``export_html``),
photographed by the same headless Debian Chromium the browser tests drive
(``tests/browser``), with the network blocked.

Run: python docs/tape_player_screenshot.py [docs/tape_player.png]
"""

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))    # runs from a checkout too, without `pip install -e .`

import autodiff as ad  # noqa: E402
import widgets  # noqa: E402

CHROMIUM = os.environ.get("TAPESCHOOL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
STEP = "backward 1: AddV2"       # the frame shown: mid-backward-pass


def two_tape_replay():
    """The guide's two-tape example, replayed for tape0."""
    x0 = ad.constant(0.0)
    x1 = ad.constant(0.0)
    with ad.GradientTape(persistent=True) as tape0, ad.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = ad.sin(x0)
        y1 = ad.nn.sigmoid(x1)
        y = y0 + y1
        ys = ad.reduce_sum(y)
    return widgets.replay([tape0, tape1], ys, [x0, x1], tape_names=["tape0", "tape1"],
                          names=dict(x0=x0, x1=x1, y0=y0, y1=y1, y=y, ys=ys))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else ROOT / "docs" / "tape_player.png")
    from playwright.sync_api import sync_playwright

    rep = two_tape_replay()
    frame = next(k for k, f in enumerate(rep.frames) if f["title"] == STEP)
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "player.html"
        widgets.export_html(rep, page_path, frame=frame, classroom=False)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            # Wide enough for the whole graph at the player's scale (1.1), so nothing scrolls.
            width = int(rep.data["layout"]["width"] * 1.1) + 120
            context = browser.new_context(offline=True, viewport={"width": width, "height": 900},
                                          device_scale_factor=1.25)
            context.route("**/*", lambda route: route.continue_()
                          if route.request.url.startswith("file://") else route.abort())
            page = context.new_page()
            page.goto(page_path.as_uri())
            root = page.locator(".tp-root")
            root.wait_for()
            assert root.get_attribute("data-frame") == str(frame)
            box = root.bounding_box()
            pad = 12
            page.screenshot(path=str(out), clip={"x": box["x"] - pad, "y": box["y"] - pad,
                                                 "width": box["width"] + 2 * pad,
                                                 "height": box["height"] + 2 * pad})
            browser.close()
    print(f"wrote {out} ({out.stat().st_size // 1024} KB): frame {frame}, {STEP}")


if __name__ == "__main__":
    main()
