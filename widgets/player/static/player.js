// The tape player's view: draws a replay (widgets/player/replay.py) as an SVG graph
// and animates its frames in the browser, with no kernel round trip per frame.
//
// An anywidget ES module: render({ model, el }) reads the synced traitlets
// `model` (the replay JSON, or html_export's packed page model), `frame`,
// `playing`, `speed` (frames per second) and `classroom`. While playing, the
// frame advances locally and is synced back to Python at most once a second,
// and again whenever playback stops. html_export.py inlines this file into a
// self-contained page with a stand-in model, so it must not use `import`, and
// its last line must stay the export.
//
// Overview first: a long tape opens as its scope tree's boxes (tree.js),
// fitted to a stage whose height follows the drawing and the window (stage.js);
// only what is in view is drawn (scene.js). Playing follows the current record at
// a readable zoom, with its neighbours around it.
//
// Hooks for tests and styles: the root `.tp-root` carries `data-frame`,
// `data-phase`, `data-groups` (boxes), `data-collapsed` (closed boxes) and
// `data-found`; the stage `data-scale` (pixels per unit); `root.tp` gives
// the tree, the view and the health panel; the current record has class
// `tp-current`. The toolbar and the keys are controls.js's.

function render({ model, el }) {
  const uid = "tp" + (++playerCount) + "-" + Math.random().toString(36).slice(2, 8);
  const root = document.createElement("div");
  root.className = "tp-root";
  root.tabIndex = 0;
  root.setAttribute("role", "application");
  root.setAttribute("aria-label", "tape player: space plays or pauses, arrows step");
  el.appendChild(root);

  let data = null, frame = 0, timer = null, lastSync = 0;
  let tree = null, scene = null, viewport = null, groups = null, state = null, gradOf = null;
  let health = null, stage = null;
  let nodeGroup = new Map();     // op id -> its tape-group colour (nested tapes)

  const count = () => (data && data.frames ? data.frames.length : 0);
  const classroom = () => !!model.get("classroom");
  const readable = () => readableScale(classroom());
  const limits = () => LIMITS[classroom() ? "classroom" : "normal"];
  const clamp = (k) => Math.max(0, Math.min(count() - 1, Number(k) || 0));
  const q = (sel) => root.querySelector(sel);

  function build() {
    data = unpackModel(model.get("model"));
    if (!count()) {
      root.innerHTML = `<div class="tp-empty">No replay to show.</div>`;
      return;
    }
    root.innerHTML = toolbarMarkup(count()) + toolsMarkup(data) +
      `<div class="tp-title"></div>` +
      `<div class="tp-main"><div class="tp-stage"><svg class="tp-svg" role="img" aria-label="tape graph">` +
      `<defs><marker id="${uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" ` +
      `markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path class="tp-arrow" d="M0,0 L10,5 L0,10 z"/></marker></defs>` +
      `</svg>${minimapMarkup()}</div>${normsMarkup(data)}</div>` +
      `<div class="tp-sentence" aria-live="polite"></div>` +
      `<div class="tp-foot"><div class="tp-gradients"></div><div class="tp-details"></div>` +
      `<div class="tp-legend">${legendMarkup(data)}</div></div>`;
    const multi = (data.tape_groups || []).length > 1;
    nodeGroup = new Map();
    if (multi) data.tape_groups.forEach((g, i) => nodeGroup.set(g, i));
    tree = createTree(data);
    state = createFrameState(data);
    gradOf = gradHistory(data);
    state.set(clamp(model.get("frame")));
    scene = createScene(q(".tp-svg"), data, tree, {
      markup, style, isDone: (id) => state.isDone(id.split("@")[0]),
      current: () => { const f = state.frame(); return f && f.op ? tree.rep(f.op) : null; } });
    stage = createStageLayout(root, data, { tree, scene, viewport: () => viewport, groups: () => groups,
      health: () => health, frame: () => frame, classroom });
    const { relayout, land, found, reveal } = stage;
    viewport = createViewport(q(".tp-stage"), q(".tp-svg"), () => tree.size(),
      { onView: (v) => scene.draw(v), maxScale: readable,
        occupied: (x0, y0, x1, y1) => tree.within(x0, y0, x1, y1).items.some(([, r]) => !r.open) });
    groups = createGroups(root, data, tree, { relayout: (anchor) => relayout(false, anchor), found, land });
    health = mountHealth(root, data, { reveal });
    root.tp = { tree, scene, viewport: () => viewport.view(), rects: () => tree.rects(), health };
    bindControls(root, data, controls);
    frame = clamp(model.get("frame"));
    applyOptions();
    show(frame, false);
    relayout(true);          // again, now that the title and gradients have their text
  }

  // ---- drawing one thing (scene.js asks) ---------------------------------------
  function markup(e) {
    const lim = limits();
    if (e.kind === "frame") return frameMarkup(tree.boxes[tree.boxIndex(e.id)], e.r, lim);
    if (e.kind === "cover") {
      const k = tree.boxIndex(e.id);
      return coverMarkup(tree.boxes[k], e.r, coverClasses(k), lim, groups ? groups.normWidth(k, frame, e.r.w) : 0,
        groups ? groups.normBad(k, frame) : false, groups ? groups.badge(k) : null);
    }
    if (e.kind === "edge") {
      const kind = e.s.edges[0].kind;
      return `<path class="tp-edge tp-edge-${kind} ${state.edge(e.s.edges).join(" ")}" data-id="${esc(e.s.edges.length === 1 ? e.s.edges[0].id : e.id)}" ` +
        `d="${tree.pathOf(e.s)}" marker-end="url(#${uid}-arrow)"/>`;
    }
    const n = tree.nodeById.get(e.id.split("@")[0]);
    const cls = state.node(n.id).join(" ");
    if (e.kind === "copy") return copyMarkup(n, e.id, e.r, cls, lim);
    if (n.type === "tensor") return tensorMarkup(n, e.r, cls, gradOf(n.id, frame), lim);
    return opMarkup(n, e.r, cls, nodeGroup.size > 1 ? (nodeGroup.get(n.group) || 0) : null, lim);
  }

  function coverClasses(k) {
    const b = tree.boxes[k], f = state.frame(), done = state.done(), id = "b" + k;
    const cls = [b.last < done ? "tp-done" : b.first >= done ? "tp-pending" : "tp-running"];
    if (f.op && tree.rep(f.op) === id) cls.push("tp-current");
    else if (f.nodes.some((n) => tree.rep(n) === id)) cls.push("tp-hl");
    return cls.join(" ");
  }

  // The current frame's classes on one live element (only changed ones are touched).
  const DYNAMIC = new Set(["tp-pending", "tp-done", "tp-running", "tp-current", "tp-hl", "tp-receiving",
    "tp-active", "tp-flow", ""]);
  function swap(el, dynamic) {
    const now = el.getAttribute("class");
    const cls = (now.split(" ").filter((c) => !DYNAMIC.has(c)).join(" ") + " " + dynamic).trim();
    if (now !== cls) el.setAttribute("class", cls);
  }
  function style(entry, el) {
    if (entry.kind === "edge") swap(el, state.edge(entry.s.edges).join(" "));
    else if (entry.kind === "cover") {
      const k = tree.boxIndex(entry.id);
      swap(el, coverClasses(k));
      const bar = el.querySelector(".tp-group-norm");
      if (bar) {
        bar.setAttribute("width", groups.normWidth(k, frame, entry.r.w));
        bar.classList.toggle("tp-norm-nonfinite", groups.normBad(k, frame));
      }
    } else if (entry.kind === "node" || entry.kind === "copy") {
      const id = entry.id.split("@")[0];
      swap(el, state.node(id).join(" "));
      const grad = entry.kind === "node" ? el.querySelector(".tp-grad") : null;
      if (grad) {
        const g = gradOf(id, frame);
        const text = g ? clipStart("g = " + g, limits().grad) : "";
        if (grad.textContent !== text) grad.textContent = text;
      }
    }
  }

  // What the toolbar, the tools and the keys may do (controls.js).
  const controls = {
    frame: () => frame, count, show, pause, togglePlay, found: (id) => stage.found(id),
    viewport: () => viewport, groups: () => groups,
    set: (name, value) => { model.set(name, value); model.save_changes(); },
  };

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
    state.set(frame);
    scene.restyle();
    root.dataset.frame = String(frame);
    root.dataset.phase = f.phase;
    const title = q(".tp-title");
    title.textContent = titleText(f, classroom() ? CLASSROOM_GRADIENTS : 2);
    title.title = f.title;
    q(".tp-sentence").textContent = f.sentence;
    stage.shown();                 // (classroom: the stage takes the sentence's spare lines)
    q(".tp-details").innerHTML = detailsMarkup(f);
    q(".tp-gradients").innerHTML = gradientsMarkup(data, f, (id) => gradOf(id, frame), classroom() ? CLASSROOM_GRADIENTS : 6);
    showNorms(root, data, frame);
    q(".tp-counter").textContent = `${frame + 1} / ${count()}`;
    q(".tp-counter").title = `frame ${frame + 1} of ${count()} · ${f.phase}`;
    q(".tp-scrub").value = String(frame);
    stage.follow();
    if (syncNow) sync();
  }

  function applyOptions() {
    if (!count()) return;
    const playing = !!model.get("playing");
    root.classList.toggle("tp-classroom", classroom());
    root.classList.toggle("tp-playing", playing);
    q(".tp-classroom-box").checked = classroom();
    const play = q(".tp-play");
    // The icons are drawn in CSS: U+23F8 (pause) is missing from common fonts.
    play.innerHTML = playing ? `<span class="tp-icon tp-icon-pause" aria-hidden="true"></span> Pause`
      : `<span class="tp-icon tp-icon-play" aria-hidden="true"></span> Play`;
    play.setAttribute("aria-pressed", playing ? "true" : "false");
    const speed = Number(model.get("speed")) || 1;
    const select = q(".tp-speed");
    if (!SPEEDS.includes(speed) && !Array.from(select.options).some((o) => Number(o.value) === speed)) {
      select.insertAdjacentHTML("beforeend", `<option value="${speed}">${speed}×</option>`);
    }
    select.value = String(speed);
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
    // Playing, a closed box is one step: its other records are skipped.
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
    if (model.get("playing")) { pause(); return; }
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
  const onSpeed = () => {
    applyOptions();
    if (timer !== null) { stopTimer(); schedule(); }
  };
  const onClassroom = () => {
    if (!count()) return;
    applyOptions();
    stage.relayout(true);
    show(frame, false);
  };
  let lastSize = "";
  const onResize = () => {
    const size = `${root.clientWidth}x${window.innerHeight}`;
    if (count() && root.clientWidth && size !== lastSize) { lastSize = size; stage.relayout(true); }
  };
  window.addEventListener("resize", onResize);
  // A notebook renders the view before it is attached (no size yet): lay it out
  // again once it has a width, and whenever that width changes.
  const sizes = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(onResize);
  if (sizes) sizes.observe(root);
  model.on("change:model", onModel);
  model.on("change:frame", onFrame);
  model.on("change:playing", onPlaying);
  model.on("change:speed", onSpeed);
  model.on("change:classroom", onClassroom);

  bindKeys(root, controls);

  build();
  schedule();

  return () => {
    stopTimer();
    model.off("change:model", onModel);
    model.off("change:frame", onFrame);
    model.off("change:playing", onPlaying);
    model.off("change:speed", onSpeed);
    model.off("change:classroom", onClassroom);
    window.removeEventListener("resize", onResize);
    if (sizes) sizes.disconnect();
  };
}

