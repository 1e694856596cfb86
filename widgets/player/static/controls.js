// The tape player's controls (part 6 of the module: after health.js, before
// player.js; see html_export.JS_PARTS): the toolbar's markup, and what each
// button, the scrubber, the menus and each key do. Every action is a call
// into the player (`p`, given by player.js's render): these functions keep
// no state of their own.
//
// Keys: space plays or pauses; arrows step; Home/End go to the first and last
// frame; + - 0 zoom and fit; shift+arrows pan. After a click the focus goes
// back to the player, so space means Play again.

// One row of buttons: steps, play, the scrubber, counter, speed, classroom, zoom.
function toolbarMarkup(frames) {
  const speedOptions = SPEEDS.map((s) => `<option value="${s}">${s}×</option>`).join("");
  return `<div class="tp-toolbar">` +
    `<button type="button" class="tp-btn tp-first" title="First frame (Home)">|◀</button>` +
    `<button type="button" class="tp-btn tp-back" title="Step back (←)">◀</button>` +
    `<button type="button" class="tp-btn tp-play" title="Play or pause (space)"><span class="tp-icon tp-icon-play" aria-hidden="true"></span> Play</button>` +
    `<button type="button" class="tp-btn tp-fwd" title="Step forward (→)">▶</button>` +
    `<button type="button" class="tp-btn tp-last" title="Last frame (End)">▶|</button>` +
    `<input type="range" class="tp-scrub" min="0" max="${frames - 1}" step="1" aria-label="frame">` +
    `<span class="tp-counter"></span>` +
    `<select class="tp-speed" title="speed (frames per second)" aria-label="speed">${speedOptions}</select>` +
    `<label class="tp-classroom-label"><input type="checkbox" class="tp-classroom-box"> classroom</label>` +
    `<span class="tp-zoom-group"><button type="button" class="tp-btn tp-zoom-out" title="Zoom out (-)">−</button>` +
    `<button type="button" class="tp-btn tp-zoom-in" title="Zoom in (+)">+</button>` +
    `<button type="button" class="tp-btn tp-fit" title="Fit the graph to the view (0)">Fit</button></span>` +
    `</div>`;
}

// Binds the toolbar and the tools row of one player. `p` gives: frame(),
// count(), show(k, sync), pause(), togglePlay(), viewport(), groups(),
// found(id), lost() (the first lost gradient or null), set(name, value)
// (a synced option: "speed", "classroom").
function bindControls(root, data, p) {
  const q = (sel) => root.querySelector(sel);
  const button = (sel, action) => q(sel).addEventListener("click", (ev) => {
    action();
    if (ev.detail > 0) root.focus({ preventScroll: true });
  });
  const say = (text) => { q(".tp-debug").textContent = text; };
  const step = (k) => { p.pause(); p.show(k, true); };
  button(".tp-first", () => step(0));
  button(".tp-back", () => step(p.frame() - 1));
  button(".tp-fwd", () => step(p.frame() + 1));
  button(".tp-last", () => step(p.count() - 1));
  button(".tp-play", () => p.togglePlay());
  button(".tp-zoom-in", () => p.viewport().zoomAt(1.4));
  button(".tp-zoom-out", () => p.viewport().zoomAt(1 / 1.4));
  button(".tp-fit", () => p.viewport().fit());
  const search = q(".tp-search");
  search.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    ev.preventDefault();
    const hit = p.groups().find(search.value);
    say(hit ? "" : `nothing named “${search.value}”`);
  });
  if (q(".tp-collapse-all")) {
    button(".tp-collapse-all", () => p.groups().setAll(false));
    button(".tp-expand-all", () => p.groups().setAll(true));
  }
  button(".tp-nan", () => {
    const k = p.groups().firstNonfinite();
    if (k === null) { say("no NaN or Inf in this replay"); return; }
    p.pause();
    const f = data.frames[k];
    p.groups().expandFor(f.op || f.nodes[0]);
    p.show(k, true);
    const made = healthRows(data).find((r) => rowKinds(r)[0] === "NaN made");
    say(`first NaN/Inf: ${f.title}` + (made ? ` (${made.scope}: ${made.flags[0].reason})` : ""));
  });
  button(".tp-lost", () => {
    const lost = (data.debug && data.debug.lost) || [];
    if (!lost.length) { say("every source got a gradient"); return; }
    const l = lost[0];
    p.groups().expandFor(l.node);
    p.found(l.node);
    root.dataset.found = l.node;
    say(l.message);
  });
  q(".tp-scrub").addEventListener("input", (ev) => step(ev.target.value));
  q(".tp-speed").addEventListener("change", (ev) => p.set("speed", Number(ev.target.value)));
  q(".tp-classroom-box").addEventListener("change", (ev) => p.set("classroom", ev.target.checked));
}

// The player's keys (bound once per player: the root outlives a new model).
function bindKeys(root, p) {
  root.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT") return;   // the scrubber and menus keep their keys
    if (tag === "BUTTON" && (ev.key === " " || ev.key === "Enter")) return;  // a focused button clicks
    if (!p.count()) return;
    const step = (k) => { p.pause(); p.show(k, true); };
    if (ev.key === " " || ev.key === "Spacebar") p.togglePlay();
    else if (ev.shiftKey && ev.key.startsWith("Arrow")) {
      const by = 80;
      p.viewport().panBy({ ArrowLeft: by, ArrowRight: -by }[ev.key] || 0,
        { ArrowUp: by, ArrowDown: -by }[ev.key] || 0);
    } else if (ev.key === "ArrowRight") step(p.frame() + 1);
    else if (ev.key === "ArrowLeft") step(p.frame() - 1);
    else if (ev.key === "Home") step(0);
    else if (ev.key === "End") step(p.count() - 1);
    else if (ev.key === "+" || ev.key === "=") p.viewport().zoomAt(1.4);
    else if (ev.key === "-" || ev.key === "_") p.viewport().zoomAt(1 / 1.4);
    else if (ev.key === "0") p.viewport().fit();
    else return;
    ev.preventDefault();
  });
}
