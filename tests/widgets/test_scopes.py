"""Scope groups and the debugging marks of a replay (widgets/player/data/scopes.py)."""

import numpy as np
import pytest

import autodiff as ad
from benchmarks.player import rnn_tape
from widgets.player.data.scopes import value_stats
from widgets.player.drawing.svg import replay_svg, with_geometry
from widgets.player.page.html_export import export_html
from widgets.player.replay import replay


def _mlp():
    rng = np.random.default_rng(0)
    x = ad.constant(rng.normal(size=(2, 3)))
    ws = [ad.Variable(rng.normal(size=(3, 3)), name=f"w{i}") for i in range(3)]
    with ad.GradientTape() as tape:
        h = x
        for i, w in enumerate(ws):
            with ad.name_scope(f"dense_{i}"):
                h = ad.tanh(ad.matmul(h, w))
        with ad.name_scope("loss"):
            loss = ad.reduce_sum(h * h)
    return tape, loss, ws


def test_each_scope_becomes_a_group_of_its_ops_and_their_outputs():
    tape, loss, ws = _mlp()
    r = replay(tape, loss, ws)
    groups = r.data["groups"]
    assert [g["scope"] for g in groups] == ["dense_0", "dense_1", "dense_2", "loss"]
    ops = {n["id"]: n for n in r.nodes if n["type"] == "op"}
    assert [[ops[o]["op_type"] for o in g["ops"]] for g in groups[:1]] == [["MatMul", "Tanh"]]
    assert all(ops[o]["scope"] == g["scope"] for g in groups for o in g["ops"])
    w0 = f"t{ws[0]._id}"
    assert w0 in groups[0]["members"]            # read only inside dense_0
    for g in groups:                             # the box holds every member
        b = g["box"]
        for m in g["members"]:
            n = r.layout["nodes"][m]
            assert b["x"] <= n["x"] - n["w"] / 2 and n["x"] + n["w"] / 2 <= b["x"] + b["w"]


@pytest.mark.parametrize("steps", [3, 80])       # a small tape, and one that opens as boxes
def test_a_replay_without_geometry_is_placed_as_the_full_one_when_a_picture_needs_it(steps):
    tape, loss, sources = rnn_tape(steps * 5)
    full = replay(tape, loss, sources)
    lean = replay(tape, loss, sources, geometry=False)
    assert sorted(lean.layout) == ["copies", "tree"] and lean.layout["tree"] == full.layout["tree"]
    assert [(c["id"], c["w"]) for c in lean.layout["copies"]] == \
        [(c["id"], c["w"]) for c in full.layout["copies"]]
    assert lean.data["groups"] and all("box" not in g for g in lean.data["groups"])
    assert replay_svg(lean) == replay_svg(full)      # the picture places what it draws
    with_geometry(lean.data)
    assert lean.layout == full.layout and lean.data["groups"] == full.data["groups"]


def test_a_tape_without_scopes_has_no_groups():
    x = ad.Variable(np.float64(3.0), name="x")
    with ad.GradientTape() as tape:
        y = x * x
    r = replay(tape, y, x)
    assert r.data["groups"] == [] and r.data["debug"]["lost"] == []
    assert r.data["debug"]["first_nonfinite"] == {"forward": None, "backward": None}


def test_the_first_nan_is_found_in_the_forward_values_and_the_cotangents():
    tape, loss, sources = rnn_tape(51, nan_at=4)       # 10 steps, NaN read at step 4
    r = replay(tape, loss, sources)
    first = r.data["debug"]["first_nonfinite"]
    assert r.frames[first["forward"]]["title"].startswith("record 22: ")   # 4 * 5 + 1, counted from 1
    assert r.frames[first["backward"]]["phase"] == "backward"
    tape, loss, sources = rnn_tape(51)
    clean = replay(tape, loss, sources).data["debug"]["first_nonfinite"]
    assert clean == {"forward": None, "backward": None}


def test_group_gradient_norms_grow_over_the_backward_pass():
    tape, loss, ws = _mlp()
    r = replay(tape, loss, ws)
    norms = r.data["debug"]["group_norms"]
    assert set(norms) == {g["id"] for g in r.data["groups"]}
    for series in norms.values():
        frames = [k for k, _ in series]
        values = [v for _, v in series]
        assert frames == sorted(frames) and values == sorted(values)
        assert all(r.frames[k]["phase"] == "backward" for k in frames)


@pytest.mark.parametrize("persistent", [False, True])
def test_a_lost_gradient_points_at_the_stop_gradient(persistent):
    w = ad.Variable(np.ones((2, 2)), name="w")
    v = ad.Variable(np.float64(2.0), name="v")
    with ad.GradientTape(persistent=persistent) as tape:
        h = ad.tanh(w)
        y = ad.reduce_sum(ad.stop_gradient(h * v) + h)
    r = replay(tape, y, [w, v])
    (lost,) = r.data["debug"]["lost"]
    assert lost["source"] == f"t{v._id}" and lost["reason"] == "stop_gradient"
    assert lost["node"] != lost["source"]
    assert "stop_gradient" in lost["message"]


def test_value_stats_for_tooltips():
    stats = value_stats(ad.constant(np.array([0.0, 1.0, 1.0, 2.0, np.nan])))
    assert stats["min"] == 0.0 and stats["max"] == 2.0 and stats["mean"] == 1.0
    assert stats["nonfinite"] == 1 and sum(stats["hist"]) == 4 and len(stats["hist"]) == 8
    tape, loss, ws = _mlp()
    r = replay(tape, loss, ws)
    assert r.node(ws[0])["stats"]["max"] == float(f"{np.max(ws[0].numpy()):.4g}")


def test_static_svg_and_page_draw_the_copies_of_a_widely_read_variable():
    tape, loss, sources = rnn_tape(26)           # 5 steps: W read 5 times
    r = replay(tape, loss, sources)
    svg = replay_svg(r, -1)
    assert svg.count('class="tp-node tp-tensor tp-copy') == len(r.layout["copies"]) == 12
    page = export_html(r)
    assert '"groups":[' in page and "createGroups" in page and "createViewport" in page


def test_the_static_svg_of_a_big_tape_draws_its_groups_collapsed():
    tape, loss, sources = rnn_tape(101)          # 20 scoped steps: 101 ops
    r = replay(tape, loss, sources)
    svg = replay_svg(r, -1)
    assert svg.count('class="tp-group-cover') == len(r.data["groups"]) == 21
    members = {m for g in r.data["groups"] for m in g["members"]}
    assert not any(f'data-id="{m}"' in svg for m in members if m.startswith("op"))
    small_tape, small_loss, ws = _mlp()          # 13 ops: drawn expanded
    assert 'class="tp-group-cover' not in replay_svg(replay(small_tape, small_loss, ws), -1)


def test_the_first_nan_lands_on_the_op_that_made_it_even_when_the_tape_kept_no_value():
    # 65 x 2 floats: too big for the tape to keep Log's output (only a placeholder),
    # so the NaN is first seen as Mul's input; the button must still point at Log.
    x = ad.constant(np.concatenate([np.zeros((64, 2)), [[300.0, -300.0]]]).astype(np.float32))
    with ad.GradientTape() as tape:
        tape.watch(x)
        lp = ad.math.log(ad.nn.softmax(x))
        y = ad.reduce_sum(lp * 2.0)
    r = replay(tape, y, x)
    k = r.data["debug"]["first_nonfinite"]["forward"]
    assert "= Log(" in r.frames[k]["title"]
