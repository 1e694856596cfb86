"""Where the scope tree's boxes go: which open at first, their sizes, their places.

``scope_tree.build_tree`` says what the boxes are and orders each one's
content in layers; this file places any choice of open boxes.
``default_open`` picks the boxes open at first (a small tape: all; else
whole levels while no more than ``OPEN_UP_TO`` boxes show); ``place`` lays
the open ones out with ``bands.flow_layout``, inside out: a box's layers wrap
into bands at a width taken from the screen's shape, so an unrolled RNN
fills the screen in rows instead of running off as a line, and a closed box
is one ``box_size`` rectangle. The steps of an unrolled loop share one
shape, so each shape is placed once and moved for the others (linear in the
boxes). The browser (``static/tree.js``) runs the same placement when a box
opens; Python uses it for the static pictures and for every node's position
in the replay's layout.

    >>> from widgets import replay
    >>> from widgets.player.drawing.svg import node_sizes
    >>> from widgets.player.layout.placement import place
    >>> from widgets.player.layout.scope_tree import from_json
    >>> x = ad.Variable(1.0)
    >>> with ad.GradientTape() as tape:
    ...     with ad.name_scope("first"):
    ...         y = ad.sin(x * 2.0)
    ...     with ad.name_scope("second"):
    ...         z = ad.cos(y) * 3.0
    >>> rep = replay(tape, z, x)
    >>> tree = from_json(rep.layout["tree"], rep.nodes, rep.edges)
    >>> [box["label"] for box in tree.boxes]         # b0 (the tape), b1, b2
    ['', 'first', 'second']
    >>> rects, width, height = place(tree, node_sizes(rep.data), {0, 1})   # b2 closed
    >>> rects["b1"]["open"], rects["b2"]["open"]
    (True, False)
"""

from .bands import Flow, flow_layout

__all__ = ["default_open", "box_size", "place", "OPEN_UP_TO", "SMALL_TAPE", "MIN_BAND"]

OPEN_UP_TO = 24        # boxes shown at first: open levels while no more than this show
SMALL_TAPE = 30        # a tape of no more ops opens with every box open
PAD, HEAD = 14.0, 30.0   # an open box's margin, and its label's band on top
BOX_HEIGHT = 64.0
MIN_BAND = 880.0       # a 1280px screen at the readable zoom (16/11 px a unit), in units


def default_open(tree, small=SMALL_TAPE):
    """The boxes open at first: all on a tape of no more than ``small`` ops; else
    the root, then whole levels of boxes of boxes while no more than OPEN_UP_TO
    boxes show (a box of ops alone stays closed). static/tree.js does the same
    with ``small=0``: the live player always opens at the level of the scopes.
    """
    boxes = tree.boxes
    if boxes[0]["ops"] <= small:
        return set(range(len(boxes)))
    opened, level, shown = {0}, [0], len(boxes[0]["children"])
    while level:
        nxt = [c for b in level for c in boxes[b]["children"] if boxes[c]["children"]]
        more = sum(len(boxes[c]["children"]) - 1 for c in nxt)
        if not nxt or shown + more > OPEN_UP_TO:
            break
        opened.update(nxt)
        shown += more
        level = nxt
    return opened


def box_size(box):
    """A closed box: wide enough for its label and its count line."""
    text = max(len(box["label"]) * 9.0, len(box.get("sub", "")) * 7.0)
    return (min(max(text + 36.0, 150.0), 300.0), BOX_HEIGHT)


def place(tree, sizes, opened, aspect=16 / 9, min_band=MIN_BAND):
    """Rectangles of all that shows when the boxes in ``opened`` are open.

    Args:
        tree: a ScopeTree; sizes: node id -> (w, h) for nodes and copies.
        opened: box indices that are open (the root always is).
        aspect: the width-to-height ratio every box's content should take.
        min_band: no band is cut narrower (what a stage shows at a readable zoom).

    Returns:
        ``(rects, width, height)``: ``rects`` maps each shown item (a node,
        a copy, or ``"b<k>"``) to ``{"x", "y", "w", "h", "band"}`` (centre,
        size, and the bottom of its band, for edges that wrap), plus
        ``"open"`` for boxes.
    """
    boxes = tree.boxes
    flows, size, same = {}, {}, {}

    def lay(k):
        box = boxes[k]
        for layer in box["layers"]:
            for item in layer:
                c = tree.index(item)
                if c is None:
                    size[item] = tuple(sizes[item])
                elif c in opened:
                    w, h = lay(c)
                    size[item] = (w + 2 * PAD, h + PAD + HEAD)
                else:
                    size[item] = box_size(boxes[c])
        if not box["layers"]:
            flows[k] = None
            return (120.0, 40.0)
        # the steps of an unrolled loop have one shape: place it once, move it for each
        flat = [item for layer in box["layers"] for item in layer]
        index = {item: i for i, item in enumerate(flat)}
        shape = (tuple(len(layer) for layer in box["layers"]), tuple(size[i] for i in flat),
                 tuple((index[y], index[x]) for y, xs in tree.left[k].items() for x in xs))
        done = same.get(shape)
        if done is None:
            flow = flow_layout(box["layers"], size, tree.left[k],
                                       _band_width(box["layers"], size, aspect, min_band))
            same[shape] = done = (flow, flat)
        flow, first = done
        if first is not flat:
            flow = Flow({item: flow.positions[first[i]] for i, item in enumerate(flat)},
                                flow.width, flow.height, flow.bands,
                                {item: flow.band_of[first[i]] for i, item in enumerate(flat)})
        flows[k] = flow
        return flow.width, flow.height

    margin = 16.0
    width, height = lay(0)
    rects = {}

    def put(k, ox, oy):
        flow = flows[k]
        if flow is None:
            return
        for item, (x, y) in flow.positions.items():
            w, h = size[item]
            band = flow.bands[flow.band_of[item]][1] + oy
            rect = {"x": round(ox + x, 1), "y": round(oy + y, 1), "w": w, "h": h,
                    "band": round(band, 1)}
            c = tree.index(item)
            if c is not None:
                rect["open"] = c in opened
                if c in opened:
                    put(c, ox + x - w / 2 + PAD, oy + y - h / 2 + HEAD)
            rects[item] = rect

    put(0, margin, margin)
    return rects, width + 2 * margin, height + 2 * margin


def _band_width(layers, size, aspect, min_band):
    """How wide a band may grow: the content's area at the wanted shape, and never
    narrower than ``min_band`` (a few boxes stay on one line)."""
    widths = [max(size[n][0] for n in lay) for lay in layers]
    heights = [sum(size[n][1] for n in lay) + 22.0 * (len(lay) - 1) for lay in layers]
    natural = sum(widths) + 48.0 * (len(layers) - 1)
    area = sum((w + 48.0) * (h + 56.0) for w, h in zip(widths, heights))
    want = max(max(widths), (area * aspect) ** 0.5, min_band)
    return natural if natural <= 1.15 * want else want
