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

const READABLE = 16 / 11;        // normal mode: the graph's smallest text (11 units) at 16px
const CLASSROOM_READABLE = 4 / 3; // classroom: its smallest text (12 units) at 16px, names and values 18px and more
const CLASSROOM_GRADIENTS = 1;   // classroom: one gradient under the graph (and "+N more"): one row at 830px
const PANEL_PX = 360;            // the stage (and the health panel beside it) at least this tall, room allowing

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
  let room = 0, base = 0, reserved = 0;      // base: the stage's height under the longest sentence
  function relayout(home, anchor) {
    const stage = q(".tp-stage"), viewport = parts.viewport();
    if (home || !room) {                       // (reading sizes costs a layout)
      room = stageRoom(root, data, classroom());
      reserved = sentenceReserve(root, classroom());
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
    const height = Math.round(Math.max(least, Math.min(room, H * s + 8)));
    if (home || !base || base < height) base = height;
    stage.style.height = `${sharedStage(root, base, reserved)}px`;
    if (beside) panel.style.height = panel.style.maxHeight = `${stage.offsetHeight}px`;
    if (viewport) viewport.resized();
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

  // After a frame's title and sentence are set (classroom beside a panel): the stage
  // takes the reserved lines they leave empty.
  function shown() {
    const shared = reserved && `${sharedStage(root, base, reserved)}px`;
    if (shared && q(".tp-stage").style.height !== shared) {
      q(".tp-stage").style.height = shared;
      q(".tp-norms").style.height = q(".tp-norms").style.maxHeight = `${q(".tp-stage").offsetHeight}px`;
      const viewport = parts.viewport();
      if (viewport) { viewport.resized(); viewport.apply(); }
    }
  }

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
  if (classroom) {
    // Room for the longest sentence, the taller of the shown title and the result's,
    // and the result's gradients (every value known, the widest) with the legend that
    // flows on after them (the foot), so the stage keeps its size while playing and the
    // last frame pushes nothing below the fold. (The gradients shown may still be
    // normal mode's, just switched from.)
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
  const others = last.getBoundingClientRect().bottom + parseFloat(getComputedStyle(last).marginBottom)
    - root.getBoundingClientRect().top - main.getBoundingClientRect().height
    + parseFloat(cs.borderTopWidth) + parseFloat(cs.borderBottomWidth);
  const room = visibleHeight(root) - others - pageMargin(root);
  return Math.max(240, classroom ? room : Math.min(room, window.innerHeight * 0.75));
}

// Classroom mode with a health panel beside the stage: the stage takes the lines
// reserved for the longest sentence and the result's title (stageRoom) that the shown
// ones leave empty, so no blank band lies under a short sentence (the panel follows the
// stage's height). sentenceReserve: the reserved height, taken off the two (0 without
// a panel shown); sharedStage: the stage's height for `base`, the frame's texts shown.
const SHARED = [".tp-title", ".tp-sentence"];
function sentenceReserve(root, classroom) {
  const panel = root.querySelector(".tp-norms");
  if (!classroom || !panel || panel.offsetParent === null) return 0;
  let reserved = 0;
  for (const el of SHARED.map((s) => root.querySelector(s))) {
    reserved += parseFloat(el.style.minHeight) || 0;
    el.style.minHeight = "";
  }
  return reserved;
}

function sharedStage(root, base, reserved) {
  if (!reserved) return base;
  const shown = SHARED.reduce((sum, s) => sum + root.querySelector(s).offsetHeight, 0);
  return base + Math.max(0, Math.floor(reserved - shown));
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

