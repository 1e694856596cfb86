"""The scope tree: how the player folds a long tape into boxes, and where they go.

Each record carries its name scope (``'gru/gru_cell'``); ``build_tree``
nests them (``a/b/c`` is a box in a box in a box) and gives every drawn node
a home box: an op its scope's, a tensor its producer's, an input (or a copy
of a widely read input) the box of the op that reads it. Two more kinds of
box keep any level small enough to read:

- **calls**: a scope that holds many ops which repeat (a Keras GRU cell runs
  23 ops per step, all in ``gru/gru_cell``) is cut where the repetition
  starts again: ``call 1``, ``call 2``... The period is the shortest one
  of the op types' sequence (the prefix function of string matching, linear).
- **blocks** and **ranges**: ops that do not repeat are cut into blocks of
  ``BLOCK`` records; a box with more than ``MAX_CHILDREN`` boxes in it
  gets its boxes grouped into ranges (``step_000 … step_047``).

Each box's content (its child boxes and its own nodes) is ordered once, as
layers (``layers.layer_order`` on the edges between them). Where the boxes
then go, for any choice of open ones, is ``placement.py``'s. ``from_json``
makes the tree again from a replay's JSON (the static pictures do), and
``rep`` says what shows for a node when some boxes are closed.

    >>> from widgets import replay
    >>> from widgets.player.layout.graph_layout import _copy_inputs
    >>> from widgets.player.layout.scope_tree import build_tree
    >>> layer = ad.keras.layers.GRU(2)
    >>> with ad.GradientTape() as tape:
    ...     y = ad.reduce_sum(layer(ad.ones([1, 3, 2])))
    >>> rep = replay(tape, y, layer.trainable_variables)
    >>> ends, copies = _copy_inputs(rep.edges)
    >>> tree = build_tree(rep.nodes, rep.edges, ends, copies)
    >>> [b["label"] for b in tree.boxes[:3]]
    ['', 'gru', 'gru_cell']
"""

from operator import itemgetter

from . import layers as _layers

__all__ = ["ScopeTree", "build_tree", "summary", "from_json", "rep", "reps", "outer_closed",
           "drawn_ends", "CHUNK_ABOVE", "MAX_CHILDREN"]

CHUNK_ABOVE = 40       # a box with more ops of its own is cut into calls or blocks
BLOCK = 32             # records per block when the ops do not repeat
MAX_CHILDREN = 64      # more boxes than this in one box are grouped into ranges
RANGE = 48             # boxes per range
_ID = itemgetter("id")


class ScopeTree:
    """Boxes (dicts, root first) and the content of each, in layers.

    ``boxes[k]``: ``{"id": "b<k>", "label", "path", "kind", "parent", "ops",
    "first", "last", "layers"}``; ``kind`` is ``"root"``, ``"scope"``,
    ``"call"``, ``"block"`` or ``"range"``; ``ops`` counts the ops inside,
    ``first``/``last`` are their smallest and largest ``order``; ``layers``
    lists the box's items (``"b<k>"`` for a box, else a node or copy id).
    ``home``: node id -> the box it is drawn in; ``left``: per box,
    item -> items it reads.
    """

    def __init__(self, boxes, home, left, ends=None):
        self.boxes, self.home, self.left = boxes, home, left
        self.ends = ends      # from_json: each edge's drawn (from, to) (drawn_ends)

    def to_json(self):
        return [{k: b[k] for k in ("id", "label", "sub", "path", "kind", "parent", "ops",
                                   "first", "last", "layers")} for b in self.boxes]

    def index(self, item):
        return int(item[1:]) if item[:1] == "b" else None


