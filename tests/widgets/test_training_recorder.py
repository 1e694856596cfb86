"""Per-layer statistics over training steps (widgets/health/recorder.py, plot.py).

Small ``ad.keras.Sequential`` models trained a few SGD steps; the numbers are
checked against NumPy, the flags against planted bugs (a NaN weight, a dead
ReLU layer, a detached layer, weights that blow up).
"""

import os

import numpy as np
import pytest

import autodiff as ad
from widgets.health.outliers import compact
from widgets.health.recorder import TrainingRecorder

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _model(activation="tanh"):
    ad.random.set_seed(0)
    rng = np.random.default_rng(0)
    layers = [ad.layers.Dense(6, activation=activation, name=f"d{i}") for i in range(3)]
    model = ad.keras.Sequential(layers + [ad.layers.Dense(1, name="out")], name="mlp")
    x = ad.constant(rng.normal(size=(16, 3)).astype(np.float32))
    y = ad.constant(rng.normal(size=(16, 1)).astype(np.float32))
    model(x)
    return model, layers, x, y


def _train(model, x, y, recorder, steps=5, as_model=False, every_step=None):
    """SGD steps recorded with one line; returns [(grads, weights before the step)]."""
    optimizer = ad.optimizers.SGD(0.05)
    variables = model.trainable_variables
    seen = []
    for step in range(steps):
        if every_step:
            every_step(step)
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, variables)
        seen.append(([None if g is None else g.numpy() for g in grads], [v.numpy() for v in variables]))
        recorder.record(grads, model if as_model else variables, step)
        optimizer.apply_gradients((g, v) for g, v in zip(grads, variables) if g is not None)
    return seen


def _norm(arrays):
    return float(np.sqrt(sum(np.sum(np.asarray(a, np.float64) ** 2) for a in arrays)))


def test_statistics_per_layer_and_step_equal_numpy():
    model, _, x, y = _model()
    recorder = TrainingRecorder(bins=10)
    seen = _train(model, x, y, recorder)
    assert recorder.steps == [0, 1, 2, 3, 4]
    assert list(recorder.layers) == ["d0", "d1", "d2", "out"]
    for i, layer in enumerate(recorder.layers):
        s = recorder.layers[layer]
        for t, (grads, weights) in enumerate(seen):
            g, w = grads[2 * i:2 * i + 2], weights[2 * i:2 * i + 2]
            assert s["grad_norm"][t] == pytest.approx(_norm(g))
            assert s["weight_norm"][t] == pytest.approx(_norm(w))
            assert s["ratio"][t] == pytest.approx(_norm(g) / _norm(w))
            zeros = sum(int(np.sum(a == 0)) for a in g) / sum(a.size for a in g)
            assert s["zero_fraction"][t] == pytest.approx(zeros)
            assert s["nonfinite_fraction"][t] == 0 and s["none"][t] is False
            lo, hi, counts = s["hist"][t]
            flat = np.concatenate([a.ravel() for a in g])
            assert (lo, hi) == (pytest.approx(flat.min()), pytest.approx(flat.max()))
            assert sum(counts) == flat.size and len(counts) == 10
            if t == 0:
                assert s["update_ratio"][t] is None      # nothing to compare with yet
            else:                                        # the change since the last record
                previous = seen[t - 1][1][2 * i:2 * i + 2]
                change = _norm([a - b for a, b in zip(w, previous)])
                assert s["update_ratio"][t] == pytest.approx(change / _norm(w), rel=1e-4)
    steps, norms = recorder.series("d1", "grad_norm")
    assert steps.tolist() == [0, 1, 2, 3, 4] and norms[0] == pytest.approx(_norm(seen[0][0][2:4]))
    text = str(recorder)
    assert "no layer flagged" in text and text.splitlines()[0].startswith("TrainingRecorder: 5 steps")


