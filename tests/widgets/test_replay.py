"""replay(): frames checked record by record against the engine, no display.

The guide's examples (x**2, the two-tape sin/sigmoid example, a second
derivative with nested tapes) are replayed and every frame is compared with
``tape.records`` and with the values of ``tape.backward_trace``.
"""

import json
import warnings

import numpy as np
import pytest

import autodiff as ad
from autodiff import nest
from autodiff.backend import to_numpy
from widgets.player.data.frames import grads_at, preview
from widgets.player.replay import Replay, replay


def _np(tensor):
    return None if tensor is None else to_numpy(tensor._value)


def _frames(r, phase):
    return [f for f in r.frames if f["phase"] == phase]


def _assert_value(value, tensor):
    """A frame's value dict shows exactly the engine's tensor (or None)."""
    if tensor is None:
        assert value is None
        return
    assert value["shape"] == list(tensor._value.shape)
    np.testing.assert_array_equal(np.asarray(value["data"]), _np(tensor))
    assert value["preview"] == preview(tensor._value)


def _check_forward(r, records):
    """One forward frame per distinct record, in execution order, matching each tape.

    ``records``: each tape's ``tape.records``, taken before replay (which frees
    a non-persistent tape's records, as gradient does).
    """
    by_outputs = {}
    for t, recs in enumerate(records):
        for rec in recs:
            by_outputs.setdefault(tuple(rec.output_ids), []).append((t, rec))
    forward = _frames(r, "forward")
    assert len(forward) == len(by_outputs)
    ops = {n["id"]: n for n in r.nodes if n["type"] == "op"}
    seen_outputs = []
    for k, frame in enumerate(forward):
        op = ops[frame["op"]]
        assert frame["done_ops"] == k + 1
        outputs = [int(n[1:]) for n in frame["nodes"][1:]]
        recs = by_outputs[tuple(outputs)]
        assert sorted(op["tapes"]) == sorted(t for t, _ in recs)
        assert [list(x) for x in op["records"]] == [[t, rec.index] for t, rec in recs]
        t, rec = recs[0]
        assert frame["record"] == rec.index and frame["tape"] == t
        assert op["op_type"] == rec.op_type
        assert op["doc"] == (rec.primitive.doc or "")
        in_edges = sorted((e for e in r.edges if e["op"] == op["id"] and e["kind"] == "in"),
                          key=lambda e: e["slot"])
        assert [e["tensor"] for e in in_edges] == [f"t{i}" for i in rec.input_ids]
        seen_outputs.append(min(rec.output_ids))
    assert seen_outputs == sorted(seen_outputs)   # execution order


def _check_backward(r, trace):
    """One backward frame per step of the engine's trace, values identical."""
    backward = _frames(r, "backward")
    assert len(backward) == len(trace.steps)
    for frame, step in zip(backward, trace.steps):
        assert frame["record"] == step.record.index
        assert frame["vjp"]["op_type"] == step.op_type
        assert frame["vjp"]["doc"] == (step.record.primitive.doc or "")
        assert [c["node"] for c in frame["cotangents"]] == [f"t{i}" for i in step.record.output_ids]
        for shown, g in zip(frame["cotangents"], step.cotangents):
            _assert_value(shown["value"], g)
        assert [c["node"] for c in frame["contributions"]] == \
            [f"t{i}" for i, _ in step.contributions]
        for shown, (_, c) in zip(frame["contributions"], step.contributions):
            _assert_value(shown["value"], c)
        assert {t["node"] for t in frame["totals"]} == {f"t{i}" for i in step.totals}
        for shown in frame["totals"]:
            _assert_value(shown["value"], step.totals[int(shown["node"][1:])])
    seed = _frames(r, "seed")[0]
    assert [c["node"] for c in seed["cotangents"]] == [f"t{i}" for i in trace.seeds]
    for shown, g in zip(seed["cotangents"], trace.seeds.values()):
        _assert_value(shown["value"], g)


def _check_result(r, trace):
    result = r.frames[-1]
    assert result["phase"] == "result"
    assert [g["node"] for g in result["gradients"]] == [f"t{i}" for i in trace.source_ids]
    for shown, g in zip(result["gradients"], nest.flatten(trace.gradients)):
        _assert_value(shown["value"], g)