// html_export's page model back into the replay's shape: edges from [from, to,
// slot], frames' left-out defaults, names from the nodes, each VJP from its op,
// titles and sentences left out (fillWords).
function unpackModel(data) {
  if (!data || !data.packed) return data ? fillWords(data) : { frames: [], nodes: [], edges: [], layout: { tree: [] } };
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  for (const n of data.nodes) if (n.type === "op" && n.doc === undefined) n.doc = data.docs[n.op_type] || "";
  data.edges = data.edges.map(([from, to, slot], i) => {
    const out = from.startsWith("op");
    return { id: "e" + i, from, to, kind: out ? "out" : "in", slot, op: out ? from : to, tensor: out ? to : from };
  });
  const named = (list) => (list || []).map((c) => ({ ...c, name: byId.get(c.node).name }));
  const frame = (f, k) => {
    const op = f.op ? byId.get(f.op) : null;
    return { op: null, record: null, tape: null, nodes: [], edges: [], vjp: null, gradients: [],
      grads_new: {}, ...f, index: k,
      cotangents: named(f.cotangents), contributions: named(f.contributions), totals: named(f.totals),
      ...(f.outputs ? { outputs: named(f.outputs) } : {}),
      ...(f.gradients ? { gradients: named(f.gradients) } : {}),
      ...(f.phase === "backward" && op ? { vjp: { op_type: op.op_type, doc: op.doc, rule: op.rule,
        differentiable: op.differentiable } } : {}) };
  };
  data.frames = Array.isArray(data.frames) ? data.frames.map(frame) : framesFromColumns(data, byId, frame);
  data.packed = 0;
  return fillWords(data);          // words.js: the words a page made from a tape left out
}