def test_a_model_names_its_layers_by_module_path_and_pairs_and_tapes_are_read_too():
    model, _, x, y = _model()
    by_model = TrainingRecorder()
    _train(model, x, y, by_model, steps=1, as_model=True)
    assert list(by_model.layers) == ["mlp/d0", "mlp/d1", "mlp/d2", "mlp/out"]
    variables = model.trainable_variables
    with ad.GradientTape(persistent=True) as tape:
        loss = ad.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, variables)
    pairs = TrainingRecorder().record(list(zip(grads, variables)))
    taped = TrainingRecorder().record(tape, variables, 7, target=loss)
    assert taped.steps == [7] and pairs.steps == [0]
    for layer in pairs.layers:
        assert pairs.layers[layer]["grad_norm"] == taped.layers[layer]["grad_norm"]
    with pytest.raises(ValueError, match="target="):
        TrainingRecorder().record(tape, variables)


def test_planted_bugs_are_flagged_with_their_reasons():
    model, layers, x, y = _model(activation="relu")
    k = layers[0].kernel.numpy()
    k[0, 0] = np.nan                                   # a NaN weight in d0
    layers[0].kernel.assign(k)
    nan = TrainingRecorder()
    _train(model, x, y, nan)
    flags = nan.flags()
    assert flags["d0"][0] == "NaN/Inf in its gradient at 5 step(s), first at step 0 " \
                             f"({nan.layers['d0']['nonfinite_fraction'][-1]:.0%} of entries at step 4)"
    assert "mlp" not in str(nan) and "d0: NaN/Inf in its gradient" in str(nan)

    model, layers, x, y = _model(activation="relu")
    layers[1].bias.assign(np.full(6, -100.0, np.float32))   # d1 is a dead ReLU layer
    dead = TrainingRecorder()
    _train(model, x, y, dead)
    flags = dead.flags()
    for layer in ("d0", "d1", "d2"):     # d2 reads only zeros: it is dead too
        assert "dead: gradient exactly 0 for 100% of its weights at step 4" in flags[layer]
    assert dead.layers["out"]["zero_fraction"][-1] == pytest.approx(6 / 7)   # its bias lives
    assert not any(r.startswith("dead") for r in flags.get("out", []))

    model, layers, x, y = _model()
    grow = TrainingRecorder()
    _train(model, x, y, grow, every_step=lambda step: layers[2].kernel.assign(layers[2].kernel.numpy() * 4.0))
    s = grow.layers["d2"]["weight_norm"]
    assert f"exploding: weights' norm grew {compact(s[-1] / s[0])}x from step 0 to step 4" in grow.flags()["d2"]
    assert not any(r.startswith("exploding: weights") for r in grow.flags().get("d0", []))


def test_a_detached_layer_is_flagged_none():
    model, layers, x, y = _model()
    aux = ad.layers.Dense(2, name="aux")
    aux(x)
    variables = model.trainable_variables + aux.trainable_variables
    recorder = TrainingRecorder()
    for step in range(2):
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((model(x) - y) ** 2) + 0.0 * ad.reduce_sum(ad.stop_gradient(aux(x)))
        recorder.record(tape.gradient(loss, variables), variables, step)
    assert recorder.layers["aux"]["none"] == [True, True]
    assert recorder.layers["aux"]["grad_norm"] == [None, None]
    assert recorder.flags()["aux"] == ["no gradient (None) at step 1"]


def test_plot_draws_one_line_per_layer_on_log_axes_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model, _, x, y = _model()
    recorder = TrainingRecorder()
    _train(model, x, y, recorder, steps=4)
    fig = recorder.plot()
    from matplotlib.figure import Figure

    assert isinstance(fig, Figure)
    grad_ax = fig.axes[0]
    lines = [line for line in grad_ax.lines if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == list(recorder.layers)
    assert grad_ax.get_yscale() == "log" and fig.axes[1].get_yscale() == "log"
    for line, layer in zip(lines, recorder.layers):
        assert np.allclose(line.get_ydata(), recorder.series(layer, "grad_norm")[1])
    assert len(fig.axes) == 4 + 4                         # four trends, four histogram panels
    assert fig.axes[4].get_title() == "d0: gradient histogram"
    assert len(recorder.plot(histograms=False).axes) == 4
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="nothing recorded"):
        TrainingRecorder().plot()


