"""The debugging examples (examples/debug_cnn.py, rnn_vanishing_gradients.py,
broken_model.py): each runs, writes its offline player page, and finds what it says.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autodiff import tape as tape_module

ROOT = Path(__file__).resolve().parents[1]


def _example(name):
    path = ROOT / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _offline_page(path):
    page = Path(path).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script src=" not in page and "https://" not in page.split("<script", 1)[0]
    return page


def test_cnn_step_reads_as_layers_and_every_layer_gets_a_gradient(tmp_path, capsys):
    result = _example("debug_cnn").main(tmp_path / "cnn.html")
    assert result["scopes"] == ["cnn/conv", "cnn/pool", "cnn/flatten", "cnn/dense", "loss"]
    assert result["op_types"] == ["Conv2D", "AddV2", "Relu", "MaxPool", "Reshape", "MatMul",
                                  "AddV2", "SparseSoftmaxCrossEntropyWithLogits", "Mean"]
    norms = result["variable_norms"]
    assert set(norms) == {"cnn/conv/kernel", "cnn/conv/bias", "cnn/dense/kernel", "cnn/dense/bias"}
    assert all(0.01 < n < 10 for n in norms.values())
    assert all(result["bars"][s] > 0 for s in result["scopes"])
    # pooling and flattening send back the same cotangent, only rearranged
    assert result["bars"]["cnn/pool"] == pytest.approx(result["bars"]["cnn/flatten"], rel=1e-3)
    assert result["first_nonfinite"] == {"forward": None, "backward": None}
    assert abs(np.log(2) - result["loss"]) < 0.2 and result["loss_after"] < result["loss"]
    page = _offline_page(result["path"])
    assert len(page.encode("utf-8")) == result["bytes"] < 1_000_000
    assert "cnn/conv/kernel" in capsys.readouterr().out
    # the health panel's rows: one per layer, every one healthy; a layer's |g| is the norm
    # of tape.gradient for its variables
    health = {row["scope"]: row for row in result["health"]}
    assert list(health) == result["scopes"] and {r["status"] for r in health.values()} == {"ok"}
    conv = np.hypot(norms["cnn/conv/kernel"], norms["cnn/conv/bias"])
    assert health["cnn/conv"]["grad_norm"] == pytest.approx(conv, rel=1e-3)
    # the recorder: 30 steps, a row per layer and step, a falling loss, nothing flagged
    recorder, losses = result["recorder"], result["losses"]
    assert recorder.steps == list(range(30)) and list(recorder.layers) == ["cnn/conv", "cnn/dense"]
    assert all(len(v) == 30 for s in recorder.layers.values() for v in s.values())
    steps, grad = recorder.series("cnn/dense", "grad_norm")
    assert np.all(np.isfinite(grad)) and np.all(grad > 0)
    assert losses[-1] < 0.6 * losses[0] and recorder.flags() == {}
    assert Path(result["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rnn_gradients_vanish_with_a_small_matrix_and_explode_with_a_large_one(tmp_path):
    result = _example("rnn_vanishing_gradients").main(tmp_path / "rnn.html")
    vanishing, exploding = result["vanishing"]["norms"], result["exploding"]["norms"]
    assert len(vanishing) == len(exploding) == 200
    assert result["vanishing"]["records"] == result["player"]["records"] == 1001
    assert 0.3 < result["vanishing"]["factor"] < 0.6        # about x0.45 a step
    assert vanishing[150] < 1e-12 * vanishing[199]
    zero = result["vanishing"]["last_zero_step"]
    assert 50 < zero < 150 and all(n == 0.0 for n in vanishing[:zero + 1])
    assert result["exploding"]["factor"] > 1.05
    assert exploding[0] > 1e6 * exploding[199]
    # the player's per-step norm bars tell the same story
    bars = result["player"]["bars"]
    assert result["player"]["groups"] == 201 and "rnn/step_199" in bars
    assert bars["rnn/step_180"] < 1e-4 * bars["rnn/step_199"]
    assert bars.get("rnn/step_000", 0.0) == 0.0
    page = _offline_page(result["player"]["path"])
    assert len(page.encode("utf-8")) == result["player"]["bytes"] < 1_001 * 1_000   # under 1 kB a record


def test_rnn_planted_nan_and_none_are_found_on_the_1001_record_tape(tmp_path):
    found = _example("rnn_vanishing_gradients").find_planted_bugs(tmp_path / "planted.html")
    assert found["records"] == 1001
    # the NaN is read by step 150's input MatMul: record 5 * 150 + 1 (record 0 is step 0's)
    assert found["nan_op"] == "MatMul" and found["nan_scope"] == "rnn/step_150"
    assert found["nan_frame"] == 751 and found["nan_backward_frame"] > 1001
    assert found["lost_source"] == "h0" and found["lost_scope"] == "rnn/step_099"
    assert found["reason_from_tape"] == found["reason"] == "left_library"   # the tape alone names it too
    # the health panel: nothing flows back past step 99 (None), NaN from step 100 on
    assert found["statuses"] == {"none": (100, "rnn/step_000", "rnn/step_099"),
                                 "nan": (101, "rnn/step_100", "loss")}
    status, reasons = found["health"]["rnn/step_150"]
    assert status == "nan" and reasons[0] == \
        "NaN made here: the first NaN/Inf of the forward pass (record 752: MatMul)"
    assert found["health"]["rnn/step_000"] == \
        ("none", ["None: no gradient reaches its variables: the value left the library "
                  "(.numpy() at rnn_vanishing_gradients.py:90: h = ad.constant(h.numpy()))"])
    page = _offline_page(found["path"])
    assert len(page.encode("utf-8")) == found["bytes"] < 1_001 * 1_000   # under 1 kB a record


def test_broken_model_nan_is_found_at_the_log_and_the_none_at_the_numpy_round_trip(
        tmp_path, monkeypatch):
    # as outside the tests: tapes keep small values (here log(p), 64x2 float32) whole
    monkeypatch.setattr(tape_module, "KEEP_VALUES_UP_TO_BYTES", 512)
    result = _example("broken_model").main(tmp_path / "broken.html")
    assert np.isnan(result["broken_loss"])
    nan = result["nan_forward"]
    assert nan["title"].endswith("= Log(v10)") and nan["op_type"] == "Log"
    assert nan["made_by"] == "Log" and nan["tensor"] == "v11"
    assert nan["scope"] == "loss" and "-inf" in nan["preview"]
    assert result["nan_backward"]["op_type"] == "Log"
    assert result["nan_backward"]["frame"] > nan["frame"]
    lost = result["lost"]
    assert [x["source"] for x in lost] == ["mlp/hidden1/kernel", "mlp/hidden1/bias"]
    for x in lost:
        assert x["reason_from_tape"] == x["reason"] == "left_library"   # the tape alone names it too
        assert x["jump_to"] == "v3" and ".numpy()" in x["message"]
        assert x["source"] in x["message"]
    assert result["fixed_finite"] is True and result["fixed_lost"] == []
    assert result["fixed_first_nonfinite"] == {"forward": None, "backward": None}
    assert result["fixed_loss"] == pytest.approx(0.6674, abs=1e-3)
    # the health panel, a row per layer: the None layer, the NaN ones, and where it began
    origin = "gradient is NaN (from record 10: Log in loss)"
    assert result["health"] == {
        "mlp/hidden1": ("none", [
            "None: no gradient reaches its variables: the value left the library (.numpy() at "
            "broken_model.py:74: h = ad.constant(np.maximum(h.numpy(), 0.0)))"]),
        "mlp/hidden2": ("nan", [origin]), "mlp/logits": ("nan", [origin]),
        "loss": ("nan", ["NaN made here: the first NaN/Inf of the forward pass (record 10: Log)",
                         origin])}
    assert {status for status, _ in result["fixed_health"].values()} == {"ok"}
    _offline_page(result["path"])


def test_broken_model_names_the_log_even_when_its_output_was_not_kept(tmp_path):
    # the tests' tapes keep no value a VJP did not ask for: Log's output is a
    # placeholder, yet the first NaN/Inf frame is the Log (judged by the value
    # a later record kept), not the Mul that reads it
    result = _example("broken_model").main(tmp_path / "broken.html")
    nan = result["nan_forward"]
    assert nan["op_type"] == "Log" and nan["made_by"] == "Log" and nan["tensor"] == "v11"


@pytest.mark.parametrize("name", ["debug_cnn", "broken_model"])
def test_examples_run_as_scripts_and_write_the_page_they_are_given(tmp_path, name):
    out = tmp_path / f"{name}.html"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"), str(out)],
                         capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert f"wrote {out}" in run.stdout and out.stat().st_size > 10_000


def test_the_keras_training_loop_learns_the_spirals_and_reports_each_epoch():
    import io

    out = io.StringIO()
    history, accuracy = _example("train_keras_loop").main(epochs=6, out=out)
    lines = out.getvalue().splitlines()
    assert [line.split("[")[0].strip() for line in lines[:6]] == [f"epoch  {k}/6" for k in
                                                                 range(1, 7)]
    assert all("loss" in line and "accuracy" in line for line in lines[:6])
    losses = [loss for loss, _ in history]
    assert losses[-1] < 0.5 * losses[0] and accuracy > 0.9
    assert lines[-1].endswith("Adam took 144 steps")
