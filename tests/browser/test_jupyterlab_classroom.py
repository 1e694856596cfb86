"""Classroom mode in JupyterLab as a teacher uses it: file browser open, tabs restored, 1280x720.

Issue 35, item 3. JupyterLab at 1280x720 with its left sidebar (the file
browser) open leaves a notebook's output about 830 px wide and 600 px tall.
There a stored player in classroom mode once wrapped its toolbar to two rows,
reserved five lines of 25px type for its longest sentence, and let the
gradients and the legend fall below the fold.

The test writes three trusted notebooks (signed, as ``jupyter trust`` does),
each with a stored player as ``scripts/build_notebooks.py`` saves it: lesson
11's first graph (``y = x ** 2``) and the planted MLP of
tests/browser/test_health_rows.py (NaN, None and exploding layers: health rows
with reasons), both stored in classroom mode, and lesson 14's MLP (four
scopes, the health panel), stored in normal mode and switched to classroom
mode by its checkbox, as a teacher does in front of the class. It opens the
three in one JupyterLab page, reloads it so that JupyterLab restores the tabs
from its workspace, checks that the file browser is open, and for each
notebook, with its player scrolled to the top of the notebook, on the first
and the last frame:

- the toolbar is one row; the toolbar, the debugging tools (search, first
  NaN/Inf, lost gradient), title, stage, health panel (where the tape has
  scopes), sentence, gradients and legend lie inside the notebook's visible
  area (nothing needed below the fold);
- every text on screen, HTML or SVG (at the stage's zoom), is at least 18px;
- no text is cut: no element with text has ``text-overflow: ellipsis``, and
  none is wider than its box where it clips (``scrollWidth > clientWidth``);
  the health panel's reasons are drawn and wrap.

Screenshots ``jupyterlab_classroom_<notebook>_<first|last>.png`` go to the artifacts folder.
"""

import pytest

import autodiff as ad
from widgets.player.page.tape_player import TapePlayer

from player_pages import lab_page, reload_restoring, stored_player_notebook
from test_jupyterlab_restored import OPEN, notarized_lab  # noqa: F401
from test_jupyterlab_player import jupyterlab  # noqa: F401

pytestmark = pytest.mark.browser

# The notebook's visible area as viewport.js's visibleHeight finds it (the
# scrolling panel that really scrolls, within the window), the player's parts,
# its texts with their on-screen size, and what is cut.
MEASURE = """(root) => {
  const rect = (el) => { if (!el) return null; const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  let p = root.parentElement;
  while (p && !(["auto", "scroll"].includes(getComputedStyle(p).overflowY) && p.scrollHeight > p.clientHeight + 1)) p = p.parentElement;
  const v = p.getBoundingClientRect();
  const zoom = Number(root.querySelector(".tp-stage").dataset.scale);
  const shown = (e) => e.getClientRects().length > 0 && e.checkVisibility();
  const texts = [...root.querySelectorAll("*")]
    .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
    .filter((e) => shown(e) && !e.closest(".tp-minimap, title"));
  const clips = (e) => { const s = getComputedStyle(e); return s.overflowX !== "visible" && !e.closest("svg"); };
  return {
    visible: [Math.max(v.left, 0), Math.max(v.top, 0), Math.min(v.left + p.clientWidth, innerWidth),
              Math.min(v.top + p.clientHeight, innerHeight)],
    tops: [...root.querySelector(".tp-toolbar").children].map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
    parts: Object.fromEntries(["toolbar", "tools", "search", "nan", "lost", "title", "stage", "norms", "sentence",
                               "gradients", "legend"].map((k) => {
      const el = root.querySelector(".tp-" + k);
      return [k, el && shown(el) ? rect(el) : null];
    })),
    small: texts.map((e) => [e.textContent.trim().slice(0, 40),
                             parseFloat(getComputedStyle(e).fontSize) * (e.closest("svg.tp-svg") ? zoom : 1)])
      .filter(([, px]) => px < 18 - 0.01),
    ellipsis: texts.filter((e) => getComputedStyle(e).textOverflow === "ellipsis").map((e) => e.textContent.trim().slice(0, 40)),
    cut: texts.filter((e) => clips(e) && e.scrollWidth > e.clientWidth + 1)
      .map((e) => [e.className, e.textContent.trim().slice(0, 40), e.scrollWidth, e.clientWidth]),
    reasons: [...root.querySelectorAll(".tp-health-why")].filter(shown).map((e) => [e.textContent, e.scrollWidth, e.clientWidth]),
  };
}"""


# The notebook ``path`` is the current tab and its stored player has started.
# (Its restored tab is brought to the front, as a click on the tab would.)
STARTED = """(path) => {
  const shell = window.jupyterapp.shell;
  const tab = [...shell.widgets('main')].find((w) => w.context && w.context.path === path);
  if (tab && shell.currentWidget !== tab) shell.activateById(tab.id);
  const w = shell.currentWidget;
  return !!(w && w.context && w.context.path === path && w.node.querySelector('.tp-root .tp-play'));
}"""


