"""The scope tree a long tape folds into, its placement in two dimensions, and its static forms.

Real models: a Keras GRU (``ad.keras.layers.GRU``: 23 records a step, all in one
scope) and a hand-written RNN (five records a step, each step in its scope).
"""

import itertools

import numpy as np
import pytest

import autodiff as ad
from benchmarks.player import gru_tape, rnn_tape
from widgets.player.drawing.png import MAX_WIDTH, replay_png
from widgets.player.drawing.svg import _Sizes, node_sizes, overview, replay_svg
from widgets.player.layout.graph_layout import graph_layout
from widgets.player.layout.placement import OPEN_UP_TO, default_open, place
from widgets.player.layout.scope_tree import MAX_CHILDREN, from_json, rep, reps
from widgets.player.page.html_export import (PACK_ABOVE, _compact, export_html, page_model,
                                             read_page_model)
from widgets.player.replay import replay


@pytest.fixture(scope="module")
def gru():
    tape, loss, variables = gru_tape(1005)      # 43 steps
    return replay(tape, loss, variables)


@pytest.fixture(scope="module")
def rnn():
    tape, loss, variables = rnn_tape(1000)      # 200 step scopes
    return replay(tape, loss, variables)


def _boxes(rep):
    return {b["label"]: b for b in rep.layout["tree"]}


def test_a_gru_cells_repeated_ops_are_cut_into_its_calls(gru):
    boxes = _boxes(gru)
    cell = boxes["gru_cell"]
    assert cell["path"] == "gru/gru_cell" and cell["sub"] == "43 calls · 989 ops"
    calls = [b for b in gru.layout["tree"] if b["kind"] == "call"]
    assert [b["label"] for b in calls] == [f"call {k}" for k in range(1, 44)]
    assert all(b["ops"] == 23 and b["path"] == "gru/gru_cell" for b in calls)
    # each call holds its own records, in order
    assert [(b["first"], b["last"]) for b in calls[:2]] == [(0, 22), (23, 45)]


def test_many_scopes_are_grouped_into_even_ranges(rnn):
    boxes = _boxes(rnn)
    ranges = [b for b in rnn.layout["tree"] if b["kind"] == "range"]
    assert [b["label"] for b in ranges] == [f"step_{40 * i} … step_{40 * i + 39}" for i in range(5)]
    assert boxes["rnn"]["sub"] == "5 ranges · 1,000 ops"
    assert all(len([c for c in rnn.layout["tree"] if c["parent"] == int(r["id"][1:])]) == 40
               for r in ranges)
    assert 40 <= MAX_CHILDREN


def test_ops_that_do_not_repeat_are_cut_into_blocks():
    x = ad.Variable(np.float64(0.5), name="x")
    ops = [ad.sin, ad.cos, ad.tanh, ad.exp, ad.sigmoid, ad.square, ad.log1p]
    rng = np.random.default_rng(1)
    with ad.GradientTape() as tape:
        h = x
        with ad.name_scope("mixed"):
            for k in rng.integers(0, len(ops), 90):
                h = ops[k](h) * 0.5
    r = replay(tape, h, x)
    blocks = [b for b in r.layout["tree"] if b["kind"] == "block"]
    assert len(blocks) == 6 and blocks[0]["label"] == "records 1–32"
    assert sum(b["ops"] for b in blocks) == 180


def test_the_page_opens_at_the_level_of_the_scopes(gru, rnn):
    for rep, shown in ((gru, {"gru_cell", "head", "loss"}),
                       (rnn, {f"step_{40 * i} … step_{40 * i + 39}" for i in range(5)} | {"loss"})):
        tree = from_json(rep.layout["tree"], rep.nodes, rep.edges)
        opened = default_open(tree, small=0)
        closed = {b["label"] for k, b in enumerate(tree.boxes)
                  if k not in opened and tree.boxes[b["parent"]] is not None
                  and b["parent"] in opened}
        assert closed == shown and len(closed) <= OPEN_UP_TO


def _siblings_overlap(rects, tree):
    parent = {f"b{k}": b["parent"] for k, b in enumerate(tree.boxes)}
    parent.update({item: k for item, k in tree.home.items() if item[:1] != "b"})
    out = []
    for (a, ra), (b, rb) in itertools.combinations(rects.items(), 2):
        if parent.get(a) == parent.get(b) and abs(ra["x"] - rb["x"]) * 2 < ra["w"] + rb["w"] - 1 \
                and abs(ra["y"] - rb["y"]) * 2 < ra["h"] + rb["h"] - 1:
            out.append((a, b))
    return out


def test_placed_boxes_use_two_dimensions_and_never_overlap(gru):
    tree = from_json(gru.layout["tree"], gru.nodes, gru.edges)
    cell = next(k for k, b in enumerate(tree.boxes) if b["label"] == "gru_cell")
    opened = {0, tree.boxes[cell]["parent"], cell}
    rects, width, height = place(tree, node_sizes(gru.data), opened, aspect=16 / 9)
    calls = [r for i, r in rects.items() if i[:1] == "b" and tree.boxes[int(i[1:])]["kind"] == "call"]
    assert len(calls) == 43
    assert len({r["y"] for r in calls}) >= 3            # the 43 calls wrap into rows
    assert 0.5 < width / height < 4                     # a screen's shape, not a line
    assert not _siblings_overlap(rects, tree)


