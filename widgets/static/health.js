// Gradient health panel of the tape player (part 3b of the module: after
// groups.js, before player.js; see html_export.JS_PARTS). It reads
// `data.debug.health` (widgets/health.py: one row per scope group, NaN and
// None rows included) and `data.debug.group_norms` (the running norm of what
// each group has sent back, frame by frame) and draws one row per group:
//
//   [NaN] mlp/dense_1                      <- mark, scope (full name in the tooltip)
//   ‖g‖ 1.87e-9  ‖w‖ 2.18  g/w 8.58e-10     <- numbers, 3 significant digits, never cut
//   ▇▇▇▇▇▇▁▁▁▁▁▁                           <- what it has sent back so far (log scale)
//   gradient is NaN (from record 4: ...)    <- why the row is flagged
//
// Pure markup plus one update per frame (`showNorms`); player.js calls both.
// The panel's own layout rules live here (`.tp-health-*`), so a number's
// column never depends on the width the page gives the panel: numbers wrap
// between items, never inside one.

const HEALTH_MARK = { nan: "NaN", none: "None", flagged: "!", ok: "" };
const HEALTH_STYLE = `<style>
.tp-health-summary { margin-bottom: 0.3em; }
.tp-health-row { padding: 0.2em 0; border-top: 1px solid #eaeef2; }
.tp-health-head { display: flex; gap: 0.3em; align-items: baseline; min-width: 0; }
.tp-health-name { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; min-width: 0; }
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
.tp-health-nan .tp-norm-fill { background: #cf222e; }
</style>`;

// A number in 3 significant digits, the exponent unpadded: 1.87e-9, 4.56e3, 0.25, 2.
function healthNumber(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  if (v === 0) return "0";
  // An exponent below 1e-3 and from 1e3 up (toPrecision gives 1.23e+3, shown 1.23e3).
  const small = Math.abs(v) < 1e-3;
  let [mantissa, exponent] = (small ? Number(v).toExponential(2) : Number(v).toPrecision(3)).split("e");
  if (mantissa.includes(".")) mantissa = mantissa.replace(/0+$/, "").replace(/\.$/, "");
  return exponent === undefined ? mantissa : `${mantissa}e${Number(exponent)}`;
}

// The rows to draw: the health rows, or (an older replay) one per group with norms.
function healthRows(data) {
  const debug = data.debug || {};
  if (debug.health) return debug.health;
  const norms = debug.group_norms || {};
  return (data.groups || []).filter((g) => norms[g.id]).map((g) => ({
    group: g.id, scope: g.scope, status: "ok", flags: [], variables: [], grad_of: "inputs",
    grad_norm: norms[g.id][norms[g.id].length - 1][1], weight_norm: null, ratio: null }));
}

function healthRowMarkup(row) {
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
  return `<div class="tp-health-row tp-health-${esc(row.status)}" data-group="${esc(row.group)}" ` +
    `data-status="${esc(row.status)}" title="${esc(tip)}">` +
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
  const rows = healthRows(data);
  if (!rows.length) return "";
  const count = (s) => rows.filter((r) => r.status === s).length;
  const parts = [`${rows.length} scope${rows.length === 1 ? "" : "s"}`];
  for (const [s, word] of [["nan", "NaN"], ["none", "None"], ["flagged", "flagged"]]) {
    if (count(s)) parts.push(`${count(s)} ${word}`);
  }
  return `<div class="tp-norms tp-health">${HEALTH_STYLE}` +
    `<div class="tp-norms-title">gradient health by scope</div>` +
    `<div class="tp-health-summary">${esc(parts.join(" · "))}</div>` +
    rows.map(healthRowMarkup).join("") + `</div>`;
}

// The running norm of group `gid` at frame k (the last entry at or before k).
function normAt(series, k) {
  let lo = 0, hi = series.length - 1, value = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (series[mid][0] <= k) { value = series[mid][1]; lo = mid + 1; } else hi = mid - 1;
  }
  return value;
}

// Grows each row's bar to what its group has sent back by frame k, on a log
// scale from a thousandth of the largest final norm to the largest.
function showNorms(root, data, k) {
  const norms = (data.debug && data.debug.group_norms) || {};
  const rows = root.querySelectorAll(".tp-health-row");
  if (!rows.length) return;
  const finals = Object.values(norms).map((s) => s[s.length - 1][1]).filter((v) => v > 0);
  const top = Math.max(1e-30, ...finals);
  const floor = top / 1e3;
  rows.forEach((row) => {
    const value = norms[row.dataset.group] ? normAt(norms[row.dataset.group], k) : 0;
    const share = value > floor ? Math.log(value / floor) / Math.log(top / floor) : (value > 0 ? 0.02 : 0);
    row.querySelector(".tp-norm-fill").style.width = `${(100 * Math.min(1, share)).toFixed(1)}%`;
  });
}
