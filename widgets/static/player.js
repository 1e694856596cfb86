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
// Hooks for tests and styles: the root `.tp-root` carries `data-frame` and
// `data-phase`; the current record has class `tp-current`; `.tp-sentence`,
// `.tp-title` and `.tp-gradients` hold the texts.

const FLAG_TEXT = [["variable", "variable"], ["watched", "watched"], ["constant", "constant"],
  ["source", "source"], ["target", "target"], ["integer", "integer"],
  ["unconnected", "unconnected"], ["stopped", "stopped"]];
const LEGEND = [
  ["tp-f-variable", "watched variable"], ["tp-f-watched", "watched tensor"],
  ["tp-f-constant", "constant (not watched)"], ["tp-f-source", "source"],
  ["tp-f-target", "target"], ["tp-f-integer", "integer tensor (no gradient)"],
  ["tp-f-unconnected", "unconnected source (gradient None)"],
  ["tp-f-stopped", "stopped gradient"], ["tp-current", "current record"],
  ["tp-flow", "cotangent flowing back"]];
const SPEEDS = [0.25, 0.5, 1, 2, 4];
const BOX_HEIGHT = 56;
const OP_RADIUS = 26;
let playerCount = 0;

function esc(text) {
  return String(text === null || text === undefined ? "" : text)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function clip(text, limit) {
  text = text === null || text === undefined ? "" : String(text);
  return text.length <= limit ? text : text.slice(0, Math.max(limit - 1, 1)) + "…";
}

function shapeText(shape) {
  return "(" + shape.join(", ") + (shape.length === 1 ? "," : "") + ")";
}

// Which nodes and edges are done, pending, current, lit: mirrors frame_state in svg.py.
function frameState(data, k) {
  const frame = data.frames[k];
  const done = frame.done_ops;
  const order = {};
  for (const n of data.nodes) if (n.type === "op") order[n.id] = n.order;
  const producer = {};
  for (const e of data.edges) if (e.kind === "out") producer[e.to] = order[e.op];
  const receiving = new Set(frame.contributions.filter((c) => c.value !== null).map((c) => c.node));
  const highlighted = new Set(frame.nodes);
  const nodes = {};
  for (const n of data.nodes) {
    const step = n.id in order ? order[n.id] : (n.id in producer ? producer[n.id] : -1);
    const classes = [step >= done ? "tp-pending" : "tp-done"];
    if (n.id === frame.op) classes.push("tp-current");
    if (highlighted.has(n.id)) classes.push("tp-hl");
    if (receiving.has(n.id)) classes.push("tp-receiving");
    nodes[n.id] = classes;
  }
  const lit = new Set(frame.edges);
  const edges = {};
  for (const e of data.edges) {
    const classes = [order[e.op] >= done ? "tp-pending" : "tp-done"];
    if (lit.has(e.id)) classes.push(frame.phase === "forward" ? "tp-active" : "tp-flow");
    edges[e.id] = classes;
  }
  return { nodes, edges };
}

function tensorMarkup(n, box) {
  const w = box.w, h = BOX_HEIGHT;
  const tags = FLAG_TEXT.filter(([flag]) => n.flags.includes(flag)).map(([, t]) => t).join(" · ");
  const flags = n.flags.map((f) => "tp-f-" + f).join(" ");
  return `<g class="tp-node tp-tensor ${flags}" data-id="${n.id}" transform="translate(${box.x},${box.y})">` +
    `<title>${esc(n.name)}: ${esc(shapeText(n.shape))} ${esc(n.dtype)}${n.preview ? " = " + esc(n.preview) : ""}</title>` +
    `<rect class="tp-box" x="${-w / 2}" y="${-h / 2}" width="${w}" height="${h}" rx="8"/>` +
    `<text class="tp-tags" y="${-h / 2 - 5}">${esc(tags)}</text>` +
    `<text class="tp-name" y="-9">${esc(clip(n.name, 16))}</text>` +
    `<text class="tp-meta" y="6">${esc(clip(shapeText(n.shape) + " " + n.dtype, 22))}</text>` +
    `<text class="tp-value" y="21">${esc(clip(n.preview || "", 20))}</text>` +
    `<text class="tp-grad" y="${h / 2 + 15}"></text></g>`;
}

function opMarkup(n, box, group) {
  const classes = ["tp-node", "tp-op"].concat(n.flags.map((f) => "tp-f-" + f));
  if (group !== null) classes.push("tp-group-" + (group % 7));
  const tapes = Array.from(new Set(n.tapes)).sort().join(", ");
  return `<g class="${classes.join(" ")}" data-id="${n.id}" transform="translate(${box.x},${box.y})">` +
    `<title>${esc(n.op_type)}: ${esc(n.label)} (tape ${tapes})${n.doc ? " — " + esc(n.doc) : ""}</title>` +
    `<circle class="tp-circle" r="${OP_RADIUS}"/>` +
    `<text class="tp-optype" y="4">${esc(clip(n.op_type, 11))}</text>` +
    `<text class="tp-label" y="${OP_RADIUS + 14}">${esc(clip(n.label, 16))}</text>` +
    `<text class="tp-tags" y="${-OP_RADIUS - 5}">${n.flags.includes("stopped") ? "stopped" : ""}</text></g>`;
}

// The whole graph as SVG markup, drawn once; frames only change classes and texts.
function svgMarkup(data, uid) {
  const lay = data.layout;
  const groups = {};
  (data.tape_groups || []).forEach((g, i) => { groups[g] = i; });
  const multi = (data.tape_groups || []).length > 1;
  const parts = [`<svg class="tp-svg" viewBox="0 0 ${lay.width} ${lay.height}" ` +
    `data-width="${lay.width}" role="img" aria-label="tape graph">`,
    `<defs><marker id="${uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" ` +
    `markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path class="tp-arrow" d="M0,0 L10,5 L0,10 z"/></marker></defs>`,
    `<g class="tp-edges">`];
  for (const e of data.edges) {
    parts.push(`<path class="tp-edge tp-edge-${e.kind}" data-id="${e.id}" d="${lay.edges[e.id]}" ` +
      `marker-end="url(#${uid}-arrow)"/>`);
  }
  parts.push(`</g><g class="tp-nodes">`);
  for (const n of data.nodes) {
    const box = lay.nodes[n.id];
    parts.push(n.type === "tensor" ? tensorMarkup(n, box)
      : opMarkup(n, box, multi ? (groups[n.group] || 0) : null));
  }
  parts.push(`</g></svg>`);
  return parts.join("");
}

function legendMarkup(data) {
  const items = LEGEND.map(([cls, text]) =>
    `<span class="tp-legend-item"><span class="tp-swatch ${cls}"></span>${esc(text)}</span>`);
  const groups = data.tape_groups || [];
  if (groups.length > 1) {
    groups.forEach((g, i) => {
      const names = g.split("+").map((t) => data.tapes[Number(t)].name).join(" + ");
      items.push(`<span class="tp-legend-item"><span class="tp-swatch tp-op-swatch tp-group-${i % 7}">` +
        `</span>recorded by ${esc(names)}</span>`);
    });
  }
  return items.join("");
}

function valueText(v) {
  if (v === null || v === undefined) return "None";
  return v.preview === null ? "(shape " + shapeText(v.shape) + ")" : v.preview;
}

function detailsMarkup(frame) {
  const rows = [];
  if (frame.phase === "forward" && frame.outputs) {
    rows.push(["computes", frame.outputs.map((o) => `${o.name} = ${o.value === null ? "…" : o.value}`).join(", ")]);
  }
  if (frame.cotangents.length) {
    rows.push([frame.phase === "seed" ? "seed" : "cotangent in",
      frame.cotangents.map((c) => `${c.name}: ${valueText(c.value)}`).join(", ")]);
  }
  if (frame.vjp) rows.push(["VJP of " + frame.vjp.op_type, frame.vjp.doc || "(no doc line)"]);
  if (frame.contributions.length) {
    rows.push(["contributions", frame.contributions.map((c) =>
      `${c.name} += ${c.value === null ? "nothing" : valueText(c.value)}`).join(", ")]);
  }
  if (frame.totals.length) {
    rows.push(["totals", frame.totals.map((t) => `${t.name} = ${valueText(t.value)}`).join(", ")]);
  }
  return rows.map(([k, v]) => `<div class="tp-row"><span class="tp-key">${esc(k)}</span>` +
    `<span class="tp-val">${esc(v)}</span></div>`).join("");
}

function gradientsMarkup(data, frame) {
  const result = data.frames[data.frames.length - 1];
  const isResult = frame.phase === "result";
  return result.gradients.map((g) => {
    const known = isResult ? g.value : (frame.grads[g.node] === undefined ? undefined : { preview: frame.grads[g.node] });
    const text = known === undefined ? "…" : valueText(known);
    const cls = known === null ? "tp-none" : (known === undefined ? "tp-unknown" : "tp-known");
    return `<span class="tp-gradient ${cls}" data-node="${g.node}">grad ${esc(g.name)} = ${esc(text)}</span>`;
  }).join("");
}

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

  const count = () => (data && data.frames ? data.frames.length : 0);
  const scale = () => (model.get("classroom") ? 1.8 : 1.1);
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
      `<button type="button" class="tp-btn tp-play" title="Play or pause (space)">▶ Play</button>` +
      `<button type="button" class="tp-btn tp-fwd" title="Step forward (→)">▶</button>` +
      `<button type="button" class="tp-btn tp-last" title="Last frame (End)">▶|</button>` +
      `<input type="range" class="tp-scrub" min="0" max="${count() - 1}" step="1" aria-label="frame">` +
      `<span class="tp-counter"></span>` +
      `<label class="tp-speed-label">speed <select class="tp-speed">${speedOptions}</select></label>` +
      `<label class="tp-classroom-label"><input type="checkbox" class="tp-classroom-box"> classroom</label>` +
      `</div>` +
      `<div class="tp-title"></div>` +
      `<div class="tp-stage">${svgMarkup(data, uid)}</div>` +
      `<div class="tp-sentence" aria-live="polite"></div>` +
      `<div class="tp-gradients"></div>` +
      `<div class="tp-details"></div>` +
      `<div class="tp-legend">${legendMarkup(data)}</div>`;
    nodeEls = {};
    edgeEls = {};
    root.querySelectorAll(".tp-node").forEach((g) => { nodeEls[g.dataset.id] = g; });
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
    show(frame, false);
    applyOptions();
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
    for (const [id, g] of Object.entries(nodeEls)) {
      g.classList.remove("tp-pending", "tp-done", "tp-current", "tp-hl", "tp-receiving");
      g.classList.add(...state.nodes[id]);
      const grad = g.querySelector(".tp-grad");
      if (grad) grad.textContent = f.grads[id] ? clip("g = " + f.grads[id], 20) : "";
    }
    for (const [id, p] of Object.entries(edgeEls)) {
      p.classList.remove("tp-pending", "tp-done", "tp-active", "tp-flow");
      p.classList.add(...state.edges[id]);
    }
    root.dataset.frame = String(frame);
    root.dataset.phase = f.phase;
    root.querySelector(".tp-title").textContent = f.title;
    root.querySelector(".tp-sentence").textContent = f.sentence;
    root.querySelector(".tp-details").innerHTML = detailsMarkup(f);
    root.querySelector(".tp-gradients").innerHTML = gradientsMarkup(data, f);
    root.querySelector(".tp-counter").textContent = `frame ${frame + 1} / ${count()} · ${f.phase}`;
    root.querySelector(".tp-scrub").value = String(frame);
    follow(f.op || f.nodes[0]);
    if (syncNow) sync();
  }

  // Scrolls the stage sideways so that node `id` is in view (wide graphs).
  function follow(id) {
    const stage = root.querySelector(".tp-stage");
    const box = id && data.layout.nodes[id];
    if (!box || !stage.clientWidth) return;
    const x = box.x * scale();
    if (x < stage.scrollLeft + 60 || x > stage.scrollLeft + stage.clientWidth - 60) {
      stage.scrollLeft = Math.max(0, x - stage.clientWidth / 2);
    }
  }

  function applyOptions() {
    if (!count()) return;
    const playing = !!model.get("playing");
    const classroom = !!model.get("classroom");
    root.classList.toggle("tp-classroom", classroom);
    // A fixed scale, so labels stay readable however wide the graph is (the stage
    // scrolls and follows the current record); classroom mode draws larger.
    root.querySelector(".tp-svg").style.width = `${data.layout.width * scale()}px`;
    root.classList.toggle("tp-playing", playing);
    root.querySelector(".tp-classroom-box").checked = !!model.get("classroom");
    const play = root.querySelector(".tp-play");
    play.textContent = playing ? "⏸ Pause" : "▶ Play";
    play.setAttribute("aria-pressed", playing ? "true" : "false");
    const speed = Number(model.get("speed")) || 1;
    const select = root.querySelector(".tp-speed");
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
    show(frame + 1, false);
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
  const onOptions = () => {
    applyOptions();
    follow(data.frames[frame].op || data.frames[frame].nodes[0]);
    if (timer !== null) { stopTimer(); schedule(); }
  };
  model.on("change:model", onModel);
  model.on("change:frame", onFrame);
  model.on("change:playing", onPlaying);
  model.on("change:speed", onOptions);
  model.on("change:classroom", onOptions);

  root.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT") return;   // the scrubber and menus keep their keys
    if (tag === "BUTTON" && (ev.key === " " || ev.key === "Enter")) return;  // a focused button clicks
    if (ev.key === " " || ev.key === "Spacebar") togglePlay();
    else if (ev.key === "ArrowRight") { pause(); show(frame + 1, true); }
    else if (ev.key === "ArrowLeft") { pause(); show(frame - 1, true); }
    else if (ev.key === "Home") { pause(); show(0, true); }
    else if (ev.key === "End") { pause(); show(count() - 1, true); }
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
    model.off("change:classroom", onOptions);
  };
}

export default { render };
