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
  the title's text (a result's too) is no taller than its box, with no line
  clamp (it once showed two lines and "…");
  the health panel's reasons are drawn and wrap; the search box's placeholder
  is whole;
- every row of the health panel, scrolled into the panel's view, lies whole
  inside what the panel shows (below its summary while that stays in view,
  above "more rows below" while that shows), or, where a row is taller than
  that (lesson 14's and the planted MLP's panels beside a 240px stage), its
  bottom edge and then its top edge come into view by scrolling: none is cut
  (``check_panel``, which tests/browser/test_jupyterlab_layout.py applies in
  normal mode);
- on the first and the last frame, as opened, the health panel's first row
  (the cause) lies whole inside what the panel shows, below its summary and
  above "more rows below", with no scroll, and at least ``ROW_MARGIN_PX`` to
  spare (it once fitted by 3px on the last frame);
- beside a health panel, the graph area is at least ``STAGE_PX`` tall and the
  same height on the first frame (a short sentence), the last (the longest
  title) and every frame between (``EVERY_FRAME``, stepped through): a teacher
  stepping through sees no jump (it was 369 px on the planted MLP's first
  frame and 298 px on its last; 240 px before that). The sentence's box is one
  height on every frame: the longest sentence's (so on the last frame, a long
  one, at most ``BAND_PX`` lies blank under its text), or where that would
  leave the graph under 300 px, whole lines of it, in which a longer sentence
  scrolls, its last line fading (``tp-sentence-more``) while more lies below:
  the title's text and the sentence's are never cut in a line (the box is a
  whole number of lines). The graph area and how many sentences scroll are
  printed (``-s``).

