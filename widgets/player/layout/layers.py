"""A small layered (Sugiyama-style) graph layout for the tape player.

The player draws a tape as a graph that flows left to right: inputs on the
left, the target on the right. This module places the nodes; it knows
nothing about tapes (nodes are ids, edges are ``(from, to)`` pairs).

The classic recipe, in four steps:

1. **Layers.** Each node goes one layer right of its furthest predecessor
   (longest path from the inputs). An input with no predecessor is then
   pulled right, next to its first consumer, so that a constant used late
   (the seed ``ones`` of a recorded backward pass) does not stretch an
   edge across the whole drawing.
2. **Dummy nodes.** An edge spanning several layers is cut into one-layer
   pieces by invisible dummy nodes; the edge is later drawn through them.
3. **Ordering.** Sweeps left-to-right and right-to-left sort each layer by
   the barycentre (mean position) of its neighbours in the layer just
   fixed; the ordering with the fewest edge crossings seen is kept.
4. **Coordinates.** Each node wants to sit at the mean height of its
   neighbours; the nodes of a layer keep their order and a minimum gap.
   That is a small isotonic regression, solved exactly by pooling
   adjacent violators, so a chain comes out as one straight line.

A long drawing is a line on a screen: ``bands.flow_layout`` takes the
layers of steps 1 to 3 (``layer_order``) and wraps them into bands.

Why our own layout rather than Graphviz's ``dot``: it needs no system
package or binary wheel, it is pure Python that a student can read, and it
is deterministic (same graph, same coordinates, on every machine), which
the tests and the frame-by-frame player rely on: the layout is computed
once for the whole graph, so nodes never move between frames.
"""

__all__ = ["Layout", "layered_layout", "layer_order", "count_crossings"]


class Layout:
    """Where everything goes.

    Attributes:
        positions: ``node -> (x, y)``, the centre of each real node.
        sizes: ``node -> (width, height)``.
        routes: one list of ``(x, y)`` points per edge, in the order the
            edges were given (the edge's two ends and any dummy nodes between).
        layers: ``node -> layer number`` (0 is leftmost).
        order: the list of layers, each a list of nodes (dummies included,
            as ``("dummy", edge_index, k)`` tuples) from top to bottom.
        width, height: the drawing's extent (coordinates start at 0).
        crossings: edge crossings in the final ordering; ``initial_crossings``:
            in the given node order, before the sweeps.
    """

    def __init__(self, positions, sizes, routes, layers, order, width, height):
        self.positions = positions
        self.sizes = sizes
        self.routes = routes
        self.layers = layers
        self.order = order
        self.width = width
        self.height = height
        self.crossings = self.initial_crossings = None

    def boxes(self):
        """``node -> (left, top, right, bottom)`` for every real node."""
        return {n: (x - self.sizes[n][0] / 2, y - self.sizes[n][1] / 2,
                    x + self.sizes[n][0] / 2, y + self.sizes[n][1] / 2)
                for n, (x, y) in self.positions.items()}


def layered_layout(nodes, edges, sizes=None, layer_gap=48.0, node_gap=22.0,
                   margin=16.0, sweeps=8):
    """Places ``nodes`` in layers, left to right, with few edge crossings.

    Args:
        nodes: node ids (hashable), in a preferred initial order (the order
            also breaks ties, which keeps the layout deterministic).
        edges: ``(from, to)`` pairs; the graph must be acyclic. Repeated
            pairs (``x * x`` reads x twice) are allowed.
        sizes: ``node -> (width, height)``; default ``(40, 40)``.
        layer_gap: horizontal space between the widest nodes of two layers.
        node_gap: vertical space between two nodes of one layer.
        margin: space around the drawing.
        sweeps: barycentre sweeps (each is one pass down and one back).

    Returns:
        A Layout.

    >>> from widgets.player.layout.layers import layered_layout
    >>> lay = layered_layout(["a", "b", "c"], [("a", "b"), ("b", "c")])
    >>> [lay.positions[n][1] for n in "abc"]      # a chain: one straight line
    [36.0, 36.0, 36.0]
    """
    nodes = list(dict.fromkeys(nodes))
    sizes = {n: tuple(sizes[n]) if sizes and n in sizes else (40.0, 40.0) for n in nodes}
    rank = {n: i for i, n in enumerate(nodes)}
    layer = _layers(nodes, edges)
    order, chains = _insert_dummies(nodes, edges, layer, rank)
    initial_crossings = count_crossings(order, chains)
    order = _reduce_crossings(order, chains, sweeps)
    size_of = {**{d: (0.0, 4.0) for layer_nodes in order for d in layer_nodes
                  if _is_dummy(d)}, **sizes}
    ys = _coordinates(order, chains, size_of, node_gap)

    xs, x = {}, margin
    for layer_nodes in order:
        width = max(size_of[n][0] for n in layer_nodes)
        for n in layer_nodes:
            xs[n] = x + width / 2
        x += width + layer_gap
    top = min(ys[n] - size_of[n][1] / 2 for n in ys)
    bottom = max(ys[n] + size_of[n][1] / 2 for n in ys)
    shift = margin - top
    positions = {n: (xs[n], ys[n] + shift) for n in nodes}
    routes = [[(xs[p], ys[p] + shift) for p in chain] for chain in chains]
    result = Layout(positions, sizes, routes, layer, order,
                    x - layer_gap + margin, bottom - top + 2 * margin)
    result.crossings = count_crossings(order, chains)
    result.initial_crossings = initial_crossings
    return result


