// Bands in the browser (a part of the module; see graph.js): the placement of
// one box's layers, as widgets/player/layout/bands.py places them in Python
// (flow_layout, and layers._place_in_order for the heights). tree.js calls
// flowLayout for each box it places; TREE's gaps are its units.

// bands.flow_layout: layers left to right, wrapped into bands at `bandWidth`
// (never between an input and the node it feeds), y by pooling adjacent violators.
function flowLayout(layers, sizes, left, bandWidth) {
  const widths = layers.map((lay) => Math.max(...lay.map((n) => sizes.get(n)[0])));
  const layerOf = new Map();
  layers.forEach((lay, i) => lay.forEach((n) => layerOf.set(n, i)));
  const right = new Map();
  for (const [n, ins] of left) for (const m of ins) { if (!right.has(m)) right.set(m, []); right.get(m).push(n); }
  const isInput = (n) => !(left.get(n) || []).length;
  const breakable = layers.map((lay, i) => i > 0 && !lay.some((n) =>
    (left.get(n) || []).some((m) => isInput(m) && layerOf.get(m) === i - 1)));
  const starts = [0];
  let x = widths[0], lastOk = null;
  for (let i = 1; i < layers.length; i++) {
    if (x + TREE.LAYER_GAP + widths[i] > bandWidth) {
      const cut = breakable[i] || lastOk === null ? i : lastOk;
      starts.push(cut);
      x = TREE.LAYER_GAP * (i - cut);
      for (let j = cut; j <= i; j++) x += widths[j];
      lastOk = null;
    } else {
      x += TREE.LAYER_GAP + widths[i];
      if (breakable[i]) lastOk = i;
    }
  }
  const positions = new Map(), bands = [], bandOf = new Map();
  let top = 0, width = 0;
  starts.forEach((start, b) => {
    const end = b + 1 < starts.length ? starts[b + 1] : layers.length;
    const band = layers.slice(start, end);
    const ys = bandHeights(band, sizes, left, right, isInput);
    let low = Infinity, high = -Infinity;
    for (const lay of band) for (const n of lay) {
      low = Math.min(low, ys.get(n) - sizes.get(n)[1] / 2);
      high = Math.max(high, ys.get(n) + sizes.get(n)[1] / 2);
    }
    let bx = 0;
    band.forEach((lay, k) => {
      const w = widths[start + k];
      for (const n of lay) { positions.set(n, [bx + w / 2, ys.get(n) - low + top]); bandOf.set(n, b); }
      bx += w + TREE.LAYER_GAP;
    });
    width = Math.max(width, bx - TREE.LAYER_GAP);
    bands.push([top, top + high - low]);
    top += high - low + TREE.BAND_GAP;
  });
  return { positions, width, height: Math.max(top - TREE.BAND_GAP, 0), bands, bandOf };
}

function bandHeights(band, sizes, left, right, isInput) {
  const inside = new Set();
  for (const lay of band) for (const n of lay) inside.add(n);
  const ys = new Map();
  for (const lay of band) {
    let y = 0;
    for (const n of lay) { ys.set(n, y + sizes.get(n)[1] / 2); y += sizes.get(n)[1] + TREE.NODE_GAP; }
  }
  if (band.length < 2) return ys;
  // Who pulls each node, found once: its inputs that are not inputs themselves
  // (else all of them), and its readers, both inside the band.
  const pulls = new Map();
  for (const lay of band) for (const n of lay) {
    const ins = (left.get(n) || []).filter((m) => inside.has(m));
    const outs = (right.get(n) || []).filter((m) => inside.has(m));
    const pulling = ins.filter((m) => !isInput(m));
    const inner = pulling.length ? pulling : ins;
    pulls.set(n, [inner.length ? inner : outs, outs.length ? outs : inner]);
  }
  const weights = band.map((lay) => lay.map((n) => (isInput(n) ? 1e-3 : 1)));
  for (let it = 0; it < 4; it++) {
    const forward = it % 2 === 0;
    for (let j = 0; j < band.length; j++) {
      const i = forward ? j : band.length - 1 - j;
      const lay = band[i];
      const wanted = lay.map((n) => {
        const around = pulls.get(n)[forward ? 0 : 1];
        if (!around.length) return ys.get(n);
        let sum = 0;
        for (const m of around) sum += ys.get(m);
        return sum / around.length;
      });
      const placed = lay.length === 1 ? wanted : placeInOrder(lay, wanted, sizes, weights[i]);
      lay.forEach((n, k) => ys.set(n, placed[k]));
    }
  }
  return ys;
}

// layers._place_in_order: nearest positions keeping order and gaps (pool adjacent violators).
function placeInOrder(lay, wanted, sizes, weights) {
  const offsets = [];
  let total = 0;
  lay.forEach((n, i) => {
    if (i) total += (sizes.get(lay[i - 1])[1] + sizes.get(n)[1]) / 2 + TREE.NODE_GAP;
    offsets.push(total);
  });
  const blocks = [];
  wanted.forEach((w, i) => {
    blocks.push([w - offsets[i], weights[i], 1]);
    while (blocks.length > 1 && blocks[blocks.length - 2][0] > blocks[blocks.length - 1][0]) {
      const [mean, weight, count] = blocks.pop();
      const last = blocks[blocks.length - 1];
      last[0] = (last[0] * last[1] + mean * weight) / (last[1] + weight);
      last[1] += weight;
      last[2] += count;
    }
  });
  const z = [];
  for (const [mean, , count] of blocks) for (let c = 0; c < count; c++) z.push(mean);
  return z.map((zi, i) => zi + offsets[i]);
}
