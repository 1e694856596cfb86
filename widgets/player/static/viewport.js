// Fit-to-view, zoom, pan and the minimap of the tape
// player's stage (part 4 of the module; see graph.js). Only the SVG's viewBox
// changes; after each change `hooks.onView` draws what came into view
// (scene.js), so zooming and panning cost the same on any tape.
//
// The view keeps the stage's aspect ratio: one user unit is `scale` pixels in
// both directions, and a pixel under the mouse maps to a point of the drawing
// by view.x + px / scale. `data-scale` on the stage tells tests the zoom.

const MIN_SCALE = 0.002;
const MAX_SCALE = 4;
const MINIMAP_FRAMES = 200;      // open boxes drawn as outlines in the minimap, at most

function createViewport(stage, svg, size, hooks) {
  const mini = stage.querySelector(".tp-minimap");
  const miniView = mini && mini.querySelector(".tp-minimap-view");
  let view = { x: 0, y: 0, scale: 1 };

  // The stage's size in CSS pixels, read once and kept: read after each change of the
  // scene or the captions, it made Chromium lay out the whole page again, several
  // times a step (60 ms of a NaN jump on a 10,000-record tape). A resize forgets it:
  // the ResizeObserver, and resized() right after a change that knows it resizes.
  let stagePx = null;
  const px = () => stagePx || (stagePx = [Math.max(stage.clientWidth, 1), Math.max(stage.clientHeight, 1)]);
  const resized = () => { stagePx = null; };
  if (typeof ResizeObserver === "function") new ResizeObserver(resized).observe(stage);
  const current = () => {
    const [cw, ch] = px();
    return { x: view.x, y: view.y, w: cw / view.scale, h: ch / view.scale, scale: view.scale };
  };

  function apply() {
    const v = current();
    svg.setAttribute("viewBox", `${v.x.toFixed(1)} ${v.y.toFixed(1)} ${v.w.toFixed(1)} ${v.h.toFixed(1)}`);
    stage.dataset.scale = view.scale.toPrecision(6);
    const [W, H] = size();
    // The minimap shows where the view is, only while part of the drawing is out of view.
    const all = v.x <= 1 && v.y <= 1 && v.x + v.w >= W - 1 && v.y + v.h >= H - 1;
    if (mini) mini.classList.toggle("tp-hidden", all || !placeMinimap(v));
    if (miniView) {
      miniView.setAttribute("x", v.x); miniView.setAttribute("y", v.y);
      miniView.setAttribute("width", v.w); miniView.setAttribute("height", v.h);
    }
    hooks.onView(v);
  }

  // Puts the minimap in a corner of the stage where it covers no node and no closed
  // box (bottom right first); false when every corner is taken (then it hides).
  function placeMinimap(v) {
    if (!hooks.occupied) return true;
    const [cw, ch] = px();
    const mw = parseFloat(mini.style.width) || 180, mh = parseFloat(mini.style.height) || 120;
    for (const [right, bottom] of [[true, true], [false, true], [true, false], [false, false]]) {
      const x0 = right ? cw - mw - 12 : 0, y0 = bottom ? ch - mh - 12 : 0;
      if (hooks.occupied(v.x + x0 / v.scale, v.y + y0 / v.scale, v.x + (x0 + mw + 12) / v.scale,
        v.y + (y0 + mh + 12) / v.scale)) continue;
      mini.style.left = right ? "" : "6px";
      mini.style.right = right ? "6px" : "";
      mini.style.top = bottom ? "" : "6px";
      mini.style.bottom = bottom ? "6px" : "";
      return true;
    }
    return false;
  }

  // The whole drawing in view, centred; never larger than `maxScale`. fit(scale):
  // that scale instead, the drawing's top left corner in view.
  function fit(scale) {
    const [cw, ch] = px();
    const [W, H] = size();
    view.scale = scale ? Math.max(MIN_SCALE, Math.min(MAX_SCALE, scale))
      : Math.max(MIN_SCALE, Math.min(cw / W, ch / H, hooks.maxScale()));
    const w = cw / view.scale, h = ch / view.scale;
    view.x = w >= W ? (W - w) / 2 : 0;
    view.y = h >= H ? (H - h) / 2 : 0;
    apply();
  }

  // Zoom by `factor` keeping the point under pixel (px, py) where it is.
  function zoomAt(factor, x, y) {
    const [cw, ch] = px();
    if (x === undefined) { x = cw / 2; y = ch / 2; }
    const ux = view.x + x / view.scale, uy = view.y + y / view.scale;
    view.scale = Math.max(MIN_SCALE, Math.min(MAX_SCALE, view.scale * factor));
    view.x = ux - x / view.scale;
    view.y = uy - y / view.scale;
    apply();
  }

  function panBy(dx, dy) {
    view.x -= dx / view.scale;
    view.y -= dy / view.scale;
    apply();
  }

  // Centres (x, y), as far as the drawing allows: a view wider than the drawing is
  // centred on it, a narrower one stays inside it, so no half of the view is empty
  // because the point is near an edge (the drawing's top left corner, say).
  function centerOn(x, y, scale) {
    if (scale) view.scale = Math.max(MIN_SCALE, Math.min(MAX_SCALE, scale));
    const [cw, ch] = px();
    const [W, H] = size();
    const w = cw / view.scale, h = ch / view.scale;
    view.x = w >= W ? (W - w) / 2 : Math.min(Math.max(x - w / 2, 0), W - w);
    view.y = h >= H ? (H - h) / 2 : Math.min(Math.max(y - h / 2, 0), H - h);
    apply();
  }

  // Keeps the point (x, y) of the drawing at the same place on screen after the
  // drawing moved it to (nx, ny): opening a box keeps the user's place. When
  // `box` (the opened box, centre form) would be too small to read at this zoom
  // (below `least` pixels a unit), the view zooms in to show it whole (up to
  // `most`), its top left corner where it was or, failing that, in view.
  function keep(x, y, nx, ny, box, least, most) {
    view.x += nx - x;
    view.y += ny - y;
    if (box) {
      const [cw, ch] = px();
      if (view.scale < least) {
        const sx = (nx - view.x) * view.scale, sy = (ny - view.y) * view.scale;   // on screen
        view.scale = Math.max(view.scale, Math.min(most, 0.95 * cw / box.w, 0.95 * ch / box.h));
        view.x = nx - sx / view.scale;
        view.y = ny - sy / view.scale;
      }
      // as much of the opened box in view as fits, its top left corner first
      const w = cw / view.scale, h = ch / view.scale;
      view.x = Math.min(Math.max(view.x, box.x + box.w / 2 - w + 8), nx - 8);
      view.y = Math.min(Math.max(view.y, box.y + box.h / 2 - h + 8), ny - 8);
    }
    apply();
  }

  // Playing: the record in view at a readable zoom, with its neighbours around it
  // (focus with context). `box` is a centre-form rectangle; `readable` the zoom at
  // which a node's text is readable (null for a closed box, which is read at any zoom
  // that shows it whole). A box already well inside the view leaves the view alone.
  function follow(box, readable) {
    if (!box) return;
    const [cw, ch] = px();
    if (readable && view.scale < readable * 0.999) {
      centerOn(box.x, box.y, readable);
      return;
    }
    if (!readable && (box.w * view.scale > cw || box.h * view.scale > ch)) {
      centerOn(box.x, box.y, Math.max(MIN_SCALE, Math.min(cw / box.w, ch / box.h) * 0.9));
      return;
    }
    const w = cw / view.scale, h = ch / view.scale, mx = Math.min(box.w / 2 + 20, w / 2), my = Math.min(box.h / 2 + 20, h / 2);
    const inside = box.x - mx >= view.x && box.x + mx <= view.x + w && box.y - my >= view.y && box.y + my <= view.y + h;
    if (!inside) centerOn(box.x, box.y);
  }

  // Centres the box at a readable zoom (search hits, debugging jumps).
  function reveal(box, readable) {
    if (box) centerOn(box.x, box.y, Math.max(view.scale, readable));
  }

  // Drag to pan; a press that does not move is a tap on what is under it (a box).
  let drag = null;
  stage.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || (mini && mini.contains(ev.target))) return;
    drag = { x: ev.clientX, y: ev.clientY, id: ev.pointerId, moved: false, target: ev.target };
  });
  stage.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    if (!drag.moved && Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) < 4) return;
    if (!drag.moved) {       // capture only a real drag, so a click stays on its target
      drag.moved = true;
      stage.setPointerCapture(ev.pointerId);
      stage.classList.add("tp-dragging");
    }
    panBy(ev.clientX - drag.x, ev.clientY - drag.y);
    drag.x = ev.clientX; drag.y = ev.clientY;
  });
  const endDrag = () => { drag = null; stage.classList.remove("tp-dragging"); };
  stage.addEventListener("pointerup", endDrag);
  stage.addEventListener("pointercancel", endDrag);
  stage.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = stage.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015)), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });

  // Minimap: click or drag on it to move the view there.
  if (mini) {
    const jump = (ev) => {
      const r = mini.getBoundingClientRect();
      const [W, H] = size();
      const s = Math.min(r.width / W, r.height / H);      // the map keeps the drawing's shape
      const ox = (r.width - W * s) / 2, oy = (r.height - H * s) / 2;
      centerOn((ev.clientX - r.left - ox) / s, (ev.clientY - r.top - oy) / s);
    };
    let miniDrag = false;
    mini.addEventListener("pointerdown", (ev) => { miniDrag = true; mini.setPointerCapture(ev.pointerId); jump(ev); });
    mini.addEventListener("pointermove", (ev) => { if (miniDrag) jump(ev); });
    mini.addEventListener("pointerup", () => { miniDrag = false; });
  }

  return { fit, zoomAt, panBy, centerOn, keep, follow, reveal, apply, resized, view: current };
}

