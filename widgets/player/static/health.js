// Gradient health panel of the tape player (part 3b of the module: after
// groups.js, before controls.js; see html_export.JS_PARTS). It reads
// `data.debug.health` (widgets/health/rows.py: one row per scope group, NaN and
// None rows included, each with its `rank`, `kind` and `kinds` from
// widgets/health/triage.py) and `data.debug.group_norms` (the running norm of
// what each group has sent back, frame by frame; "NaN"/"Inf" once it is not
// finite, empty where nothing flowed back) and draws one row per group,
// CAUSE FIRST: the group that made the first NaN/Inf, then None rows, then
// layers that die, explode or vanish, then rows that only received a NaN, then
// the healthy ones (forward order within each):
//
//   [NaN made] lm/block_3/attention          <- its plain word, scope (click: its box)
//   ‖g‖ —  ‖w‖ 2.18  g/w —                    <- numbers, 3 significant digits, never cut
//   ▇▇▇▇▇▇▁▁▁▁▁▁                             <- what it has sent back so far (log scale)
//   NaN made here: ... divides by 0 (...)    <- why, each reason on its own lines, wrapped
//   ▾ more rows below                        <- while rows are below the panel's edge (a click
//                                               scrolls on), so a row cut there reads as more
//
// The summary's counts are buttons, one per word ("1 NaN made", "3 None", "1
// dead"...), each row counted under its first word (its cause): a click shows
// the next such row, in the same order, and its box in the graph. A click on a
// row's name shows its scope in the graph (player.js's `reveal`).
//
// Up to HEALTH_ALL_UP_TO rows are all drawn. A longer panel (an unrolled RNN
// has thousands of groups) is virtual: only the rows in the panel's view (and a
// few around) are in the page, redrawn as it scrolls, so its cost does not grow
// with the groups. Its rows are as tall as their text: a row not yet drawn is
// counted HEALTH_ROW_EM high, and a drawn row's real height is kept (measured
// once per panel width), so reasons wrap and are never cut.

const HEALTH_WORDS = [      // [word, status class, the jump button's title]
  ["NaN made", "nan", "the next group that made a NaN or an Inf"],
  ["None", "none", "the next group whose variables get no gradient"],
  ["dead", "flagged", "the next dead layer (a ReLU or a gradient exactly 0)"],
  ["exploding", "flagged", "the next layer whose weights or gradient explode"],
  ["vanishing", "flagged", "the next layer whose gradient vanishes"],
  ["NaN received", "nan", "the next group that only received a NaN or an Inf made elsewhere"],
];
const HEALTH_ALL_UP_TO = 100;
const HEALTH_ROW_EM = 7.2;       // a virtual row's height until it is drawn and measured
const HEALTH_OK_RANK = 9;
const HEALTH_STYLE = `<style>
.tp-health-top { position: sticky; top: -0.3em; z-index: 1; background: var(--tp-bg, #fff); padding-top: 0.3em; }
.tp-health-short .tp-health-top { position: static; }
.tp-health-summary { padding-bottom: 0.3em; line-height: 1.4; }
.tp-health-jump { font: inherit; padding: 0 0.2em; border: 0; background: none; color: #0969da; cursor: pointer; text-decoration: underline; white-space: nowrap; }
.tp-health-row { padding: 0.2em 0; border-top: 1px solid #eaeef2; }
.tp-health-head { display: flex; gap: 0.3em; align-items: baseline; min-width: 0; flex-wrap: wrap; }
.tp-health-name { overflow-wrap: anywhere; min-width: 0; cursor: pointer; }
.tp-health-mark { font-weight: 700; white-space: nowrap; }
.tp-health-mark:empty { display: none; }
.tp-health-nan .tp-health-mark { color: #cf222e; }
.tp-health-none .tp-health-mark { color: #57606a; }
.tp-health-flagged .tp-health-mark { color: #9a6700; }
.tp-health-nums { display: flex; flex-wrap: wrap; column-gap: 0.8em; font-family: var(--tp-mono); }
.tp-health-nums > span { white-space: nowrap; }
.tp-health-why { color: #9a3412; overflow-wrap: anywhere; }
.tp-health-why.tp-health-quiet { color: #57606a; }
.tp-health-row .tp-norm-bar { display: block; height: 0.6em; background: #eaeef2; border-radius: 3px; overflow: hidden; }
.tp-health-row .tp-norm-fill { display: block; height: 100%; width: 0; background: #0969da; }
.tp-health-nan .tp-norm-fill, .tp-norm-fill.tp-norm-nonfinite { background: #cf222e; }
.tp-health { position: relative; }
.tp-health-virtual .tp-health-list { position: relative; }
.tp-health-virtual .tp-health-row { position: absolute; left: 0; right: 0; box-sizing: border-box; }
.tp-health-row.tp-health-picked { background: #fff8c5; }
.tp-health-more { position: sticky; bottom: -0.3em; z-index: 1; margin: 0 -0.5em -0.3em; padding: 0.4em 0.5em 0.05em; line-height: 1.2;
  background: linear-gradient(to bottom, transparent, var(--tp-bg, #fff) 40%); text-align: center; color: #0969da; cursor: pointer; }
.tp-health-end .tp-health-more { visibility: hidden; }
</style>`;

