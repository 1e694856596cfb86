// Gradient health panel of the tape player (part 3b of the module: after
// groups.js, before controls.js; see html_export.JS_PARTS). It reads
// `data.debug.health` (widgets/health/rows.py: one row per scope group, NaN and
// None rows included) and `data.debug.group_norms` (the running norm of what
// each group has sent back, frame by frame; "NaN"/"Inf" once it is not
// finite, empty where nothing flowed back) and draws one row per group:
//
//   [NaN] mlp/dense_1                      <- mark, scope (full name in the tooltip)
//   ‖g‖ 1.87e-9  ‖w‖ 2.18  g/w 8.58e-10     <- numbers, 3 significant digits, never cut
//   ▇▇▇▇▇▇▁▁▁▁▁▁                           <- what it has sent back so far (log scale)
//   gradient is NaN (from record 4: ...)    <- why the row is flagged
//
// The summary's counts are buttons: "2 NaN" scrolls to the next NaN row. A
// click on a row's name shows its scope in the graph (player.js's `reveal`).
//
// Up to HEALTH_ALL_UP_TO rows are all drawn. A longer panel (an unrolled RNN
// has thousands of groups) is virtual: rows of one fixed height, and only
// those in the panel's view (and a few around) are in the page, redrawn as it
// scrolls; so its cost does not grow with the groups. Its reasons then keep
// to one line (the whole text in the row's tooltip).