def count_crossings(order, chains):
    """The number of edge crossings between adjacent layers of ``order``.

    ``chains`` are the edges as lists of nodes, one per layer they pass
    (what ``layered_layout`` builds); two segments between the same two
    layers cross when their ends come in opposite orders.
    """
    position = {n: i for layer_nodes in order for i, n in enumerate(layer_nodes)}
    layer_of = {n: k for k, layer_nodes in enumerate(order) for n in layer_nodes}
    segments = {}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            segments.setdefault(layer_of[a], []).append((position[a], position[b]))
    return sum(_inversions(segs) for segs in segments.values())


def _inversions(segments):
    """Pairs of ``(a, b)`` segments with ``a1 < a2`` and ``b1 > b2``: O(s log s).

    Sorted by ``(a, b)``, a crossing is a later segment with a strictly smaller
    ``b``; a Fenwick tree over the ranks of ``b`` counts those in one pass
    (comparing every pair was quadratic in a wide layer).
    """
    ranks = {b: i + 1 for i, b in enumerate(sorted({b for _, b in segments}))}
    tree = [0] * (len(ranks) + 1)
    crossings = seen = 0
    for _, b in sorted(segments):
        r = ranks[b]
        i, not_above = r, 0          # how many seen so far have b' <= b
        while i:
            not_above += tree[i]
            i -= i & -i
        crossings += seen - not_above
        seen += 1
        while r < len(tree):
            tree[r] += 1
            r += r & -r
    return crossings


# ---- step 1: layers -------------------------------------------------------
def _layers(nodes, edges):
    preds = {n: [] for n in nodes}
    succs = {n: [] for n in nodes}
    for a, b in edges:
        preds[b].append(a)
        succs[a].append(b)
    # Longest path by Kahn's topological order (no recursion: tapes can be long).
    waiting = {n: len(preds[n]) for n in nodes}
    ready = [n for n in nodes if not waiting[n]]
    layer = {n: 0 for n in ready}
    for n in ready:             # `ready` grows while we walk it
        for s in succs[n]:
            layer[s] = max(layer.get(s, 0), layer[n] + 1)
            waiting[s] -= 1
            if not waiting[s]:
                ready.append(s)
    if len(ready) < len(nodes):
        stuck = next(n for n in nodes if waiting[n])
        raise ValueError(f"the graph has a cycle through {stuck!r}")
    # Then every node moves right, as late as its consumers allow (latest first):
    # an input sits just left of its first consumer, and so does a side branch
    # whose inputs are all inputs (``x_t @ U`` in an unrolled RNN), instead of
    # sending one long edge, a chain of dummies, across the drawing.
    for n in reversed(ready):
        if succs[n]:
            layer[n] = max(layer[n], min(layer[s] for s in succs[n]) - 1)
    return layer


# ---- step 2: dummy nodes --------------------------------------------------
def _is_dummy(n):
    return isinstance(n, tuple) and len(n) == 3 and n[0] == "dummy"


def _insert_dummies(nodes, edges, layer, rank):
    """Layers as lists (initial order: node order) and each edge as a chain."""
    n_layers = max(layer.values(), default=-1) + 1
    order = [[] for _ in range(n_layers)]
    for n in sorted(nodes, key=rank.get):
        order[layer[n]].append(n)
    chains = []
    for e, (a, b) in enumerate(edges):
        chain = [a]
        for k, lay in enumerate(range(layer[a] + 1, layer[b])):
            dummy = ("dummy", e, k)
            order[lay].append(dummy)
            chain.append(dummy)
        chains.append(chain + [b])
    return order, chains


# ---- step 3: ordering -----------------------------------------------------
def _neighbours(chains):
    left, right = {}, {}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            right.setdefault(a, []).append(b)
            left.setdefault(b, []).append(a)
    return left, right