// The minimap: what shows (boxes, and nodes while few), drawn at the drawing's shape.
function minimapMarkup() {
  return `<svg class="tp-minimap tp-hidden" aria-label="minimap: click to move the view">` +
    `<rect class="tp-minimap-bg"/><path class="tp-minimap-frames"/><path class="tp-minimap-nodes"/>` +
    `<rect class="tp-minimap-view" vector-effect="non-scaling-stroke"/></svg>`;
}

function drawMinimap(stage, rects, W, H, boxCount) {
  const mini = stage.querySelector(".tp-minimap");
  if (!mini) return;
  const d = [], frames = [];
  // many: the boxes only ("b1", "b2", ...: looked up, not searched for); an open box
  // is its outline, so a map of a tape with every box open is never blank
  const ids = rects.size < 4000 ? rects.keys() : Array.from({ length: boxCount - 1 }, (_, k) => "b" + (k + 1));
  for (const id of ids) {
    const r = rects.get(id);
    if (!r) continue;
    if (r.open) {
      if (frames.length >= MINIMAP_FRAMES) continue;   // the outer ones (first) say the shape
      frames.push(`M${(r.x - r.w / 2).toFixed(0)},${(r.y - r.h / 2).toFixed(0)}h${r.w.toFixed(0)}v${r.h.toFixed(0)}h${(-r.w).toFixed(0)}z`);
      continue;
    }
    d.push(`M${(r.x - r.w / 2).toFixed(0)},${(r.y - r.h / 3).toFixed(0)}h${r.w.toFixed(0)}v${(r.h / 1.5).toFixed(0)}h${(-r.w).toFixed(0)}z`);
  }
  mini.querySelector(".tp-minimap-frames").setAttribute("d", frames.join(""));
  mini.setAttribute("viewBox", `0 0 ${W.toFixed(0)} ${H.toFixed(0)}`);
  // the drawing's shape, at most 180x120 (a tall drawing gets a narrow map)
  const h = Math.max(40, Math.min(120, 180 * H / W));
  mini.style.height = `${h.toFixed(0)}px`;
  mini.style.width = `${Math.min(180, h * W / H).toFixed(0)}px`;
  const bg = mini.querySelector(".tp-minimap-bg");
  bg.setAttribute("width", W); bg.setAttribute("height", H);
  mini.querySelector(".tp-minimap-nodes").setAttribute("d", d.join(""));
}