def build_tree(nodes, edges, ends, copies):
    """The scope tree of a replay's nodes.

    Args:
        nodes: the replay's node dicts (ops carry ``scope`` and ``order``).
        edges: the replay's edge dicts; ``ends``: each edge's drawn
            ``(from, to)`` (a copy instead of a widely read input).
        copies: ``graph_layout._copy_inputs``'s copies (``id``, ``node``, ``op``).

    Returns:
        A ScopeTree.
    """
    ops = sorted((n for n in nodes if n["type"] == "op"), key=lambda n: n["order"])
    order = {n["id"]: n["order"] for n in ops}
    boxes = [{**_box("", "", "root", -1), "id": "b0"}]
    by_path = {"": 0}
    op_box = {}
    for op in ops:
        scope = op.get("scope") or ""
        b = by_path.get(scope)
        op_box[op["id"]] = b if b is not None else _scope_box(boxes, by_path, scope)
    anchor = {}                      # a node's op: its producer, or its first reader
    for e, (a, _) in zip(edges, ends):
        if e["kind"] == "out":
            anchor[e["to"]] = e["op"]          # the producer, whoever read it first
        else:
            anchor.setdefault(a, e["op"])
    for c in copies:
        anchor[c["id"]] = c["op"]
    own = {}
    for op in ops:
        own.setdefault(op_box[op["id"]], []).append(op)
    for b, its in list(own.items()):
        if len(its) > CHUNK_ABOVE:
            _cut(boxes, b, its, op_box)
    for b in range(len(boxes)):
        _group_ranges(boxes, b)
    rank = dict(zip(map(_ID, nodes), range(len(nodes))))      # node id -> its place
    rank.update({c["id"]: rank[c["op"]] - 0.5 for c in copies})
    home = {}
    for item in list(rank):
        a = item if item in order else anchor.get(item)
        home[item] = op_box[a] if a is not None else 0
    _count(boxes, op_box, order)
    for box in boxes:
        if box["kind"] == "range":
            _name_range(boxes, box)
    return _order(ScopeTree(boxes, home, {}), rank, ends)


def _box(label, path, kind, parent):
    return {"id": None, "label": label, "path": path, "kind": kind, "parent": parent,
            "unit": kind, "children": [], "ops": 0, "first": None, "last": None, "layers": []}


def _add(boxes, box):
    box["id"] = f"b{len(boxes)}"
    boxes.append(box)
    if box["parent"] >= 0:
        boxes[box["parent"]]["children"].append(len(boxes) - 1)
    return len(boxes) - 1


def _scope_box(boxes, by_path, scope):
    """The box of a scope path, made (with its parents) on first use."""
    if scope in by_path:
        return by_path[scope]
    parent, _, label = scope.rstrip("/").rpartition("/")
    up = _scope_box(boxes, by_path, parent) if parent else 0
    by_path[scope] = _add(boxes, _box(label or scope, scope, "scope", up))
    return by_path[scope]


def _period(seq):
    """The shortest p with seq[i] == seq[i + p] for every i (the prefix function)."""
    pi = [0] * len(seq)
    for i in range(1, len(seq)):
        k = pi[i - 1]
        while k and seq[i] != seq[k]:
            k = pi[k - 1]
        pi[i] = k + (seq[i] == seq[k])
    return len(seq) - pi[-1] if seq else 0


def _cut(boxes, b, own, op_box):
    """Moves box ``b``'s own ops into calls (when they repeat) or blocks."""
    p = _period([op["op_type"] for op in own])
    repeats = 4 <= p <= len(own) // 2
    size = p if repeats else BLOCK
    for k in range(0, len(own), size):
        part = own[k:k + size]
        label = f"call {k // size + 1}" if repeats else \
            f"records {part[0]['order'] + 1:,}–{part[-1]['order'] + 1:,}"
        child = _add(boxes, _box(label, boxes[b]["path"], "call" if repeats else "block", b))
        for op in part:
            op_box[op["id"]] = child