def _reduce_crossings(order, chains, sweeps):
    left, right = _neighbours(chains)
    best, best_crossings = [list(lay) for lay in order], count_crossings(order, chains)
    current = [list(lay) for lay in order]
    for sweep in range(2 * sweeps):
        forward = sweep % 2 == 0
        indices = range(1, len(current)) if forward else range(len(current) - 2, -1, -1)
        for i in indices:
            fixed = current[i - 1] if forward else current[i + 1]
            neighbours = left if forward else right
            position = {n: p for p, n in enumerate(fixed)}
            current[i] = _sort_by_barycentre(current[i], neighbours, position)
        crossings = count_crossings(current, chains)
        if crossings < best_crossings:
            best, best_crossings = [list(lay) for lay in current], crossings
        if best_crossings == 0:
            break
    return best


def _sort_by_barycentre(layer_nodes, neighbours, position):
    """Stable sort by mean neighbour position; a node without neighbours stays put."""
    keyed = []
    for p, n in enumerate(layer_nodes):
        around = [position[m] for m in neighbours.get(n, ()) if m in position]
        keyed.append((sum(around) / len(around) if around else float(p), p, n))
    return [n for _, _, n in sorted(keyed, key=lambda item: (item[0], item[1]))]


# ---- step 4: coordinates --------------------------------------------------
def _stacked(layers, size_of, node_gap):
    """The starting y of every node: each layer's nodes stacked from 0, ``node_gap`` apart
    (the centre of each node, so the iterations below only move them)."""
    ys = {}
    for layer_nodes in layers:
        y = 0.0
        for n in layer_nodes:
            ys[n] = y + size_of[n][1] / 2
            y += size_of[n][1] + node_gap
    return ys


def _coordinates(order, chains, size_of, node_gap, iterations=12):
    """y for every node: near its neighbours' mean, order and gaps kept.

    An input (a node with nothing on its left) does not pull the node it
    feeds when that node also has a longer path coming in, and it yields
    when nodes of one layer compete for a place: a kernel or a constant
    joining a long chain then moves aside instead of pulling the chain
    towards itself, so the main path stays straight.
    """
    left, right = _neighbours(chains)

    def weight(m):  # an input yields its place almost entirely to a node on a path
        return 1e-3 if not left.get(m) and not _is_dummy(m) else 1.0

    ys = _stacked(order, size_of, node_gap)
    for it in range(iterations):
        forward = it % 2 == 0
        layers = order if forward else order[::-1]
        for layer_nodes in layers:
            wanted = []
            for n in layer_nodes:
                inner = _inputs_aside(left.get(n, []), weight)
                around = (inner or right.get(n, [])) if forward else \
                    (right.get(n, []) or inner)
                wanted.append(sum(ys[m] for m in around) / len(around) if around else ys[n])
            weights = [weight(n) for n in layer_nodes]
            placed = _place_in_order(layer_nodes, wanted, size_of, node_gap, weights)
            for n, y in zip(layer_nodes, placed):
                ys[n] = y
    return ys


def _inputs_aside(neighbours, weight):
    """The left neighbours that should pull: all, unless some are not inputs."""
    inner = [m for m in neighbours if weight(m) == 1.0]
    return inner or list(neighbours)


def _place_in_order(layer_nodes, wanted, size_of, node_gap, weights=None):
    """Closest positions to ``wanted`` (weighted least squares) keeping order and gaps.

    With ``offset[i]`` the least distance from node 0 to node i, the problem
    becomes: find a non-decreasing ``z`` nearest ``wanted - offset`` (then
    ``y = z + offset``), which pool-adjacent-violators solves exactly.
    """
    weights = weights or [1.0] * len(layer_nodes)
    offsets, total = [], 0.0
    for i, n in enumerate(layer_nodes):
        if i:
            total += (size_of[layer_nodes[i - 1]][1] + size_of[n][1]) / 2 + node_gap
        offsets.append(total)
    blocks = []  # [weighted mean, total weight, count]
    for w, off, weight in zip(wanted, offsets, weights):
        blocks.append([w - off, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, weight, count = blocks.pop()
            last = blocks[-1]
            last[0] = (last[0] * last[1] + mean * weight) / (last[1] + weight)
            last[1] += weight
            last[2] += count
    z = [mean for mean, _, count in blocks for _ in range(count)]
    return [round(zi + off, 3) for zi, off in zip(z, offsets)]


# ---- layers only (for bands.flow_layout) -------------------------------------
def layer_order(nodes, edges, sweeps=8):
    """Steps 1 to 3 alone: the layers, each a list of real nodes from top to bottom.

    >>> from widgets.player.layout.layers import layer_order
    >>> layer_order(["a", "b", "c"], [("a", "c"), ("b", "c")])
    [['a', 'b'], ['c']]
    """
    nodes = list(dict.fromkeys(nodes))
    rank = {n: i for i, n in enumerate(nodes)}
    layer = _layers(nodes, edges)
    order, chains = _insert_dummies(nodes, edges, layer, rank)
    if sweeps:
        order = _reduce_crossings(order, chains, sweeps)
    return [[n for n in lay if not _is_dummy(n)] for lay in order]