def _check_all(r, records):
    _check_forward(r, records)
    _check_backward(r, r.trace)
    _check_result(r, r.trace)
    assert [f["index"] for f in r.frames] == list(range(len(r.frames)))
    assert json.loads(r.to_json()) == r.data


# ---- the guide's examples -------------------------------------------------
def test_x_squared_frames_follow_the_tape_and_the_trace():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape(persistent=True) as tape:
        y = x ** 2
    printed = str(tape).splitlines()[1:]
    records = [tape.records]
    r = replay(tape, y, x)
    _check_all(r, records)
    assert [f["phase"] for f in r.frames] == ["forward", "seed", "backward", "result"]
    # forward titles are the tape printout's lines, numbered
    assert [f["title"] for f in _frames(r, "forward")] == \
        [f"record {k}: {line.strip()}" for k, line in enumerate(printed, 1)]
    assert r.frames[-1]["gradients"][0]["value"]["data"] == 6.0
    assert r.frames[-1]["sentence"] == "Done: dv1/dx = 6.0."
    back = _frames(r, "backward")[0]
    assert back["sentence"].startswith("The cotangent 1.0 arrives at Pow")
    assert "sends 6.0 to x" in back["sentence"]
    assert float(r.gradients) == 6.0
    # the same engine numbers as an independent backward pass on the persistent tape
    again = tape.backward_trace(y, x)
    _check_backward(r, again)


def test_a_model_s_result_sentence_names_the_none_gradients_first_and_counts_the_rest():
    xs = [ad.Variable(float(k), name=f"x{k}") for k in range(6)]
    with ad.GradientTape() as tape:
        y = xs[0] * xs[1] + xs[2] * xs[3] + xs[4] * 2.0       # x5 is not used: None
    r = replay(tape, y, xs, names={"y": y})
    assert r.frames[-1]["sentence"] == (
        "Done: dy/dx5 is None (no recorded path leads from x5 to y); dy/dx0 = 1.0; "
        "dy/dx1 = 0.0; dy/dx2 = 3.0; and 2 more gradients.")
    assert len(r.frames[-1]["gradients"]) == 6                  # the row still has them all


def test_replaying_a_persistent_tape_twice_gives_the_same_model():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape(persistent=True) as tape:
        y = x ** 2
    assert replay(tape, y, x).data == replay(tape, y, x).data


