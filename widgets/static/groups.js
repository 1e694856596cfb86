// Scope groups, search and debugging jumps of the tape player (part 3 of the
// module; see graph.js). Groups come from widgets/scopes.py: `data.groups`
// (members, a box around them) and `data.debug` (first NaN/Inf frames,
// per-group gradient norms over the backward pass).
//
// A collapsed group hides its members and the edges inside it, and draws one
// box (`.tp-group-cover`) over them that lights up while the backward pass
// runs through it: playing, the pass moves group by group (the step buttons
// and arrow keys still go record by record). Clicking the box expands
// the group; clicking an expanded group's label collapses it again.

const COLLAPSE_ABOVE_OPS = 30;   // bigger tapes open with every group collapsed

function groupsMarkup(data) {
  const frames = [], covers = [];
  for (const g of data.groups || []) {
    const b = g.box;
    const label = `${clip(g.scope, 40)} · ${g.ops.length} op${g.ops.length === 1 ? "" : "s"}`;
    frames.push(`<g class="tp-group-frame" data-group="${g.id}">` +
      `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="10"/>` +
      `<text class="tp-group-label" x="${b.x + 8}" y="${b.y + 14}">▾ ${esc(label)}</text></g>`);
    covers.push(`<g class="tp-group-cover" data-group="${g.id}" role="button">` +
      `<title>${esc(g.scope)}: click to expand</title>` +
      `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="10"/>` +
      `<text x="${b.x + b.w / 2}" y="${b.y + b.h / 2 + 5}">▸ ${esc(label)}</text>` +
      `<rect class="tp-group-norm" x="${b.x + 8}" y="${b.y + b.h - 12}" width="0" height="6"/></g>`);
  }
  return { frames: frames.join(""), covers: covers.join("") };
}

// A group's box (left, top, w, h) as the centre form the layout's nodes use.
const centre = (b) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2, w: b.w, h: b.h });

// Everything the group, search and debug controls need, bound to one view.
function createGroups(root, data, hooks) {
  const groups = data.groups || [];
  const byId = {}, groupOfNode = {}, groupOfEdge = {};
  for (const g of groups) {
    byId[g.id] = g;
    for (const m of g.members) groupOfNode[m] = g.id;
  }
  const copyOf = {};
  for (const c of data.layout.copies || []) copyOf[c.id] = c;
  const endOf = (e) => (e.kind === "in" && copyOf[e.from + "@" + e.op] ? e.from + "@" + e.op : e.from);
  for (const e of data.edges) {
    const a = groupOfNode[endOf(e)], b = groupOfNode[e.to];
    if (a && a === b) groupOfEdge[e.id] = a;
  }
  const nOps = data.nodes.filter((n) => n.type === "op").length;
  const collapsed = new Set(nOps > COLLAPSE_ABOVE_OPS ? groups.map((g) => g.id) : []);
  const els = {};
  root.querySelectorAll(".tp-node").forEach((n) => {
    const g = groupOfNode[n.dataset.id];
    if (g) (els[g] = els[g] || []).push(n);
  });
  root.querySelectorAll(".tp-edge").forEach((p) => {
    const g = groupOfEdge[p.dataset.id];
    if (g) (els[g] = els[g] || []).push(p);
  });
  const covers = {}, frames = {};
  root.querySelectorAll(".tp-group-cover").forEach((c) => { covers[c.dataset.group] = c; });
  root.querySelectorAll(".tp-group-frame").forEach((f) => { frames[f.dataset.group] = f; });

  function apply(gid) {
    const hidden = collapsed.has(gid);
    for (const el of els[gid] || []) el.classList.toggle("tp-hidden", hidden);
    covers[gid].classList.toggle("tp-hidden", !hidden);
    frames[gid].classList.toggle("tp-hidden", hidden);
  }
  function setCollapsed(gid, on) {
    if (on) collapsed.add(gid); else collapsed.delete(gid);
    apply(gid);
    root.dataset.collapsed = String(collapsed.size);
  }
  for (const g of groups) {
    apply(g.id);
    covers[g.id].addEventListener("click", () => setCollapsed(g.id, false));
    frames[g.id].querySelector(".tp-group-label").addEventListener("click", () => setCollapsed(g.id, true));
  }
  root.dataset.collapsed = String(collapsed.size);
  root.dataset.groups = String(groups.length);

  // The box to follow for node `id`: its group's while the group is collapsed.
  function boxOf(id) {
    const gid = groupOfNode[id];
    return gid && collapsed.has(gid) ? centre(byId[gid].box) : data.layout.nodes[id];
  }

  // Lights the collapsed groups the frame touches, and grows each norm bar.
  const norms = (data.debug && data.debug.group_norms) || {};
  const maxNorm = Math.max(1e-12, ...Object.values(norms).map((s) => s[s.length - 1][1]));
  function show(frame, k) {
    const touched = new Set([frame.op].concat(frame.nodes).map((id) => groupOfNode[id]).filter(Boolean));
    for (const g of groups) {
      const cover = covers[g.id];
      cover.classList.toggle("tp-current", touched.has(g.id));
      const series = norms[g.id] || [];
      let value = 0;
      for (const [at, norm] of series) { if (at <= k) value = norm; else break; }
      cover.querySelector(".tp-group-norm").setAttribute("width",
        ((g.box.w - 16) * Math.sqrt(value / maxNorm)).toFixed(1));
    }
  }

  // Search by name: tensors, op labels and types, group scopes; Enter finds the next.
  let lastQuery = "", lastHit = -1;
  function find(query) {
    query = query.trim().toLowerCase();
    if (!query) return null;
    const hits = [];
    for (const g of groups) if (g.scope.toLowerCase().includes(query)) hits.push({ group: g.id });
    for (const n of data.nodes) {
      const text = (n.type === "op" ? n.label + " " + n.op_type : n.name).toLowerCase();
      if (text.includes(query)) hits.push({ node: n.id });
    }
    if (!hits.length) { root.dataset.found = ""; return null; }
    lastHit = query === lastQuery ? (lastHit + 1) % hits.length : 0;
    lastQuery = query;
    const hit = hits[lastHit];
    root.querySelectorAll(".tp-found").forEach((el) => el.classList.remove("tp-found"));
    if (hit.group) {
      covers[hit.group].classList.add("tp-found");
      hooks.reveal(centre(byId[hit.group].box));
    } else {
      const gid = groupOfNode[hit.node];
      if (gid && collapsed.has(gid)) setCollapsed(gid, false);
      const el = root.querySelector(`.tp-node[data-id="${hit.node}"]`);
      if (el) el.classList.add("tp-found");
      hooks.reveal(data.layout.nodes[hit.node]);
    }
    root.dataset.found = hit.group || hit.node;
    return hit;
  }

  // The first frame with a NaN or an Inf: forward values first, then cotangents.
  function firstNonfinite() {
    const first = (data.debug && data.debug.first_nonfinite) || {};
    return first.forward !== null && first.forward !== undefined ? first.forward
      : (first.backward !== null && first.backward !== undefined ? first.backward : null);
  }

  function expandFor(id) {
    const gid = groupOfNode[id];
    if (gid && collapsed.has(gid)) setCollapsed(gid, false);
  }

  // The collapsed group a frame's record belongs to (null when none or expanded).
  function collapsedGroup(frame) {
    const gid = frame && frame.op ? groupOfNode[frame.op] : null;
    return gid && collapsed.has(gid) ? gid : null;
  }

  return {
    boxOf, show, collapsedGroup, find, firstNonfinite, expandFor, setCollapsed,
    collapseAll: (on) => groups.forEach((g) => setCollapsed(g.id, on)),
    count: () => groups.length,
  };
}