Screenshots ``jupyterlab_classroom_<notebook>_<first|last>.png`` go to the artifacts folder.
"""

import pytest

import autodiff as ad
from widgets.player.page.tape_player import TapePlayer

from player_pages import lab_page, reload_restoring, stored_player_notebook
from test_jupyterlab_restored import OPEN, notarized_lab  # noqa: F401
from test_jupyterlab_player import jupyterlab  # noqa: F401

pytestmark = pytest.mark.browser

STAGE_PX = 300      # the graph area beside a health panel, on every frame
ROW_MARGIN_PX = 12  # what the first health row has to spare in the panel, as opened (3px before)
BAND_PX = 40        # the most left blank under the longest sentence's text (the last frame's)

# The notebook's visible area as viewport.js's visibleHeight finds it (the
# scrolling panel that really scrolls, within the window), the player's parts,
# its texts with their on-screen size, and what is cut.
MEASURE = """(root) => {
  const rect = (el) => { if (!el) return null; const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  let p = root.parentElement;
  while (p && !(["auto", "scroll"].includes(getComputedStyle(p).overflowY) && p.scrollHeight > p.clientHeight + 1)) p = p.parentElement;
  // (an exported page: the window)
  const v = p ? p.getBoundingClientRect() : {left: 0, top: 0};
  const [pw, ph] = p ? [p.clientWidth, p.clientHeight] : [innerWidth, innerHeight];
  const zoom = Number(root.querySelector(".tp-stage").dataset.scale);
  const shown = (e) => e.getClientRects().length > 0 && e.checkVisibility();
  const texts = [...root.querySelectorAll("*")]
    .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
    .filter((e) => shown(e) && !e.closest(".tp-minimap, title"));
  const clips = (e) => { const s = getComputedStyle(e); return s.overflowX !== "visible" && !e.closest("svg"); };
  return {
    visible: [Math.max(v.left, 0), Math.max(v.top, 0), Math.min(v.left + pw, innerWidth),
              Math.min(v.top + ph, innerHeight)],
    tops: [...root.querySelector(".tp-toolbar").children].map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
    parts: Object.fromEntries(["toolbar", "tools", "search", "nan", "lost", "title", "stage", "norms", "sentence",
                               "gradients", "legend"].map((k) => {
      const el = root.querySelector(".tp-" + k);
      return [k, el && shown(el) ? rect(el) : null];
    })),
    // the legend's items (in classroom mode they flow on after the gradients, the
    // legend itself drawing no box): the box around them
    legend: ((items) => items.length ? [Math.min(...items.map((b) => b[0])), Math.min(...items.map((b) => b[1])),
      Math.max(...items.map((b) => b[2])), Math.max(...items.map((b) => b[3]))] : null)(
      [...root.querySelectorAll(".tp-legend-item")].filter(shown).map(rect)),
    // the title: its whole text inside its box (no line clamp, no ellipsis)
    title: ((t) => [t.scrollHeight, t.clientHeight, getComputedStyle(t).webkitLineClamp,
                    getComputedStyle(t).textOverflow, t.textContent])(root.querySelector(".tp-title")),
    // the health panel's first row and what the panel shows of it, as it is (no scroll):
    // below the summary while that stays in view, above "more rows below" while that shows
    first_row: ((panel) => {
      if (!panel || !shown(panel)) return null;
      const row = panel.querySelector(".tp-health-row"), more = panel.querySelector(".tp-health-more");
      const p = panel.getBoundingClientRect();
      const bottom = more && getComputedStyle(more).visibility === "visible"
        ? more.getBoundingClientRect().top : p.top + panel.clientTop + panel.clientHeight;
      return {row: rect(row), scrollTop: panel.scrollTop,
              seen: [p.left + panel.clientLeft, Math.max(p.top + panel.clientTop,
                     panel.querySelector(".tp-health-top").getBoundingClientRect().bottom),
                     p.left + panel.clientLeft + panel.clientWidth, bottom]};
    })(root.querySelector(".tp-norms")),
    small: texts.map((e) => [e.textContent.trim().slice(0, 40),
                             parseFloat(getComputedStyle(e).fontSize) * (e.closest("svg.tp-svg") ? zoom : 1)])
      .filter(([, px]) => px < 18 - 0.01),
    ellipsis: texts.filter((e) => getComputedStyle(e).textOverflow === "ellipsis").map((e) => e.textContent.trim().slice(0, 40)),
    cut: texts.filter((e) => clips(e) && e.scrollWidth > e.clientWidth + 1)
      .map((e) => [e.className, e.textContent.trim().slice(0, 40), e.scrollWidth, e.clientWidth]),
    // the search box's placeholder, measured as its value (an input's scrollWidth counts its value only)
    placeholder: ((s) => { const v = s.value; s.value = s.placeholder; const w = [s.scrollWidth, s.clientWidth];
      s.value = v; return w; })(root.querySelector(".tp-search")),
    // the bottom of the sentence's text (its box may keep room for a longer one)
    sentence_text: ((s) => { const r = document.createRange(); r.selectNodeContents(s);
      return r.getBoundingClientRect().bottom; })(root.querySelector(".tp-sentence")),
    reasons: [...root.querySelectorAll(".tp-health-why")].filter(shown).map((e) => [e.textContent, e.scrollWidth, e.clientWidth]),
  };
}"""


# Every frame in turn (the scrubber, as a teacher drags it): the stage's height, the
# sentence's text and box heights and its line height, the title's text and box heights,
# whether the sentence says that more lies below.
EVERY_FRAME = """(root) => {
  const scrub = root.querySelector('.tp-scrub'), shown = scrub.value, out = [];
  const sentence = root.querySelector('.tp-sentence'), title = root.querySelector('.tp-title');
  for (let k = 0; k <= Number(scrub.max); k++) {
    scrub.value = String(k);
    scrub.dispatchEvent(new Event('input'));
    out.push([root.querySelector('.tp-stage').clientHeight, sentence.scrollHeight, sentence.clientHeight,
              parseFloat(getComputedStyle(sentence).lineHeight), title.scrollHeight, title.clientHeight,
              sentence.classList.contains('tp-sentence-more')]);
  }
  scrub.value = shown;
  scrub.dispatchEvent(new Event('input'));
  return out;
}"""


# The stage's view against the drawing, the minimap, and the health panel: each
# text's size, and each row scrolled into the panel's view (below the sticky summary,
# above "more rows below" while that shows): its box and the box it is seen in.
PANEL = """async (root) => {
  const rect = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const painted = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  const stage = root.querySelector('.tp-stage'), panel = root.querySelector('.tp-norms');
  const [x, y, w, h] = root.querySelector('.tp-svg').getAttribute('viewBox').split(' ').map(Number);
  const mini = root.querySelector('.tp-minimap');
  const miniShown = !mini.classList.contains('tp-hidden');
  const m = rect(mini);
  const meets = (b) => b[0] < m[2] && b[2] > m[0] && b[1] < m[3] && b[3] > m[1];
  const out = {view: [x, y, w, h], size: root.tp.tree.size(), scale: Number(stage.dataset.scale),
               stagePx: [stage.clientWidth, stage.clientHeight], miniShown,
               under: miniShown ? [...root.querySelectorAll('.tp-svg .tp-node, .tp-svg .tp-group-cover')]
                 .map(rect).filter((b) => b[2] > b[0] && meets(b)).length : 0,
               marks: mini.querySelector('.tp-minimap-frames').getAttribute('d').length
                 + mini.querySelector('.tp-minimap-nodes').getAttribute('d').length,
               body: parseFloat(getComputedStyle(root).fontSize)};
  if (!panel) return out;
  out.fonts = [...panel.querySelectorAll('*')]
    .filter((e) => e.tagName !== 'STYLE' && e.getClientRects().length > 0)
    .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
    .map((e) => [e.textContent.trim().slice(0, 30), parseFloat(getComputedStyle(e).fontSize)]);
  const more = panel.querySelector('.tp-health-more');
  const seen = () => {
    const p = panel.getBoundingClientRect();
    const bottom = more && getComputedStyle(more).visibility === 'visible'
      ? more.getBoundingClientRect().top : p.top + panel.clientTop + panel.clientHeight;
    return [p.left + panel.clientLeft,
            Math.max(p.top + panel.clientTop, panel.querySelector('.tp-health-top').getBoundingClientRect().bottom),
            p.left + panel.clientLeft + panel.clientWidth, bottom];
  };
  const saved = panel.scrollTop;
  panel.scrollTop = 0;
  await painted();
  out.more = [panel.scrollHeight > panel.clientHeight + 2, more ? getComputedStyle(more).visibility : null];
  out.summary = [panel.querySelector('.tp-health-top').offsetHeight, panel.clientHeight,
                 panel.classList.contains('tp-health-short')];
  out.rows = [];
  const rows = [...panel.querySelectorAll('.tp-health-row')];
  for (const row of rows) {
    // scrolled down until its bottom is seen (the last row: as far as the panel goes),
    // then up until its top is (a row taller than what the panel shows: its bottom
    // edge then its top edge)
    const below = row.getBoundingClientRect().bottom - seen()[3];
    if (below > 0) { panel.scrollTop += below; await painted(); }
    const bottom = [rect(row), seen()];
    const above = seen()[1] - row.getBoundingClientRect().top;
    if (above > 0) { panel.scrollTop -= above; await painted(); }
    out.rows.push([row.dataset.group, rect(row), seen(), row.scrollWidth, row.clientWidth, bottom]);
  }
  out.end = [panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 2, more ? getComputedStyle(more).visibility : null];
  panel.scrollTop = saved;
  return out;
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
        box = m["legend"] if part == "legend" else m["parts"][part]
        assert box is not None, f"{where}: the {part} is not shown in classroom mode"
        assert _inside(box, m["visible"]), \
            f"{where}: the {part} {[round(b) for b in box]} is outside the notebook's visible area " \
            f"{[round(b) for b in m['visible']]}"
    assert not m["small"], f"{where}: text under 18px: {m['small'][:10]}"
    _check_text(m, where)


def _check_text(m, where):
    """Nothing cut: no ellipsis, no text wider than its box, the search box's placeholder whole."""
    assert not m["ellipsis"], f"{where}: text cut with an ellipsis: {m['ellipsis'][:10]}"
    assert not m["cut"], f"{where}: text wider than its box: {m['cut'][:10]}"
    width, box = m["placeholder"]
    assert width <= box, f"{where}: the search box's placeholder is cut ({width}px in {box}px)"
    tall, shown, clamp, overflow, text = m["title"]
    assert tall <= shown + 1 and clamp in ("none", "") and overflow != "ellipsis", \
        f"{where}: the title is cut ({tall}px of text in {shown}px, line clamp {clamp!r}, {overflow}): {text!r}"


def _check_every_frame(frames, name, first_px):
    """One graph height on every frame, the first frame's; the title never cut; the
    sentence's box whole lines high, the same on every frame."""
    heights = sorted({stage for stage, *_ in frames})
    scrolled = [k for k, (_, tall, box, *_) in enumerate(frames) if tall > box + 1]
    print(f"{name}: graph area per frame {heights}px; the sentence scrolls on {len(scrolled)} of "
          f"{len(frames)} frames {scrolled}")
    assert max(heights) - min(heights) <= 1 and abs(heights[0] - first_px) <= 1, \
        f"{name}: the graph area changes while stepping: {heights}px (first frame {first_px}px)"
    boxes = {box for _, _, box, *_ in frames}
    assert len(boxes) == 1, f"{name}: the sentence's box changes height while stepping: {boxes}"
    for k, (_, tall, box, line, title_tall, title_box, more) in enumerate(frames):
        assert title_tall <= title_box + 1, f"{name}, frame {k}: the title is cut ({title_tall}px in {title_box}px)"
        assert more == (tall > box + 1), \
            f"{name}, frame {k}: the sentence ({tall}px in a {box}px box) {'says' if more else 'does not say'} more lies below"
        if tall > box + 1:
            lines = box / line
            assert abs(lines - round(lines)) < 0.05, \
                f"{name}, frame {k}: the sentence scrolls in a box of {lines:.2f} lines (a line cut)"


def check_panel(p, where, least):
    """The health panel (``PANEL``'s measures): every text at least ``least`` px, and every
    row, scrolled into the panel's view, whole inside what is seen of it, so none is cut."""
    small = [(text, px) for text, px in p["fonts"] if px < least - 0.01]
    assert not small, f"{where}: health panel text under {least}px: {small[:10]}"
    scrolls, shown = p["more"]
    assert shown == ("visible" if scrolls else "hidden"), \
        f"{where}: 'more rows below' is {shown} where the panel {'scrolls' if scrolls else 'holds every row'}"
    assert p["end"] == [True, "hidden"], f"{where}: at the panel's end 'more rows below' still shows: {p['end']}"
    for group, box, seen, width, inner, (low_box, low_seen) in p["rows"]:
        assert width <= inner + 1, f"{where}: health row {group} is wider than the panel ({width} > {inner})"
        if box[3] - box[1] > seen[3] - seen[1]:
            # taller than what the panel shows (classroom type beside a 240px stage):
            # read by scrolling, its bottom edge reached, then its top edge
            assert low_box[3] <= low_seen[3] + 1.5 and box[1] >= seen[1] - 1.5, \
                f"{where}: health row {group} cannot be read whole by scrolling: bottom " \
                f"{low_box[3]:.0f} under {low_seen[3]:.0f}, top {box[1]:.0f} over {seen[1]:.0f}"
            continue
        assert _inside(box, seen, slack=1.5), \
            f"{where}: health row {group} {[round(b) for b in box]} is cut: the panel shows " \
            f"{[round(b) for b in seen]} of it, scrolled as far as it goes"


def restored_players(page, names, artifacts_dir, log_path, shot):
    """Opens the notebooks ``names`` and the file browser, reloads so that JupyterLab
    restores them, and yields ``(name, root)``: each one's tab in front, its stored player
    started and scrolled to the top of the notebook (a screenshot ``<shot>_<name>.png``
    and the log where one does not start)."""
    for name in names:
        page.evaluate(OPEN, f"{name}.ipynb")
    page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
    # JupyterLab restores the tabs and the open file browser from its saved workspace
    reload_restoring(page, [f"{name}.ipynb" for name in names], sidebar="filebrowser")
    for name in names:
        try:
            page.wait_for_function(STARTED, arg=f"{name}.ipynb", timeout=30_000)
        except Exception:
            page.screenshot(path=str(artifacts_dir / f"{shot}_{name}.png"))
            state = page.evaluate("""() => { const w = window.jupyterapp.shell.currentWidget;
              return [w && w.context && w.context.path, w && w.node.querySelectorAll('.tp-root').length]; }""")
            pytest.fail(f"the stored player of {name} did not start in its tab: {state}; "
                        f"JupyterLab log:\n{log_path.read_text()[-2000:]}")
        assert page.evaluate("() => !window.jupyterapp.shell.leftCollapsed"), "the file browser is closed"
        assert page.locator(".jp-FileBrowser").is_visible()
        root = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .tp-root")
        root.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        yield name, root


def first_and_last_frame(page, root):
    """Shows the player ``root``'s first frame, then its last, each with the player
    scrolled to the top of the notebook; yields ``"first"``, then ``"last"``."""
    for key, frame in (("Home", "first"), ("End", "last")):
        root.focus()
        page.keyboard.press(key)
        page.wait_for_timeout(200)
        root.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        yield frame


def test_classroom_players_fit_jupyterlab_with_the_file_browser_open(
        chromium, classroom_lab, artifacts_dir):
    base, log_path = classroom_lab
    with lab_page(chromium, base, 1280, 720) as page:
        for name, root in restored_players(page, NOTEBOOKS, artifacts_dir, log_path, "jupyterlab_classroom"):
            _, panel, classroom = NOTEBOOKS[name]
            if not classroom:
                root.locator(".tp-classroom-box").check()
            page.wait_for_function("(el) => el.classList.contains('tp-classroom')", arg=root.element_handle())
            page.wait_for_timeout(400)
            stage_px = {}
            for frame in first_and_last_frame(page, root):
                m = root.evaluate(MEASURE)
                page.screenshot(path=str(artifacts_dir / f"jupyterlab_classroom_{name}_{frame}.png"))
                print(f"{name}, {frame} frame: graph area {m['parts']['stage'][3] - m['parts']['stage'][1]:.0f}px, "
                      f"title {m['title'][:2]}, {m['parts']['gradients'][1] - m['sentence_text']:.0f}px blank "
                      f"under the sentence, first health row {m['first_row']}")
                print("  heights:", {k: round(b[3] - b[1], 1) for k, b in m["parts"].items() if b})
                _check(m, name, frame, panel)
                if panel:
                    first_row = m["first_row"]
                    spare = first_row["seen"][3] - first_row["row"][3]
                    print(f"  first health row: {spare:.1f}px to spare")
                    # as opened: the cause, whole, with no scroll, and room to spare
                    assert first_row["scrollTop"] == 0 and _inside(first_row["row"], first_row["seen"], 1.5) \
                        and spare >= ROW_MARGIN_PX, \
                        f"{name}, frame {frame}: the first health row {[round(b) for b in first_row['row']]} " \
                        f"is not whole with {ROW_MARGIN_PX}px to spare in what the panel shows " \
                        f"{[round(b) for b in first_row['seen']]} (scrolled {first_row['scrollTop']}px)"
                    p = root.evaluate(PANEL)
                    check_panel(p, f"{name}, frame {frame}", 18)
                    stage_px[frame] = p["stagePx"][1]
                    assert p["stagePx"][1] >= STAGE_PX, f"{name}, frame {frame}: graph area {p['stagePx']}"
                    if frame == "last":
                        # one height on every frame: the graph does not jump while stepping
                        assert abs(stage_px["last"] - stage_px["first"]) <= 1, \
                            f"{name}: the graph area is {stage_px['first']}px on the first frame, " \
                            f"{stage_px['last']}px on the last"
                        band = m["parts"]["gradients"][1] - m["sentence_text"]
                        assert band <= BAND_PX, f"{name}, frame {frame}: {band:.0f}px blank under the sentence"
                if panel and frame == "last":
                    _check_every_frame(root.evaluate(EVERY_FRAME), name, stage_px["first"])
                if name == "planted_mlp" and frame == "last":
                    assert m["reasons"], f"{name}: no health reason shown"
                    assert all(width <= box + 1 for _, width, box in m["reasons"]), m["reasons"]