def test_replay_uses_up_a_non_persistent_tape_like_gradient():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x ** 2
    replay(tape, y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        replay(tape, y, x)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def _two_tapes():
    x0 = ad.constant(0.0)
    x1 = ad.constant(0.0)
    with ad.GradientTape(persistent=True) as tape0, ad.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = ad.sin(x0)
        y1 = ad.nn.sigmoid(x1)
        y = y0 + y1
        ys = ad.reduce_sum(y)
    return tape0, tape1, x0, x1, ys, dict(x0=x0, x1=x1, y0=y0, y1=y1, y=y, ys=ys)


def test_two_tapes_each_op_is_tagged_with_the_tapes_that_recorded_it():
    tape0, tape1, x0, x1, ys, names = _two_tapes()
    records = [tape0.records, tape1.records]
    r = replay([tape0, tape1], ys, x0, names=names)
    _check_all(r, records)
    tapes_of = {n["op_type"]: sorted(n["tapes"]) for n in r.nodes if n["type"] == "op"}
    assert tapes_of == {"Sin": [0], "Sigmoid": [1], "AddV2": [0, 1], "Sum": [0, 1]}
    assert r.data["tape_groups"] == ["0", "1", "0+1"]
    # tape 0's backward pass never visits the sigmoid
    assert [f["vjp"]["op_type"] for f in _frames(r, "backward")] == ["Sum", "AddV2", "Sin"]
    assert r.frames[-1]["gradients"][0]["value"]["data"] == 1.0          # cos(0)
    assert "watched" in r.node(x0)["flags"] and "watched" in r.node(x1)["flags"]


def test_two_tapes_second_tape_gives_the_sigmoid_slope_and_none_for_x0():
    tape0, tape1, x0, x1, ys, names = _two_tapes()
    records = [tape1.records]
    r = replay(tape1, ys, [x1, x0], names=names)
    _check_all(r, records)
    gradients = r.frames[-1]["gradients"]
    assert gradients[0]["value"]["data"] == 0.25
    assert gradients[1]["value"] is None and "unconnected" in gradients[1]["flags"]
    assert "dys/dx0 is None" in r.frames[-1]["sentence"]
    assert "nothing to y0" in _frames(r, "backward")[1]["sentence"]


def test_second_derivative_with_nested_tapes():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as outer:
        with ad.GradientTape(persistent=True) as inner:
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    records = [outer.records, inner.records]
    r = replay([outer, inner], dy_dx, x, names={"y": y, "dy_dx": dy_dx},
               tape_names=["outer", "inner"])
    _check_all(r, records)
    ops = [n for n in r.nodes if n["type"] == "op"]
    assert [sorted(op["tapes"]) for op in ops[:2]] == [[0, 1], [0, 1]]    # the forward x*x*x
    assert all(op["tapes"] == [0] for op in ops[2:])     # inner's backward, seen by outer only
    assert r.data["tape_groups"] == ["0+1", "0"]
    assert float(dy_dx) == 3.0
    assert r.frames[-1]["gradients"][0]["value"]["data"] == 6.0
    last = _frames(r, "backward")[-1]
    assert last["vjp"]["op_type"] == "Mul" and "x twice" in last["sentence"]
    assert "recorded by outer and inner" in r.frames[0]["sentence"]
    assert "recorded by outer only" in r.frames[2]["sentence"]


def test_a_freed_inner_tape_is_listed_but_contributes_no_records():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    r = replay([outer, inner], dy_dx, x)
    assert r.tapes[1]["freed"] and r.tapes[1]["records"] == 0
    assert all(n["tapes"] == [0] for n in r.nodes if n["type"] == "op")
    assert r.frames[-1]["gradients"][0]["value"]["data"] == 6.0


# ---- node flags -----------------------------------------------------------
def test_flags_mark_variables_constants_targets_and_stopped_gradients():
    x = ad.Variable(2.0, name="x")
    c = ad.constant(5.0)
    d = ad.constant(7.0)
    with ad.GradientTape() as tape:
        s = ad.stop_gradient(x * x)
        y = x * c + s
    r = replay(tape, y, [x, d], names={"c": c, "d": d, "s": s, "y": y})
    assert r.node(x)["flags"] == ["variable", "source"]
    assert r.node(c)["flags"] == ["constant"]
    assert set(r.node(d)["flags"]) == {"constant", "source", "unconnected"}
    assert "target" in r.node(y)["flags"]
    assert "stopped" in r.node(s)["flags"]
    stop = next(n for n in r.nodes if n.get("op_type") == "StopGradient")
    assert stop["flags"] == ["stopped"] and not stop["differentiable"]
    assert r.frames[-1]["gradients"][0]["value"]["data"] == 5.0
    assert r.frames[-1]["gradients"][1]["value"] is None
    assert "dy/dd is None" in r.frames[-1]["sentence"]
    # the backward pass reaches StopGradient, and nothing flows through it
    stop_step = next(f for f in _frames(r, "backward") if f["vjp"]["op_type"] == "StopGradient")
    assert [c["value"] for c in stop_step["contributions"]] == [None]
    assert "has no gradient, so nothing flows back" in stop_step["sentence"]
    assert stop_step["edges"] == stop_step["arriving"]     # no edge carries anything onwards


def test_integer_source_is_marked_and_gets_none():
    k = ad.constant(3)
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.AutodiffWarning)
        r = replay(tape, y, [x, k], names={"k": k})
    assert "integer" in r.node(k)["flags"] and "unconnected" not in r.node(k)["flags"]
    assert r.frames[-1]["gradients"][1]["value"] is None
    assert "integer" in r.frames[-1]["sentence"]


