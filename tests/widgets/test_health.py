"""Gradient health rows of a replay (widgets/health/rows.py), with planted bugs in real models.

Every model here is an ``ad.keras.Sequential`` (or a subclassed Model) of
``ad.layers.Dense``; each test plants one bug (a NaN weight, an exploding
kernel, a dead ReLU, a detached layer) and checks the numbers against NumPy
and the flags against their stated reasons.
"""

import json

import numpy as np
import pytest

import autodiff as ad
from benchmarks.model_tapes import planted_mlp, rnn_tape
from widgets.health import group_health
from widgets.health.outliers import compact, medians_of_others
from widgets.player.replay import replay


def _mlp(plant=None, activation="tanh"):
    """A 3 -> 8 -> 8 -> 8 -> 8 -> 1 MLP named mlp (layers d0..d3, out) on 16 inputs."""
    ad.random.set_seed(0)
    rng = np.random.default_rng(0)
    layers = [ad.layers.Dense(8, activation=activation, name=f"d{i}") for i in range(4)]
    model = ad.keras.Sequential(layers + [ad.layers.Dense(1, name="out")], name="mlp")
    x = ad.constant(rng.normal(size=(16, 3)).astype(np.float32))
    model(x)
    if plant:
        plant(layers, rng)
    with ad.GradientTape(persistent=True) as tape:
        loss = ad.reduce_mean(model(x) ** 2)
    return tape, loss, model


def _rows(r):
    return {row["scope"]: row for row in r.data["debug"]["health"]}


def _layer_name(variable):
    """``d0/kernel``: a variable's layer and name (its path without the model)."""
    return "/".join(variable.path.split("/")[-2:])


def _reasons(row, rule):
    return [f["reason"] for f in row["flags"] if f["rule"] == rule]


def _norm(arrays):
    """sqrt(sum of squares) of arrays or tensors, in float64."""
    arrays = [a.numpy() if hasattr(a, "numpy") else a for a in arrays]
    return float(np.sqrt(sum(np.sum(np.asarray(a, np.float64) ** 2) for a in arrays)))


def test_a_healthy_mlp_has_one_row_per_group_with_numpy_norms_and_no_flag():
    tape, loss, model = _mlp()
    variables = model.trainable_variables
    r = replay(tape, loss, variables)
    rows = r.data["debug"]["health"]
    assert [row["scope"] for row in rows] == [g["scope"] for g in r.data["groups"]] == \
        ["mlp/d0", "mlp/d1", "mlp/d2", "mlp/d3", "mlp/out"]
    grads = tape.gradient(loss, variables)
    for i, row in enumerate(rows):
        kernel, bias = variables[2 * i], variables[2 * i + 1]
        # the tape's names: the layer and the variable (d0/kernel), not the model's path
        assert row["variables"] == [_layer_name(kernel), _layer_name(bias)] == \
            [f"d{i}/kernel" if i < 4 else "out/kernel", f"d{i}/bias" if i < 4 else "out/bias"]
        g = _norm([grads[2 * i].numpy(), grads[2 * i + 1].numpy()])
        w = _norm([kernel.numpy(), bias.numpy()])
        assert row["grad_of"] == "weights"
        assert row["grad_norm"] == pytest.approx(g, rel=1e-3)
        assert row["weight_norm"] == pytest.approx(w, rel=1e-3)
        assert row["ratio"] == pytest.approx(g / w, rel=1e-3)
        assert row["update_ratio"] is None and row["nonfinite_fraction"] == 0.0
        assert row["status"] == "ok" and row["flags"] == []
    json.dumps(rows, allow_nan=False)


def test_a_nan_layer_makes_the_first_nan_and_feeds_it_downstream_and_the_gradient_back():
    def plant(layers, rng):
        k = layers[1].kernel.numpy()
        k[0, 0] = np.nan
        layers[1].kernel.assign(k)

    tape, loss, model = _mlp(plant)
    r = replay(tape, loss, model.trainable_variables)
    rows = _rows(r)
    assert [row["status"] for row in rows.values()] == ["nan"] * 5   # every row kept, marked
    origin = "record 4: MatMul"          # d0 is records 1-3: MatMul, AddV2, Tanh
    assert _reasons(rows["mlp/d1"], "nan_weights") == ["weights hold NaN (d1/kernel)"]
    assert _reasons(rows["mlp/d1"], "nan_made") == \
        [f"NaN made here: the first NaN/Inf of the forward pass ({origin})"]
    assert rows["mlp/d1"]["rank"] == 0 and rows["mlp/d1"]["kinds"] == ["NaN made", "NaN received"]
    assert rows["mlp/d0"]["kind"] == "NaN received" and rows["mlp/d0"]["rank"] == 7
    for scope in ("mlp/d2", "mlp/d3", "mlp/out"):          # NaN-fed layers
        assert _reasons(rows[scope], "nan_fed") == [f"is fed NaN/Inf from {origin} in mlp/d1"]
        assert rows[scope]["weight_norm"] is not None       # their own weights are fine
    assert _reasons(rows["mlp/d0"], "nan_gradient") == \
        [f"gradient is NaN (from {origin} in mlp/d1)"]
    assert "nan_fed" not in {f["rule"] for f in rows["mlp/d0"]["flags"]}   # upstream: values fine
    assert rows["mlp/d0"]["grad_norm"] is None and rows["mlp/d0"]["nonfinite_fraction"] == 1.0
    assert rows["mlp/d1"]["weight_norm"] is None
    r.to_json()                            # no NaN in the JSON


