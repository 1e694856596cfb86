"""The gradient health panel in Chromium: every group's row, marked, and a bounded page (issue 21).

- Lesson 14's kind of bug, planted in a Keras MLP
  (``benchmarks/model_tapes.planted_mlp``): the rows of the NaN layer, the
  layer it feeds, the detached (None) layer and the exploding layer carry
  their marks and reasons; a NaN group's bar is full and red; the summary's
  "None" button scrolls to the None row, and a click on a row's name opens
  and shows its scope's box in the graph.
- 2,001 groups (a 10,000-record RNN, one scope a step): the panel is
  virtual, so its element count is bounded (counted, never timed: speed is
  ``benchmarks/player.py``'s); scrolling to the end draws the last rows and
  the count stays bounded; the "NaN made" button shows the step that made it
  (the rows are cause first: it is also the first row).
"""

import pytest

from benchmarks.model_tapes import planted_mlp, rnn_tape
from widgets import export_html

from player_pages import open_player, player_page

pytestmark = pytest.mark.browser

PANEL_LIMIT = 400       # elements in the panel, whatever the number of groups

PANEL = """() => {
  const panel = document.querySelector('.tp-norms');
  const rows = [...panel.querySelectorAll('.tp-health-row')];
  const r = panel.getBoundingClientRect();
  return {elements: panel.querySelectorAll('*').length, page: document.getElementsByTagName('*').length,
          rows: rows.map((e) => [e.querySelector('.tp-health-name').textContent, e.dataset.status,
                                 e.querySelector('.tp-health-mark').textContent,
                                 e.querySelector('.tp-norm-fill').style.width,
                                 e.querySelector('.tp-norm-fill').classList.contains('tp-norm-nonfinite'),
                                 [...e.querySelectorAll('.tp-health-why')].map((w) => w.textContent).join('; ')]),
          visible: rows.filter((e) => { const b = e.getBoundingClientRect();
                                        return b.bottom > r.top && b.top < r.bottom; })
                       .map((e) => e.querySelector('.tp-health-name').textContent),
          picked: [...panel.querySelectorAll('.tp-health-picked .tp-health-name')].map((e) => e.textContent),
          scroll: [panel.scrollTop, panel.scrollHeight, panel.clientHeight]};
}"""


@pytest.fixture
def page(chromium):
    with player_page(chromium, 1280, 720, timeout=60_000) as opened:
        yield opened


def test_the_planted_bugs_have_marked_rows_and_lead_to_their_boxes(page, tmp_path, artifacts_dir):
    page, errors = page
    tape, loss, model = planted_mlp()
    path = tmp_path / "planted.html"
    export_html(tape, path, target=loss, sources=model.trainable_variables, names={"loss": loss})
    open_player(page, path)
    page.locator(".tp-root").focus()
    page.keyboard.press("End")
    rows = {r[0]: r for r in page.evaluate(PANEL)["rows"]}
    assert set(rows) == {"mlp/d0", "mlp/nan_layer", "mlp/fed", "mlp/explode", "mlp/aux",
                         "mlp/head", "mlp", "loss"}
    assert [rows[s][1:3] for s in ("mlp/nan_layer", "mlp/fed", "mlp/aux", "mlp/explode", "mlp/head")] == \
        [["nan", "NaN made"], ["nan", "NaN received"], ["none", "None"], ["flagged", "exploding"],
         ["ok", ""]]
    # cause first: the maker, the None, the exploding layer, then what received the NaN
    assert [r[0] for r in page.evaluate(PANEL)["rows"]][:3] == ["mlp/nan_layer", "mlp/aux", "mlp/explode"]
    assert rows["mlp/nan_layer"][3:5] == ["100%", True]           # a NaN bar: full and red
    assert rows["mlp/aux"][3:5] == ["0%", False]                  # nothing came back
    assert "NaN made here: the first NaN/Inf of the forward pass" in rows["mlp/nan_layer"][5]
    assert rows["mlp/fed"][5].startswith("is fed NaN/Inf from record 4: MatMul in mlp/nan_layer")
    assert rows["mlp/aux"][5] == "None: no gradient reaches its variables: stop_gradient on the path"
    assert rows["mlp/explode"][5].startswith("exploding weights: RMS ")
    page.locator('.tp-health-jump[data-kind="None"]').click()
    assert page.evaluate(PANEL)["picked"] == ["mlp/aux"]
    page.locator('.tp-health-row[data-status="none"] .tp-health-name').click()
    found = page.locator(".tp-root").get_attribute("data-found")
    box = page.evaluate("""(id) => { const t = document.querySelector('.tp-root').tp;
        const b = t.tree.boxes[Number(id.slice(1))]; return [b.path, t.rects().has(id)]; }""", found)
    assert box == ["mlp/aux", True]                                  # shown in the graph
    page.screenshot(path=str(artifacts_dir / "health_planted_mlp.png"))
    assert errors == []


def test_two_thousand_groups_keep_the_panel_small(page, tmp_path):
    page, errors = page
    tape, loss, sources = rnn_tape(10_001, nan_at=1000)
    path = tmp_path / "rnn_10000.html"
    export_html(tape, path, target=loss, sources=sources)
    open_player(page, path)
    first = page.evaluate(PANEL)
    assert page.locator(".tp-norms").get_attribute("data-rows") == "2001"
    assert 0 < len(first["rows"]) <= 40 and first["elements"] <= PANEL_LIMIT
    assert first["visible"][0] == "rnn/step_1000"           # the step that made the NaN
    assert first["scroll"][1] > 100 * first["scroll"][2]             # as tall as 2,001 rows
    page.evaluate("() => { const p = document.querySelector('.tp-norms'); p.scrollTop = p.scrollHeight; }")
    page.wait_for_function("""() => [...document.querySelectorAll('.tp-health-name')]
        .some((e) => e.textContent === 'loss')""")
    end = page.evaluate(PANEL)
    assert end["visible"][-1] == "loss" and end["elements"] <= PANEL_LIMIT
    page.locator('.tp-health-jump[data-kind="NaN made"]').click()
    jumped = page.evaluate(PANEL)
    assert jumped["picked"] == ["rnn/step_1000"] and "rnn/step_1000" in jumped["visible"]
    page.locator(".tp-root").focus()
    for key in ("End", "ArrowLeft", "ArrowLeft"):
        page.keyboard.press(key)
    assert page.evaluate(PANEL)["elements"] <= PANEL_LIMIT
    assert errors == []
