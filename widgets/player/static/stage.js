// The stage's size and the view's placement, in normal and classroom mode (part of
// the player's module, before player.js; see html_export.JS_PARTS): how tall the
// stage may grow in the window or the notebook's scrolling panel (stageRoom), the
// health panel beside it kept one height with it, the readable zoom of each mode,
// and where the view goes when the layout changes: home (fit, or the readable zoom
// around the current record), following the current record, after expand or
// collapse all, on a found node or a health row's scope.
//
//     const stage = createStageLayout(root, data, parts);   // parts: see below
//     stage.relayout(true);          // fit the stage to the room, the view home
//     stage.shown();                 // after a frame's title and sentence are set
//
// Classroom mode keeps one stage height on every frame (a teacher stepping through
// sees no jump): the title's and the sentence's boxes keep the room of the tallest
// (stageRoom), and the stage is never taller than the room it was given, and never
// taller than the visible area (at most max(240, its height) px, whatever is measured).

const READABLE = 16 / 11;        // normal mode: the graph's smallest text (11 units) at 16px
const CLASSROOM_READABLE = 4 / 3; // classroom: its smallest text (12 units) at 16px, names and values 18px and more
const CLASSROOM_GRADIENTS = 1;   // classroom: one gradient under the graph (and "+N more"): one row at 830px
const PANEL_PX = 360;            // the stage (and the health panel beside it) at least this tall, room allowing
const STAGE_LEAST = 300;         // classroom beside a panel: the sentence's box gives up lines for this

const readableScale = (classroom) => (classroom ? CLASSROOM_READABLE : READABLE);