def _group_ranges(boxes, b):
    """More than MAX_CHILDREN boxes in box ``b``: consecutive ones go into ranges."""
    while len(boxes[b]["children"]) > MAX_CHILDREN:
        children, boxes[b]["children"] = boxes[b]["children"], []
        n = -(-len(children) // RANGE)           # ranges of even sizes
        for i in range(n):
            part = children[i * len(children) // n:(i + 1) * len(children) // n]
            r = _add(boxes, _box("", boxes[b]["path"], "range", b))
            boxes[r]["unit"] = boxes[part[0]]["unit"]
            for c in part:
                boxes[c]["parent"] = r
            boxes[r]["children"] = part


def _name_range(boxes, box):
    """'calls 1–48', 'records 1–1,536' or 'step_000 … step_047'."""
    first, last = boxes[box["children"][0]], boxes[box["children"][-1]]
    while first["kind"] == "range":      # a range of ranges: name it by its ends
        first, last = boxes[first["children"][0]], boxes[last["children"][-1]]
    if box["unit"] == "call":
        box["label"] = f"calls {first['label'].split()[-1]}–{last['label'].split()[-1]}"
    elif box["unit"] == "block":
        box["label"] = f"records {box['first'] + 1:,}–{box['last'] + 1:,}"
    else:
        box["label"] = f"{first['label']} … {last['label']}"


def _count(boxes, op_box, order):
    """Each box's ``ops``, ``first`` and ``last`` over the ops inside it: each box's
    own ops first, then handed up from the deepest boxes (not every op up its chain)."""
    own = {}
    for op, b in op_box.items():
        o = order[op]
        seen = own.get(b)
        if seen is None:
            own[b] = [1, o, o]
        else:
            seen[0] += 1
            if o < seen[1]:
                seen[1] = o
            if o > seen[2]:
                seen[2] = o
    depth = [len(ancestors(boxes, k)) for k in range(len(boxes))]
    for b in sorted(range(len(boxes)), key=depth.__getitem__, reverse=True):
        if b not in own:
            continue
        n, first, last = own[b]
        box = boxes[b]
        box["ops"], box["first"], box["last"] = n, first, last
        up = box["parent"]
        if up >= 0:
            seen = own.get(up)
            if seen is None:
                own[up] = [n, first, last]
            else:
                seen[0] += n
                seen[1] = min(seen[1], first)
                seen[2] = max(seen[2], last)


def ancestors(boxes, b):
    """Box ``b`` and the boxes around it, innermost first (-1 is the top level)."""
    chain = []
    while b >= 0:
        chain.append(b)
        b = boxes[b]["parent"]
    return chain


def _order(tree, rank, ends):
    """Each box's items in layers, from the edges between them (at their common box)."""
    boxes, home = tree.boxes, tree.home
    depth = [len(ancestors(boxes, k)) for k in range(len(boxes))]   # ranges come after their boxes
    items = {k: [f"b{c}" for c in b["children"]] for k, b in enumerate(boxes)}
    for node, b in home.items():
        items[b].append(node)
    # A box ranks as its first item, however deep: each box's own items' lowest
    # rank, then handed up from the deepest boxes (a range is made after the boxes
    # it holds, so box numbers do not order the tree; depths do).
    low = {}
    for node, b in home.items():
        r = rank[node]
        if b not in low or r < low[b]:
            low[b] = r
    for k in sorted(range(len(boxes)), key=depth.__getitem__, reverse=True):
        up = boxes[k]["parent"]
        if k in low and up >= 0 and (up not in low or low[k] < low[up]):
            low[up] = low[k]
    rank.update({f"b{k}": r for k, r in low.items()})      # build_tree's own dict
    inner = {k: [] for k in items}
    for a, b in ends:
        ha, hb = home[a], home[b]
        lca, ia, ib = (ha, a, b) if ha == hb else _common(boxes, depth, ha, hb, a, b)
        if ia != ib and rank[ia] < rank[ib]:      # back edges (a scope used twice) do not layer
            inner[lca].append((ia, ib))
    seen = {}     # an unrolled loop's steps share one shape: order it once
    for k in range(len(boxes)):
        rank.setdefault(f"b{k}", 0)        # a box with no item ranks first
    kind = {}     # item -> b, t, o or t@ (a copy)
    for its in items.values():
        for i in its:
            kind[i] = i[0] + "@" if "@" in i else i[0]
    for k, box in enumerate(boxes):
        its = sorted(items[k], key=rank.__getitem__)
        pairs = list(dict.fromkeys(inner[k]))
        index = dict(zip(its, range(len(its))))
        shape = (tuple(map(kind.__getitem__, its)),
                 tuple([(index[x], index[y]) for x, y in pairs]))
        found = seen.get(shape)
        if found is None:
            layers = _layers.layer_order(list(range(len(its))), list(shape[1]),
                                         sweeps=8 if len(its) < 300 else 2) if its else []
            # the positions layer by layer, and where each layer ends among them
            ends, n = [], 0
            for lay in layers:
                n += len(lay)
                ends.append(n)
            found = seen[shape] = ([i for lay in layers for i in lay], list(zip([0] + ends, ends)))
        flat, spans = found
        placed = list(map(its.__getitem__, flat))
        box["layers"] = [placed[a:b] for a, b in spans]
        left = {}
        for x, y in pairs:
            left.setdefault(y, []).append(x)
        tree.left[k] = left
        box["sub"] = summary(box, boxes)
    return tree


def _common(boxes, depth, ha, hb, a, b):
    """The lowest box holding both ends, and the item under it on each side."""
    ia, ib = a, b
    while depth[ha] > depth[hb]:
        ia, ha = f"b{ha}", boxes[ha]["parent"]
    while depth[hb] > depth[ha]:
        ib, hb = f"b{hb}", boxes[hb]["parent"]
    while ha != hb:
        ia, ha = f"b{ha}", boxes[ha]["parent"]
        ib, hb = f"b{hb}", boxes[hb]["parent"]
    return ha, ia, ib


def summary(box, boxes):
    """The count line of a closed box: '50 calls · 1,150 ops'."""
    n = len(box["children"])
    inner = ""
    if n:
        kind = boxes[box["children"][0]]["kind"]
        kind = {"call": "call", "block": "block", "range": "range"}.get(kind, "scope")
        inner = f"{n} {kind}{'' if n == 1 else 's'} · "
    return f"{inner}{box['ops']:,} op{'' if box['ops'] == 1 else 's'}"



# ---- the tree again, from a replay's JSON --------------------------------------
def from_json(boxes_json, nodes, edges, placed=None):
    """A ScopeTree again from a replay's ``layout["tree"]`` (what the page gets too).

    ``placed``: the boxes that will be placed (their ``left`` is all that is
    worked out); None for all.
    """
    boxes = boxes_only(boxes_json).boxes
    home, layer_of = {}, {}
    for k, b in enumerate(boxes):
        for i, lay in enumerate(b["layers"]):
            for item in lay:
                home[item], layer_of[item] = k, i
    depth = [len(ancestors(boxes, k)) for k in range(len(boxes))]
    left = {k: {} for k in range(len(boxes))}
    ends = drawn_ends(edges, home)
    get = home.get
    for a, b in ends:
        ha, hb = get(a), get(b)
        if ha == hb and placed is not None and ha not in placed:
            continue          # inside a closed box: most edges of a long tape
        if ha is None or hb is None:
            continue
        lca, ia, ib = _common(boxes, depth, ha, hb, a, b)
        if ia != ib and layer_of[ia] < layer_of[ib] and ia not in left[lca].setdefault(ib, []):
            left[lca][ib].append(ia)
    return ScopeTree(boxes, home, left, ends)


def boxes_only(boxes_json):
    """A ScopeTree of the boxes alone (their children again; no items, no edges):
    enough to choose which boxes open (``placement.default_open``)."""
    boxes = [dict(b, children=[]) for b in boxes_json]
    for k, b in enumerate(boxes):
        if b["parent"] >= 0:
            boxes[b["parent"]]["children"].append(k)
    return ScopeTree(boxes, {}, {})


def drawn_ends(edges, home):
    """Each edge's drawn ``(from, to)``: a copy of a widely read input where there is one."""
    copied = {item[:item.index("@")] for item in home if "@" in item}   # inputs with copies
    if not copied:
        return [(e["from"], e["to"]) for e in edges]
    ends = []
    for e in edges:
        a = e["from"]
        if a in copied and e["kind"] == "in":
            copy = f'{a}@{e["op"]}'
            if copy in home:
                a = copy
        ends.append((a, e["to"]))
    return ends


def rep(tree, item, opened):
    """What shows for ``item``: the outermost closed box around it, else itself."""
    box = _outer_closed(tree, tree.home.get(item, 0), opened)
    return item if box is None else box


def reps(tree, opened):
    """``rep`` for many items: a function that walks each box's ancestors once
    (an overview asks for both ends of every edge: 51,000 walks at 10,000 records).

    >>> import widgets
    >>> from widgets.player.layout.scope_tree import from_json, rep, reps
    >>> x = ad.Variable(1.0)
    >>> with ad.GradientTape() as tape:
    ...     with ad.name_scope("outer"):
    ...         y = ad.sin(x) * 2.0
    >>> r = widgets.replay(tape, y, x)
    >>> tree, opened = from_json(r.layout["tree"], r.nodes, r.edges), {0}   # outer closed
    >>> show = reps(tree, opened)
    >>> show("op1") == rep(tree, "op1", opened) == "b1"      # op1 shows as its box
    True
    """
    outer = {}

    def show(item):
        k = tree.home.get(item, 0)
        box = outer.get(k, False)
        if box is False:
            box = outer[k] = _outer_closed(tree, k, opened)
        return item if box is None else box
    return show


def outer_closed(tree, opened):
    """``rep`` by box: for each box ``k``, the outermost closed box among it and its
    ancestors (``'b<j>'``), or None; ``outer_closed(tree, opened)[tree.home[item]] or
    item`` is ``rep(tree, item, opened)``, with no call per item."""
    return [_outer_closed(tree, k, opened) for k in range(len(tree.boxes))]


def _outer_closed(tree, k, opened):
    """The outermost closed box among box ``k`` and its ancestors (``'b<k>'``), or None."""
    shown = None
    while k > 0:
        if k not in opened:
            shown = f"b{k}"
        k = tree.boxes[k]["parent"]
    return shown
