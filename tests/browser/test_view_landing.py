"""Where the view lands at 1280x720 (issue 35, item 3): expand all, fit, and the minimap.

A 1,000-record stack of transformer blocks (``benchmarks/transformer_tapes``)
opens as its blocks' boxes. After "expand all" the view shows the current
record at the readable zoom (16/11 px a unit: the graph's smallest text at
16px), inside the drawing (no half-empty view at its corner); "collapse
all" fits the overview again. Whatever the view, the minimap covers no node
and no closed box, the stage and the health panel are one height (no blank
band beside the panel), and the minimap of a tape with every box open is not
blank (open boxes are drawn as outlines).
"""

import warnings

import pytest

from benchmarks.transformer_tapes import transformer_tape
from widgets import export_html

from player_pages import open_player, player_page

pytestmark = pytest.mark.browser

VIEW = """() => {
  const root = document.querySelector('.tp-root');
  const stage = root.querySelector('.tp-stage'), panel = root.querySelector('.tp-norms');
  const rect = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const mini = root.querySelector('.tp-minimap');
  const shown = !mini.classList.contains('tp-hidden');
  const m = rect(mini);
  const meets = (b) => b[0] < m[2] && b[2] > m[0] && b[1] < m[3] && b[3] > m[1];
  const under = shown ? [...root.querySelectorAll('.tp-svg .tp-node, .tp-svg .tp-group-cover')]
    .map(rect).filter((b) => b[2] > b[0] && meets(b)).length : 0;
  const [x, y, w, h] = root.querySelector('.tp-svg').getAttribute('viewBox').split(' ').map(Number);
  const cur = root.querySelector('.tp-svg .tp-node.tp-current');
  return {scale: Number(stage.dataset.scale), view: [x, y, w, h], size: root.tp.tree.size(),
          stage: rect(stage), panel: rect(panel), current: cur ? rect(cur) : null,
          mini: shown, under, marks: mini.querySelector('.tp-minimap-frames').getAttribute('d').length
            + mini.querySelector('.tp-minimap-nodes').getAttribute('d').length};
}"""


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tape, loss, model, where = transformer_tape(1000, bugs=("exploding", "dead"))
    path = tmp_path_factory.mktemp("landing") / "stack.html"
    export_html(tape, path, target=loss, sources=model.trainable_variables, names={"loss": loss})
    return path


def _inside(box, frame, slack=1.0):
    return (box[0] >= frame[0] - slack and box[1] >= frame[1] - slack
            and box[2] <= frame[2] + slack and box[3] <= frame[3] + slack)


def test_expand_all_lands_readable_on_the_current_record_and_the_minimap_covers_nothing(
        chromium, page_path, artifacts_dir):
    with player_page(chromium, 1280, 720) as (page, errors):
        open_player(page, page_path)
        opened = page.evaluate(VIEW)
        assert opened["stage"][1] == opened["panel"][1] and opened["stage"][3] == opened["panel"][3]
        assert opened["under"] == 0
        page.click(".tp-expand-all")
        expanded = page.evaluate(VIEW)
        assert expanded["scale"] == pytest.approx(16 / 11, rel=1e-4)          # the readable zoom
        assert expanded["current"] and _inside(expanded["current"], expanded["stage"], slack=4)
        x, y, w, h = expanded["view"]
        W, H = expanded["size"]
        assert 0 <= x <= W - w + 1 and 0 <= y <= H - h + 1       # inside the drawing, not its corner's outside
        assert expanded["mini"] and expanded["under"] == 0 and expanded["marks"] > 0
        page.screenshot(path=str(artifacts_dir / "landing_expand_all_1280x720.png"))
        for key in ("ArrowRight",) * 3 + ("End",):                  # following the record
            page.locator(".tp-root").focus()
            page.keyboard.press(key)
            assert page.evaluate(VIEW)["under"] == 0
        page.click(".tp-collapse-all")
        collapsed = page.evaluate(VIEW)
        x, y, w, h = collapsed["view"]
        W, H = collapsed["size"]
        assert x <= 0.5 and y <= 0.5 and x + w >= W - 0.5 and y + h >= H - 0.5  # the overview, fitted
        assert collapsed["under"] == 0
        assert errors == []
