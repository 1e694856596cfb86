// The tape player's view: draws a replay (widgets/replay.py) as an SVG graph
// and animates its frames in the browser, with no kernel round trip per frame.
//
// An anywidget ES module: render({ model, el }) reads the synced traitlets
// `model` (the replay JSON), `frame`, `playing`, `speed` (frames per second)
// and `classroom`. While playing, the frame advances locally and is synced back
// to Python at most once a second, and again whenever playback stops.
// html_export.py inlines this file into a self-contained page with a stand-in
// model, so it must not use `import`, and its last line must stay the export.
//
// Hooks for tests and styles: the root `.tp-root` carries `data-frame`,
// `data-phase`, `data-groups`, `data-collapsed` and `data-found`; the stage
// `data-scale` (pixels per unit); the current record has class `tp-current`;
// `.tp-sentence`, `.tp-title`, `.tp-gradients` and `.tp-debug` hold the texts.
//
// Part 4 of the module (graph.js, viewport.js, groups.js come first; see
// html_export.JS_PARTS). Keys: space, arrows, Home/End step; + - 0 zoom and
// fit; shift+arrows pan.

const READABLE = 16 / 11;   // pixels per unit at which the graph's smallest text is 16px

function render({ model, el }) {
  const uid = "tp" + (++playerCount) + "-" + Math.random().toString(36).slice(2, 8);
  const root = document.createElement("div");
  root.className = "tp-root";
  root.tabIndex = 0;
  root.setAttribute("role", "application");
  root.setAttribute("aria-label", "tape player: space plays or pauses, arrows step");
  el.appendChild(root);

  let data = null;
  let frame = 0;
  let timer = null;
  let lastSync = 0;
  let nodeEls = {};
  let edgeEls = {};
  let copyEls = {};      // node id -> its copies (widely read inputs, graph_layout.py)
  let viewport = null;
  let groups = null;
  let gradsAt = null;
  let shown = null;      // the classes and texts each element has now

  const count = () => (data && data.frames ? data.frames.length : 0);
  // Normal mode draws a lesson's graph at READABLE (its smallest SVG text, 11
  // units, is then 16px) and pans to follow the record; classroom mode fits the whole graph
  // into a stage sized so the toolbar, title and sentence stay on screen too.
  const scale = () => (model.get("classroom") ? 1.8 : READABLE);
  // A long tape (its scope groups open collapsed, as svg.py's COLLAPSE_ABOVE_OPS)
  // opens fitted as an overview in both modes.
  const overview = () => data.nodes.filter((n) => n.type === "op").length > 30;
  const home = () => (model.get("classroom") || overview() ? viewport.fit() : viewport.fit(READABLE));
  const clamp = (k) => Math.max(0, Math.min(count() - 1, Number(k) || 0));

  function build() {
    data = model.get("model") || { frames: [], nodes: [], edges: [], layout: {} };
    if (!count()) {
      root.innerHTML = `<div class="tp-empty">No replay to show.</div>`;
      return;
    }
    const speedOptions = SPEEDS.map((s) => `<option value="${s}">${s}×</option>`).join("");
    root.innerHTML =
      `<div class="tp-toolbar">` +
      `<button type="button" class="tp-btn tp-first" title="First frame (Home)">|◀</button>` +
      `<button type="button" class="tp-btn tp-back" title="Step back (←)">◀</button>` +
      `<button type="button" class="tp-btn tp-play" title="Play or pause (space)"><span class="tp-icon tp-icon-play" aria-hidden="true"></span> Play</button>` +
      `<button type="button" class="tp-btn tp-fwd" title="Step forward (→)">▶</button>` +
      `<button type="button" class="tp-btn tp-last" title="Last frame (End)">▶|</button>` +
      `<input type="range" class="tp-scrub" min="0" max="${count() - 1}" step="1" aria-label="frame">` +
      `<span class="tp-counter"></span>` +
      `<label class="tp-speed-label">speed <select class="tp-speed">${speedOptions}</select></label>` +
      `<label class="tp-classroom-label"><input type="checkbox" class="tp-classroom-box"> classroom</label>` +
      `<span class="tp-zoom-group"><button type="button" class="tp-btn tp-zoom-out" title="Zoom out (-)">−</button>` +
      `<button type="button" class="tp-btn tp-zoom-in" title="Zoom in (+)">+</button>` +
      `<button type="button" class="tp-btn tp-fit" title="Fit the graph to the view (0)">Fit</button></span>` +
      `</div>` + toolsMarkup(data) +
      `<div class="tp-title"></div>` +
      `<div class="tp-main"><div class="tp-stage">${svgMarkup(data, uid)}${minimapMarkup(data)}</div>` +
      `${normsMarkup(data)}</div>` +
      `<div class="tp-sentence" aria-live="polite"></div>` +
      `<div class="tp-gradients"></div>` +
      `<div class="tp-details"></div>` +
      `<div class="tp-legend">${legendMarkup(data)}</div>`;
    nodeEls = {};
    edgeEls = {};
    copyEls = {};
    root.querySelectorAll(".tp-node").forEach((g) => {
      const of = g.dataset.copyOf;
      if (of) (copyEls[of] = copyEls[of] || []).push(g);
      else nodeEls[g.dataset.id] = g;
    });
    gradsAt = gradTracker(data);
    shown = { nodes: {}, edges: {}, grads: {} };
    root.querySelectorAll(".tp-edge").forEach((p) => { edgeEls[p.dataset.id] = p; });
    const q = (sel) => root.querySelector(sel);
    // After a click the focus goes back to the root, so space means Play again.
    const button = (sel, action) => q(sel).addEventListener("click", (ev) => {
      action();
      if (ev.detail > 0) root.focus({ preventScroll: true });
    });
    button(".tp-first", () => { pause(); show(0, true); });
    button(".tp-back", () => { pause(); show(frame - 1, true); });
    button(".tp-fwd", () => { pause(); show(frame + 1, true); });
    button(".tp-last", () => { pause(); show(count() - 1, true); });
    button(".tp-play", () => togglePlay());
    button(".tp-zoom-in", () => viewport.zoomAt(1.4));
    button(".tp-zoom-out", () => viewport.zoomAt(1 / 1.4));
    button(".tp-fit", () => viewport.fit());
    viewport = createViewport(q(".tp-stage"), q(".tp-svg"), data.layout, { maxScale: scale });
    groups = createGroups(root, data, { reveal: (box) => viewport.reveal(box, scale()) });
    bindTools(q, button);
    q(".tp-scrub").addEventListener("input", (ev) => { pause(); show(ev.target.value, true); });
    q(".tp-speed").addEventListener("change", (ev) => {
      model.set("speed", Number(ev.target.value));
      model.save_changes();
    });
    q(".tp-classroom-box").addEventListener("change", (ev) => {
      model.set("classroom", ev.target.checked);
      model.save_changes();
    });
    frame = clamp(model.get("frame"));
    applyOptions();
    show(frame, false);
    relayout();          // again, now that the title and gradients have their text
  }

  // Search, collapse/expand, and the debugging jumps (groups.js does the work).
  function bindTools(q, button) {
    const search = q(".tp-search");
    search.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter") return;
      ev.preventDefault();
      const hit = groups.find(search.value);
      q(".tp-debug").textContent = hit ? "" : `nothing named “${search.value}”`;
    });
    if (q(".tp-collapse-all")) {
      button(".tp-collapse-all", () => groups.collapseAll(true));
      button(".tp-expand-all", () => groups.collapseAll(false));
    }
    button(".tp-nan", () => {
      const k = groups.firstNonfinite();
      if (k === null) { q(".tp-debug").textContent = "no NaN or Inf in this replay"; return; }
      pause();
      const f = data.frames[k];
      groups.expandFor(f.op || f.nodes[0]);
      show(k, true);
      q(".tp-debug").textContent = `first NaN/Inf: ${f.title}`;
    });
    button(".tp-lost", () => {
      const lost = (data.debug && data.debug.lost) || [];
      if (!lost.length) { q(".tp-debug").textContent = "every source got a gradient"; return; }
      const l = lost[0];
      groups.expandFor(l.node);
      viewport.reveal(data.layout.nodes[l.node], scale());
      root.querySelectorAll(".tp-found").forEach((el) => el.classList.remove("tp-found"));
      const el = root.querySelector(`.tp-node[data-id="${l.node}"]`);
      if (el) el.classList.add("tp-found");
      root.dataset.found = l.node;
      q(".tp-debug").textContent = l.message;
    });
  }

  function sync() {
    lastSync = Date.now();
    if (model.get("frame") !== frame) {
      model.set("frame", frame);
      model.save_changes();
    }
  }

  function show(k, syncNow) {
    if (!count()) return;
    frame = clamp(k);
    const f = data.frames[frame];
    const state = frameState(data, frame);
    const grads = gradsAt(frame);
    // Only elements whose classes or gradient text changed are touched (a long
    // tape has thousands of nodes; a frame changes a handful).
    for (const [id, g] of Object.entries(nodeEls)) {
      const cls = state.nodes[id].join(" ");
      if (shown.nodes[id] !== cls) {
        shown.nodes[id] = cls;
        for (const el of [g].concat(copyEls[id] || [])) {
          el.classList.remove("tp-pending", "tp-done", "tp-current", "tp-hl", "tp-receiving");
          el.classList.add(...state.nodes[id]);
        }
      }
      const text = grads[id] ? clip("g = " + grads[id], 20) : "";
      if (shown.grads[id] !== text) {
        shown.grads[id] = text;
        const grad = g.querySelector(".tp-grad");
        if (grad) grad.textContent = text;
      }
    }
    for (const [id, p] of Object.entries(edgeEls)) {
      const cls = state.edges[id].join(" ");
      if (shown.edges[id] === cls) continue;
      shown.edges[id] = cls;
      p.classList.remove("tp-pending", "tp-done", "tp-active", "tp-flow");
      p.classList.add(...state.edges[id]);
    }
    root.dataset.frame = String(frame);
    root.dataset.phase = f.phase;
    root.querySelector(".tp-title").textContent = f.title;
    root.querySelector(".tp-sentence").textContent = f.sentence;
    root.querySelector(".tp-details").innerHTML = detailsMarkup(f);
    root.querySelector(".tp-gradients").innerHTML = gradientsMarkup(data, f, grads);
    groups.show(f, frame);
    showNorms(root, data, frame);
    root.querySelector(".tp-counter").textContent = `frame ${frame + 1} / ${count()} · ${f.phase}`;
    root.querySelector(".tp-scrub").value = String(frame);
    follow(f.op || f.nodes[0]);
    if (syncNow) sync();
  }

  // Moves the view to node `id` when it is out of sight (the zoom stays).
  function follow(id) {
    if (viewport && id) viewport.follow(groups ? groups.boxOf(id) : data.layout.nodes[id]);
  }

  function applyOptions() {
    if (!count()) return;
    const playing = !!model.get("playing");
    const classroom = !!model.get("classroom");
    root.classList.toggle("tp-classroom", classroom);
    sizeStage(classroom);
    root.classList.toggle("tp-playing", playing);
    root.querySelector(".tp-classroom-box").checked = !!model.get("classroom");
    const play = root.querySelector(".tp-play");
    // The icons are drawn in CSS: U+23F8 (pause) is missing from common fonts.
    play.innerHTML = playing ? `<span class="tp-icon tp-icon-pause" aria-hidden="true"></span> Pause`
      : `<span class="tp-icon tp-icon-play" aria-hidden="true"></span> Play`;
    play.setAttribute("aria-pressed", playing ? "true" : "false");
    const speed = Number(model.get("speed")) || 1;
    const select = root.querySelector(".tp-speed");
    if (!SPEEDS.includes(speed) && !Array.from(select.options).some((o) => Number(o.value) === speed)) {
      select.insertAdjacentHTML("beforeend", `<option value="${speed}">${speed}×</option>`);
    }
    select.value = String(speed);
  }

  function sizeStage(classroom) {
    const stage = root.querySelector(".tp-stage");
    stage.style.height = `${Math.round(stageHeight(root, data, scale(), classroom))}px`;
  }

  function relayout() {
    sizeStage(!!model.get("classroom"));
    home();
    follow(data.frames[frame].op || data.frames[frame].nodes[0]);
  }

  function tick() {
    timer = null;
    if (!model.get("playing")) return;
    if (frame >= count() - 1) {
      model.set("playing", false);
      sync();
      model.save_changes();
      return;
    }
    // Playing, a collapsed group is one step: its other records are skipped.
    let k = frame + 1;
    const inGroup = groups.collapsedGroup(data.frames[frame]);
    while (inGroup && k < count() - 1 && groups.collapsedGroup(data.frames[k]) === inGroup) k++;
    show(k, false);
    if (Date.now() - lastSync >= 1000) sync();
    schedule();
  }

  function schedule() {
    if (timer === null && model.get("playing")) {
      const speed = Math.max(Number(model.get("speed")) || 1, 0.05);
      timer = setTimeout(() => window.requestAnimationFrame(tick), 1000 / speed);
    }
  }

  function stopTimer() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }

  function pause() {
    if (model.get("playing")) {
      model.set("playing", false);
      model.save_changes();
    }
  }

  function togglePlay() {
    if (model.get("playing")) {
      pause();
      return;
    }
    if (frame >= count() - 1) show(0, true);
    model.set("playing", true);
    model.save_changes();
  }

  const onModel = () => { stopTimer(); build(); schedule(); };
  const onFrame = () => { const k = clamp(model.get("frame")); if (k !== frame) show(k, false); };
  const onPlaying = () => {
    applyOptions();
    if (model.get("playing")) schedule();
    else { stopTimer(); sync(); }
  };
  const onOptions = (change) => {
    if (!count()) return;
    const before = root.querySelector(".tp-stage").style.height;
    applyOptions();
    const resized = root.querySelector(".tp-stage").style.height !== before;
    if (viewport && (resized || (change && change.classroom))) relayout();
    else follow(data.frames[frame].op || data.frames[frame].nodes[0]);
    if (timer !== null) { stopTimer(); schedule(); }
  };
  const onClassroom = () => onOptions({ classroom: true });
  const onResize = () => { if (model.get("classroom")) onOptions({ classroom: true }); };
  window.addEventListener("resize", onResize);
  // A notebook renders the view before it is attached (no size yet): lay it out
  // again once it has a width, and whenever that width changes.
  let lastWidth = 0;
  const sizes = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    const w = root.clientWidth;
    if (w && w !== lastWidth && count()) { lastWidth = w; applyOptions(); relayout(); }
  });
  if (sizes) sizes.observe(root);
  model.on("change:model", onModel);
  model.on("change:frame", onFrame);
  model.on("change:playing", onPlaying);
  model.on("change:speed", onOptions);
  model.on("change:classroom", onClassroom);

  root.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT") return;   // the scrubber and menus keep their keys
    if (tag === "BUTTON" && (ev.key === " " || ev.key === "Enter")) return;  // a focused button clicks
    if (ev.key === " " || ev.key === "Spacebar") togglePlay();
    else if (ev.shiftKey && ev.key.startsWith("Arrow")) {
      const step = 80;
      viewport.panBy({ ArrowLeft: step, ArrowRight: -step }[ev.key] || 0,
        { ArrowUp: step, ArrowDown: -step }[ev.key] || 0);
    } else if (ev.key === "ArrowRight") { pause(); show(frame + 1, true); }
    else if (ev.key === "ArrowLeft") { pause(); show(frame - 1, true); }
    else if (ev.key === "Home") { pause(); show(0, true); }
    else if (ev.key === "End") { pause(); show(count() - 1, true); }
    else if (ev.key === "+" || ev.key === "=") viewport.zoomAt(1.4);
    else if (ev.key === "-" || ev.key === "_") viewport.zoomAt(1 / 1.4);
    else if (ev.key === "0") viewport.fit();
    else return;
    ev.preventDefault();
  });

  build();
  schedule();

  return () => {
    stopTimer();
    model.off("change:model", onModel);
    model.off("change:frame", onFrame);
    model.off("change:playing", onPlaying);
    model.off("change:speed", onOptions);
    model.off("change:classroom", onClassroom);
    window.removeEventListener("resize", onResize);
    if (sizes) sizes.disconnect();
  };
}

export default { render };
