// Opening and closing boxes, search and debugging jumps of the tape player
// (part 5 of the module; see graph.js). The boxes are the scope tree's
// (tree.js); `data.debug` (widgets/player/data/scopes.py) gives the first
// NaN/Inf frames and the per-group gradient norms that fill each closed box's
// bar, and its health rows the badge a closed box wears (its worst row's word).
//
// A closed box hides everything in it and lights up while the backward pass
// runs through it: playing, the pass moves box by box (the step buttons and
// arrow keys still go record by record). Clicking a closed box opens it;
// clicking an open box's name closes it. Either way the boxes around it
// re-flow, and the box stays where it was on screen.

function createGroups(root, data, tree, hooks) {
  const boxes = tree.boxes;
  const byScope = new Map();
  for (const g of data.groups || []) byScope.set(g.scope, g.id);
  const norms = (data.debug && data.debug.group_norms) || {};
  // A series ends in a number, or in "NaN"/"Inf" (not finite); an empty one: no gradient.
  const maxNorm = Math.max(1e-12, ...Object.values(norms).filter((s) => s.length)
    .map((s) => s[s.length - 1][1]).filter((v) => typeof v === "number"));
  // Each scope path -> the norm series of the scope groups at or under it, found in
  // one pass over the groups (asking every group for every box cost 20 ms an opening
  // on a 10,000-record tape).
  const under = new Map();
  for (const [scope, gid] of byScope) {
    if (!norms[gid] || !norms[gid].length) continue;
    const parts = scope.split("/");
    for (let d = 1; d <= parts.length; d++) {
      const path = parts.slice(0, d).join("/");
      if (!under.has(path)) under.set(path, []);
      under.get(path).push(norms[gid]);
    }
  }
  const series = (k) => (boxes[k].kind === "scope" && under.get(boxes[k].path)) || [];
  // The running gradient norm of what box k's ops have sent back by frame k
  // (Infinity once one of them sent a NaN or an Inf).
  function boxNorm(k, frame) {
    let sq = 0;
    for (const s of series(k)) {
      const v = normAt(s, frame);
      if (typeof v !== "number") return Infinity;
      sq += v * v;
    }
    return Math.sqrt(sq);
  }
  // The bar's width; a NaN/Inf norm fills the box (normBad: drawn red).
  const normWidth = (k, frame, w) => ((w - 16) * Math.min(1, Math.sqrt(boxNorm(k, frame) / maxNorm))).toFixed(1);
  const normBad = (k, frame) => boxNorm(k, frame) === Infinity;

  // Each scope's worst health row (widgets/health/triage.py: the smallest rank), for
  // the badge on its closed box: the overview shows where the problems are.
  const worst = new Map();
  for (const row of (data.debug && data.debug.health) || []) {
    const kind = row.kinds && row.kinds[0];
    if (!kind) continue;
    const parts = row.scope.split("/");
    for (let d = parts.length; d >= 1; d--) {
      const path = parts.slice(0, d).join("/"), w = worst.get(path);
      if (!w || row.rank < w.rank) worst.set(path, { rank: row.rank, kind, status: row.status });
    }
  }
  // A box's worst row: a scope's own, and a range of boxes (a long stack cut in
  // ranges) the worst of the boxes in it.
  const boxWorst = boxes.map((b) => (b.kind === "scope" ? worst.get(b.path) || null : null));
  boxes.forEach((b, k) => {
    const w = boxWorst[k];
    for (let p = w ? b.parent : -1; p > 0; p = boxes[p].parent) {
      if (boxes[p].kind !== "scope" && (!boxWorst[p] || w.rank < boxWorst[p].rank)) boxWorst[p] = w;
    }
  });
  // [word, status] of box k's worst row, or null (a healthy box).
  function badge(k) {
    const w = boxWorst[k];
    return w ? [w.kind, w.status] : null;
  }

  function count() {
    let closed = 0;
    boxes.forEach((b, k) => { if (k > 0 && !tree.open.has(k)) closed++; });
    root.dataset.groups = String(boxes.length - 1);
    root.dataset.collapsed = String(closed);
  }

  // Opens (on) or closes box k, keeping the box at its place on screen.
  function toggle(k, on) {
    const id = "b" + k;
    const before = tree.rects().get(id);
    if (!tree.setOpen(k, on)) return;
    hooks.relayout(() => {
      const after = tree.rects().get(id);
      if (before && after) {
        return [before.x - before.w / 2, before.y - before.h / 2, after.x - after.w / 2,
          after.y - after.h / 2, on ? after : null];
      }
      return null;
    });
    count();
  }

  // Expand all lands on the current record at a readable zoom, collapse all on the
  // overview (hooks.land), not on the old view of a drawing that changed under it.
  function setAll(on) {
    tree.setAll(on);
    hooks.relayout(null);
    if (hooks.land) hooks.land(on);
    count();
  }

  // Opens every box around node or box `id`; true when the drawing changed.
  function expandFor(id) {
    if (!id || !tree.reveal(id)) return false;
    hooks.relayout(null);
    count();
    return true;
  }

  // Search by name: tensors, op labels and types, boxes; Enter finds the next.
  let lastQuery = "", lastHit = -1, keys = null;
  function find(query) {
    query = query.trim().toLowerCase();
    if (!query) return null;
    if (!keys) {
      keys = boxes.map((b, k) => [k ? "b" + k : null, (b.path + " " + b.label).toLowerCase()]).filter(([id]) => id)
        .concat(data.nodes.map((n) => [n.id, (n.type === "op" ? n.label + " " + n.op_type : n.name).toLowerCase()]));
    }
    const hits = [];
    for (const [id, text] of keys) if (text.includes(query)) hits.push(id);
    if (!hits.length) { root.dataset.found = ""; return null; }
    lastHit = query === lastQuery ? (lastHit + 1) % hits.length : 0;
    lastQuery = query;
    const hit = hits[lastHit];
    expandFor(hit);
    hooks.found(hit);
    root.dataset.found = hit;
    return { node: tree.isBox(hit) ? null : hit, group: tree.isBox(hit) ? hit : null };
  }

  // The first frame with a NaN or an Inf: forward values first, then cotangents.
  function firstNonfinite() {
    const first = (data.debug && data.debug.first_nonfinite) || {};
    return first.forward !== null && first.forward !== undefined ? first.forward
      : (first.backward !== null && first.backward !== undefined ? first.backward : null);
  }

  // The closed box a frame's record is in (null when none).
  function collapsedGroup(frame) {
    const r = frame && frame.op ? tree.rep(frame.op) : null;
    return r && tree.isBox(r) ? r : null;
  }

  // Clicks on boxes: a closed box opens, an open box's name closes it.
  root.querySelector(".tp-svg").addEventListener("click", (ev) => {
    const cover = ev.target.closest(".tp-group-cover");
    const label = ev.target.closest(".tp-group-label");
    if (cover) toggle(tree.boxIndex(cover.dataset.group), true);
    else if (label) toggle(tree.boxIndex(label.closest(".tp-group-frame").dataset.group), false);
  });
  count();

  return { toggle, setAll, find, firstNonfinite, expandFor, collapsedGroup, normWidth, normBad, count, badge };
}

function toolsMarkup(data) {
  const many = (data.layout.tree || []).length > 1;
  return `<div class="tp-tools">` +
    `<input type="search" class="tp-search" placeholder="find a tensor, op or scope" title="find by name: type, then press Enter" aria-label="find by name">` +
    (many ? `<button type="button" class="tp-btn tp-collapse-all" title="Close every box">collapse all</button>` +
      `<button type="button" class="tp-btn tp-expand-all" title="Open every box">expand all</button>` : "") +
    `<button type="button" class="tp-btn tp-nan" title="Jump to the first NaN or Inf">first NaN/Inf</button>` +
    `<button type="button" class="tp-btn tp-lost" title="Where was a gradient lost?">lost gradient</button>` +
    `<span class="tp-debug" aria-live="polite"></span></div>`;
}