def test_inside_ad_function_record_warns_and_outside_it_records_the_returned_values():
    model, _, x, y = _model()
    variables = model.trainable_variables
    inside = TrainingRecorder()

    @ad.function
    def train_step(x, y):
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, variables)
        inside.record(grads, variables)
        return grads

    with pytest.warns(UserWarning, match="traced ad.function"):
        train_step(x, y)
    outside = TrainingRecorder()
    grads = train_step(x, y)
    outside.record(grads, variables)
    assert outside.layers["d0"]["grad_norm"][0] == pytest.approx(
        _norm([g.numpy() for g in grads[:2]]))


def test_updates_given_to_record_give_the_update_ratio_at_once():
    model, _, x, y = _model()
    variables = model.trainable_variables
    with ad.GradientTape() as tape:
        loss = ad.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, variables)
    updates = [-0.1 * g.numpy() for g in grads]
    recorder = TrainingRecorder().record(grads, variables, updates=updates)
    s = recorder.layers["d1"]
    assert s["update_ratio"][0] == pytest.approx(
        _norm(updates[2:4]) / _norm([v.numpy() for v in variables[2:4]]))
    with pytest.raises(ValueError, match="3 updates for 8 variables"):
        TrainingRecorder().record(grads, variables, updates=updates[:3])


def test_a_partly_dead_layer_is_flagged_with_its_share_of_zeros():
    model, layers, x, y = _model(activation="relu")
    bias = np.zeros(6, np.float32)
    bias[:4] = -100.0                       # four of d1's six units never fire
    layers[1].bias.assign(bias)
    recorder = TrainingRecorder()
    seen = _train(model, x, y, recorder)
    grads = seen[-1][0]
    zero = float(np.mean(np.concatenate([(g == 0).ravel() for g in grads[2:4]])))
    assert 0.5 < zero < 0.9 and recorder.layers["d1"]["zero_fraction"][-1] == pytest.approx(zero)
    assert f"partly dead: gradient exactly 0 for {zero:.0%} of its weights at step 4 (over 50%: " \
           f"units that no longer fire, as a ReLU after a big step)" in recorder.flags()["d1"]
    model, _, x, y = _model(activation="relu")
    healthy = TrainingRecorder()
    _train(model, x, y, healthy)
    assert healthy.layers["d1"]["zero_fraction"][-1] < 0.5
    assert not any("dead" in r for reasons in healthy.flags().values() for r in reasons)


def test_every_panel_keeps_its_steps_after_a_nan():
    model, layers, x, y = _model()
    recorder = TrainingRecorder()

    def plant(step):                         # from step 2 on, one weight of d1 is NaN
        if step == 2:
            k = layers[1].kernel.numpy()
            k[0, 0] = np.nan
            layers[1].kernel.assign(k)

    seen = _train(model, x, y, recorder, every_step=plant)
    s = recorder.layers["d1"]
    bad = s["weight_nonfinite_fraction"]
    assert bad[:3] == [0.0, 0.0, pytest.approx(1 / 42)] and min(bad[3:]) > 0
    for t in range(5):                     # the norm of the finite entries, every step
        w = np.concatenate([a.ravel() for a in seen[t][1][2:4]]).astype(np.float64)
        assert s["weight_norm"][t] == pytest.approx(np.sqrt(np.sum(w[np.isfinite(w)] ** 2)))
    fig = recorder.plot(histograms=False)
    weight = next(ln for ln in fig.axes[1].lines if ln.get_label() == "d1")
    # step 2 (one weight NaN) is drawn: the norm of the 41 others; once every weight is
    # NaN (steps 3, 4) there is no norm, and the panel marks those steps with a red x
    finite = [bool(v) for v in np.isfinite(weight.get_ydata())]
    assert finite == [True, True, True] + [s["weight_norm"][t] > 0 for t in (3, 4)]
    marks = [[float(v) for v in ln.get_xdata()] for ln in fig.axes[1].lines if ln.get_marker() == "x"]
    # d1 from step 2; the layers its NaN gradient reached, once the step applied it
    assert sorted(marks) == [[2.0, 3.0, 4.0]] + [[3.0, 4.0]] * (len(marks) - 1)
    assert all(len(ln.get_xdata()) == 5 for ln in fig.axes[3].lines)   # the shares go on