// html_export's `_frame_columns`: forward frames from the op nodes and their edges, backward
// steps from rows [op rank, record, cotangents by output slot, contributions by input slot,
// totals as [tensor id, value, ...]]; a value is null, a preview (its node's shape) or
// {preview, shape}. Each frame comes out as Python's Frames writes it.
function framesFromColumns(data, byId, frame) {
  const cols = data.frames, ops = [], ins = new Map(), outs = new Map();
  for (const n of data.nodes) if (n.type === "op") ops[+n.id.slice(2)] = n;
  for (const e of data.edges) {
    const m = e.kind === "in" ? ins : outs;
    if (!m.has(e.op)) m.set(e.op, []);
    m.get(e.op)[e.slot] = e;
  }
  const value = (v) => (v === null || typeof v !== "string" ? v : { preview: v });
  const out = [], n = cols.forward;
  for (let k = 0; k < n; k++) {
    const op = ops[k], i = ins.get(op.id) || [], o = outs.get(op.id) || [];
    out.push({ phase: "forward", op: op.id, record: op.records[0][1], tape: op.records[0][0],
      done_ops: k + 1, nodes: [op.id, ...o.map((e) => e.tensor)], edges: [...i, ...o].map((e) => e.id),
      vjp: null, cotangents: [], contributions: [], totals: [], gradients: [], grads_new: {},
      outputs: o.map((e) => ({ node: e.tensor, name: byId.get(e.tensor).name, value: byId.get(e.tensor).preview })) });
  }
  out.push(frame(cols.seed, n));
  for (const [rank, record, cots, contribs, totals] of cols.backward) {
    const op = ops[rank], i = ins.get(op.id) || [], o = outs.get(op.id) || [];
    const cotangents = cots.map((v, s) => ({ node: o[s].tensor, name: byId.get(o[s].tensor).name, value: value(v) }));
    const contributions = contribs.map((v, s) => ({ node: i[s].tensor, name: byId.get(i[s].tensor).name,
      value: value(v), slot: s, edge: i[s].id }));
    const sums = [], grads = {};
    for (let t = 0; t < totals.length; t += 2) {
      const node = "t" + totals[t], v = value(totals[t + 1]);
      sums.push({ node, name: byId.get(node).name, value: v });
      if (v !== null) grads[node] = v.preview;
    }
    const arriving = o.filter((e, s) => cots[s] !== null).map((e) => e.id);
    const sending = contributions.filter((c) => c.value !== null).map((c) => c.edge);
    out.push({ phase: "backward", op: op.id, record, tape: 0, done_ops: n,
      nodes: [op.id, ...contributions.filter((c) => c.value !== null).map((c) => c.node)],
      edges: [...arriving, ...sending], arriving, cotangents, contributions, totals: sums,
      vjp: { op_type: op.op_type, doc: op.doc, rule: op.rule, differentiable: op.differentiable },
      gradients: [], grads_new: grads, index: out.length });
  }
  out.push(frame(cols.result, out.length));
  out.forEach((f, k) => { f.index = k; });
  return out;
}

export default { render };
