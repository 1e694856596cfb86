"""Display names (widgets/tape_names.py): unnamed variables by module path, names a user gives."""

import numpy as np

import autodiff as ad
from widgets.player.replay import replay
from widgets.tape_names import expand_names, module_paths, tape_names


class Cell(ad.Module):
    def __init__(self):
        super().__init__()
        self.w = ad.Variable(np.float64(2.0))        # no names given
        self.u = ad.Variable(np.float64(3.0))

    def __call__(self, x):
        return x * self.w + self.u


class Gru(ad.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell()
        self.dense = ad.layers.Dense(2, name="dense", dtype="float64")
        self.gates = [ad.Variable(np.float64(1.0))]

    def __call__(self, x):
        return self.dense(self.cell(x)) * self.gates[0]


def _run():
    model = Gru()
    x = ad.constant(np.ones((1, 3)))
    loose = ad.Variable(np.float64(5.0))           # unnamed, read outside any scope
    with ad.GradientTape(persistent=True) as tape:
        loss = ad.reduce_sum(model(x)) * loose
    return model, tape, loss, loose


def test_unnamed_variables_take_the_scope_they_are_first_read_in():
    model, tape, loss, loose = _run()
    names = tape_names(tape)
    assert names[model.cell.w._id] == "gru/cell/Variable"
    assert names[model.cell.u._id] == "gru/cell/Variable_1"
    assert names[model.gates[0]._id] == "gru/Variable"
    assert names[loose._id] == "Variable"               # no scope: unchanged
    assert names[model.dense.kernel._id] == "dense/kernel"   # a given name is kept
    engine = tape.names()                                # the v numbers stay the engine's
    assert {i: n for i, n in names.items() if n.startswith("v")} == \
        {i: n for i, n in engine.items() if n.startswith("v")}


def test_module_paths_follow_the_name_scopes_and_attributes():
    model, _, _, _ = _run()
    paths = module_paths(model)
    assert list(paths) == ["gru/cell/u", "gru/cell/w", "gru/dense/kernel", "gru/dense/bias",
                           "gru/gates/0"]
    assert paths["gru/cell/w"] is model.cell.w and paths["gru/dense/bias"] is model.dense.bias
    net = ad.keras.Sequential([ad.layers.Dense(2, input_dim=3, name="d0"),
                               ad.layers.Dense(1, name="d1")], name="net")
    assert list(module_paths(net, prefix="mlp")) == ["mlp/d0/kernel", "mlp/d0/bias",
                                                     "mlp/d1/kernel", "mlp/d1/bias"]


def test_names_given_to_the_player_replace_the_v_names_everywhere():
    model, tape, loss, loose = _run()
    r = replay(tape, loss, [model.cell.w, model.dense.kernel, loose],
               names={"loss": loss, "net": model, "scale": loose})
    assert expand_names({"net": model})["net/cell/w"] is model.cell.w
    assert r.node(loss)["name"] == "loss"
    assert r.node(model.cell.w)["name"] == "net/cell/w"
    assert r.node(model.dense.kernel)["name"] == "net/dense/kernel"
    assert r.node(loose)["name"] == "scale"
    last_forward = [f for f in r.frames if f["phase"] == "forward"][-1]
    assert last_forward["title"].endswith("loss = Mul(v6, scale)")
    assert "loss" in last_forward["sentence"] and "scale" in last_forward["sentence"]
    result = r.frames[-1]
    assert [g["name"] for g in result["gradients"]] == ["net/cell/w", "net/dense/kernel", "scale"]
    assert "d(loss)/d(net/cell/w)" in result["title"]
    health = {row["scope"]: row for row in r.data["debug"]["health"]}
    assert health["gru/cell"]["variables"] == ["net/cell/w"]    # a source; u is not one
