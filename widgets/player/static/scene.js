// Drawing only what is in view (part 3 of the module; see graph.js).
//
// What shows comes from tree.js: the placed rectangles (open boxes, closed
// boxes, nodes, copies) and the edges between shown ends, each with its
// bounds. draw(view) keeps elements for those that meet the view (plus a
// margin) and removes the others, so the page holds a few hundred elements
// whatever the tape's length. Zoomed out (or with too many nodes in view)
// nodes and edges become plain shapes in a few paths, and far out only the
// boxes remain: level of detail. restyle() gives the live elements the
// classes and texts of the current frame; elements made later get them as
// they are made.

const DETAIL_SCALE = 0.3;      // pixels per unit below which nodes are plain shapes
const PLAIN_SCALE = 0.05;      // ... and below which only boxes are drawn
const MAX_DETAILED = 1200;     // more nodes in view than this: plain shapes too
const MAX_PLAIN = 20000;

function createScene(svg, data, tree, hooks) {
  const NS = svg.namespaceURI;     // (no URL in the page: it must not look like a request)
  const layer = (cls) => {
    const g = document.createElementNS(NS, "g");
    g.setAttribute("class", cls);
    svg.appendChild(g);
    return g;
  };
  const groups = { frames: layer("tp-group-frames"), edges: layer("tp-edges"), plain: layer("tp-plain"),
    nodes: layer("tp-nodes"), covers: layer("tp-group-covers") };
  const plain = {};
  for (const cls of ["tp-plain-edges", "tp-plain-done", "tp-plain-pending", "tp-plain-current"]) {
    plain[cls] = document.createElementNS(NS, "path");
    plain[cls].setAttribute("class", cls);
    groups.plain.appendChild(plain[cls]);
  }
  const live = new Map();      // key -> {el, entry}
  let lastView = null, detailed = true;

  // After the boxes moved (a box opened, the stage changed shape): the next draw
  // (the view's) makes the elements again.
  function rebuild() {
    // one call per layer, not one removal per element (a thousand after "expand all")
    for (const key of ["frames", "edges", "nodes", "covers"]) groups[key].replaceChildren();
    live.clear();
    tree.shownEdges();
  }

  function draw(view) {
    lastView = view;
    const m = 0.25 * Math.max(view.w, view.h);
    const x0 = view.x - m, y0 = view.y - m, x1 = view.x + view.w + m, y1 = view.y + view.h + m;
    const boxes = [], nodes = [], { items, edges: near } = tree.within(x0, y0, x1, y1);
    for (const [id, r] of items) (tree.isBox(id) ? boxes : nodes).push([id, r]);
    detailed = view.scale >= DETAIL_SCALE && nodes.length <= MAX_DETAILED;
    const wanted = new Set();
    const made = { frames: [], edges: [], nodes: [], covers: [] };
    const want = (key, entry, where) => {
      wanted.add(key);
      if (!live.has(key)) made[where].push([key, entry]);
    };
    for (const [id, r] of boxes) want(id, { kind: r.open ? "frame" : "cover", id, r }, r.open ? "frames" : "covers");
    if (detailed) {
      for (const [id, r] of nodes) want(id, { kind: id.includes("@") ? "copy" : "node", id, r }, "nodes");
      for (const s of near) want("e:" + s.id, { kind: "edge", id: s.id, s }, "edges");
    }
    for (const [key, { el }] of live) if (!wanted.has(key)) { el.remove(); live.delete(key); }
    for (const [where, list] of Object.entries(made)) {
      if (!list.length) continue;
      const g = groups[where], before = g.childElementCount;
      g.insertAdjacentHTML("beforeend", list.map(([, entry]) => hooks.markup(entry)).join(""));
      for (let i = before, j = 0; i < g.childElementCount; i++, j++) {
        live.set(list[j][0], { el: g.children[i], entry: list[j][1] });
      }
    }
    const shapes = !detailed && view.scale >= PLAIN_SCALE && nodes.length <= MAX_PLAIN;
    drawPlain(shapes ? nodes : [], shapes ? near : []);
    svg.dataset.live = String(live.size);
    svg.dataset.detail = detailed ? "full" : shapes ? "plain" : "boxes";
  }

  // Zoomed out: every node in view as a small shape, done and pending apart.
  function drawPlain(nodes, near) {
    const done = [], pending = [], d = Math.round;
    for (const [id, r] of nodes) {
      const h = id.includes("@") ? r.h : Math.min(r.h, 56);
      (hooks.isDone(id) ? done : pending).push(`M${d(r.x - r.w / 2)},${d(r.y - h / 2)}h${d(r.w)}v${d(h)}h${d(-r.w)}z`);
    }
    plain["tp-plain-done"].setAttribute("d", done.join(""));
    plain["tp-plain-pending"].setAttribute("d", pending.join(""));
    const rects = tree.rects();
    plain["tp-plain-edges"].setAttribute("d", near.map((s) => {
      const a = rects.get(s.from), b = rects.get(s.to);
      return `M${d(a.x + a.w / 2)},${d(a.y)}L${d(b.x - b.w / 2)},${d(b.y)}`;
    }).join(""));
    const cur = detailed ? null : hooks.current();
    const r = cur && !tree.isBox(cur) ? rects.get(cur) : null;
    plain["tp-plain-current"].setAttribute("d", r
      ? `M${d(r.x - r.w / 2 - 8)},${d(r.y - 36)}h${d(r.w + 16)}v72h${d(-r.w - 16)}z` : "");
  }

  // The current frame's classes and texts on every live element.
  function restyle() {
    for (const { el, entry } of live.values()) hooks.style(entry, el);
    if (!detailed && lastView) draw(lastView);
  }

  return { rebuild, draw, restyle, element: (key) => (live.get(key) || {}).el || null,
    live: () => live, detailed: () => detailed };
}