def test_a_gradient_nan_made_in_the_backward_pass_names_its_record():
    x = ad.Variable(np.array([0.0, 4.0]), name="x")
    with ad.GradientTape() as tape:
        with ad.name_scope("root"):
            y = ad.reduce_sum(ad.sqrt(x))            # finite forward, d/dx sqrt at 0 is Inf
    r = replay(tape, y, x)
    (row,) = r.data["debug"]["health"]
    assert row["status"] == "nan"
    assert _reasons(row, "nan_gradient") == ["gradient is Inf (first made by record 1: Sqrt)"]


def test_a_detached_layer_gets_a_none_row_with_the_reason():
    class Net(ad.keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.d0 = ad.layers.Dense(8, activation="tanh", name="d0")
            self.aux = ad.layers.Dense(8, activation="tanh", name="aux")
            self.out = ad.layers.Dense(1, name="out")

        def call(self, x):
            h = self.d0(x)
            return self.out(h + ad.stop_gradient(self.aux(h)))

    ad.random.set_seed(0)
    model = Net()
    x = ad.constant(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))
    with ad.GradientTape() as tape:
        loss = ad.reduce_mean(model(x) ** 2)
    r = replay(tape, loss, model.trainable_variables)
    rows = _rows(r)
    aux = rows["net/aux"]
    assert aux["status"] == "none" and aux["grad_norm"] is None and aux["ratio"] is None
    assert aux["weight_norm"] == pytest.approx(
        _norm([model.aux.kernel.numpy(), model.aux.bias.numpy()]), rel=1e-3)
    assert _reasons(aux, "none_gradient") == \
        ["None: no gradient reaches its variables: stop_gradient on the path"]
    assert rows["net/d0"]["status"] == rows["net/out"]["status"] == "ok"


def test_an_exploding_layer_is_flagged_by_its_weights_rms_against_the_median():
    def plant(layers, rng):
        layers[1].kernel.assign(rng.normal(0.0, 40.0, size=(8, 8)).astype(np.float32))

    tape, loss, model = _mlp(plant)
    r = replay(tape, loss, model.trainable_variables)
    rows = _rows(r)
    variables = model.trainable_variables
    rms = [_norm(variables[2 * i:2 * i + 2]) / np.sqrt(sum(v.numpy().size for v in variables[2 * i:2 * i + 2]))
           for i in range(5)]
    # d1 is compared with its peers d0, d2, d3 (the same role, mlp/d*), not with out
    median = np.median([rms[0], rms[2], rms[3]])
    expected = rms[1] / median
    assert expected > 10
    assert rows["mlp/d1"]["status"] == "flagged" and rows["mlp/d1"]["kind"] == "exploding"
    assert _reasons(rows["mlp/d1"], "large_weights") == \
        [f"exploding weights: RMS {compact(rms[1])}, {compact(expected)}x the median of the "
         f"other mlp/d* groups ({compact(median)})"]
    assert not any(_reasons(rows[s], "large_weights") for s in rows if s != "mlp/d1")


def test_a_dead_relu_layer_is_flagged_and_so_is_the_zero_gradient_above_it():
    def plant(layers, rng):
        layers[2].bias.assign(np.full(8, -100.0, np.float32))

    tape, loss, model = _mlp(plant, activation="relu")
    r = replay(tape, loss, model.trainable_variables)
    rows = _rows(r)
    # d2 is records 7-9: MatMul, AddV2, Relu
    assert _reasons(rows["mlp/d2"], "dead_relu") == ["dead ReLU: 100% of its outputs are 0 (record 9: Relu)"]
    for scope in ("mlp/d0", "mlp/d1", "mlp/d2"):
        assert rows[scope]["grad_norm"] == 0.0 and rows[scope]["zero_fraction"] == 1.0
        assert _reasons(rows[scope], "zero_gradient") == ["dead: gradient is exactly 0 for 100% of its weights"]
        assert rows[scope]["kind"] == "dead" and rows[scope]["status"] == "flagged"
    assert rows["mlp/d2"]["rank"] < rows["mlp/d0"]["rank"]      # the dead ReLU comes first
    assert not _reasons(rows["mlp/d0"], "dead_relu")       # its own outputs are alive