// parts: { tree, scene, viewport(), groups(), health(), frame(), classroom() } (the
// viewport, the groups and the health panel are made after the layout).
function createStageLayout(root, data, parts) {
  const { tree } = parts;
  const q = (sel) => root.querySelector(sel);
  const readable = () => readableScale(parts.classroom());
  const classroom = () => parts.classroom();

  // home: fit the overview (or, on a small tape, the readable zoom); anchor: a
  // function giving [x, y, new x, new y] of the point to keep still on screen.
  let room = 0, base = 0, most = 0;   // base: the stage's height, kept while playing
  function relayout(home, anchor) {
    const stage = q(".tp-stage"), viewport = parts.viewport();
    if (home || !room) {                       // (reading sizes costs a layout)
      room = stageRoom(root, data, classroom());
      most = Math.max(240, visibleHeight(root));   // the bound, whatever else was measured
    }
    const cw = Math.max(stage.clientWidth, 1);
    tree.layout(cw / room, cw / readable());
    const [W, H] = tree.size();
    const s = Math.min(cw / W, readable());
    // The health panel beside the stage is exactly as tall (a taller panel left a
    // blank band under the stage), and at least PANEL_PX when there is room: its
    // first rows, the causes, show with their reasons.
    const panel = q(".tp-norms");
    const beside = panel && panel.offsetParent !== null;
    const least = Math.min(beside ? PANEL_PX : 240, room);
    // least <= room, so the height never passes the room: no feedback from the drawing
    const height = Math.round(Math.max(least, Math.min(room, H * s + 8)));
    if (home || !base || base < height) base = height;
    setHeight(base);
    parts.scene.rebuild();
    drawMinimap(stage, tree.rects(), W, H, tree.boxes.length);
    if (home) parts.health().redraw();       // shown again after classroom mode, or resized
    const keep = anchor && anchor();
    if (home) {
      const fits = Math.min(cw / W, stage.clientHeight / H) >= readable();
      const overview = [...tree.rects().values()].some((r) => r.open === false);
      // A projector (classroom mode) never shrinks text to fit: an overview too big to
      // read whole is shown at the readable zoom around the current record (Fit shows all).
      if (fits || (overview && !classroom())) viewport.fit(); else viewport.fit(readable());
      follow();
    } else if (keep) viewport.keep(...keep, DETAIL_SCALE * 2, readable());
    else viewport.apply();
  }

  // The stage's height, and the health panel's beside it.
  function setHeight(px) {
    const stage = q(".tp-stage"), panel = q(".tp-norms");
    stage.style.height = `${Math.min(px, most)}px`;
    if (panel && panel.offsetParent !== null) panel.style.height = panel.style.maxHeight = `${stage.offsetHeight}px`;
    const viewport = parts.viewport();
    if (viewport) viewport.resized();
  }

  // After a frame's title and sentence are set (classroom): the sentence at the top of
  // its box; a title taller than the room kept for it (a record's longer than the
  // result's) keeps its new height for every later frame, and the stage gives that
  // much up once, so nothing falls below the fold. The stage only ever shrinks here,
  // down to 240px: no loop.
  function shown() {
    if (!classroom() || !base) return;
    const title = q(".tp-title"), sentence = q(".tp-sentence");
    sentence.scrollTop = 0;
    more(sentence);
    const kept = parseFloat(title.style.minHeight) || 0, over = title.offsetHeight - kept;
    if (!kept || over <= 0.5) return;
    title.style.minHeight = `${title.offsetHeight}px`;
    const lower = Math.max(240, Math.floor(base - over));
    if (lower >= base) return;
    room = Math.max(240, room - (base - lower));
    base = lower;
    setHeight(base);
    parts.viewport().apply();
  }

  // A sentence longer than its box says that more lies below until it is scrolled there.
  const more = (sentence) => sentence.classList.toggle("tp-sentence-more",
    sentence.scrollTop + sentence.clientHeight < sentence.scrollHeight - 1);
  q(".tp-sentence").addEventListener("scroll", (ev) => more(ev.target), { passive: true });

  // The view follows the current record: at a readable zoom when it is a node (in
  // classroom mode a closed box too).
  function follow() {
    const f = data.frames[parts.frame()], viewport = parts.viewport();
    const id = f.op || f.nodes[0];
    if (!id || !viewport) return;
    const r = tree.rep(id);
    viewport.follow(tree.rects().get(r), tree.isBox(r) && !classroom() ? null : readable());
  }

  // After expand all: the current record at the readable zoom, the view inside the
  // drawing; after collapse all: the overview, fitted.
  function land(expanded) {
    const viewport = parts.viewport();
    if (!expanded) { viewport.fit(); return; }
    const f = data.frames[parts.frame()];
    const r = tree.rects().get(tree.rep(f.op || f.nodes[0] || ""));
    if (r) viewport.centerOn(r.x, r.y, readable()); else viewport.fit(readable());
  }

  function found(id) {
    const viewport = parts.viewport();
    root.querySelectorAll(".tp-found").forEach((e) => e.classList.remove("tp-found"));
    viewport.reveal(tree.rects().get(id), tree.isBox(id) ? Math.min(readable(), viewport.view().scale) : readable());
    const el = parts.scene.element(id);
    if (el) el.classList.add("tp-found");
  }

  // Shows a scope's box in the graph (a click on a health row's name).
  function reveal(scope) {
    const k = tree.boxes.findIndex((b) => b.kind === "scope" && b.path === scope);
    if (k <= 0) return;
    parts.groups().expandFor("b" + k);
    found("b" + k);
    root.dataset.found = "b" + k;
  }

  return { relayout, shown, follow, land, found, reveal, readable };
}

