// Fit-to-view, zoom, pan, the stage's height and the minimap of the tape
// player's stage (part 2 of the module; see graph.js). The graph is drawn once;
// only the SVG's viewBox changes, so a 1,000-record tape zooms and pans without
// redrawing anything.
//
// The view keeps the stage's aspect ratio: one user unit is `scale` pixels in
// both directions, and a pixel under the mouse maps to a point of the drawing
// by view.x + px / scale. `data-scale` on the stage tells tests the zoom.

const MIN_SCALE = 0.002;
const MAX_SCALE = 4;

function createViewport(stage, svg, layout, options) {
  const W = Math.max(layout.width, 1);
  const H = Math.max(layout.height, 1);
  const mini = stage.querySelector(".tp-minimap");
  const miniView = mini && mini.querySelector(".tp-minimap-view");
  const miniCur = mini && mini.querySelector(".tp-minimap-cur");
  let view = { x: 0, y: 0, scale: 1 };

  const size = () => [Math.max(stage.clientWidth, 1), Math.max(stage.clientHeight, 1)];

  function apply() {
    const [cw, ch] = size();
    const w = cw / view.scale, h = ch / view.scale;
    svg.setAttribute("viewBox", `${view.x.toFixed(1)} ${view.y.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}`);
    stage.dataset.scale = view.scale.toPrecision(6);
    if (miniView) {
      miniView.setAttribute("x", view.x); miniView.setAttribute("y", view.y);
      miniView.setAttribute("width", w); miniView.setAttribute("height", h);
    }
  }

  // The whole drawing in view, centred; never larger than the readable scale.
  // fit(scale): that scale instead; a drawing larger than the stage then shows
  // from its left (top) edge, and the view pans to follow the record.
  function fit(scale) {
    const [cw, ch] = size();
    view.scale = scale ? Math.max(MIN_SCALE, Math.min(MAX_SCALE, scale))
      : Math.max(MIN_SCALE, Math.min(cw / W, ch / H, options.maxScale()));
    const w = cw / view.scale, h = ch / view.scale;
    view.x = w >= W ? (W - w) / 2 : 0;
    view.y = h >= H ? (H - h) / 2 : 0;
    apply();
  }

  // Zoom by `factor` keeping the point under pixel (px, py) where it is.
  function zoomAt(factor, px, py) {
    const [cw, ch] = size();
    if (px === undefined) { px = cw / 2; py = ch / 2; }
    const ux = view.x + px / view.scale, uy = view.y + py / view.scale;
    view.scale = Math.max(MIN_SCALE, Math.min(MAX_SCALE, view.scale * factor));
    view.x = ux - px / view.scale;
    view.y = uy - py / view.scale;
    apply();
  }

  function panBy(dx, dy) {
    view.x -= dx / view.scale;
    view.y -= dy / view.scale;
    apply();
  }

  function centerOn(x, y) {
    const [cw, ch] = size();
    view.x = x - cw / view.scale / 2;
    view.y = y - ch / view.scale / 2;
    apply();
  }

  // Brings the box into view (centred) when its centre is out of sight; a box
  // already seen, even at the very edge of a fitted view, leaves the view alone.
  function follow(box) {
    if (!box) return;
    if (miniCur) { miniCur.setAttribute("cx", box.x); miniCur.setAttribute("cy", box.y); }
    const [cw, ch] = size();
    const inside = box.x >= view.x && box.x <= view.x + cw / view.scale &&
      box.y >= view.y && box.y <= view.y + ch / view.scale;
    if (!inside) centerOn(box.x, box.y);
  }

  // Drag to pan (pointer capture keeps the drag when the mouse leaves the stage).
  let drag = null;
  stage.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || (mini && mini.contains(ev.target))) return;
    drag = { x: ev.clientX, y: ev.clientY, id: ev.pointerId };
    stage.setPointerCapture(ev.pointerId);
    stage.classList.add("tp-dragging");
  });
  stage.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
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
      centerOn((ev.clientX - r.left) / r.width * W, (ev.clientY - r.top) / r.height * H);
    };
    let miniDrag = false;
    mini.addEventListener("pointerdown", (ev) => { miniDrag = true; mini.setPointerCapture(ev.pointerId); jump(ev); });
    mini.addEventListener("pointermove", (ev) => { if (miniDrag) jump(ev); });
    mini.addEventListener("pointerup", () => { miniDrag = false; });
  }

  // Centres the box (centre x, y) at a readable zoom (search hits, debugging jumps).
  function reveal(box, readable) {
    if (!box) return;
    view.scale = Math.max(view.scale, Math.min(readable, 0.8));
    centerOn(box.x, box.y);
  }

  return { fit, zoomAt, panBy, centerOn, follow, reveal, apply, view: () => ({ ...view }) };
}