def test_updates_give_update_ratios_and_a_big_update_is_flagged():
    tape, loss, model = _mlp()
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    updates = [-0.01 * g.numpy() for g in grads]
    updates[0] = 0.5 * variables[0].numpy()                # d0's kernel moves by half
    updates[1] = np.zeros_like(variables[1].numpy())
    r = replay(tape, loss, variables, updates=updates)
    rows = list(r.data["debug"]["health"])
    for i, row in enumerate(rows):
        u = _norm(updates[2 * i:2 * i + 2])
        assert row["update_norm"] == pytest.approx(u, rel=1e-3)
        assert row["update_ratio"] == pytest.approx(u / _norm(variables[2 * i:2 * i + 2]), rel=1e-3)
    d0 = rows[0]
    assert _reasons(d0, "update_large") == [f"exploding update: one update changes its weights by "
                                            f"{d0['update_ratio']:.0%} (over 10%)"]
    assert _reasons(d0, "update_high")     # 0.4 against about 0.01 * |g|/|w|
    by_name = replay(tape, loss, variables, updates={variables[0].ref(): updates[0]})
    assert by_name.data["debug"]["health"][0]["update_norm"] == pytest.approx(_norm(updates[:1]), rel=1e-3)
    with pytest.raises(ValueError, match="one per source"):
        replay(tape, loss, variables, updates=updates[:3])


def test_medians_of_the_others_and_compact_numbers():
    rng = np.random.default_rng(1)
    for _ in range(200):
        values = [None if rng.random() < 0.2 else float(rng.choice([0.0, rng.random()]))
                  for _ in range(rng.integers(0, 8))]
        got = medians_of_others(values)
        for i in range(len(values)):
            others = [v for j, v in enumerate(values) if j != i and v]
            assert got[i] == (pytest.approx(float(np.median(others))) if len(others) >= 2 else None)
    assert [compact(v) for v in (1.869e-9, 0.25, 2.0, 1234.0, 0.00123, -3.456e-5, 999.9)] == \
        ["1.87e-9", "0.25", "2", "1.23e3", "0.00123", "-3.46e-5", "1e3"]


def test_a_long_rnn_with_a_nan_keeps_every_step_upstream_of_it():
    tape, loss, sources = rnn_tape(501, nan_at=60)        # 100 steps, NaN read at step 60
    r = replay(tape, loss, sources)
    rows = r.data["debug"]["health"]
    assert len(rows) == len(r.data["groups"]) == 101
    assert rows[0]["scope"] == "rnn/step_0"                 # the panel starts at the start
    origin = "record 302: MatMul in rnn/step_60"            # 60 * 5 + 2: x_t @ U
    assert _reasons(rows[0], "nan_gradient") == [f"gradient is NaN (from {origin})"]
    assert _reasons(rows[60], "nan_made")
    assert _reasons(rows[61], "nan_fed") == [f"is fed NaN/Inf from {origin}"]
    assert all(row["status"] == "nan" for row in rows[:100])
    w, u, b = (s.numpy() for s in sources)
    assert rows[0]["weight_norm"] == pytest.approx(_norm([w, u, b]), rel=1e-3)


@pytest.mark.slow
def test_health_of_a_10000_record_tape_has_a_row_per_group_the_nan_group_first(engine_backend):
    # Its cost is measured by benchmarks/player.py, never asserted by a timed test.
    if engine_backend != "numpy":
        pytest.skip("one 10,000-record tape, on NumPy")
    tape, loss, sources = rnn_tape(10_001, nan_at=1500)
    r = replay(tape, loss, sources)
    rows = group_health(r.data, r.trace, sources)
    assert len(rows) == 2001 and rows[0]["status"] == "nan"