// A number in 3 significant digits, the exponent unpadded: 1.87e-9, 4.56e3, 0.25, 2.
function healthNumber(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  if (typeof v === "string") return v;           // "NaN" / "Inf" from group_norms
  if (v === 0) return "0";
  // An exponent below 1e-3 and from 1e3 up (toPrecision gives 1.23e+3, shown 1.23e3).
  const small = Math.abs(v) < 1e-3;
  let [mantissa, exponent] = (small ? Number(v).toExponential(2) : Number(v).toPrecision(3)).split("e");
  if (mantissa.includes(".")) mantissa = mantissa.replace(/0+$/, "").replace(/\.$/, "");
  return exponent === undefined ? mantissa : `${mantissa}e${Number(exponent)}`;
}

// The rows cause first (widgets/health/triage.py's cause_order: by rank, then
// forward order); a replay without ranks keeps its order.
function causeOrder(rows) {
  const rank = (r) => (r.rank === undefined || r.rank === null ? HEALTH_OK_RANK : r.rank);
  return rows.map((r, i) => [rank(r), i, r]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((e) => e[2]);
}

// The words a row earns (an older replay: from its status).
function rowKinds(row) {
  if (row.kinds) return row.kinds;
  return { nan: ["NaN received"], none: ["None"], flagged: ["exploding"] }[row.status] || [];
}

// What the panel needs from a replay, worked out once per replay.
const healthCache = new WeakMap();
function healthOf(data) {
  let h = healthCache.get(data);
  if (!h) {
    const debug = data.debug || {};
    const norms = debug.group_norms || {};
    let rows = debug.health;
    if (!rows) {     // an older replay: one row per group with norms
      rows = (data.groups || []).filter((g) => norms[g.id] && norms[g.id].length).map((g) => ({
        group: g.id, scope: g.scope, status: "ok", flags: [], variables: [], grad_of: "inputs",
        grad_norm: norms[g.id][norms[g.id].length - 1][1], weight_norm: null, ratio: null }));
    }
    rows = causeOrder(rows);
    const finals = Object.values(norms).filter((s) => s.length).map((s) => s[s.length - 1][1])
      .filter((v) => typeof v === "number" && v > 0);
    const top = Math.max(1e-30, ...finals);
    h = { rows, norms, top, floor: top / 1e3, virtual: rows.length > HEALTH_ALL_UP_TO,
      heights: new Map(), width: 0, offsets: null };
    healthCache.set(data, h);
  }
  return h;
}
const healthRows = (data) => healthOf(data).rows;

function healthRowMarkup(row, index, top) {
  const weights = row.grad_of === "weights";
  const nums = [
    [weights ? "‖g‖" : "‖g sent‖", row.grad_norm, weights
      ? "norm of the gradient its backward steps sent to its variables"
      : "no source variable here: norm of what its backward steps sent to their inputs"]];
  if (weights) {
    nums.push(["‖w‖", row.weight_norm, "norm of its variables"],
      ["g/w", row.ratio, "‖gradient‖ / ‖weights‖"]);
    if (row.update_ratio !== null && row.update_ratio !== undefined) {
      nums.push(["Δ/w", row.update_ratio, "‖update‖ / ‖weights‖ of the optimizer step"]);
    }
  }
  if (row.zero_fraction) {
    nums.push(["zero", null, "share of gradient entries exactly 0", `${Math.round(100 * row.zero_fraction)}%`]);
  }
  const tip = [row.scope].concat(row.variables && row.variables.length
    ? ["variables: " + row.variables.join(", ")] : []).join("\n");
  const at = index === undefined ? "" : ` data-index="${index}" style="top: ${top.toFixed(1)}px"`;
  const mark = rowKinds(row)[0] || "";
  return `<div class="tp-health-row tp-health-${esc(row.status)}" data-group="${esc(row.group)}" ` +
    `data-status="${esc(row.status)}" data-kind="${esc(mark)}"${at} title="${esc(tip)}">` +
    `<div class="tp-health-head"><span class="tp-health-mark">${esc(mark)}</span>` +
    `<span class="tp-health-name">${esc(row.scope)}</span></div>` +
    `<div class="tp-health-nums">${nums.map(([label, v, what, text]) =>
      `<span title="${esc(what)}">${label} <b class="tp-health-value">${text || healthNumber(v)}</b></span>`).join("")}</div>` +
    `<span class="tp-norm-bar" title="what it has sent back so far (log scale)"><span class="tp-norm-fill"></span></span>` +
    (row.flags || []).map((f) => `<div class="tp-health-why${f.quiet ? " tp-health-quiet" : ""}">${esc(f.reason)}</div>`).join("") +
    `</div>`;
}

// The panel beside the graph: a summary (its title, then one jump per word), then the
// rows cause first.
function normsMarkup(data) {
  const { rows, virtual } = healthOf(data);
  if (!rows.length) return "";
  // (classroom mode leaves out the count and the order, in the tooltip: a line more for the rows)
  const of = `of ${rows.length} scope${rows.length === 1 ? "" : "s"}, causes first`;
  const parts = [`<b class="tp-norms-title" title="${of}">Gradient health</b><span class="tp-health-of"> ${of}</span>`];
  for (const [word, status, title] of HEALTH_WORDS) {
    const n = rows.filter((r) => rowKinds(r)[0] === word).length;
    if (n) {
      parts.push(`<button type="button" class="tp-health-jump" data-kind="${esc(word)}" data-status="${status}" ` +
        `title="show ${esc(title)}">${n} ${esc(word)}</button>`);
    }
  }
  const list = virtual ? `<div class="tp-health-list" style="height: ${(rows.length * HEALTH_ROW_EM).toFixed(2)}em"></div>`
    : `<div class="tp-health-list">${rows.map((r) => healthRowMarkup(r)).join("")}</div>`;
  return `<div class="tp-norms tp-health${virtual ? " tp-health-virtual" : ""}" data-rows="${rows.length}">` +
    HEALTH_STYLE + `<div class="tp-health-top"><div class="tp-health-summary">${parts.join(" · ")}</div></div>` + list +
    `<div class="tp-health-more" title="scroll down the rows">▾ more rows below</div></div>`;
}

// The running norm of a group at frame k (the last entry at or before k): a
// number, or "NaN"/"Inf".
function normAt(series, k) {
  let lo = 0, hi = series.length - 1, value = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (series[mid][0] <= k) { value = series[mid][1]; lo = mid + 1; } else hi = mid - 1;
  }
  return value;
}