def _pow():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x ** 2
    return tape, y, x, {"y": y}


def _mlp14():
    from benchmarks.model_tapes import lesson14_mlp
    tape, loss, variables = lesson14_mlp()
    return tape, loss, variables, {"loss": loss}


def _planted():
    from benchmarks.model_tapes import planted_mlp
    tape, loss, model = planted_mlp()
    return tape, loss, model.trainable_variables, {"loss": loss}


# name: (the tape, whether it has scopes (a health panel), whether the player is
# stored in classroom mode; lesson 14's is stored in normal mode and switched, as a
# teacher does in front of the class)
NOTEBOOKS = {"lesson11_pow": (_pow, False, True), "lesson14_mlp": (_mlp14, True, False),
             "planted_mlp": (_planted, True, True)}


@pytest.fixture
def classroom_lab(notarized_lab):
    """The JupyterLab of test_jupyterlab_player, with the three notebooks, trusted."""
    base, log_path, root, notary = notarized_lab
    for name, (make, _, classroom) in NOTEBOOKS.items():
        tape, target, sources, names = make()
        stored_player_notebook(root / f"{name}.ipynb",
                               TapePlayer(tape, target, sources, names=names, classroom=classroom), notary)
    return base, log_path


def _inside(box, frame, slack=1.0):
    return (box[0] >= frame[0] - slack and box[1] >= frame[1] - slack
            and box[2] <= frame[2] + slack and box[3] <= frame[3] + slack)


def _check(m, name, frame, panel):
    where = f"{name}, frame {frame}"
    assert max(m["tops"]) - min(m["tops"]) <= 4, f"{where}: the toolbar wraps {m['tops']}"
    needed = ["toolbar", "tools", "search", "nan", "lost", "title", "stage", "sentence", "gradients", "legend"]
    needed += ["norms"] if panel else []
    for part in needed:
        box = m["parts"][part]
        assert box is not None, f"{where}: the {part} is not shown in classroom mode"
        assert _inside(box, m["visible"]), \
            f"{where}: the {part} {[round(b) for b in box]} is outside the notebook's visible area " \
            f"{[round(b) for b in m['visible']]}"
    assert not m["small"], f"{where}: text under 18px: {m['small'][:10]}"
    assert not m["ellipsis"], f"{where}: text cut with an ellipsis: {m['ellipsis'][:10]}"
    assert not m["cut"], f"{where}: text wider than its box: {m['cut'][:10]}"


def test_classroom_players_fit_jupyterlab_with_the_file_browser_open(
        chromium, classroom_lab, artifacts_dir):
    base, log_path = classroom_lab
    with lab_page(chromium, base, 1280, 720) as page:
        for name in NOTEBOOKS:
            page.evaluate(OPEN, f"{name}.ipynb")
        page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
        # JupyterLab restores the tabs and the open file browser from its saved workspace
        reload_restoring(page, [f"{name}.ipynb" for name in NOTEBOOKS], sidebar="filebrowser")
        for name, (_, panel, classroom) in NOTEBOOKS.items():
            try:
                page.wait_for_function(STARTED, arg=f"{name}.ipynb", timeout=30_000)
            except Exception:
                page.screenshot(path=str(artifacts_dir / f"jupyterlab_classroom_{name}.png"))
                state = page.evaluate("""() => { const w = window.jupyterapp.shell.currentWidget;
                  return [w && w.context && w.context.path, w && w.node.querySelectorAll('.tp-root').length]; }""")
                pytest.fail(f"the stored player of {name} did not start in its tab: {state}; "
                            f"JupyterLab log:\n{log_path.read_text()[-2000:]}")
            assert page.evaluate("() => !window.jupyterapp.shell.leftCollapsed"), "the file browser is closed"
            assert page.locator(".jp-FileBrowser").is_visible()
            root = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .tp-root")
            root.evaluate("(el) => el.scrollIntoView({block: 'start'})")
            if not classroom:
                root.locator(".tp-classroom-box").check()
            page.wait_for_function("(el) => el.classList.contains('tp-classroom')", arg=root.element_handle())
            page.wait_for_timeout(400)
            for key, frame in (("Home", "first"), ("End", "last")):
                root.focus()
                page.keyboard.press(key)
                page.wait_for_timeout(200)
                root.evaluate("(el) => el.scrollIntoView({block: 'start'})")
                m = root.evaluate(MEASURE)
                page.screenshot(path=str(artifacts_dir / f"jupyterlab_classroom_{name}_{frame}.png"))
                _check(m, name, frame, panel)
                if name == "planted_mlp" and frame == "last":
                    assert m["reasons"], f"{name}: no health reason shown"
                    assert all(width <= box + 1 for _, width, box in m["reasons"]), m["reasons"]
