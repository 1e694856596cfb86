"""The player's gradient health panel (widgets/player/static/health.js), run under Node.

No browser: ``graph.js`` (its helpers) and ``health.js`` are evaluated by
Node on a real replay's JSON, with a stand-in for the few DOM calls
``showNorms`` makes. The page export must carry the same panel.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from benchmarks.model_tapes import planted_mlp, rnn_tape
from widgets.health.outliers import compact
from widgets.health.triage import cause_order
from widgets.player.page.html_export import export_html, player_js
from widgets.player.replay import replay

STATIC = Path(__file__).resolve().parents[2] / "widgets" / "player" / "static"

DRIVER = """
const fs = require("fs");
const data = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const numbers = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const markup = normsMarkup(data);
// A stand-in root: one row per data-group in the markup, each with a bar.
const rows = [...markup.matchAll(/class="tp-health-row[^"]*" data-group="([^"]+)"/g)].map((m) => {
  const classes = new Set();
  const fill = { style: {}, classList: { toggle: (c, on) => (on ? classes.add(c) : classes.delete(c)) }, classes };
  return { dataset: { group: m[1] }, querySelector: () => fill, fill };
});
const root = { querySelector: () => null, querySelectorAll: () => rows };
showNorms(root, data, data.frames.length - 1);
const widths = Object.fromEntries(rows.map((r) => [r.dataset.group, r.fill.style.width]));
const red = rows.filter((r) => r.fill.classes.has("tp-norm-nonfinite")).map((r) => r.dataset.group);
showNorms(root, data, 0);
const before = rows.map((r) => r.fill.style.width);
console.log(JSON.stringify({ markup, widths, red, before, formatted: numbers.map(healthNumber) }));
"""


def _esc(text):
    """As graph.js's esc()."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _nan_mlp():
    ad.random.set_seed(0)
    rng = np.random.default_rng(0)
    layers = [ad.layers.Dense(4, activation="tanh", name=f"d{i}") for i in range(3)]
    model = ad.keras.Sequential(layers, name="mlp")
    x = ad.constant(rng.normal(size=(8, 3)).astype(np.float32))
    model(x)
    k = layers[1].kernel.numpy()
    k[0, 0] = np.nan
    layers[1].kernel.assign(k)
    with ad.GradientTape() as tape:
        loss = ad.reduce_mean(model(x) ** 2)
    return replay(tape, loss, model.trainable_variables, names={"loss": loss})


def _run_panel(tmp_path, data, numbers):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "panel.js"
    script.write_text((STATIC / "graph.js").read_text() + (STATIC / "health.js").read_text() + DRIVER)
    (tmp_path / "data.json").write_text(json.dumps(data))
    (tmp_path / "numbers.json").write_text(json.dumps(numbers))
    done = subprocess.run([node, str(script), str(tmp_path / "data.json"), str(tmp_path / "numbers.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_group_has_a_marked_row_with_its_reasons_and_whole_numbers(tmp_path):
    r = _nan_mlp()
    health = r.data["debug"]["health"]
    numbers = [1.869e-9, 0.00000123, 2.0, 0.25, 12345.0, -3.456e-5, 999.9, 0.1234]
    out = _run_panel(tmp_path, json.loads(r.to_json()), numbers)
    markup = out["markup"]
    # the same numbers as widgets.health.outliers.compact, never longer than 3 digits and an exponent
    assert out["formatted"] == [compact(v) for v in numbers] == \
        ["1.87e-9", "1.23e-6", "2", "0.25", "1.23e4", "-3.46e-5", "1e3", "0.123"]
    rows = re.findall(r'data-group="(g\d+)" data-status="(\w+)"', markup)
    # cause first: d1 (its NaN kernel made the first NaN), then d0 and d2 that received it
    assert rows == [(health[i]["group"], health[i]["status"]) for i in cause_order(health)] == \
        [("g1", "nan"), ("g0", "nan"), ("g2", "nan")]
    assert markup.count('<span class="tp-health-mark">NaN made</span>') == 1
    assert markup.count('<span class="tp-health-mark">NaN received</span>') == 2
    # (the count and order in a span that classroom mode leaves out, and in the title's tooltip)
    assert '<span class="tp-health-of"> of 3 scopes, causes first</span> · ' in markup and re.search(r'data-kind="NaN made"[^>]*>1 NaN made</button>', markup)
    assert re.search(r'data-kind="NaN received"[^>]*>2 NaN received</button>', markup)
    # every group sent a NaN back: each bar is full, and red
    assert out["widths"] == {"g0": "100.0%", "g1": "100.0%", "g2": "100.0%"}
    assert sorted(out["red"]) == ["g0", "g1", "g2"]
    for row in health:
        for flag in row["flags"]:
            assert _esc(flag["reason"]) in markup
    d0 = health[0]
    assert d0["grad_norm"] is None and f'‖w‖ <b class="tp-health-value">{compact(d0["weight_norm"])}</b>' in markup
    assert '‖g‖ <b class="tp-health-value">—</b>' in markup      # a NaN gradient: a dash, marked NaN


def test_bars_follow_the_backward_pass_on_a_log_scale(tmp_path):
    ad.random.set_seed(1)
    model = ad.keras.Sequential([ad.layers.Dense(3, activation="tanh", name=f"d{i}")
                                 for i in range(3)], name="mlp")
    x = ad.constant(np.random.default_rng(1).normal(size=(5, 2)).astype(np.float32))
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(model(x) ** 2)
    r = replay(tape, loss, model.trainable_variables)
    out = _run_panel(tmp_path, json.loads(r.to_json()), [])
    norms = r.data["debug"]["group_norms"]
    finals = {gid: series[-1][1] for gid, series in norms.items()}
    top = max(finals.values())
    for gid, width in out["widths"].items():
        expected = 100 * max(0.0, np.log(finals[gid] / (top / 1e3)) / np.log(1e3))
        assert float(width.rstrip("%")) == pytest.approx(expected, abs=0.06)
    assert out["before"] == ["0.0%"] * 3                 # frame 0: nothing sent back yet
    assert [row["status"] for row in r.data["debug"]["health"]] == ["ok"] * 3


def test_the_planted_bugs_get_their_marks_and_bars_and_a_long_panel_is_virtual(tmp_path):
    tape, loss, model = planted_mlp()
    r = replay(tape, loss, model.trainable_variables)
    out = _run_panel(tmp_path, json.loads(r.to_json()), [])
    scope = {g["id"]: g["scope"] for g in r.data["groups"]}
    marks = {scope[g]: m for g, m in re.findall(
        r'data-group="(g\d+)"[^>]*><div class="tp-health-head"><span class="tp-health-mark">([^<]*)<',
        out["markup"])}
    assert marks == {"mlp/d0": "NaN received", "mlp/nan_layer": "NaN made", "mlp/fed": "NaN received",
                     "loss": "NaN received", "mlp/explode": "exploding", "mlp/aux": "None",
                     "mlp/head": "", "mlp": ""}
    order = [scope[g] for g in re.findall(r'class="tp-health-row[^"]*" data-group="(g\d+)"', out["markup"])]
    # the maker, the None, the exploding layer, then those that received the NaN; healthy last
    assert order[:6] == ["mlp/nan_layer", "mlp/aux", "mlp/explode", "mlp/d0", "mlp/fed", "loss"]
    assert sorted(order[6:]) == ["mlp", "mlp/head"]
    assert sorted(scope[g] for g in out["red"]) == ["loss", "mlp/d0", "mlp/fed", "mlp/nan_layer"]
    assert out["widths"][next(g for g, s in scope.items() if s == "mlp/aux")] == "0.0%"
    assert float(out["widths"][next(g for g, s in scope.items() if s == "mlp/explode")][:-1]) > 0
    assert "exploding weights: RMS " in out["markup"]
    # 201 groups: the markup holds the summary and an empty list as tall as the rows
    # (the page draws the rows in view: tests/browser/test_health_rows.py)
    tape, loss, sources = rnn_tape(1001, nan_at=150)
    long = _run_panel(tmp_path, json.loads(replay(tape, loss, sources).to_json()), [])
    assert "tp-health-virtual" in long["markup"] and 'data-rows="201"' in long["markup"]
    assert long["markup"].count('class="tp-health-row') == 0
    assert 'class="tp-health-list" style="height: 1447.20em"' in long["markup"]


def test_the_player_module_and_the_page_carry_the_panel_once():
    code = player_js()
    assert code.count("function normsMarkup(") == 1 and code.count("function showNorms(") == 1
    assert "function normsMarkup(" not in (STATIC / "groups.js").read_text()
    page = export_html(_nan_mlp())
    assert "function healthNumber(" in page and '"health":[' in page
