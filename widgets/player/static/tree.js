// The scope tree in the browser (part 2 of the module; see graph.js): which
// boxes are open, and where everything that shows goes. The boxes and each
// box's layers come from widgets/player/layout/scope_tree.py
// (`data.layout.tree`); the placement is placement.place and
// bands.flow_layout (flow.js) again, run here because opening a box re-flows its
// neighbourhood: layers go left to right and wrap into bands top to bottom,
// so a long chain fills the stage.
//
// Cost: a box's placement is kept until a box inside it opens or closes, so
// opening one box re-places only the boxes around it, and the reps (what
// shows for a node: itself, or the closed box it is in) are one walk up.
// Each edge is filed under the box that holds both its ends, so the edges of
// closed boxes cost nothing and drawing looks only inside the boxes in view
// (within); the path around the stage is in graph.js (route). What "expand
// all" shows (every box placed, its rectangles and edges) is made ahead, in
// short tasks after the page opens (warm), so the click only swaps it in.

const TREE = { PAD: 14, HEAD: 30, BOX_H: 64, LAYER_GAP: 48, NODE_GAP: 22, BAND_GAP: 56, MARGIN: 16,
  OPEN_UP_TO: 24 };
const NODE_SIZE = { tensor: [132, 90], op: [96, 84], copy: [84, 30] };