def test_vector_values_keep_data_and_a_short_preview():
    x = ad.constant(np.arange(6, dtype=np.float32))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_sum(x * x)
    records = [tape.records]
    r = replay(tape, y, x)
    _check_all(r, records)
    grad = r.frames[-1]["gradients"][0]["value"]
    assert grad["data"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert grad["preview"] == "[0.0, 2.0, 4.0, 6.0, …]"
    assert "ones shaped like the target" not in _frames(r, "seed")[0]["sentence"]  # y is scalar


def test_multi_output_record_shows_one_cotangent_per_output():
    x = ad.constant([1.0, 2.0, 3.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        a, b, c = ad.unstack(x)
        y = a * b
    records = [tape.records]
    r = replay(tape, y, x)
    _check_all(r, records)
    unpack = [f for f in _frames(r, "backward") if len(f["cotangents"]) == 3]
    assert len(unpack) == 1
    assert r.frames[-1]["gradients"][0]["value"]["data"] == [2.0, 1.0, 0.0]


def test_output_gradients_are_the_seed():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    records = [tape.records]
    r = replay(tape, y, x, output_gradients=ad.constant([1.0, 10.0]))
    _check_all(r, records)
    assert _frames(r, "seed")[0]["cotangents"][0]["value"]["data"] == [1.0, 10.0]
    assert "output gradient you passed in" in _frames(r, "seed")[0]["sentence"]
    assert r.frames[-1]["gradients"][0]["value"]["data"] == [2.0, 40.0]


def test_each_frame_carries_the_gradients_known_so_far():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = ad.sin(x * x)
    r = replay(tape, y, x, names={"y": y})
    n = len(r.frames)
    assert all(grads_at(r.data, k) == {} for k, f in enumerate(r.frames) if f["phase"] == "forward")
    grads = [set(grads_at(r.data, k)) for k, f in enumerate(r.frames) if f["phase"] != "forward"]
    assert all(a <= b for a, b in zip(grads, grads[1:]))      # only ever grows
    assert grads_at(r.data, n - 1)[f"t{x._id}"] == preview(r.gradients._value)
    assert grads_at(r.data, -1) == grads_at(r.data, n - 1)


def test_frames_store_gradients_as_deltas_not_whole_states():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = ad.sin(x * x)
    r = replay(tape, y, x, names={"y": y})
    seed = _frames(r, "seed")[0]
    assert seed["grads_new"] == {f"t{y._id}": "1.0"}
    backward = _frames(r, "backward")
    # the Sin step makes d/d(x*x) known; the Mul step only x's: nothing repeats
    assert len(backward[0]["grads_new"]) == 1 and f"t{x._id}" in backward[1]["grads_new"]
    assert all("grads" not in f for f in r.frames)


def test_layout_is_part_of_the_model_and_covers_every_node_and_edge():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x * x + ad.sin(x)
    r = replay(tape, y, x)
    assert set(r.layout["nodes"]) == {n["id"] for n in r.nodes}
    assert set(r.layout["edges"]) == {e["id"] for e in r.edges}
    assert all(d.startswith("M") for d in r.layout["edges"].values())


def test_replay_from_data_dict_round_trip():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x ** 2
    r = replay(tape, y, x)
    again = Replay(json.loads(r.to_json()), None)
    assert again.frames == r.frames and len(again) == len(r)
    assert "frames" in repr(r)


def test_preview_formats_numbers_briefly():
    assert preview(np.float32(6.0)) == "6.0"
    assert preview(np.float32(0.25)) == "0.25"
    assert preview(np.int32(3)) == "3"
    assert preview(np.arange(3, dtype=np.float64)) == "[0.0, 1.0, 2.0]"
    assert preview(np.float64(1e-7)) == "1e-07"
    assert preview(None) is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_a_preview_of_four_or_more_floats_writes_each_as_one_float_alone(dtype):
    # Four or more floats are formatted in one call (looks._FOUR), one float at a time
    # otherwise: both must write whole numbers, signs, exponents, NaN and Inf alike.
    tricky = np.array([6.0, -0.0, 1e5, -3.0, 0.25, np.nan, -np.inf, 99999.0, 1e-7, 12345.0,
                       123456.0, -1e-5, np.inf, 0.0, 2.5e10, -7.0], dtype=dtype)
    for start in range(len(tricky) - 4):
        for n in (4, 5):
            values = tricky[start:start + n]
            alone = [preview(v) for v in values[:4]]
            assert preview(values) == "[" + ", ".join(alone) + (", …]" if n > 4 else "]")
    assert preview(np.array([6.0, -0.0, 1e4, -3.0], dtype=dtype)) == "[6.0, 0.0, 1e+04, -3.0]"