// Grows each drawn row's bar to what its group has sent back by frame k, on a
// log scale from a thousandth of the largest final norm to the largest; a
// NaN/Inf norm fills the bar, in red.
function showNorms(root, data, k) {
  const panel = root.querySelector ? root.querySelector(".tp-health") : null;
  if (panel) panel.dataset.frame = String(k);
  const { norms, top, floor } = healthOf(data);
  const rows = (panel || root).querySelectorAll(".tp-health-row");
  if (!rows.length) return;
  rows.forEach((row) => {
    const value = norms[row.dataset.group] ? normAt(norms[row.dataset.group], k) : 0;
    const bad = typeof value === "string";
    const share = bad ? 1 : value > floor ? Math.log(value / floor) / Math.log(top / floor) : (value > 0 ? 0.02 : 0);
    const fill = row.querySelector(".tp-norm-fill");
    fill.style.width = `${(100 * Math.min(1, share)).toFixed(1)}%`;
    if (fill.classList) fill.classList.toggle("tp-norm-nonfinite", bad);
  });
}

// A virtual panel's row offsets (px): each row measured once drawn, the others
// HEALTH_ROW_EM high; worked out again when a measured height changes.
function healthOffsets(h, rowPx) {
  if (!h.offsets) {
    const n = h.rows.length, off = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) off[i + 1] = off[i] + (h.heights.get(i) || rowPx);
    h.offsets = off;
  }
  return h.offsets;
}