function createTree(data) {
  const boxes = data.layout.tree;
  const home = new Map();            // item -> index of the box it is drawn in
  const layerOf = new Map();         // item -> its layer in that box
  boxes.forEach((b, k) => b.layers.forEach((lay, i) => lay.forEach((it) => {
    home.set(it, k); layerOf.set(it, i);
  })));
  const children = boxes.map(() => []);
  boxes.forEach((b, k) => { if (b.parent >= 0) children[b.parent].push(k); });
  const depth = boxes.map((b) => { let d = 0; for (let p = b.parent; p >= 0; p = boxes[p].parent) d++; return d; });
  const nodeById = new Map(data.nodes.map((n) => [n.id, n]));
  const isBox = (id) => id.charCodeAt(0) === 98;   // "b<k>" (nodes are "t…" and "op…")
  const boxIndex = (id) => Number(id.slice(1));
  const ends = new Map(data.edges.map((e) => [e, e.kind === "in" && home.has(e.from + "@" + e.op) ? e.from + "@" + e.op : e.from]));
  const endOf = (e) => ends.get(e);

  // The box holding both ends, and the item under it on each side (scope_tree._common).
  function common(a, b) {
    let ha = home.get(a), hb = home.get(b), ia = a, ib = b;
    if (ha === undefined || hb === undefined) return null;
    while (depth[ha] > depth[hb]) { ia = "b" + ha; ha = boxes[ha].parent; }
    while (depth[hb] > depth[ha]) { ib = "b" + hb; hb = boxes[hb].parent; }
    while (ha !== hb) { ia = "b" + ha; ha = boxes[ha].parent; ib = "b" + hb; hb = boxes[hb].parent; }
    return [ha, ia, ib];
  }
  // Each box's item -> the items it reads from earlier layers (for placing only).
  // Also each edge's box holding both ends (-1: an end outside every box).
  const left = boxes.map(() => new Map());
  const edgeBox = [];
  for (const e of data.edges) {
    const c = common(endOf(e), e.to);
    edgeBox.push(c ? c[0] : -1);
    if (!c || c[1] === c[2] || !(layerOf.get(c[1]) < layerOf.get(c[2]))) continue;
    const m = left[c[0]];
    if (!m.has(c[2])) m.set(c[2], []);
    if (!m.get(c[2]).includes(c[1])) m.get(c[2]).push(c[1]);
  }

  // Open at first: the root, then whole levels of boxes of boxes while no more
  // than OPEN_UP_TO boxes show (placement.default_open with small=0): the page
  // opens at the level of the scopes.
  function defaultOpen() {
    const opened = new Set([0]);
    let level = [0], shown = children[0].length;
    while (level.length) {
      const next = level.flatMap((b) => children[b].filter((c) => children[c].length));
      const more = next.reduce((s, c) => s + children[c].length - 1, 0);
      if (!next.length || shown + more > TREE.OPEN_UP_TO) break;
      next.forEach((c) => opened.add(c));
      shown += more;
      level = next;
    }
    return opened;
  }
  const open = defaultOpen();
  const flows = new Map();           // box index -> its placed content (kept until dirty)
  // The same for every box with content open (what "expand all" shows), placed
  // while the page is idle (warm), so expand all re-places nothing.
  const fullFlows = new Map();
  const filled = (k) => k === 0 || children[k].length + boxes[k].layers.length > 0;
  let boxRep = null;
  let aspect = 16 / 9, minBand = 880;

  function closedSize(b) {
    const text = Math.max(b.label.length * 9, (b.sub || "").length * 7);
    return [Math.min(Math.max(text + 36, 150), 300), TREE.BOX_H];
  }
  function sizeOf(item, full) {
    if (isBox(item)) {
      const k = boxIndex(item);
      if (!(full ? filled(k) : open.has(k))) return closedSize(boxes[k]);
      const f = place(k, full);
      return [f.width + 2 * TREE.PAD, f.height + TREE.PAD + TREE.HEAD];
    }
    if (item.includes("@")) return NODE_SIZE.copy;
    return NODE_SIZE[nodeById.get(item).type];
  }
  // The steps of an unrolled loop have one shape: a box of nodes only is placed once
  // per shape (its kinds of node, and who reads whom) and moved for the others.
  const shapes = new Map();
  function shapeOf(k) {
    const flat = boxes[k].layers.flat(), index = new Map(flat.map((it, i) => [it, i]));
    const kinds = boxes[k].layers.map((lay) => lay.map((it) => (it.includes("@") ? "c" : it[0])).join("")).join("|");
    const reads = [];
    for (const [y, xs] of left[k]) for (const x of xs) reads.push(index.get(y) + ">" + index.get(x));
    return [kinds + "/" + reads.join(","), flat];
  }
  // full: as if every box with content were open (fullFlows; a leaf's content is
  // the same either way, so leaves stay in flows).
  function place(k, full) {
    const leaf = !children[k].length && boxes[k].layers.length;
    const store = full && !leaf ? fullFlows : flows;
    let f = store.get(k);
    if (f) return f;
    const b = boxes[k];
    const [key, flat] = leaf ? shapeOf(k) : [null, null];
    const like = leaf ? shapes.get(key) : null;
    if (like) {                      // the shape's items with this box's names (same kinds, same sizes)
      const [g, order] = like;
      f = { width: g.width, height: g.height, bands: g.bands,
        items: g.items.map((it, m) => [flat[order[m]], it[1], it[2], it[3], it[4], it[5], -1]) };
      store.set(k, f);
      return f;
    }
    const sizes = new Map();
    for (const lay of b.layers) for (const it of lay) sizes.set(it, sizeOf(it, full));
    f = b.layers.length ? flowLayout(b.layers, sizes, left[k], bandWidth(b.layers, sizes))
      : { positions: new Map(), width: 120, height: 40, bands: [], bandOf: new Map() };
    // what layout needs of each item, found once: [item, x, y, w, h, its band's bottom, box or -1]
    f.items = [];
    for (const [item, [x, y]] of f.positions) {
      const [w, h] = sizes.get(item);
      f.items.push([item, x, y, w, h, f.bands[f.bandOf.get(item)][1], isBox(item) ? boxIndex(item) : -1]);
    }
    if (leaf) {                      // where each item of the shape is in the box's flat list
      const at = new Map(flat.map((it, i) => [it, i]));
      shapes.set(key, [f, f.items.map(([item]) => at.get(item))]);
    }
    store.set(k, f);
    return f;
  }
  function bandWidth(layers, sizes) {
    const widths = layers.map((lay) => Math.max(...lay.map((n) => sizes.get(n)[0])));
    const heights = layers.map((lay) => lay.reduce((s, n) => s + sizes.get(n)[1], 0) + TREE.NODE_GAP * (lay.length - 1));
    const natural = widths.reduce((s, w) => s + w, 0) + TREE.LAYER_GAP * (layers.length - 1);
    let area = 0;
    widths.forEach((w, i) => { area += (w + TREE.LAYER_GAP) * (heights[i] + TREE.BAND_GAP); });
    const want = Math.max(Math.max(...widths), Math.sqrt(area * aspect), minBand);
    return natural <= 1.15 * want ? natural : want;
  }
  // Box k opened or closed: the boxes around it must be placed again (its own
  // content stays where it was).
  function dirty(k) {
    boxRep = null;
    for (k = boxes[k].parent; k >= 0; k = boxes[k].parent) flows.delete(k);
  }
  // Right after the page opens, in background tasks of about 12 ms (a click waits
  // at most one), place the boxes that hold only nodes (most of a long tape), so
  // that opening many boxes at once only places the boxes around them; then the
  // boxes of boxes as expand all shows them (deepest first) and their rectangles,
  // so that expand all places nothing (at 10,017 records, 20,000 nodes: about
  // 150 ms of work done before the click instead of after it).
  const leaves = boxes.map((b, k) => k).filter((k) => k > 0 && !children[k].length);
  const inner = boxes.map((b, k) => k).filter((k) => children[k].length).sort((a, b) => depth[b] - depth[a]);
  let warming = null;                // cancels the pending task
  function later(task) {
    if (window.scheduler && window.scheduler.postTask && window.TaskController) {
      const control = new TaskController({ priority: "user-visible" });
      window.scheduler.postTask(task, { signal: control.signal }).catch(() => {});
      return () => control.abort();
    }
    const t = setTimeout(task, 0);
    return () => clearTimeout(t);
  }
  function warm() {
    if (warming !== null) warming();
    let i = 0, j = 0;
    const step = () => {
      const until = performance.now() + 12;
      while (i < leaves.length && performance.now() < until) place(leaves[i++]);
      while (i >= leaves.length && j < inner.length && performance.now() < until) place(inner[j++], true);
      if (j >= inner.length && !fullLaid && performance.now() < until) {
        fullLaid = putAll((k) => fullFlows.get(k) || flows.get(k), filled);
        fullEdges = expandedEdges();
      }
      warming = fullLaid ? null : later(step);
    };
    warming = later(step);
  }

  // Absolute rectangles (centre, size, band bottom) of everything that shows, and
  // inside: each open box's items (as in place's items).
  let rects = new Map(), inside = new Map(), width = 0, height = 0;
  let fullLaid = null;               // putAll of the expanded placement, made by warm
  function putAll(flowOf, isOpen) {
    const laid = { root: flowOf(0), rects: new Map(), inside: new Map() };
    const put = (k, ox, oy) => {
      laid.inside.set(k, flowOf(k).items);
      for (const [item, x, y, w, h, band, c] of flowOf(k).items) {
        const rect = { x: ox + x, y: oy + y, w, h, band: band + oy };
        if (c >= 0) {
          rect.open = isOpen(c);
          if (rect.open) put(c, ox + x - w / 2 + TREE.PAD, oy + y - h / 2 + TREE.HEAD);
        }
        laid.rects.set(item, rect);
      }
    };
    put(0, TREE.MARGIN, TREE.MARGIN);
    return laid;
  }
  // aspect: the stage's width / height; band: the stage's width in units at a readable zoom.
  function layout(newAspect, band) {
    if (Math.abs(newAspect - aspect) > 1e-3 || Math.abs(band - minBand) > 1) {
      aspect = newAspect; minBand = band; flows.clear(); fullFlows.clear(); shapes.clear();
      fullLaid = fullEdges = null;
      warm();
    }
    const root = place(0);
    // expanded (setAll copied fullFlows, so the root is the expanded one): warm's rectangles
    const laid = fullLaid && fullLaid.root === root ? fullLaid : putAll((k) => flows.get(k), (k) => open.has(k));
    if (!fullLaid && root === fullFlows.get(0)) fullLaid = laid;
    ({ rects, inside } = laid);
    width = root.width + 2 * TREE.MARGIN;
    height = root.height + 2 * TREE.MARGIN;
    return rects;
  }

  // What shows for a node or box: the outermost closed box around it, else itself.
  // boxRep[k]: that box for box k and what is in it (null when all are open).
  const byDepth = boxes.map((b, k) => k).sort((a, b) => depth[a] - depth[b]);
  const rep = (id) => repIn(home.get(id), id);
  function repIn(k, id) {            // k: the box id is drawn in (undefined: none)
    if (k === undefined) return id;
    if (!boxRep) {
      boxRep = new Array(boxes.length).fill(null);
      for (const b of byDepth) {
        const up = boxes[b].parent >= 0 ? boxRep[boxes[b].parent] : null;
        boxRep[b] = up || (b > 0 && !open.has(b) ? "b" + b : null);
      }
    }
    return boxRep[k] || id;
  }
  function setOpen(k, on) {
    if (k <= 0 || open.has(k) === !!on) return false;
    if (on) open.add(k); else open.delete(k);
    dirty(k);
    return true;
  }
  // Opens every box around `id` (a node or a box); true when one opened.
  function reveal(id) {
    let changed = false;
    for (let k = home.get(id); k > 0; k = boxes[k].parent) changed = setOpen(k, true) || changed;
    return changed;
  }
  function setAll(on) {
    boxes.forEach((b, k) => { if (k > 0 && filled(k)) setOpen(k, on); });
    // every box with content open, and no other: the placement warm made ahead
    if (on && boxes.every((b, k) => open.has(k) === filled(k))) {
      for (const [k, f] of fullFlows) flows.set(k, f);
    }
  }

  // The edges that show: one per pair of shown ends, with the data edges it stands for,
  // listed by the box that holds both ends (edgesIn). An edge inside a closed box never
  // shows (both its ends are that box), so it is skipped at once; an edge between two
  // shown nodes keeps its entry from call to call.
  const endAt = data.edges.map(endOf), endHome = endAt.map((id) => home.get(id));
  // Every field an entry gets later (order, box, path) is there from the start: entries whose
  // shape changed along the way made "expand all" set box and path on 25,679 of them in
  // 120-140 ms instead of 1-6 (Chromium, 10,017 records), depending on what ran before.
  const own = data.edges.map((e, i) => ({ id: e.id, from: endAt[i], to: e.to, edges: [e], order: i, box: null, path: null }));  // while both ends show
  const toHome = data.edges.map((e) => home.get(e.to));
  let edgesIn = new Map(), fullEdges = null;
  // What shownEdges gives with every box with content open: each data edge between
  // two different ends is its own (an empty box holds no node, so every node shows).
  function expandedEdges() {
    const out = [], byBox = new Map();
    own.forEach((s, i) => {
      if (endAt[i] === s.to) return;
      s.order = i;
      if (!byBox.has(edgeBox[i])) byBox.set(edgeBox[i], []);
      byBox.get(edgeBox[i]).push(s);
      out.push(s);
    });
    return { out, edgesIn: byBox };
  }
  function shownEdges() {
    // expanded: the same edges as the last time (only their bounds and paths are found anew)
    if (fullLaid && rects === fullLaid.rects && fullEdges) {
      for (const s of fullEdges.out) { s.box = null; s.path = null; }
      edgesIn = fullEdges.edgesIn;
      return fullEdges.out;
    }
    const showing = new Array(boxes.length);     // the box is open, and so is every box around it
    for (const k of byDepth) showing[k] = open.has(k) && (boxes[k].parent < 0 || showing[boxes[k].parent]);
    const out = [], pairs = new Map();
    edgesIn = new Map();
    const add = (s, i) => {
      s.order = i; s.box = null; s.path = null;     // placed again: bounds and path found anew
      if (!edgesIn.has(edgeBox[i])) edgesIn.set(edgeBox[i], []);
      edgesIn.get(edgeBox[i]).push(s);
      out.push(s);
    };
    for (let i = 0; i < data.edges.length; i++) {
      if (edgeBox[i] >= 0 && !showing[edgeBox[i]]) continue;
      const e = data.edges[i], end = endAt[i], a = repIn(endHome[i], end), b = repIn(toHome[i], e.to);
      if (a === b) continue;
      // two shown nodes: the edge itself (x * x keeps both); else one per pair of ends
      if (a === end && b === e.to) { add(own[i], i); continue; }
      const key = a + ">" + b, s = pairs.get(key);
      if (s) { s.edges.push(e); continue; }
      const pair = { id: key, from: a, to: b, edges: [e], order: i, box: null, path: null };
      pairs.set(key, pair);
      add(pair, i);
    }
    if (fullLaid && rects === fullLaid.rects) fullEdges = { out, edgesIn };
    return out;
  }
  // The box that bounds an edge's path, found when the edge is near the view (false:
  // an end is not placed); the path is written only when the edge is drawn (pathOf).
  function bound(s) {
    if (s.box !== null) return s.box;
    const ra = rects.get(s.from), rb = rects.get(s.to);
    if (!ra || !rb) return (s.box = false);
    return (s.box = [Math.min(ra.x - ra.w / 2, rb.x - rb.w / 2) - 30, Math.min(ra.y, rb.y) - 30,
      Math.max(ra.x + ra.w / 2, rb.x + rb.w / 2) + 30,
      Math.max(ra.y, rb.y, rb.x - rb.w / 2 < ra.x + ra.w / 2 ? ra.band + 28 : 0) + 30]);
  }
  // What meets [x0, x1] x [y0, y1]: the rectangles (in the order of rects()) and the
  // shown edges whose bounds meet it (in the order of shownEdges()). A box that does
  // not meet it is passed over with all it holds: its edges' bounds stay within 30
  // units of it.
  function within(x0, y0, x1, y1) {
    const items = [], edges = [];
    const meets = (r, m) => r.x + r.w / 2 + m >= x0 && r.x - r.w / 2 - m <= x1 &&
      r.y + r.h / 2 + m >= y0 && r.y - r.h / 2 - m <= y1;
    const walk = (k) => {
      for (const s of edgesIn.get(k) || []) {
        const b = bound(s);
        if (b && b[2] >= x0 && b[0] <= x1 && b[3] >= y0 && b[1] <= y1) edges.push(s);
      }
      for (const [id, , , , , , c] of inside.get(k)) {
        const r = rects.get(id);
        if (c >= 0 && r.open && meets(r, 30)) walk(c);
        if (meets(r, 0)) items.push([id, r]);
      }
    };
    walk(0);
    return { items, edges: edges.sort((a, b) => a.order - b.order) };
  }
  function pathOf(s) {
    if (s.path) return s.path;
    const e = s.edges[0], ra = rects.get(s.from), rb = rects.get(s.to);
    const fan = s.edges.length === 1 && e.kind === "in" && s.to === e.to ? fanOf(e) : 0;
    const c = common(s.from, s.to);
    const gap = c && rects.get(c[1]) ? rects.get(c[1]).band + 28 : null;
    s.path = route(ra, rb, port(s.from, ra), port(s.to, rb), fan, gap);
    return s.path;
  }
  const inputs = new Map();
  for (const e of data.edges) if (e.kind === "in") inputs.set(e.op, (inputs.get(e.op) || 0) + 1);
  const fanOf = (e) => (e.slot - (inputs.get(e.op) - 1) / 2) * 12;
  const port = (id, r) => (id.startsWith("op") && !id.includes("@") ? 26 : r.w / 2);

  return {
    boxes, children, home, open, layout, rep, setOpen, reveal, setAll, shownEdges, within, pathOf, isBox, boxIndex,
    rects: () => rects, size: () => [width, height], endOf, nodeById, expandedReady: () => fullEdges !== null,
  };
}
