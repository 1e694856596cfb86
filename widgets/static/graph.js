// Markup of the tape player (part 1 of the module; html_export.player_js joins
// graph.js, viewport.js and player.js into one ES module, in that order).
// Pure functions from the replay JSON to SVG/HTML strings and CSS classes.

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
  if (!data.__steps) {     // which op runs each node and edge: the same in every frame
    const order = {};
    for (const n of data.nodes) if (n.type === "op") order[n.id] = n.order;
    const producer = {};
    for (const e of data.edges) if (e.kind === "out") producer[e.to] = order[e.op];
    Object.defineProperty(data, "__steps", { value: { order, producer }, enumerable: false });
  }
  const { order, producer } = data.__steps;
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

// Value statistics for a tooltip: min, max, mean and a tiny histogram.
const BARS = "▁▂▃▄▅▆▇█";
function statsText(st) {
  if (!st) return "";
  const top = Math.max(1, ...st.hist);
  const hist = st.hist.map((c) => (c ? BARS[Math.min(7, Math.floor(c / top * 7.99))] : " ")).join("");
  return `\nmin ${st.min}  max ${st.max}  mean ${st.mean}` +
    (st.nonfinite ? `  NaN/Inf: ${st.nonfinite}` : "") + `\n${hist}`;
}

function tensorMarkup(n, box) {
  const w = box.w, h = BOX_HEIGHT;
  const tags = FLAG_TEXT.filter(([flag]) => n.flags.includes(flag)).map(([, t]) => t).join(" · ");
  const flags = n.flags.map((f) => "tp-f-" + f).join(" ");
  return `<g class="tp-node tp-tensor ${flags}" data-id="${n.id}" transform="translate(${box.x},${box.y})">` +
    `<title>${esc(n.name)}: ${esc(shapeText(n.shape))} ${esc(n.dtype)}${n.preview ? " = " + esc(n.preview) : ""}` +
    `${statsText(n.stats)}</title>` +
    `<rect class="tp-box" x="${-w / 2}" y="${-h / 2}" width="${w}" height="${h}" rx="8"/>` +
    `<text class="tp-tags" y="${-h / 2 - 5}">${esc(tags)}</text>` +
    `<text class="tp-name" y="-9">${esc(clip(n.name, 16))}</text>` +
    `<text class="tp-meta" y="6">${esc(clip(shapeText(n.shape) + " " + n.dtype, 22))}</text>` +
    `<text class="tp-value" y="21">${esc(clip(n.preview || "", 20))}</text>` +
    `<text class="tp-grad" y="${h / 2 + 15}"></text></g>`;
}

// A small tag where a widely read input is used again (graph_layout.py's copies).
function copyMarkup(n, c) {
  const flags = n.flags.map((f) => "tp-f-" + f).join(" ");
  return `<g class="tp-node tp-tensor tp-copy ${flags}" data-id="${c.id}" data-copy-of="${n.id}" ` +
    `transform="translate(${c.x},${c.y})"><title>${esc(n.name)} (read again here)</title>` +
    `<rect class="tp-box" x="${-c.w / 2}" y="${-c.h / 2}" width="${c.w}" height="${c.h}" rx="6"/>` +
    `<text class="tp-name" y="4">${esc(clip(n.name, 10))}</text></g>`;
}

function opMarkup(n, box, group) {
  const classes = ["tp-node", "tp-op"].concat(n.flags.map((f) => "tp-f-" + f));
  if (group !== null) classes.push("tp-group-" + (group % 7));
  const tapes = Array.from(new Set(n.tapes)).sort().join(", ");
  return `<g class="${classes.join(" ")}" data-id="${n.id}" transform="translate(${box.x},${box.y})">` +
    `<title>${esc(n.op_type)}: ${esc(n.label)} (tape ${tapes})${(n.rule || n.doc) ? " — " + esc(n.rule || n.doc) : ""}</title>` +
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
  const groupParts = groupsMarkup(data);
  const parts = [`<svg class="tp-svg" viewBox="0 0 ${lay.width} ${lay.height}" ` +
    `data-width="${lay.width}" role="img" aria-label="tape graph">`,
    `<defs><marker id="${uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" ` +
    `markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path class="tp-arrow" d="M0,0 L10,5 L0,10 z"/></marker></defs>`,
    `<g class="tp-group-frames">${groupParts.frames}</g><g class="tp-edges">`];
  for (const e of data.edges) {
    parts.push(`<path class="tp-edge tp-edge-${e.kind}" data-id="${e.id}" d="${lay.edges[e.id]}" ` +
      `marker-end="url(#${uid}-arrow)"/>`);
  }
  parts.push(`</g><g class="tp-nodes">`);
  const byId = {};
  for (const n of data.nodes) byId[n.id] = n;
  for (const c of lay.copies || []) parts.push(copyMarkup(byId[c.node], c));
  for (const n of data.nodes) {
    const box = lay.nodes[n.id];
    parts.push(n.type === "tensor" ? tensorMarkup(n, box)
      : opMarkup(n, box, multi ? (groups[n.group] || 0) : null));
  }
  parts.push(`</g><g class="tp-group-covers">${groupParts.covers}</g></svg>`);
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

function gradientsMarkup(data, frame, grads) {
  const result = data.frames[data.frames.length - 1];
  const isResult = frame.phase === "result";
  return result.gradients.map((g) => {
    const known = isResult ? g.value : (grads[g.node] === undefined ? undefined : { preview: grads[g.node] });
    const text = known === undefined ? "…" : valueText(known);
    const cls = known === null ? "tp-none" : (known === undefined ? "tp-unknown" : "tp-known");
    return `<span class="tp-gradient ${cls}" data-node="${g.node}">grad ${esc(g.name)} = ${esc(text)}</span>`;
  }).join("");
}


// Gradients known at frame k, from the frames' deltas (frames.py grads_new).
// Walking forward from the last frame asked is O(frames moved); a jump back
// starts again from frame 0, still linear in the frames.
function gradTracker(data) {
  let at = -1;
  let known = {};
  return (k) => {
    if (k < at) { at = -1; known = {}; }
    for (; at < k; at++) Object.assign(known, data.frames[at + 1].grads_new || {});
    return known;
  };
}
