"""Normal mode in JupyterLab with the file browser open: the graph's room and the health panel.

Issue 35, item 3. At 1280x720, with JupyterLab's file browser open, a
notebook's output is about 830 px wide and 600 px tall. There a model's
player, with its health panel beside the graph, once got a graph area of
about 240 px that cut nodes, and its health panel's last row was cut at the
panel's bottom edge.

The test stores lesson 14's MLP (four scopes) and the planted MLP of
tests/browser/test_health_rows.py (NaN, None and exploding layers: rows with
long reasons) in signed notebooks in normal mode, opens both, reloads so
that JupyterLab restores the tabs and the file browser, and for each player,
scrolled to the top of the notebook, on the first and the last frame:

- the graph area (the stage) is at least ``GRAPH_PX`` tall, the toolbar,
  tools, title, stage, health panel, sentence and gradients lie inside the
  notebook's visible area, and the stage and the health panel beside it
  are one height (no blank band);
- the fitted view has no blank band: the drawing fills the stage's width or
  its height (within ``BAND_PX``), and the minimap, when shown, covers no
  node and no box and is not blank;
- every text of the health panel is at least the player's body size
  (its root's font size), and no text is cut with an ellipsis or wider than
  its box;
- every row of the health panel, scrolled into the panel's view, lies whole
  inside what the panel shows of it (below the summary while that stays in
  view, above "more rows below" while that shows): the last row is
  reachable and nothing of a row is clipped; "more rows below" shows while
  rows are below the panel's edge, and not at its end.

Then Fit: the drawing fills the stage's width or height again.

Screenshots ``jupyterlab_normal_<notebook>_<first|last>.png`` go to the artifacts folder.
"""

import pytest

from widgets.player.page.tape_player import TapePlayer

from player_pages import lab_page, stored_player_notebook
from test_jupyterlab_classroom import (MEASURE, PANEL, _check_text, _inside, _mlp14, _planted, check_panel,
                                      first_and_last_frame, restored_players)
from test_jupyterlab_restored import notarized_lab  # noqa: F401
from test_jupyterlab_player import jupyterlab  # noqa: F401

pytestmark = pytest.mark.browser

NOTEBOOKS = {"lesson14_mlp": _mlp14, "planted_mlp": _planted}
GRAPH_PX = 320       # the graph area's least height in a notebook beside the file browser
BAND_PX = 24         # the most a fitted view may leave blank on both sides of the drawing


@pytest.fixture
def normal_lab(notarized_lab):
    """The JupyterLab of test_jupyterlab_player, with the two notebooks, trusted, in normal mode."""
    base, log_path, root, notary = notarized_lab
    for name, make in NOTEBOOKS.items():
        tape, target, sources, names = make()
        stored_player_notebook(root / f"{name}.ipynb", TapePlayer(tape, target, sources, names=names), notary)
    return base, log_path


def test_normal_mode_players_give_the_graph_room_and_show_every_health_row(
        chromium, normal_lab, artifacts_dir):
    base, log_path = normal_lab
    with lab_page(chromium, base, 1280, 720) as page:
        for name, root in restored_players(page, NOTEBOOKS, artifacts_dir, log_path, "jupyterlab_normal"):
            page.wait_for_timeout(400)
            for frame in first_and_last_frame(page, root):
                m = root.evaluate(MEASURE)
                p = root.evaluate(PANEL)
                page.screenshot(path=str(artifacts_dir / f"jupyterlab_normal_{name}_{frame}.png"))
                _check(m, p, f"{name}, frame {frame}", frame == "first")
            root.locator(".tp-fit").click()
            _check_fit(root.evaluate(PANEL), f"{name}, after Fit")


def _check(m, p, where, first):
    stage, panel = m["parts"]["stage"], m["parts"]["norms"]
    assert stage[3] - stage[1] >= GRAPH_PX, \
        f"{where}: the graph area is {stage[3] - stage[1]:.0f}px tall (at least {GRAPH_PX}px wanted)"
    assert panel is not None and abs(panel[1] - stage[1]) <= 1 and abs(panel[3] - stage[3]) <= 1, \
        f"{where}: the health panel {panel} and the stage {stage} are not one height"
    assert max(m["tops"]) - min(m["tops"]) <= 4, f"{where}: the toolbar wraps {m['tops']}"
    # the sentence and gradients of the first frame too (a result's gradients take more rows)
    needed = ["toolbar", "tools", "search", "nan", "lost", "title", "stage", "norms"]
    needed += ["sentence", "gradients"] if first else []
    for part in needed:
        assert _inside(m["parts"][part], m["visible"]), \
            f"{where}: the {part} {[round(b) for b in m['parts'][part]]} is outside the notebook's " \
            f"visible area {[round(b) for b in m['visible']]}"
    _check_text(m, where)
    assert all(width <= box + 1 for _, width, box in m["reasons"]), f"{where}: a reason is cut: {m['reasons']}"
    check_panel(p, where, p["body"])
    if first:
        _check_fit(p, where)


def _check_fit(p, where):
    """The fitted drawing leaves no blank band: it fills the stage's width or its height."""
    (width, height), (W, H) = p["stagePx"], p["size"]
    spare = min(width - W * p["scale"], height - H * p["scale"])
    assert spare <= BAND_PX, f"{where}: the fitted drawing leaves {spare:.0f}px blank on every side"
    if p["miniShown"]:
        assert p["under"] == 0 and p["marks"] > 0, f"{where}: the minimap covers {p['under']} nodes or is blank"