const HEALTH_MARK = { nan: "NaN", none: "None", flagged: "!", ok: "" };
const HEALTH_ALL_UP_TO = 100;
const HEALTH_ROW_EM = 6.4;       // a virtual row: name, two lines of numbers, bar, one reason line
const HEALTH_STYLE = `<style>
.tp-health-summary { margin-bottom: 0.3em; }
.tp-health-jump { font: inherit; padding: 0 0.2em; border: 0; background: none; color: #0969da; cursor: pointer; text-decoration: underline; }
.tp-health-row { padding: 0.2em 0; border-top: 1px solid #eaeef2; }
.tp-health-head { display: flex; gap: 0.3em; align-items: baseline; min-width: 0; }
.tp-health-name { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; min-width: 0; cursor: pointer; }
.tp-health-mark { font-weight: 700; white-space: nowrap; }
.tp-health-mark:empty { display: none; }
.tp-health-nan .tp-health-mark { color: #cf222e; }
.tp-health-none .tp-health-mark { color: #6e7781; }
.tp-health-flagged .tp-health-mark { color: #9a6700; }
.tp-health-nums { display: flex; flex-wrap: wrap; column-gap: 0.8em; font-family: var(--tp-mono); }
.tp-health-nums > span { white-space: nowrap; }
.tp-health-why { color: #9a3412; overflow-wrap: anywhere; }
.tp-health-row .tp-norm-bar { display: block; height: 0.6em; background: #eaeef2; border-radius: 3px; overflow: hidden; }
.tp-health-row .tp-norm-fill { display: block; height: 100%; width: 0; background: #0969da; }
.tp-health-nan .tp-norm-fill, .tp-norm-fill.tp-norm-nonfinite { background: #cf222e; }
.tp-health { position: relative; }
.tp-health-virtual .tp-health-list { position: relative; }
.tp-health-virtual .tp-health-row { position: absolute; left: 0; right: 0; height: ${HEALTH_ROW_EM}em; overflow: hidden; box-sizing: border-box; }
.tp-health-virtual .tp-health-nums { max-height: 2.5em; overflow: hidden; }
.tp-health-virtual .tp-health-why { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tp-health-row.tp-health-picked { background: #fff8c5; }
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
    const finals = Object.values(norms).filter((s) => s.length).map((s) => s[s.length - 1][1])
      .filter((v) => typeof v === "number" && v > 0);
    const top = Math.max(1e-30, ...finals);
    h = { rows, norms, top, floor: top / 1e3, virtual: rows.length > HEALTH_ALL_UP_TO };
    healthCache.set(data, h);
  }
  return h;
}
const healthRows = (data) => healthOf(data).rows;

function healthRowMarkup(row, index) {
  const reasons = (row.flags || []).map((f) => f.reason);
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
    ? ["variables: " + row.variables.join(", ")] : [], reasons).join("\n");
  const at = index === undefined ? "" : ` data-index="${index}" style="top: ${(index * HEALTH_ROW_EM).toFixed(2)}em"`;
  return `<div class="tp-health-row tp-health-${esc(row.status)}" data-group="${esc(row.group)}" ` +
    `data-status="${esc(row.status)}"${at} title="${esc(tip)}">` +
    `<div class="tp-health-head"><span class="tp-health-mark">${HEALTH_MARK[row.status] || ""}</span>` +
    `<span class="tp-health-name">${esc(row.scope)}</span></div>` +
    `<div class="tp-health-nums">${nums.map(([label, v, what, text]) =>
      `<span title="${esc(what)}">${label} <b class="tp-health-value">${text || healthNumber(v)}</b></span>`).join("")}</div>` +
    `<span class="tp-norm-bar" title="what it has sent back so far (log scale)"><span class="tp-norm-fill"></span></span>` +
    (reasons.length ? `<div class="tp-health-why">${esc(reasons.join("; "))}</div>` : "") +
    `</div>`;
}

// The panel beside the graph: a summary line, then one row per group in forward order.
function normsMarkup(data) {
  const { rows, virtual } = healthOf(data);
  if (!rows.length) return "";
  const count = (s) => rows.filter((r) => r.status === s).length;
  const parts = [esc(`${rows.length} scope${rows.length === 1 ? "" : "s"}`)];
  for (const [s, word] of [["nan", "NaN"], ["none", "None"], ["flagged", "flagged"]]) {
    const n = count(s);
    if (n) {
      parts.push(`<button type="button" class="tp-health-jump" data-status="${s}" ` +
        `title="show the next ${word === "flagged" ? "flagged" : word} row">${n} ${word}</button>`);
    }
  }
  const list = virtual ? `<div class="tp-health-list" style="height: ${(rows.length * HEALTH_ROW_EM).toFixed(2)}em"></div>`
    : `<div class="tp-health-list">${rows.map((r) => healthRowMarkup(r)).join("")}</div>`;
  return `<div class="tp-norms tp-health${virtual ? " tp-health-virtual" : ""}" data-rows="${rows.length}">` +
    HEALTH_STYLE + `<div class="tp-norms-title">gradient health by scope</div>` +
    `<div class="tp-health-summary">${parts.join(" · ")}</div>` + list + `</div>`;
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

// A virtual panel: draws the rows in its view (and a few around), when they change.
function drawHealthRows(root, data, force) {
  const panel = root.querySelector(".tp-health-virtual");
  if (!panel || !panel.clientHeight) return;           // none, or hidden (classroom mode)
  const list = panel.querySelector(".tp-health-list");
  const { rows } = healthOf(data);
  const rowPx = HEALTH_ROW_EM * (parseFloat(getComputedStyle(list).fontSize) || 16);
  const top = panel.scrollTop - list.offsetTop;
  const first = Math.max(0, Math.floor(top / rowPx) - 3);
  const last = Math.min(rows.length, Math.ceil((top + panel.clientHeight) / rowPx) + 3);
  const range = `${first}-${last}`;
  if (!force && list.dataset.range === range) return;
  list.dataset.range = range;
  const picked = panel.dataset.picked;
  list.innerHTML = rows.slice(first, last).map((r, i) => healthRowMarkup(r, first + i)).join("");
  if (picked) list.querySelector(`[data-index="${picked}"]`)?.classList.add("tp-health-picked");
  showNorms(root, data, Number(panel.dataset.frame) || 0);
}

// Wires the panel once the player's markup is in the page: scrolling (a
// virtual panel draws its rows), the summary's jumps, and clicks on names.
function mountHealth(root, data, hooks) {
  const panel = root.querySelector(".tp-health");
  if (!panel) return { redraw: () => {} };
  const { rows, virtual } = healthOf(data);
  const redraw = () => drawHealthRows(root, data, false);
  if (virtual) panel.addEventListener("scroll", redraw, { passive: true });
  const next = {};
  function show(i) {        // scrolls row i into view and marks it
    panel.querySelectorAll(".tp-health-picked").forEach((e) => e.classList.remove("tp-health-picked"));
    panel.dataset.picked = String(i);
    const list = panel.querySelector(".tp-health-list");
    if (virtual) {
      const rowPx = HEALTH_ROW_EM * (parseFloat(getComputedStyle(list).fontSize) || 16);
      panel.scrollTop = list.offsetTop + i * rowPx - rowPx;
      drawHealthRows(root, data, true);
    } else {
      const el = list.children[i];
      el.classList.add("tp-health-picked");
      panel.scrollTop = el.offsetTop - el.offsetHeight;
    }
  }
  panel.addEventListener("click", (ev) => {
    const jump = ev.target.closest(".tp-health-jump");
    if (jump) {
      const s = jump.dataset.status;
      const from = next[s] || 0;
      let i = rows.findIndex((r, j) => j >= from && r.status === s);
      if (i < 0) i = rows.findIndex((r) => r.status === s);
      next[s] = i + 1;
      show(i);
      return;
    }
    const name = ev.target.closest(".tp-health-name");
    if (name && hooks && hooks.reveal) hooks.reveal(rows.find((r) => r.group === name.closest(".tp-health-row").dataset.group).scope);
  });
  drawHealthRows(root, data, true);
  return { redraw: () => drawHealthRows(root, data, true), show };
}
