"""Cause-first health rows (widgets/health/triage.py) on a stack of transformer blocks.

The tapes are ``benchmarks/transformer_tapes.transformer_tape`` (real tensor
sizes: batch 16, 8 tokens, width 32) with bugs planted as a practitioner
meets them: a temperature typo (``/ 0.0``: NaN), an MLP output through
``.numpy()`` (None), a kernel initialised 100x too large (exploding), a bias
of -100 in front of a ReLU (dead). Each test checks which row comes first,
its plain word and the numbers its reason gives; a healthy stack flags
nothing, its embedding's ratio included.
"""

import re
import warnings

import numpy as np
import pytest

from benchmarks.transformer_tapes import transformer_tape
from widgets.health.outliers import compact
from widgets.health.triage import OK_RANK, QUIET_RANK, cause_order
from widgets.player.replay import replay


def _replayed(n, bugs, history=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # the planted 1/0
        tape, loss, model, where, *h = transformer_tape(n, bugs=bugs, history=history)
        r = replay(tape, loss, model.trainable_variables, names={"loss": loss})
    rows = r.data["debug"]["health"]
    return r, [rows[i] for i in cause_order(rows)], where, model


def test_a_healthy_stack_flags_nothing():
    r, rows, _, model = _replayed(1000, ())
    assert [row["scope"] for row in rows if row["status"] != "ok" or row["kinds"]] == []
    assert {row["rank"] for row in rows} <= {OK_RANK, QUIET_RANK}


def test_the_nan_page_opens_on_the_division_by_zero_then_the_none_rows():
    r, rows, where, model = _replayed(1000, ("nan", "none"))
    first = rows[0]
    assert first["scope"] == where["nan"] and first["kind"] == "NaN made"
    record = r.frames[r.data["debug"]["first_nonfinite"]["forward"]]["record"] + 1
    reason = first["flags"][0]["reason"]
    assert reason.startswith(f"NaN made here: the first NaN/Inf of the forward pass "
                             f"(record {record}: Softmax); record {record - 1} divides by 0 (")
    assert reason.endswith(" = 0)")
    nones = [row for row in rows if "None" in row["kinds"]]
    block = where["none"].rsplit("/", 1)[0] + "/"
    assert [row["scope"] for row in rows[1:1 + len(nones)]] == \
        [block + "ln2", block + "mlp/up", block + "mlp/down"]
    assert all(row["flags"][0]["reason"].startswith("None: no gradient reaches its variables: "
                                                    "no recorded path between ")
               for row in nones)
    # then only rows that received the NaN, in forward order
    received = rows[1 + len(nones):]
    assert {row["kind"] for row in received} == {"NaN received"}
    assert len(received) == len(rows) - 4 and received[0]["scope"] == "lm/embed"


def test_the_none_rows_name_the_numpy_line_when_the_step_ran_inside_record_history():
    r, rows, where, model = _replayed(600, ("none",), history=True)
    line = next(n for n, text in enumerate(open("benchmarks/transformer_tapes.py"), 1)
                if "m = ad.constant(m.numpy())" in text)
    why = (f"None: no gradient reaches its variables: the value left the library "
           f"(.numpy() at transformer_tapes.py:{line}: m = ad.constant(m.numpy()))")
    assert [row["flags"][0]["reason"] for row in rows[:3]] == [why] * 3
    lost = r.data["debug"]["lost"]
    names = {n["id"]: n["name"] for n in r.nodes if n["type"] == "tensor"}
    assert len(lost) == 6 and {e["reason"] for e in lost} == {"left_library"}
    for entry in lost:       # the player's names, never the explainer's placeholders
        message = entry["message"]
        assert f"computed from {names[entry['source']]} left the library" in message
        assert f"all the way from {names[entry['source']]} to loss." in message
        assert " source " not in message and " target " not in message


def test_without_a_history_the_message_points_at_the_value_that_came_back():
    r, rows, where, model = _replayed(300, ("none",))
    names = {n["id"]: n["name"] for n in r.nodes if n["type"] == "tensor"}
    entry = r.data["debug"]["lost"][0]
    message = entry["message"]
    assert message.startswith(f"The tape watches {names[entry['source']]} and recorded ")
    # the gap: from the MLP's output (where the jump lands) to the constant made from
    # .numpy(), which the block's residual AddV2 reads
    left = names[entry["node"]]
    came_back = re.search(r"its recorded ops read (v\d+), a value made after " + left, message)
    assert came_back and "embed/embeddings" not in message and "leads to loss" in message
    by_name = {name: tid for tid, name in names.items()}
    block = where["none"].rsplit("/", 1)[0]
    reader = [n for n in r.nodes if n["type"] == "op" and any(
        e["from"] == by_name[came_back.group(1)] and e["to"] == n["id"] for e in r.edges)]
    maker = [n for n in r.nodes if n["type"] == "op" and any(
        e["to"] == entry["node"] and e["from"] == n["id"] for e in r.edges)]
    assert [(n["op_type"], n["scope"]) for n in reader] == [("AddV2", block)]
    assert [n["scope"] for n in maker] == [block + "/mlp/down"]


def test_the_exploding_and_dead_page_opens_on_the_dead_relu_and_the_exploding_layer():
    r, rows, where, model = _replayed(1000, ("exploding", "dead"))
    assert [(row["scope"], row["kind"]) for row in rows[:2]] == \
        [(where["dead"], "dead"), (where["exploding"], "exploding")]
    assert rows[0]["flags"][0]["reason"].startswith("dead ReLU: 100% of its outputs are 0 (record ")
    up = [b.up for b in model.blocks]
    rms = [float(np.sqrt((np.sum(u.kernel.numpy().astype(np.float64) ** 2) +
                          np.sum(u.bias.numpy().astype(np.float64) ** 2)) /
                         (u.kernel.numpy().size + u.bias.numpy().size))) for u in up]
    k = int(where["exploding"].split("block_")[1].split("/")[0])
    dead = int(where["dead"].split("block_")[1].split("/")[0])
    median = float(np.median([v for i, v in enumerate(rms) if i != k]))
    assert rows[1]["flags"][0]["reason"] == (
        f"exploding weights: RMS {compact(rms[k])}, {compact(rms[k] / median)}x the median of "
        f"the other lm/block_*/mlp/up groups ({compact(median)})")
    assert rms[dead] > 10 * median       # the -100 bias: large too, but dead comes first
    # its small ratio follows from its large weights: quiet, and said so
    quiet = [f for f in rows[1]["flags"] if f.get("quiet")]
    assert [f["rule"] for f in quiet] == ["ratio_low"]
    assert quiet[0]["reason"].endswith("(quiet: its large weights make the ratio small)")
    assert rows[1]["kinds"] == ["exploding"]
    # the embedding's gradient/weight ratio is far above the others', and stays quiet
    embed = next(row for row in rows if row["scope"] == "lm/embed")
    assert [(f["rule"], f.get("quiet")) for f in embed["flags"]] == [("ratio_high", True)]
    assert embed["rank"] == QUIET_RANK and embed["kinds"] == [] and embed["status"] == "ok"
    assert embed["flags"][0]["reason"].startswith("exploding gradient: gradient/weight ")
    assert embed["flags"][0]["reason"].endswith(
        "(quiet: an embedding's gradient reaches only the rows it looked up)")


@pytest.mark.parametrize("n", [1000, 10_000])
def test_record_counts_of_the_tapes(n):
    tape, loss, model, where = transformer_tape(n, bugs=())
    assert abs(len(tape.records) - n) <= 0.05 * n
