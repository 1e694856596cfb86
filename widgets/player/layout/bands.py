"""Layers wrapped into bands: a long drawing that fills a screen in both directions.

``layers.layer_order`` puts a graph's nodes in layers, left to right; drawn
in one row, an unrolled RNN is a line a pixel high on a screen. Here the
layers are placed with step 4 of the layered layout (each node near its
neighbours' mean height, ``layers._place_in_order``), but in **bands**: when
the next layer would pass the band width, a new band starts below, the way
words wrap into lines, and never between an input and the node it feeds (a
kernel stays next to its MatMul). The caller picks the band width from the
screen's shape (``placement.place``), so a 1,000-step chain fills the
stage. ``static/tree.js`` runs the same steps in the browser.

Pure Python, deterministic, and linear in the nodes (a few sweeps per band).

    >>> from widgets.player.layout.bands import flow_layout
    >>> f = flow_layout([["a"], ["b"], ["c"]], {n: (40, 40) for n in "abc"},
    ...                 {"b": ["a"], "c": ["b"]}, band_width=140)
    >>> len(f.bands), f.positions["c"]
    (2, (20.0, 116.0))
"""

from .layers import _place_in_order, _stacked

__all__ = ["Flow", "flow_layout"]


class Flow:
    """Where ``flow_layout`` put things: ``positions`` (centres), ``width``,
    ``height``, ``bands`` (``(top, bottom)`` each) and ``band_of`` (item -> band)."""

    def __init__(self, positions, width, height, bands, band_of):
        self.positions, self.width, self.height = positions, width, height
        self.bands, self.band_of = bands, band_of


def flow_layout(layers, sizes, left, band_width, layer_gap=48.0, node_gap=22.0,
                band_gap=56.0, iterations=4):
    """Layers left to right, wrapped into bands top to bottom at ``band_width``.

    Args:
        layers: lists of items, top to bottom (``layer_order``).
        sizes: ``item -> (width, height)``.
        left: ``item -> items it reads`` (its neighbours in earlier layers).
        band_width: the widest a band may grow (a layer wider than that
            gets a band of its own).

    Returns:
        A Flow; coordinates start at 0. Within a band each node sits near its
        neighbours' mean height (``_place_in_order``), so a chain stays straight.
    """
    widths = [max(sizes[n][0] for n in lay) for lay in layers]
    layer_of = {n: i for i, lay in enumerate(layers) for n in lay}
    right = {}
    for n, ins in left.items():
        for m in ins:
            right.setdefault(m, []).append(n)
    inputs = {n for n in layer_of if not left.get(n)}
    # a band may not start with a node whose input sits at the end of the band before
    breakable = [i > 0 and not any(m in inputs and layer_of.get(m) == i - 1
                                   for n in lay for m in left.get(n, ()))
                 for i, lay in enumerate(layers)]
    starts, x, last_ok = [0], widths[0] if widths else 0.0, None
    for i in range(1, len(layers)):
        if x + layer_gap + widths[i] > band_width:
            cut = i if breakable[i] or last_ok is None else last_ok
            starts.append(cut)
            x = sum(widths[cut:i + 1]) + layer_gap * (i - cut)
            last_ok = None
        else:
            x += layer_gap + widths[i]
            if breakable[i]:
                last_ok = i
    positions, bands, band_of, top, width = {}, [], {}, 0.0, 0.0
    for b, (start, end) in enumerate(zip(starts, starts[1:] + [len(layers)])):
        band = layers[start:end]
        ys = _band_heights(band, sizes, left, right, inputs, node_gap, iterations)
        low = min(ys[n] - sizes[n][1] / 2 for lay in band for n in lay)
        high = max(ys[n] + sizes[n][1] / 2 for lay in band for n in lay)
        x = 0.0
        for k, lay in enumerate(band):
            w = widths[start + k]
            for n in lay:
                positions[n] = (x + w / 2, round(ys[n] - low + top, 3))
                band_of[n] = b
            x += w + layer_gap
        width = max(width, x - layer_gap)
        bands.append((top, top + high - low))
        top += high - low + band_gap
    return Flow(positions, width, max(top - band_gap, 0.0), bands, band_of)


def _band_heights(band, sizes, left, right, inputs, node_gap, iterations):
    """y of every node of one band: step 4 with neighbours inside the band only."""
    ys = _stacked(band, sizes, node_gap)
    if len(band) < 2:
        return ys
    inside = set(ys)
    pulls = {}      # who pulls each node going forward, and going back (found once)
    for lay in band:
        for n in lay:
            ins = [m for m in left.get(n, ()) if m in inside]
            outs = [m for m in right.get(n, ()) if m in inside]
            inner = [m for m in ins if m not in inputs] or ins   # _inputs_aside
            pulls[n] = (inner or outs, outs or inner)
    weights = [[1e-3 if n in inputs else 1.0 for n in lay] for lay in band]
    for it in range(iterations):
        forward = it % 2 == 0
        for i in range(len(band)) if forward else range(len(band) - 1, -1, -1):
            lay = band[i]
            wanted = []
            for n in lay:
                around = pulls[n][0 if forward else 1]
                wanted.append(sum(ys[m] for m in around) / len(around) if around else ys[n])
            placed = wanted if len(lay) == 1 else \
                _place_in_order(lay, wanted, sizes, node_gap, weights[i])
            for n, y in zip(lay, placed):
                ys[n] = y
    return ys
