"""The player's cost is linear in the tape: layout, frames and page size (issue 12).

A 3-layer MLP already scrolled; an unrolled RNN's ``W`` fanned long edges
across the whole drawing (one dummy node per layer crossed: quadratic), and
every frame repeated every gradient known so far (quadratic page size).
"""

import itertools
import random

from benchmarks.player import rnn_tape
from widgets.player.layout.graph_layout import COPY_MIN_USES, graph_layout
from widgets.player.layout.layers import _inversions, count_crossings, layered_layout
from widgets.player.page.html_export import export_html
from widgets.player.replay import replay


def _rnn(n_records):
    tape, loss, sources = rnn_tape(n_records)
    return replay(tape, loss, sources)


def test_inversion_count_matches_comparing_every_pair():
    rng = random.Random(3)
    for _ in range(50):
        segs = [(rng.randrange(6), rng.randrange(6)) for _ in range(rng.randrange(0, 30))]
        brute = sum(1 for s, t in itertools.combinations(segs, 2)
                    if (s[0] - t[0]) * (s[1] - t[1]) < 0)
        assert _inversions(segs) == brute


def test_count_crossings_on_a_known_small_graph_is_three():
    order = [["a", "b", "c"], ["x", "y", "z"]]
    assert count_crossings(order, [["a", "z"], ["b", "y"], ["c", "x"]]) == 3


def test_a_side_branch_of_inputs_sits_next_to_its_consumer():
    # chain a -> b -> c -> d -> e; p, q -> s (a side branch) feeds e only
    nodes = list("abcdepqs")
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("p", "s"), ("q", "s"), ("s", "e")]
    lay = layered_layout(nodes, edges)
    assert lay.layers["s"] == lay.layers["e"] - 1
    assert lay.layers["p"] == lay.layers["s"] - 1
    assert not any(isinstance(n, tuple) for layer in lay.order for n in layer)  # no dummies


def test_a_widely_read_variable_gets_a_copy_per_use_and_short_edges():
    r = _rnn(101)                      # 20 steps: W, U and b are read 20 times each
    copies = r.layout["copies"]
    by_name = {}
    for c in copies:
        by_name.setdefault(r.node(int(c["node"][1:]))["name"], []).append(c)
    assert {name: len(cs) for name, cs in by_name.items()} == {"W": 19, "U": 19, "b": 19}
    assert COPY_MIN_USES <= 20
    # each copy sits just left of the op that reads it
    op_box = r.layout["nodes"]
    for c in copies:
        assert 0 < op_box[c["op"]]["x"] - c["x"] < 200


def test_layout_has_no_quadratic_dummy_chains():
    r = _rnn(401)
    nodes = r.nodes
    ends = graph_layout(nodes, r.edges)
    assert set(ends["nodes"]) == {n["id"] for n in nodes}
    # every edge path is short: one curve segment, not a chain through dummies
    assert max(path.count("C") for path in r.layout["edges"].values()) <= 2


def test_frames_and_page_grow_linearly_with_the_tape():
    small, big = _rnn(51), _rnn(501)
    page_small, page_big = len(export_html(small)), len(export_html(big))
    per_record_small = page_small / 51
    per_record_big = page_big / 501
    assert per_record_big < 1.3 * per_record_small
    assert page_big < 3_000_000
    delta_sizes = [len(f["grads_new"]) for f in big.frames]
    assert max(delta_sizes) <= 4       # a frame lists only what it changed


def test_tape_names_match_the_engines_names():
    import numpy as np

    import autodiff as ad
    from widgets.tape_names import tape_names

    v = ad.Variable(np.float64(1.0), name="velocity")   # a name starting with v
    w = ad.Variable(np.ones(3), name="w")
    with ad.GradientTape(persistent=True) as tape:
        y = ad.reduce_sum(ad.sin(w * v) + ad.constant(np.ones(3)))
    assert tape_names(tape) == tape.names()
    tape2, _, _ = rnn_tape(51)
    assert tape_names(tape2) == tape2.names()
    del y