// How tall the stage may grow: what the visible area (the window, or the
// notebook's scrolling panel) leaves once the toolbar, title, sentence,
// gradients (in classroom mode the foot: the gradients and the legend) are counted, so the graph and
// its caption show together on a 1280x720 projector. Never under 240px.
function stageRoom(root, data, classroom) {
  const stage = root.querySelector(".tp-stage");
  const sentence = root.querySelector(".tp-sentence");
  const title = root.querySelector(".tp-title"), gradients = root.querySelector(".tp-gradients");
  const foot = root.querySelector(".tp-foot");
  for (const el of [sentence, title, gradients, foot]) el.style.minHeight = "";
  sentence.style.maxHeight = "";
  if (classroom) {
    // Room for the longest sentence, the taller of the shown title and the result's,
    // and the result's gradients (every value known, the widest) with the legend that
    // flows on after them (the foot), so the stage keeps its size while playing and the
    // last frame pushes nothing below the fold. (The gradients shown may still be
    // normal mode's, just switched from: the foot counts as tall as kept.)
    const result = data.frames[data.frames.length - 1];
    let longest = "";
    for (const f of data.frames) if (f.sentence.length > longest.length) longest = f.sentence;
    const tallest = [[sentence, "textContent", longest, false], [title, "textContent", titleText(result, CLASSROOM_GRADIENTS), true],
      [gradients, "innerHTML", gradientsMarkup(data, result, () => undefined, CLASSROOM_GRADIENTS), false, foot]];
    for (const [el, key, text, orShown, box = el] of tallest) {
      const shown = el[key];
      el[key] = text;
      const tall = box.getBoundingClientRect().height;
      el[key] = shown;
      box.style.minHeight = `${Math.ceil(orShown ? Math.max(tall, box.getBoundingClientRect().height) : tall)}px`;
    }
  }
  // The row of the stage counts as the stage: the health panel beside it may still be
  // taller (its height follows the stage only once laid out: a player drawn in a hidden
  // tab, as JupyterLab restores them, had a panel 70vh tall and got a 240px stage).
  const cs = getComputedStyle(stage);
  const main = root.querySelector(".tp-main");
  const last = root.querySelector(classroom ? ".tp-foot" : ".tp-gradients");
  const end = classroom ? last.getBoundingClientRect().top + parseFloat(last.style.minHeight)
    : last.getBoundingClientRect().bottom;
  const others = end + parseFloat(getComputedStyle(last).marginBottom)
    - root.getBoundingClientRect().top - main.getBoundingClientRect().height
    + parseFloat(cs.borderTopWidth) + parseFloat(cs.borderBottomWidth);
  let room = visibleHeight(root) - others - pageMargin(root);
  if (classroom) room += sentenceBox(root, STAGE_LEAST - room);
  return Math.max(240, classroom ? room : Math.min(room, window.innerHeight * 0.75));
}

// Classroom: the sentence's box is one height on every frame, the longest sentence's
// (stageRoom); beside a health panel, where that leaves the graph under STAGE_LEAST px
// (`short` px short), only as many whole lines as leave it that, two at least. A longer
// sentence then scrolls in its box, a whole line at a time, never cut in a line
// (shown() puts each frame's at its top). Returns the pixels it gave back to the stage.
function sentenceBox(root, short) {
  const sentence = root.querySelector(".tp-sentence"), panel = root.querySelector(".tp-norms");
  const kept = parseFloat(sentence.style.minHeight) || 0;
  const line = parseFloat(getComputedStyle(sentence).lineHeight) || 24;
  let box = kept;
  if (short > 0 && panel && panel.offsetParent !== null) {
    box = Math.min(kept, Math.max(2, Math.floor((kept - short) / line + 0.02)) * line);
  }
  sentence.style.minHeight = sentence.style.maxHeight = `${box}px`;
  return kept - box;
}

// What lies around the player and must show with it: in a notebook (a scrolling
// panel) the output's padding, 8px; on a page of its own (export_html: the window
// scrolls) what is above the player at the page's top, and the body's bottom margin.
function pageMargin(root) {
  if (scroller(root)) return 8;
  const above = root.getBoundingClientRect().top + window.scrollY;
  return Math.min(Math.max(above, 0), 64) + parseFloat(getComputedStyle(document.body).marginBottom || "0");
}

// The nearest ancestor of `el` that really scrolls (a notebook panel), or null (the window).
function scroller(el) {
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const o = getComputedStyle(p).overflowY;
    // Only a box that really scrolls (an output area's overflow-x: auto makes
    // overflow-y compute to auto too, but it grows with the player).
    if ((o === "auto" || o === "scroll") && p.clientHeight > 0 && p.scrollHeight > p.clientHeight + 1) return p;
  }
  return null;
}

// The height of what can be seen of `el`: its nearest scrolling ancestor (a
// notebook panel), within the window.
function visibleHeight(el) {
  const p = scroller(el);
  if (!p) return window.innerHeight;
  const r = p.getBoundingClientRect();
  return Math.max(Math.min(window.innerHeight, r.top + p.clientHeight) - Math.max(0, r.top), 0);
}

