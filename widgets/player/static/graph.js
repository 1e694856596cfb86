// Markup of the tape player (part 1 of the module; html_export.player_js joins
// the parts listed in html_export.JS_PARTS into one ES module, in that order).
// Pure functions from the replay JSON to SVG/HTML strings and CSS classes.

const FLAG_TEXT = [["variable", "variable"], ["watched", "watched"], ["constant", "constant"],
  ["source", "source"], ["target", "target"], ["integer", "integer"],
  ["unconnected", "unconnected"], ["stopped", "stopped"]];
const LEGEND = [
  ["tp-f-variable", "watched variable", "variable"], ["tp-f-watched", "watched tensor", "watched"],
  ["tp-f-constant", "constant (not watched)", "constant"], ["tp-f-source", "source", "source"],
  ["tp-f-target", "target", "target"], ["tp-f-integer", "integer tensor (no gradient)", "integer"],
  ["tp-f-unconnected", "unconnected source (gradient None)", "unconnected"],
  ["tp-f-stopped", "stopped gradient", "stopped"], ["tp-current", "current record", null],
  ["tp-flow", "cotangent flowing back", null]];
const SPEEDS = [0.25, 0.5, 1, 2, 4];
const BOX_HEIGHT = 56;
const OP_RADIUS = 26;
// Characters that fit each text of a node; classroom type is larger, so fewer fit.
const LIMITS = { normal: { name: 16, meta: 22, value: 20, grad: 20, optype: 11, label: 16, copy: 10, box: 30 },
  classroom: { name: 13, meta: 17, value: 15, grad: 15, optype: 8, label: 11, copy: 7, box: 24 } };
let playerCount = 0;