def test_group_norms_and_health_rows_keep_the_nan_the_fed_the_none_and_the_exploding_layer():
    # benchmarks/model_tapes.planted_mlp: trunk d0; branch nan_layer -> fed (a NaN kernel
    # entry); branch explode (kernel ~N(0, 40)) -> head, with stop_gradient(aux(h)) added
    tape, loss, model = planted_mlp()
    r = replay(tape, loss, model.trainable_variables, names={"loss": loss})
    scope = {g["id"]: g["scope"] for g in r.data["groups"]}
    norms = {scope[gid]: series for gid, series in r.data["debug"]["group_norms"].items()}
    # every group has its series: none skipped, a NaN one marked, a None one empty
    assert sorted(norms) == sorted(scope.values()) == \
        ["loss", "mlp", "mlp/aux", "mlp/d0", "mlp/explode", "mlp/fed", "mlp/head", "mlp/nan_layer"]
    for name in ("mlp/d0", "mlp/nan_layer", "mlp/fed", "loss"):
        assert norms[name][-1][1] == "NaN", name
    assert norms["mlp/aux"] == []
    for name in ("mlp/explode", "mlp/head", "mlp"):
        values = [v for _, v in norms[name]]
        assert all(isinstance(v, float) and v > 0 for v in values) and values == sorted(values)
    # a series turns "NaN" at the step that sent one, and stays so
    for series in norms.values():
        marks = [isinstance(v, str) for _, v in series]
        assert marks == sorted(marks)
    rows = _rows(r)
    assert [rows[s]["status"] for s in ("mlp/d0", "mlp/nan_layer", "mlp/fed", "mlp/explode",
                                        "mlp/aux", "mlp/head")] == \
        ["nan", "nan", "nan", "flagged", "none", "ok"]
    origin = "record 4: MatMul in mlp/nan_layer"      # d0 is records 1-3
    assert _reasons(rows["mlp/nan_layer"], "nan_weights") == ["weights hold NaN (nan_layer/kernel)"]
    assert _reasons(rows["mlp/nan_layer"], "nan_made") == \
        ["NaN made here: the first NaN/Inf of the forward pass (record 4: MatMul)"]
    assert _reasons(rows["mlp/fed"], "nan_fed") == [f"is fed NaN/Inf from {origin}"]
    assert _reasons(rows["mlp/d0"], "nan_gradient") == [f"gradient is NaN (from {origin})"]
    assert _reasons(rows["mlp/aux"], "none_gradient") == \
        ["None: no gradient reaches its variables: stop_gradient on the path"]
    variables = model.trainable_variables
    grads = dict(zip((_layer_name(v) for v in variables), tape.gradient(loss, variables)))
    assert grads["aux/kernel"] is None and grads["aux/bias"] is None
    layers = [model.d0, model.nan_layer, model.fed, model.explode, model.aux, model.head]
    rms = {layer.name: _norm([layer.kernel, layer.bias]) /
           np.sqrt(layer.kernel.numpy().size + layer.bias.numpy().size) for layer in layers}
    others = [v for k, v in rms.items() if k not in ("explode", "nan_layer")]   # NaN: no RMS
    expected = rms["explode"] / np.median(others)
    assert expected > 10
    assert _reasons(rows["mlp/explode"], "large_weights") == \
        [f"exploding weights: RMS {compact(rms['explode'])}, {compact(expected)}x the median of "
         f"the other groups ({compact(float(np.median(others)))})"]
    g_explode = _norm([grads["explode/kernel"], grads["explode/bias"]])
    assert rows["mlp/explode"]["grad_norm"] == pytest.approx(g_explode, rel=1e-3)
    # the group sent its weights' gradient and more (to its input): its bar is at least that
    assert norms["mlp/explode"][-1][1] >= rows["mlp/explode"]["grad_norm"] * (1 - 1e-3)
    json.loads(r.to_json())                 # no NaN number in the JSON: "NaN" is a string


def test_rows_from_the_frames_square_sums_equal_rows_from_the_arrays():
    # replay hands group_health each contribution's sum of squares that its frames took
    # (for the norms); taken again from the arrays, every row must come out the same,
    # NaN, None, exploding and dead layers included.
    tape, loss, model = planted_mlp()
    r = replay(tape, loss, model.trainable_variables, names={"loss": loss})
    again = group_health(r.data, r.trace, model.trainable_variables)
    assert r.data["debug"]["health"] == again
    assert sorted(row["scope"] for row in again if row["status"] == "nan") == \
        ["loss", "mlp/d0", "mlp/fed", "mlp/nan_layer"]
    dead_tape, dead_loss, dead = _mlp(lambda layers, rng: layers[2].bias.assign(
        np.full(8, -100.0, np.float32)), activation="relu")
    r = replay(dead_tape, dead_loss, dead.trainable_variables)
    assert r.data["debug"]["health"] == group_health(r.data, r.trace, dead.trainable_variables)
    assert _rows(r)["mlp/d2"]["kind"] == "dead"
