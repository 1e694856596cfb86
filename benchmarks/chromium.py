"""The tape player's pages measured in Chromium: interactions, the health panel, the projector.

Playwright drives Debian's Chromium (``/usr/bin/chromium`` or
``$TAPESCHOOL_CHROMIUM``; never ``playwright install``), headless, offline.

- ``interaction_rounds(path, rounds)``: each round opens the page in a fresh
  context at 1280x720 and times, in the page itself, every action of
  ``ACTIONS`` (``performance.now()`` around the action, up to the frame after
  it was painted: ``requestAnimationFrame`` then a task), and the load
  (navigation to the first frame drawn, in seconds). Also the page's element
  count and the health panel's (what it costs to keep in the page).
- ``projector(path, width, height)``: the page in classroom mode (as on a
  projector) on its first frame, a backward frame and the last frame: the
  smallest on-screen size of node names, values and box names, how many rows
  the toolbar takes, and the parts of the player below the window.

``MEASURE`` and ``SVG_TYPE`` are the page-side measurements
(tests/browser/test_classroom_fit.py asserts on the same ones). Speed is
reported here, never asserted in a test.

    >>> rounds = interaction_rounds("gru_10010.html", rounds=5)
    >>> statistics.median(r["step_back"] for r in rounds)       # milliseconds
"""

import time
from pathlib import Path

from tapeschool.course.browser import chromium  # noqa: F401  (the one launcher: Debian's Chromium, its flags)

# Each action runs in the page; the time is up to the next painted frame (null: the page
# has nothing to click for it).
_TIMED = """async (action) => {
  const root = document.querySelector('.tp-root');
  const key = (k, shift) => root.dispatchEvent(new KeyboardEvent('keydown', {key: k, shiftKey: !!shift, bubbles: true}));
  const click = (sel) => { const el = root.querySelector(sel);
    return el ? el.dispatchEvent(new MouseEvent('click', {bubbles: true})) : false; };
  const actions = {
    zoom: () => click('.tp-zoom-in'),
    pan: () => key('ArrowRight', true),
    fit: () => click('.tp-fit'),
    open: () => click('.tp-group-cover'),
    close: () => root.querySelector('.tp-group-frame:last-of-type .tp-group-label')
      .dispatchEvent(new MouseEvent('click', {bubbles: true})),
    expand_all: () => click('.tp-expand-all'),
    collapse_all: () => click('.tp-collapse-all'),
    step_forward: () => key('ArrowRight'),
    end: () => key('End'),
    step_back: () => key('ArrowLeft'),
    search: () => { const s = root.querySelector('.tp-search'); s.value = 'tanh';
      s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); },
    nan: () => click('.tp-nan'),
    health_scroll: () => { const p = root.querySelector('.tp-norms'); p.scrollTop += 2000;
      p.dispatchEvent(new Event('scroll')); },
    health_jump: () => click('.tp-health-jump'),
  };
  const t0 = performance.now();
  if (actions[action]() === false) return null;     // not on this page
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  return performance.now() - t0;
}"""
ACTIONS = ("zoom", "pan", "fit", "open", "close", "expand_all", "collapse_all", "step_forward",
           "end", "step_back", "search", "nan", "health_scroll", "health_jump")

# Rectangles in CSS pixels: [left, top, right, bottom].
MEASURE = """() => {
  const root = document.querySelector(".tp-root");
  const rect = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const cur = root.querySelector(".tp-svg .tp-node.tp-current, .tp-svg .tp-group-cover.tp-current");
  const title = root.querySelector(".tp-title");
  return {
    current: cur ? rect(cur) : null,
    stage: rect(root.querySelector(".tp-stage")),
    toolbar: rect(root.querySelector(".tp-toolbar")),
    tops: [...root.querySelector(".tp-toolbar").children].map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
    title: rect(title),
    titleLines: title.getBoundingClientRect().height / parseFloat(getComputedStyle(title).lineHeight || "1"),
    titleFont: parseFloat(getComputedStyle(title).fontSize),
    sentence: rect(root.querySelector(".tp-sentence")),
    gradients: rect(root.querySelector(".tp-gradients")),
    tools: rect(root.querySelector(".tp-tools")),
    panel: root.querySelector(".tp-norms") ? rect(root.querySelector(".tp-norms")) : null,
    window: [0, 0, window.innerWidth, window.innerHeight],
    frame: Number(root.dataset.frame),
  };
}"""