def test_reps_shows_each_item_as_rep_does(gru):
    tree = from_json(gru.layout["tree"], gru.nodes, gru.edges)
    cell = next(k for k, b in enumerate(tree.boxes) if b["label"] == "gru_cell")
    items = list(tree.home) + ["t-unknown"]
    for opened in ({0}, {0, tree.boxes[cell]["parent"]}, set(range(len(tree.boxes)))):
        show = reps(tree, opened)
        expected = [rep(tree, item, opened) for item in items]
        assert [show(item) for item in items] == expected
        assert len(set(expected)) > 1
    assert reps(tree, {0})(items[0]).startswith("b")      # a closed box stands for its items


def test_every_node_of_the_fully_open_layout_is_placed_without_overlap(gru):
    lay = gru.layout
    assert lay["width"] / lay["height"] < 5             # it was ~100: one long line
    tree = from_json(lay["tree"], gru.nodes, gru.edges)
    rects, _, _ = place(tree, node_sizes(gru.data), set(range(len(tree.boxes))))
    first_call = next(k for k, b in enumerate(tree.boxes) if b["label"] == "call 1")
    inside = {i: r for i, r in rects.items() if tree.home.get(i) == first_call}
    assert len(inside) > 40 and not _siblings_overlap(inside, tree)


def test_steps_of_one_shape_are_placed_alike(gru):
    tree = from_json(gru.layout["tree"], gru.nodes, gru.edges)
    nodes = gru.layout["nodes"]
    calls = [b for b in tree.boxes if b["kind"] == "call"]
    first, second = calls[1]["layers"], calls[2]["layers"]     # (call 1 reads the initial state)
    assert [len(lay) for lay in first] == [len(lay) for lay in second]
    # an op of call 3 sits where its twin sits in call 2, moved by one offset
    ops1 = [i for lay in first for i in lay if i.startswith("op")]
    ops2 = [i for lay in second for i in lay if i.startswith("op")]
    shifts = {(round(nodes[b]["x"] - nodes[a]["x"], 1), round(nodes[b]["y"] - nodes[a]["y"], 1))
              for a, b in zip(ops1, ops2)}
    assert len(shifts) == 1


def test_a_long_replay_travels_packed_under_1_kb_a_record(rnn):
    html = export_html(rnn)
    assert len(rnn.frames) > PACK_ABOVE
    assert len(html.encode("utf-8")) < 1000 * 1001
    model = read_page_model(html)
    assert model == page_model(rnn.data)
    assert model["packed"] == 2 and isinstance(model["edges"][0], list)
    assert model["debug"] == _compact(rnn.data["debug"]) and model["debug"]["group_norms"]
    assert "data" not in model["nodes"][0] and "nodes" not in model["layout"]
    backward = next(f for f in model["frames"] if f["phase"] == "backward")
    assert "vjp" not in backward and "name" not in backward["cotangents"][0]


def test_the_static_forms_of_a_long_tape_are_its_overview(rnn):
    view = overview(rnn.data, node_sizes(rnn.data))
    closed = [i for i, r in view["rects"].items() if r.get("open") is False]
    assert len(closed) == 6                             # 5 ranges and loss
    svg = replay_svg(rnn, -1)
    assert svg.count('class="tp-group-cover') == 6 and 'class="tp-node ' not in svg
    assert "▸ step_0 … step_39" in svg
    png, (width, height) = replay_png(rnn, -1)
    assert width <= MAX_WIDTH and width / height < 4   # readable 1,280 pixels wide
    assert len(png) < 200_000


def test_a_page_replays_overview_sizes_each_node_as_node_sizes_does():
    # a replay made for a page has no positions: the picture's overview asks _Sizes only
    # for the nodes of its open boxes, each the size node_sizes gives it
    tape, loss, variables = rnn_tape(1000)
    page = replay(tape, loss, variables, geometry=False, words=False)
    sizes, lazy = node_sizes(page.data), _Sizes(page.data)
    assert len(lazy) == len(page.data["layout"]["copies"]) > 0    # copies only, at first
    assert all(lazy[k] == v for k, v in sizes.items())
    assert overview(page.data, lazy) is not None
    with pytest.raises(KeyError):
        lazy["b3"]


def test_graph_layout_is_linear_in_the_records():
    small, big = rnn_tape(200), rnn_tape(2000)
    counts = []
    for tape, loss, variables in (small, big):
        rep = replay(tape, loss, variables)
        lay = graph_layout(rep.nodes, rep.edges)
        counts.append((len(tape.records), len(lay["nodes"]) + len(lay["copies"]),
                       sum(len(lay_) for b in lay["tree"] for lay_ in b["layers"])))
    (n1, placed1, items1), (n2, placed2, items2) = counts
    assert placed2 / n2 < 1.2 * placed1 / n1 and items2 / n2 < 1.2 * items1 / n1
