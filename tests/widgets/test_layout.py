"""The layered layout: no overlaps, chains straight, fewer crossings, deterministic."""

import itertools
import random

import pytest

from widgets.player.layout.bands import flow_layout
from widgets.player.layout.layers import layer_order, layered_layout


def _overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _random_dag(seed, n=14, p=0.25):
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(n)]
    edges = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:] if rng.random() < p]
    sizes = {v: (rng.choice([40, 96, 132]), rng.choice([40, 84, 90])) for v in nodes}
    return nodes, edges, sizes


def test_a_chain_is_one_straight_line():
    nodes = list("abcdef")
    lay = layered_layout(nodes, list(zip(nodes, nodes[1:])))
    ys = {lay.positions[n][1] for n in nodes}
    xs = [lay.positions[n][0] for n in nodes]
    assert len(ys) == 1
    assert xs == sorted(xs) and len(set(xs)) == len(xs)


def test_a_chain_of_mixed_sizes_stays_straight():
    nodes = ["x", "op", "y", "op2", "z"]
    sizes = {"x": (132, 90), "op": (96, 84), "y": (132, 90), "op2": (96, 84), "z": (132, 90)}
    lay = layered_layout(nodes, list(zip(nodes, nodes[1:])), sizes=sizes)
    assert len({lay.positions[n][1] for n in nodes}) == 1


@pytest.mark.parametrize("seed", range(8))
def test_no_two_nodes_overlap(seed):
    nodes, edges, sizes = _random_dag(seed)
    lay = layered_layout(nodes, edges, sizes=sizes)
    boxes = lay.boxes()
    for a, b in itertools.combinations(nodes, 2):
        assert not _overlap(boxes[a], boxes[b]), (a, b, boxes[a], boxes[b])
    # everything lies inside the drawing
    assert all(l >= 0 and t >= 0 and r <= lay.width and b <= lay.height
               for l, t, r, b in boxes.values())


def test_edges_go_left_to_right_and_long_edges_pass_through_every_layer():
    nodes = ["a", "b", "c", "d"]
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")]
    lay = layered_layout(nodes, edges)
    assert [lay.layers[n] for n in nodes] == [0, 1, 2, 3]
    long_route = lay.routes[3]
    assert len(long_route) == 4          # a, two dummies, d
    assert [p[0] for p in long_route] == sorted(p[0] for p in long_route)
    assert long_route[0] == lay.positions["a"] and long_route[-1] == lay.positions["d"]


def test_crossings_are_removed_on_a_known_small_graph():
    # Given in this order, a->z, b->y, c->x cross three times; reversing one layer fixes it.
    nodes = ["a", "b", "c", "x", "y", "z"]
    edges = [("a", "z"), ("b", "y"), ("c", "x")]
    lay = layered_layout(nodes, edges)
    assert lay.initial_crossings == 3
    assert lay.crossings == 0
    ys = {n: lay.positions[n][1] for n in nodes}
    assert (ys["a"] - ys["b"]) * (ys["z"] - ys["y"]) > 0


def test_crossings_are_reduced_on_a_two_level_graph():
    nodes = ["x1", "x2", "x3", "x4", "m1", "m2", "m3", "m4", "out"]
    edges = [("x1", "m4"), ("x2", "m3"), ("x3", "m2"), ("x4", "m1"), ("x1", "m3"),
             ("m1", "out"), ("m2", "out"), ("m3", "out"), ("m4", "out")]
    lay = layered_layout(nodes, edges)
    assert lay.crossings < lay.initial_crossings


def test_an_input_is_pulled_next_to_its_first_consumer():
    nodes = ["x", "a", "b", "c", "seed", "d"]
    edges = [("x", "a"), ("a", "b"), ("b", "c"), ("c", "d"), ("seed", "d")]
    lay = layered_layout(nodes, edges)
    assert lay.layers["seed"] == lay.layers["d"] - 1


def test_the_layout_is_deterministic():
    nodes, edges, sizes = _random_dag(3)
    first = layered_layout(nodes, edges, sizes=sizes)
    second = layered_layout(list(nodes), list(edges), sizes=dict(sizes))
    assert first.positions == second.positions and first.routes == second.routes


def test_a_cycle_is_refused():
    with pytest.raises(ValueError, match="cycle"):
        layered_layout(["a", "b"], [("a", "b"), ("b", "a")])


def test_side_inputs_joining_a_chain_leave_the_chain_straight():
    # t0 -> op0 -> t1 -> op1 -> ..., each op also reading its own input k_i (a kernel,
    # a constant): the inputs move aside, the chain does not drift layer after layer.
    nodes, edges = ["t0"], []
    for i in range(6):
        nodes += [f"k{i}", f"op{i}", f"t{i + 1}"]
        edges += [(f"t{i}", f"op{i}"), (f"k{i}", f"op{i}"), (f"op{i}", f"t{i + 1}")]
    lay = layered_layout(nodes, edges)
    chain = [lay.positions[n][1] for n in nodes if n.startswith(("op", "t")) and n != "t0"]
    assert max(chain) - min(chain) < 1.0
    assert all(lay.layers[f"k{i}"] == lay.layers[f"op{i}"] - 1 for i in range(6))


# ---- bands: a long chain fills two dimensions (bands.flow_layout) -------------
def test_a_long_chain_wraps_into_bands_of_the_wanted_width():
    nodes = [f"n{i}" for i in range(30)]
    layers = [[n] for n in nodes]
    left = {b: [a] for a, b in zip(nodes, nodes[1:])}
    flow = flow_layout(layers, {n: (40, 40) for n in nodes}, left, band_width=500)
    assert len(flow.bands) == 5                       # 6 a band: 6 * 40 + 5 * 48 = 480 <= 500
    assert flow.width <= 500 and flow.height > 4 * 40
    ys = [flow.positions[n][1] for n in nodes]
    for b in range(5):                                # each band is one straight line
        assert len({y for n, y in zip(nodes, ys) if flow.band_of[n] == b}) == 1
    assert ys == sorted(ys)                           # bands go top to bottom


def test_a_band_never_starts_between_an_input_and_what_it_feeds():
    # op_i reads k_i (an input) and the chain; k_i sits one layer before op_i
    nodes, edges = ["t0"], []
    for i in range(8):
        nodes += [f"k{i}", f"op{i}", f"t{i + 1}"]
        edges += [(f"t{i}", f"op{i}"), (f"k{i}", f"op{i}"), (f"op{i}", f"t{i + 1}")]
    layers = layer_order(nodes, edges)
    left = {}
    for a, b in edges:
        left.setdefault(b, []).append(a)
    for width in (300, 400, 500, 700):
        flow = flow_layout(layers, {n: (40, 40) for n in nodes}, left, band_width=width)
        assert len(flow.bands) > 1
        assert all(flow.band_of[f"k{i}"] == flow.band_of[f"op{i}"] for i in range(8)), width


def test_layer_order_matches_layered_layout():
    nodes, edges, sizes = _random_dag(5)
    lay = layered_layout(nodes, edges, sizes=sizes)
    assert layer_order(nodes, edges) == [[n for n in layer if not isinstance(n, tuple)]
                                         for layer in lay.order]
