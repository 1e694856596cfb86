"""A saved player in an UNTRUSTED notebook shows its picture, then fits a projector.

A notebook from a fresh clone is untrusted in JupyterLab: the sanitizer
strips the player's scripts, styles and SVG, and without a kernel no widget
view runs. Here the test writes such a notebook (the player cell's saved
output is exactly what ``TapePlayer._repr_mimebundle_`` gives, the way
``scripts/build_notebooks.py`` saves it), opens it in JupyterLab in Debian's
Chromium at 1280x720 (a projector) and checks that, before anything runs,
the output shows the PNG of the player's last frame (``image/png`` and an
``<img>`` in the HTML fallback) and none of the run-on text a stripped SVG
leaves behind. Then it runs all cells: the live player (classroom mode)
replaces the picture: its toolbar, title, stage and sentence lie inside the
notebook's visible area, and the current record inside the stage, its name
and value at least 18px on screen (playing follows the record at a readable
zoom rather than fitting a graph too big for the stage). Screenshots:
``jupyterlab_untrusted_picture.png`` and ``jupyterlab_classroom_1280x720.png``.
"""

import base64
import re

import pytest

import autodiff as ad
from widgets.player.page.tape_player import TapePlayer

from player_pages import lab_context
from test_jupyterlab_player import KERNEL_READY, KERNEL_TIMEOUT, jupyterlab  # noqa: F401

pytestmark = pytest.mark.browser

SOURCE = '''import autodiff as ad
import widgets

x = ad.Variable(1.5, name="x")
with ad.GradientTape() as tape:
    y = x ** 3 - 2.0 * x
player = widgets.TapePlayer(tape, target=y, sources=x, names={"y": y}, classroom=True)
player'''

FITS = """(root) => {
  const rect = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  let panel = root.parentElement;
  while (panel && !["auto", "scroll"].includes(getComputedStyle(panel).overflowY)) panel = panel.parentElement;
  const p = panel.getBoundingClientRect();
  const zoom = Number(root.querySelector(".tp-stage").dataset.scale);
  const cur = root.querySelector(".tp-svg .tp-node.tp-current");
  return {current: cur ? rect(cur) : null,
          type: [...root.querySelectorAll(".tp-svg .tp-name, .tp-svg .tp-value")].filter((t) => t.getClientRects().length)
            .map((t) => parseFloat(getComputedStyle(t).fontSize) * zoom),
          tops: [...root.querySelector(".tp-toolbar").children].map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
          stage: rect(root.querySelector(".tp-stage")), title: rect(root.querySelector(".tp-title")),
          sentence: rect(root.querySelector(".tp-sentence")),
          toolbar: rect(root.querySelector(".tp-toolbar")),
          visible: [Math.max(p.left, 0), Math.max(p.top, 0), Math.min(p.left + panel.clientWidth, innerWidth),
                    Math.min(p.top + panel.clientHeight, innerHeight)]};
}"""


def _saved_notebook(path):
    nbformat = pytest.importorskip("nbformat")
    x = ad.Variable(1.5, name="x")
    with ad.GradientTape() as tape:
        y = x ** 3 - 2.0 * x
    data, metadata = TapePlayer(tape, y, x, names={"y": y}, classroom=True)._repr_mimebundle_()
    assert "image/png" in data and base64.b64decode(data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(SOURCE, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
    nb.cells = [nbformat.v4.new_markdown_cell("# A saved player, opened untrusted"), cell]
    nbformat.write(nb, str(path))             # not signed: JupyterLab treats it as untrusted
    return data


def _inside(box, frame, slack=1.0):
    return (box[0] >= frame[0] - slack and box[1] >= frame[1] - slack
            and box[2] <= frame[2] + slack and box[3] <= frame[3] + slack)


def test_untrusted_notebook_shows_the_picture_then_the_live_player_fits(
        chromium, jupyterlab, artifacts_dir, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    base, log_path = jupyterlab
    name = "saved_player.ipynb"
    data = _saved_notebook(tmp_path / "lab" / "root" / name)    # the server's root folder
    context = lab_context(chromium, base, 1280, 720)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(f"{base}/lab/tree/{name}", timeout=60_000)
        notebook = page.locator(".jp-NotebookPanel")
        output = notebook.locator(".jp-OutputArea-output").first
        picture = output.locator('img[src^="data:image/png"]')
        picture.wait_for(timeout=60_000)
        expect(picture).to_be_visible()
        assert picture.evaluate("(img) => img.complete && img.naturalWidth") > 600
        assert base64.b64decode(data["image/png"]) == base64.b64decode(
            picture.get_attribute("src").split(",", 1)[1])
        text = output.inner_text()
        assert "variable · source" not in text and "float32" not in text, \
            f"the stripped SVG left run-on text: {text[:200]!r}"
        assert notebook.locator(".tp-root").count() == 0          # no script ran
        page.screenshot(path=str(artifacts_dir / "jupyterlab_untrusted_picture.png"))

        page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        label = page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
        page.locator(".lm-Menu-item").filter(has=label).click()
        root = notebook.locator(".jp-OutputArea-output .tp-root.tp-classroom")
        try:
            root.wait_for(timeout=KERNEL_TIMEOUT)
        except Exception:
            pytest.fail(f"the live player did not replace the picture; JupyterLab log:\n"
                        f"{log_path.read_text()[-3000:]}")
        root.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        m = root.evaluate(FITS)
        page.screenshot(path=str(artifacts_dir / "jupyterlab_classroom_1280x720.png"))
        assert m["current"] and _inside(m["current"], m["stage"], slack=4), \
            f"the current record {m['current']} lies outside the stage {m['stage']}"
        assert m["type"] and min(m["type"]) >= 18 - 0.01, m["type"]     # names and values
        assert max(m["tops"]) - min(m["tops"]) <= 4, f"the toolbar wraps: {m['tops']}"
        for part in ("toolbar", "title", "stage", "sentence"):
            assert _inside(m[part], m["visible"]), \
                f"the {part} {m[part]} is outside the notebook's visible area {m['visible']}"
    finally:
        context.close()