// The stage's height: in normal mode the graph's height at the readable scale,
// up to 70% of the window; in classroom mode what the visible area (the window,
// or the notebook's scrolling panel) leaves once the toolbar, tools, title,
// sentence and gradients are counted, so a fitted graph and its caption show
// together on a 1280x720 projector.
function stageHeight(root, data, scale, classroom) {
  const stage = root.querySelector(".tp-stage");
  const fitScale = Math.min(scale, (stage.clientWidth || 800) / Math.max(data.layout.width, 1));
  const wanted = data.layout.height * fitScale + 8;
  let tall = Math.max(200, Math.min(wanted, window.innerHeight * 0.7));
  const sentence = root.querySelector(".tp-sentence");
  sentence.style.minHeight = "";
  if (classroom) {
    // Room for the longest sentence, so the stage keeps its size while playing.
    const shown = sentence.textContent;
    sentence.textContent = data.frames.reduce((a, f) => (f.sentence.length > a.length ? f.sentence : a), "");
    sentence.style.minHeight = `${Math.ceil(sentence.getBoundingClientRect().height)}px`;
    sentence.textContent = shown;
    // Everything from the player's top to the gradients' bottom, but the stage.
    const cs = getComputedStyle(stage);
    const below = root.querySelector(".tp-gradients");
    const others = below.getBoundingClientRect().bottom + parseFloat(getComputedStyle(below).marginBottom)
      - root.getBoundingClientRect().top - stage.getBoundingClientRect().height
      + parseFloat(cs.borderTopWidth) + parseFloat(cs.borderBottomWidth);
    tall = Math.max(160, Math.min(wanted, visibleHeight(root) - others - 32));
  }
  return tall;
}

// The height of what can be seen of `el`: its nearest scrolling ancestor (a
// notebook panel), within the window.
function visibleHeight(el) {
  let top = 0, bottom = window.innerHeight;
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const o = getComputedStyle(p).overflowY;
    // Only a box that really scrolls (an output area's overflow-x: auto makes
    // overflow-y compute to auto too, but it grows with the player).
    if ((o === "auto" || o === "scroll") && p.clientHeight > 0 && p.scrollHeight > p.clientHeight + 1) {
      const r = p.getBoundingClientRect();
      top = Math.max(top, r.top);
      bottom = Math.min(bottom, r.top + p.clientHeight);
      break;
    }
  }
  return Math.max(bottom - top, 0);
}

// The minimap: every node as a dot-sized rectangle in one path, plus the view.
function minimapMarkup(data) {
  const lay = data.layout;
  const W = Math.max(lay.width, 1), H = Math.max(lay.height, 1);
  const d = [];
  for (const b of Object.values(lay.nodes)) {
    d.push(`M${(b.x - b.w / 2).toFixed(0)},${(b.y - b.h / 3).toFixed(0)}h${b.w.toFixed(0)}v${(b.h / 1.5).toFixed(0)}h${(-b.w).toFixed(0)}z`);
  }
  const h = Math.max(24, Math.min(110, 200 * H / W));
  return `<svg class="tp-minimap" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" ` +
    `style="height:${h.toFixed(0)}px" aria-label="minimap: click to move the view">` +
    `<rect class="tp-minimap-bg" x="0" y="0" width="${W}" height="${H}"/>` +
    `<path class="tp-minimap-nodes" d="${d.join("")}"/>` +
    `<rect class="tp-minimap-view" vector-effect="non-scaling-stroke"/>` +
    `<circle class="tp-minimap-cur" r="${Math.max(W, H) / 60}" cx="-1000" cy="-1000"/></svg>`;
}