function toolsMarkup(data) {
  const many = (data.groups || []).length > 0;
  return `<div class="tp-tools">` +
    `<input type="search" class="tp-search" placeholder="find a tensor, op or scope (Enter)" aria-label="find by name">` +
    (many ? `<button type="button" class="tp-btn tp-collapse-all" title="Collapse every scope">collapse all</button>` +
      `<button type="button" class="tp-btn tp-expand-all" title="Expand every scope">expand all</button>` : "") +
    `<button type="button" class="tp-btn tp-nan" title="Jump to the first NaN or Inf">first NaN/Inf</button>` +
    `<button type="button" class="tp-btn tp-lost" title="Where was a gradient lost?">lost gradient</button>` +
    `<span class="tp-debug" aria-live="polite"></span></div>`;
}

// Per-group gradient norms over the backward pass, as bars beside the graph.
function normsMarkup(data) {
  const norms = (data.debug && data.debug.group_norms) || {};
  const rows = (data.groups || []).filter((g) => norms[g.id]).map((g) =>
    `<div class="tp-norm-row" data-group="${g.id}" title="${esc(g.scope)}">` +
    `<span class="tp-norm-name">${esc(clip(g.scope, 18))}</span>` +
    `<span class="tp-norm-bar"><span class="tp-norm-fill"></span></span>` +
    `<span class="tp-norm-value"></span></div>`);
  return rows.length ? `<div class="tp-norms"><div class="tp-norms-title">‖gradient‖ by scope</div>${rows.join("")}</div>` : "";
}

function showNorms(root, data, k) {
  const norms = (data.debug && data.debug.group_norms) || {};
  const rows = root.querySelectorAll(".tp-norm-row");
  if (!rows.length) return;
  const top = Math.max(1e-12, ...Object.values(norms).map((s) => s[s.length - 1][1]));
  rows.forEach((row) => {
    let value = 0;
    for (const [at, norm] of norms[row.dataset.group]) { if (at <= k) value = norm; else break; }
    row.querySelector(".tp-norm-fill").style.width = `${(100 * value / top).toFixed(1)}%`;
    row.querySelector(".tp-norm-value").textContent = value ? String(value) : "";
  });
}