function esc(text) {
  return String(text === null || text === undefined ? "" : text)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

// A name that does not fit keeps its distinguishing end: "…/gru_cell/kernel", "…step_042".
function clip(text, limit) {
  text = text === null || text === undefined ? "" : String(text);
  return text.length <= limit ? text : "…" + text.slice(text.length - Math.max(limit - 1, 1));
}

// A value keeps its start: "[0.25, 1.0, 2…".
function clipStart(text, limit) {
  text = text === null || text === undefined ? "" : String(text);
  return text.length <= limit ? text : text.slice(0, Math.max(limit - 1, 1)) + "…";
}

// A formula keeps both ends: "MatMul(v12…, kernel)".
function clipMiddle(text, limit) {
  text = text === null || text === undefined ? "" : String(text);
  if (text.length <= limit) return text;
  const head = Math.ceil((limit - 1) / 2), tail = Math.max(limit - 1 - head, 1);
  return text.slice(0, head) + "…" + text.slice(text.length - tail);
}

function shapeText(shape) {
  return "(" + shape.join(", ") + (shape.length === 1 ? "," : "") + ")";
}

// Which nodes and edges are done, pending, current, lit in frame k: mirrors
// frame_state in svg.py, asked one element at a time (only drawn ones are asked).
function createFrameState(data) {
  const order = new Map(), step = new Map();
  for (const n of data.nodes) if (n.type === "op") { order.set(n.id, n.order); step.set(n.id, n.order); }
  for (const e of data.edges) if (e.kind === "out") step.set(e.to, order.get(e.op));
  let frame = null, done = 0, hl = new Set(), receiving = new Set(), lit = new Set();
  function set(k) {
    frame = data.frames[k];
    done = frame.done_ops;
    hl = new Set(frame.nodes);
    receiving = new Set(frame.contributions.filter((c) => c.value !== null).map((c) => c.node));
    lit = new Set(frame.edges);
  }
  const stepOf = (id) => (step.has(id) ? step.get(id) : -1);
  function node(id) {
    const classes = [stepOf(id) >= done ? "tp-pending" : "tp-done"];
    if (id === frame.op) classes.push("tp-current");
    if (hl.has(id)) classes.push("tp-hl");
    if (receiving.has(id)) classes.push("tp-receiving");
    return classes;
  }
  function edge(list) {
    const first = Math.min(...list.map((e) => order.get(e.op)));
    const classes = [first >= done ? "tp-pending" : "tp-done"];
    if (list.some((e) => lit.has(e.id))) classes.push(frame.phase === "forward" ? "tp-active" : "tp-flow");
    return classes;
  }
  return { set, node, edge, isDone: (id) => stepOf(id) < done, frame: () => frame, done: () => done };
}

// Value statistics for a tooltip: min, max, mean and a tiny histogram.
const BARS = "▁▂▃▄▅▆▇█";
function statsText(st) {
  if (!st) return "";
  const top = Math.max(1, ...st.hist);
  const hist = st.hist.map((c) => (c ? BARS[Math.min(7, Math.floor(c / top * 7.99))] : " ")).join("");
  return `\nmin ${st.min}  max ${st.max}  mean ${st.mean}` +
    (st.nonfinite ? `  NaN/Inf: ${st.nonfinite}` : "") + `\n${hist}`;
}

function tensorMarkup(n, r, classes, grad, lim) {
  const w = r.w, h = BOX_HEIGHT;
  const tags = FLAG_TEXT.filter(([flag]) => n.flags.includes(flag)).map(([, t]) => t).join(" · ");
  const flags = n.flags.map((f) => "tp-f-" + f).join(" ");
  return `<g class="tp-node tp-tensor ${flags} ${classes}" data-id="${n.id}" transform="translate(${r.x.toFixed(1)},${r.y.toFixed(1)})">` +
    `<title>${esc(n.name)}: ${esc(shapeText(n.shape))} ${esc(n.dtype)}${n.preview ? " = " + esc(n.preview) : ""}` +
    `${statsText(n.stats)}</title>` +
    `<rect class="tp-box" x="${-w / 2}" y="${-h / 2}" width="${w}" height="${h}" rx="8"/>` +
    `<text class="tp-tags" y="${-h / 2 - 5}">${esc(tags)}</text>` +
    `<text class="tp-name" y="-9">${esc(clip(n.name, lim.name))}</text>` +
    `<text class="tp-meta" y="6">${esc(clipStart(shapeText(n.shape) + " " + n.dtype, lim.meta))}</text>` +
    `<text class="tp-value" y="21">${esc(clipStart(n.preview || "", lim.value))}</text>` +
    `<text class="tp-grad" y="${h / 2 + 15}">${esc(grad ? clipStart("g = " + grad, lim.grad) : "")}</text></g>`;
}

// A small tag where a widely read input is used again (graph_layout.py's copies).
function copyMarkup(n, id, r, classes, lim) {
  const flags = n.flags.map((f) => "tp-f-" + f).join(" ");
  return `<g class="tp-node tp-tensor tp-copy ${flags} ${classes}" data-id="${id}" data-copy-of="${n.id}" ` +
    `transform="translate(${r.x.toFixed(1)},${r.y.toFixed(1)})"><title>${esc(n.name)} (read again here)</title>` +
    `<rect class="tp-box" x="${-r.w / 2}" y="${-r.h / 2}" width="${r.w}" height="${r.h}" rx="6"/>` +
    `<text class="tp-name" y="5">${esc(clip(n.name, lim.copy))}</text></g>`;
}

function opMarkup(n, r, classes, group, lim) {
  const cls = ["tp-node", "tp-op"].concat(n.flags.map((f) => "tp-f-" + f));
  if (group !== null) cls.push("tp-group-" + (group % 7));
  const tapes = Array.from(new Set(n.tapes)).sort().join(", ");
  return `<g class="${cls.join(" ")} ${classes}" data-id="${n.id}" transform="translate(${r.x.toFixed(1)},${r.y.toFixed(1)})">` +
    `<title>${esc(n.op_type)}: ${esc(n.label)} (tape ${tapes})${(n.rule || n.doc) ? " — " + esc(n.rule || n.doc) : ""}</title>` +
    `<circle class="tp-circle" r="${OP_RADIUS}"/>` +
    `<text class="tp-optype" y="4">${esc(clipMiddle(n.op_type, lim.optype))}</text>` +
    `<text class="tp-label" y="${OP_RADIUS + 15}">${esc(clipMiddle(n.label, lim.label))}</text>` +
    `<text class="tp-tags" y="${-OP_RADIUS - 5}">${n.flags.includes("stopped") ? "stopped" : ""}</text></g>`;
}

// A closed box: its name (the distinguishing end), what it holds, and a bar as
// long as the gradient norm its ops have sent back so far (`norm`: its width).
// `badge`: [word, status] of its worst health row ("NaN made", "nan"), or null.
function coverMarkup(b, r, classes, lim, norm, bad, badge) {
  const x = r.x - r.w / 2, y = r.y - r.h / 2;
  const cause = badge && badge[0] !== "NaN received" ? " tp-cause" : "";
  const dy = badge ? 4 : 0;        // the badge's line on top: the name and what it holds move down
  return `<g class="tp-group-cover${cause} ${classes}" data-group="${b.id}" role="button">` +
    `<title>${esc(b.path || b.label)}${b.kind === "scope" ? "" : " · " + esc(b.label)}: ${esc(b.sub)}` +
    `${badge ? " · " + esc(badge[0]) : ""} (click to open)</title>` +
    `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${r.w}" height="${r.h}" rx="10"/>` +
    (badge ? `<text class="tp-box-badge tp-badge-${esc(badge[1])}${badge[0] === "NaN received" ? " tp-badge-received" : ""}" x="${(x + r.w - 8).toFixed(1)}" y="${(y + 13).toFixed(1)}">⚠ ${esc(badge[0])}</text>` : "") +
    `<text class="tp-box-name" x="${r.x.toFixed(1)}" y="${(r.y - 5 + dy).toFixed(1)}">▸ ${esc(clip(b.label, lim.box))}</text>` +
    `<text class="tp-box-sub" x="${r.x.toFixed(1)}" y="${(r.y + 16 + dy).toFixed(1)}">${esc(b.sub)}</text>` +
    `<rect class="tp-group-norm${bad ? " tp-norm-nonfinite" : ""}" x="${(x + 8).toFixed(1)}" y="${(y + r.h - 10).toFixed(1)}" width="${norm || 0}" height="5"/></g>`;
}

// An open box: a dashed frame with its name on top (click the name to close it).
function frameMarkup(b, r, lim) {
  const x = r.x - r.w / 2, y = r.y - r.h / 2;
  return `<g class="tp-group-frame" data-group="${b.id}">` +
    `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${r.w.toFixed(1)}" height="${r.h.toFixed(1)}" rx="10"/>` +
    outlineMarkup(Number(x.toFixed(1)), Number(y.toFixed(1)), Number(r.w.toFixed(1)), Number(r.h.toFixed(1)), 10) +
    `<text class="tp-group-label" role="button" x="${(x + 10).toFixed(1)}" y="${(y + 20).toFixed(1)}">▾ ${esc(clip(b.label, lim.box * 2))}` +
    ` · ${esc(b.sub)}</text></g>`;
}

// An open box's dashed outline, as the rounded rectangle's four sides and four
// corners, clockwise from the top side's start (where the rectangle's own dashes
// start), each dashed from where it lies along the outline. Chromium skips the
// dashes of a straight line that fall outside the view, not those of a rounded
// rectangle: an open box on a long tape goes round tens of thousands of pixels,
// all dashed again for every tile of the stage after each "expand all".
function outlineMarkup(x, y, w, h, r) {
  r = Math.min(r, w / 2, h / 2);
  const f = (v) => v.toFixed(2), arc = Math.PI * r / 2, turn = `A${r},${r} 0 0 1 `;
  const pieces = [
    [`M${f(x + r)},${f(y)}H${f(x + w - r)}`, w - 2 * r], [`M${f(x + w - r)},${f(y)}${turn}${f(x + w)},${f(y + r)}`, arc],
    [`M${f(x + w)},${f(y + r)}V${f(y + h - r)}`, h - 2 * r], [`M${f(x + w)},${f(y + h - r)}${turn}${f(x + w - r)},${f(y + h)}`, arc],
    [`M${f(x + w - r)},${f(y + h)}H${f(x + r)}`, w - 2 * r], [`M${f(x + r)},${f(y + h)}${turn}${f(x)},${f(y + h - r)}`, arc],
    [`M${f(x)},${f(y + h - r)}V${f(y + r)}`, h - 2 * r], [`M${f(x)},${f(y + r)}${turn}${f(x + r)},${f(y)}`, arc]];
  let along = 0, out = "";
  for (const [d, length] of pieces) {
    out += `<path class="tp-group-outline" d="${d}" stroke-dashoffset="${f(along % 8)}"/>`;   // 8: the dashes' period
    along += length;
  }
  return out;
}

// graph_layout.route: forward, one curve; backward (a later band), out, down under
// the band, back left along the gap, and in from the left.
function route(a, b, pa, pb, fan, gap) {
  const x0 = a.x + pa, y0 = a.y, x1 = b.x - pb, y1 = b.y + (fan || 0);
  const f = (v) => v.toFixed(1);
  if (x1 >= x0 + 8 || gap === null || gap === undefined) {
    const mid = (x1 - x0) / 2;
    return `M${f(x0)},${f(y0)} C${f(x0 + mid)},${f(y0)} ${f(x1 - mid)},${f(y1)} ${f(x1)},${f(y1)}`;
  }
  const r = 24;
  return `M${f(x0)},${f(y0)} C${f(x0 + r)},${f(y0)} ${f(x0 + r)},${f(gap)} ${f(x0)},${f(gap)} ` +
    `L${f(x1)},${f(gap)} C${f(x1 - r)},${f(gap)} ${f(x1 - r)},${f(y1)} ${f(x1)},${f(y1)}`;
}

function legendMarkup(data) {
  // Only the kinds of node this tape has, so the legend stays one or two lines.
  const present = new Set();
  for (const n of data.nodes) for (const f of n.flags) present.add(f);
  const items = LEGEND.filter(([, , flag]) => flag === null || present.has(flag)).map(([cls, text]) =>
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
  return v.preview === null || v.preview === undefined ? "(shape " + shapeText(v.shape || []) + ")" : v.preview;
}

// The title line: a result with many gradients names its first `most` (two; one in
// classroom mode) and counts the rest (listed under the graph, and all in the title's
// tooltip), so it stays on a line or two, which wrap whole (never clamped).
function titleText(frame, most = 2) {
  if (frame.phase !== "result" || frame.gradients.length <= most) return frame.title;
  const shown = frame.title.split(", d").slice(0, most).join(", d");
  return `${shown}, … (${frame.gradients.length - most} more below)`;
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
  if (frame.vjp) rows.push(["VJP of " + frame.vjp.op_type, frame.vjp.rule || frame.vjp.doc || "(no doc line)"]);
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

function gradientsMarkup(data, frame, gradOf, most) {
  const result = data.frames[data.frames.length - 1];
  const isResult = frame.phase === "result";
  const spans = result.gradients.map((g) => {
    const seen = gradOf(g.node);
    const known = isResult ? g.value : (seen === undefined ? undefined : { preview: seen });
    const text = known === undefined ? "…" : valueText(known);
    const cls = known === null ? "tp-none" : (known === undefined ? "tp-unknown" : "tp-known");
    return `<span class="tp-gradient ${cls}" data-node="${g.node}" title="grad ${esc(g.name)} = ${esc(text)}">` +
      `grad ${esc(g.name)} = ${esc(clipStart(text, 28))}</span>`;
  });
  const more = spans.length - most;
  return more > 0 ? spans.slice(0, most).join("") +
    `<span class="tp-gradient tp-more">+${more} more</span>` : spans.join("");
}

// Gradients known at frame k (frames.py grads_new holds what each frame changed):
// per node, the frames where its gradient changed, so any frame is a binary search.
function gradHistory(data) {
  const history = new Map();
  data.frames.forEach((f, k) => {
    for (const [id, v] of Object.entries(f.grads_new || {})) {
      if (!history.has(id)) history.set(id, []);
      history.get(id).push([k, v]);
    }
  });
  return (id, k) => {
    const h = history.get(id);
    if (!h || h[0][0] > k) return undefined;
    let lo = 0, hi = h.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (h[mid][0] <= k) lo = mid; else hi = mid - 1; }
    return h[lo][1];
  };
}