# On-screen font size of every drawn text of the graph, by its class.
SVG_TYPE = """() => {
  const root = document.querySelector(".tp-root");
  const zoom = Number(root.querySelector(".tp-stage").dataset.scale);
  const out = {};
  for (const t of root.querySelectorAll(".tp-svg text")) {
    if (!t.textContent.trim() || !t.getClientRects().length) continue;
    const px = parseFloat(getComputedStyle(t).fontSize) * zoom;
    const cls = t.getAttribute("class") || "?";
    out[cls] = Math.min(out[cls] === undefined ? Infinity : out[cls], px);
  }
  return out;
}"""

_PAINTED = "() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))"
_COUNTS = """() => ({page: document.getElementsByTagName('*').length,
  panel: (document.querySelector('.tp-norms') || {querySelectorAll: () => []}).querySelectorAll('*').length,
  rows: Number((document.querySelector('.tp-norms') || {dataset: {}}).dataset.rows || 0)})"""


def _open(browser, path, width, height):
    context = browser.new_context(offline=True, viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(180_000)
    t0 = time.perf_counter()
    page.goto(Path(path).resolve().as_uri())
    page.wait_for_selector(".tp-root[data-frame]")
    page.evaluate(_PAINTED)
    return context, page, time.perf_counter() - t0


def interaction_rounds(browser, path, rounds=5, width=1280, height=720):
    """``rounds`` dicts: ``load`` (s), ``page``/``panel`` (element counts) and ms per action
    (None for an action the page has nothing for)."""
    out = []
    for _ in range(rounds):
        context, page, load = _open(browser, path, width, height)
        try:
            row = {"load": load, **page.evaluate(_COUNTS)}
            for action in ACTIONS:
                if action.startswith("health") and not row["panel"]:
                    continue
                row[action] = page.evaluate(_TIMED, action)
            after = page.evaluate(_COUNTS)
            row["elements_after"], row["panel_after"] = after["page"], after["panel"]
            out.append(row)
        finally:
            context.close()
    return out


def _rows(tops):
    """How many rows the toolbar's items take (centres more than 4 px apart)."""
    rows = []
    for top in sorted(tops):
        if not rows or top - rows[-1] > 4:
            rows.append(top)
    return len(rows)


def projector(browser, path, width, height, open_box=None):
    """Classroom-mode sizes on the first, a backward and the last frame.

    ``open_box``: the label of a box to open first (to read a model's nodes).
    Returns ``{"name", "value", "box"}`` (the smallest on-screen px over the
    three frames; None where none shows), ``"toolbar_rows"`` (the most), and
    ``"below"`` (the parts of the player that were outside the window).
    """
    context, page, _ = _open(browser, path, width, height)
    try:
        page.locator(".tp-classroom-box").check()
        page.wait_for_function("() => document.querySelector('.tp-root').classList.contains('tp-classroom')")
        if open_box:
            box = page.evaluate("(label) => document.querySelector('.tp-root').tp.tree.boxes"
                                ".find((b) => b.label === label).id", open_box)
            page.locator(f'.tp-group-cover[data-group="{box}"]').click()
        frames = int(page.evaluate("() => document.querySelector('.tp-scrub').max")) + 1
        found = {"name": None, "value": None, "box": None, "toolbar_rows": 0, "below": set()}
        for frame in (0, frames - 3, frames - 1):
            page.locator(".tp-scrub").fill(str(frame))
            page.evaluate(_PAINTED)
            m = page.evaluate(MEASURE)
            found["toolbar_rows"] = max(found["toolbar_rows"], _rows(m["tops"]))
            for part in ("toolbar", "title", "stage", "sentence", "gradients"):
                if m[part][3] > m["window"][3] + 1 or m[part][2] > m["window"][2] + 1:
                    found["below"].add(part)
            sizes = page.evaluate(SVG_TYPE)
            for key, cls in (("name", "tp-name"), ("value", "tp-value"), ("box", "tp-box-name")):
                if cls in sizes:
                    found[key] = sizes[cls] if found[key] is None else min(found[key], sizes[cls])
        found["below"] = sorted(found["below"])
        return found
    finally:
        context.close()