// The first row whose bottom is below y (a binary search over the offsets).
function healthRowAt(off, y) {
  let lo = 0, hi = off.length - 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (off[mid + 1] <= y) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// A virtual panel: draws the rows in its view (and a few around), when they change,
// then keeps their measured heights (a reason that wraps makes its row taller).
function drawHealthRows(root, data, force, depth = 0) {
  const panel = root.querySelector(".tp-health-virtual");
  if (!panel || !panel.clientHeight) return;           // none, or hidden
  const list = panel.querySelector(".tp-health-list");
  const h = healthOf(data);
  const rowPx = HEALTH_ROW_EM * (parseFloat(getComputedStyle(list).fontSize) || 16);
  if (h.width !== list.clientWidth) {          // new width: every row wraps anew
    h.width = list.clientWidth;
    h.heights.clear();
    h.offsets = null;
  }
  let off = healthOffsets(h, rowPx);
  const atEnd = panel.scrollTop > 0 && panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 2;
  const top = panel.scrollTop - list.offsetTop;
  const first = Math.max(0, healthRowAt(off, top) - 3);
  const last = Math.min(h.rows.length, healthRowAt(off, top + panel.clientHeight) + 4);
  const range = `${first}-${last}`;
  if (!force && list.dataset.range === range) return;
  list.dataset.range = range;
  const picked = panel.dataset.picked;
  list.innerHTML = h.rows.slice(first, last).map((r, i) => healthRowMarkup(r, first + i, off[first + i])).join("");
  const drawn = [...list.children];
  let changed = false;
  drawn.forEach((el, i) => {
    const px = el.offsetHeight;
    if (Math.abs(px - (off[first + i + 1] - off[first + i])) > 0.5) { h.heights.set(first + i, px); changed = true; }
  });
  if (changed) {
    h.offsets = null;
    off = healthOffsets(h, rowPx);
    drawn.forEach((el, i) => { el.style.top = `${off[first + i].toFixed(1)}px`; });
  }
  list.style.height = `${off[h.rows.length].toFixed(1)}px`;
  if (picked) list.querySelector(`[data-index="${picked}"]`)?.classList.add("tp-health-picked");
  showNorms(root, data, Number(panel.dataset.frame) || 0);
  // scrolled to the end, and the rows drawn there were taller or shorter than
  // counted: stay at the end (the last rows' heights are then measured too)
  if (atEnd && changed && depth < 3) {
    panel.scrollTop = panel.scrollHeight;
    drawHealthRows(root, data, false, depth + 1);
  }
}

// Wires the panel once the player's markup is in the page: scrolling (a
// virtual panel draws its rows), the summary's jumps, and clicks on names.
function mountHealth(root, data, hooks) {
  const panel = root.querySelector(".tp-health");
  if (!panel) return { redraw: () => {} };
  const h = healthOf(data);
  const { rows, virtual } = h;
  const redraw = () => drawHealthRows(root, data, false);
  if (virtual) panel.addEventListener("scroll", redraw, { passive: true });
  // "more rows below" shows until the last row is in view (the panel scrolled to its end)
  const edge = () => panel.classList.toggle("tp-health-end",
    panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 2);
  panel.addEventListener("scroll", edge, { passive: true });
  // In a short panel (beside a 240-330px stage, or a projector's type) the summary
  // scrolls away with the rows when, kept in view, it would leave no room to read the
  // tallest row whole.
  const sized = () => {
    let tallest = 0;
    for (const row of panel.querySelectorAll(".tp-health-row")) tallest = Math.max(tallest, row.offsetHeight);
    const top = panel.querySelector(".tp-health-top"), more = panel.querySelector(".tp-health-more");
    panel.classList.toggle("tp-health-short", top.offsetHeight + more.offsetHeight + tallest > panel.clientHeight);
    edge();
  };
  if (typeof ResizeObserver === "function") new ResizeObserver(sized).observe(panel);
  const next = {};
  function show(i) {        // scrolls row i to the top of the panel (under the summary) and marks it
    panel.querySelectorAll(".tp-health-picked").forEach((e) => e.classList.remove("tp-health-picked"));
    panel.dataset.picked = String(i);
    const list = panel.querySelector(".tp-health-list");
    const top = panel.querySelector(".tp-health-top");
    const under = list.offsetTop - (panel.classList.contains("tp-health-short") ? 0 : top.offsetHeight);   // below a sticky summary
    if (virtual) {
      const rowPx = HEALTH_ROW_EM * (parseFloat(getComputedStyle(list).fontSize) || 16);
      panel.scrollTop = under + healthOffsets(h, rowPx)[i];
      drawHealthRows(root, data, true);
      panel.scrollTop = under + healthOffsets(h, rowPx)[i];   // the rows around it now measured
      drawHealthRows(root, data, false);
    } else {
      const el = list.children[i];
      el.classList.add("tp-health-picked");
      panel.scrollTop = under + el.offsetTop - list.offsetTop;
    }
  }
  panel.addEventListener("click", (ev) => {
    if (ev.target.closest(".tp-health-more")) {
      panel.scrollBy({ top: panel.clientHeight * 0.6 });
      return;
    }
    const jump = ev.target.closest(".tp-health-jump");
    if (jump) {
      const word = jump.dataset.kind;
      const has = (r) => rowKinds(r)[0] === word;
      const from = next[word] || 0;
      let i = rows.findIndex((r, j) => j >= from && has(r));
      if (i < 0) i = rows.findIndex(has);
      next[word] = i + 1;
      show(i);
      if (hooks && hooks.reveal) hooks.reveal(rows[i].scope);     // and its box in the graph
      return;
    }
    const name = ev.target.closest(".tp-health-name");
    if (name && hooks && hooks.reveal) hooks.reveal(rows.find((r) => r.group === name.closest(".tp-health-row").dataset.group).scope);
  });
  drawHealthRows(root, data, true);
  sized();
  return { redraw: () => { drawHealthRows(root, data, true); sized(); }, show };
}
