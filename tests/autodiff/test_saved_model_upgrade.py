"""Saved models of format version 1 (before LSTMGates returned tanh(c) apart) load exactly.

The files under ``tests/autodiff/data`` were written by commit 86713ce's code, with the
values its own loader computed from them (``saved_model_v1_expected.npz``); how to
regenerate them is in ``data/make_saved_model_v1.py``. Loading them here rewrites their
LSTM nodes (``autodiff/saved_model/upgrade.py``) and must give those values bit for bit.
"""

import copy
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from autodiff.saved_model import file_format, store, upgrade
from test_saved_model_fuzz import _paths, _reseal   # every path into a JSON; a forger's digest

DATA = Path(__file__).parent / "data"
PARTS = ("", "_forward", "_ops")   # saved_model_v1_lstm{part}
_spec = importlib.util.spec_from_file_location("make_saved_model_v1",
                                               DATA / "make_saved_model_v1.py")
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)


@pytest.fixture
def v1(tmp_path):
    """A copy of the version-1 models (a load must not depend on writing next to them)."""
    for part in PARTS:
        shutil.copytree(DATA / f"saved_model_v1_lstm{part}", tmp_path / f"v1{part}")
    return tmp_path


def _json(path):
    return json.loads((Path(store.resolve(str(path))) / file_format.JSON_FILE).read_text())


def _expected():
    with np.load(DATA / "saved_model_v1_expected.npz", allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def _assert_same_bits(got, want):
    assert sorted(got) == sorted(want)
    for name in want:
        assert (got[name].dtype, got[name].shape) == (want[name].dtype, want[name].shape), name
        assert got[name].tobytes() == want[name].tobytes(), \
            f"{name}: {got[name].ravel()[:4]} != {want[name].ravel()[:4]} (86713ce)"


def _ops(document, function):
    return [(n["op"], len(n["inputs"]))
            for n in document["functions"][function]["traces"][0]["graph"]["nodes"]]


def _loaded(root, prefix="v1"):
    return [ad.saved_model.load(str(root / f"{prefix}{part}")) for part in PARTS]


def test_the_fixtures_are_version_1_files_with_the_old_lstm_gradient(v1):
    document = _json(v1 / "v1")
    assert document["version"] == 1
    for function in ("gradients", "second_order", "train_step"):
        assert ("LSTMGatesGrad", 5) in _ops(document, function)
    assert ("LSTMGatesGrad", 5) in _ops(_json(v1 / "v1_ops"), "gates_grad")
    forward_only = _json(v1 / "v1_forward")
    assert forward_only["version"] == 1 and list(forward_only["functions"]) == ["forward"]
    assert ("LSTMGates", 2) in _ops(forward_only, "forward")


def test_version_1_lstm_gradients_load_and_give_86713ces_values_bit_for_bit(v1):
    # forward, gradients with respect to the input and weights, a second derivative through
    # the LSTM (its act read by slices: the concatenation), two hand-written training steps
    # (assigning the weights), the ops alone (act from an argument: sliced), forward only
    _assert_same_bits(make.run(*_loaded(v1)), _expected())


def test_a_forward_only_version_1_file_loads(v1):
    loaded = ad.saved_model.load(str(v1 / "v1_forward"))
    x = ad.constant(make.inputs()[0])
    assert loaded.forward(x).numpy().tobytes() == _expected()["forward_only"].tobytes()


def test_a_loaded_version_1_model_saves_as_version_2_with_the_same_values(v1):
    for part, loaded in zip(PARTS, _loaded(v1)):
        ad.saved_model.save(loaded, str(v1 / f"v2{part}"))
    document = _json(v1 / "v2")
    assert document["version"] == file_format.FORMAT_VERSION == 2
    assert ("LSTMGatesGrad", 7) in _ops(document, "second_order")
    assert ("LSTMGatesGrad", 5) not in _ops(document, "second_order")
    _assert_same_bits(make.run(*_loaded(v1, "v2")), _expected())


def test_a_new_save_writes_version_2_and_loads_back(tmp_path):
    module = make.WithGradients()
    x = ad.constant(make.inputs()[0])
    before = [t.numpy() for t in module.gradients(x)]
    ad.saved_model.save(module, str(tmp_path / "m"))
    assert _json(tmp_path / "m")["version"] == 2
    after = [t.numpy() for t in ad.saved_model.load(str(tmp_path / "m")).gradients(x)]
    assert [a.tobytes() for a in after] == [b.tobytes() for b in before]


def _edit(path, edit):
    document = _json(path)
    edit(document)
    (Path(store.resolve(str(path))) / file_format.JSON_FILE).write_text(json.dumps(document))
    _reseal(path)


def test_a_version_1_file_written_with_the_new_lstm_ops_loads_unchanged(tmp_path):
    # Saved between a34adef and the change to version 2: version 1 with 4-output gates and
    # 7-input gradients. The writer differs from today's only in the number: relabel one.
    module = make.WithGradients()
    x, y = (ad.constant(a) for a in make.inputs())
    calls = [("gradients", (x,)), ("second_order", (x,)), ("train_step", (x, y))]
    ad.saved_model.save(module, str(tmp_path / "m"))
    before = [[t.numpy() for t in ad.nest.flatten(getattr(module, name)(*args))]
              for name, args in calls]
    _edit(tmp_path / "m", lambda d: d.update(version=1))
    assert ("LSTMGatesGrad", 7) in _ops(_json(tmp_path / "m"), "gradients")
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    after = [[t.numpy() for t in ad.nest.flatten(getattr(loaded, name)(*args))]
             for name, args in calls]
    assert [[a.tobytes() for a in call] for call in after] == \
        [[b.tobytes() for b in call] for call in before]


@pytest.mark.parametrize("version, message", [
    (3, r"\$.version: format version 3 is not supported \(a newer autodiff wrote it\): this "
        r"autodiff reads versions 1 to 2"),
    (0, r"\$.version: format version 0 is not supported: this autodiff reads versions 1 to 2"),
])
def test_a_version_it_does_not_know_is_refused_naming_both(v1, version, message):
    _edit(v1 / "v1", lambda d: d.update(version=version))
    with pytest.raises(ad.saved_model.FormatError, match=message):
        ad.saved_model.load(str(v1 / "v1"))


def test_a_version_2_file_is_not_upgraded_again(v1):
    # the same JSON called version 2: its 5-input gradient no longer fits the op
    _edit(v1 / "v1", lambda d: d.update(version=2))
    with pytest.raises(ad.saved_model.FormatError, match="missing a required argument: 'd_act'"):
        ad.saved_model.load(str(v1 / "v1"))


def _graph(nodes, args, outputs):
    return {"format": file_format.FORMAT_NAME, "version": 1, "custom_gradients": True,
            "variables": [], "constants": [],
            "functions": {"f": {"input_signature": None, "arg_names": [], "traces": [
                {"call": {}, "graph": {"args": args, "nodes": nodes, "outputs": outputs}}]}}}


def test_a_gradient_whose_units_the_file_does_not_say_is_refused():
    wide = {"shape": [2, 10], "dtype": "float32"}
    # every input of the gradient comes from a node whose shape is not recorded
    nodes = [{"op": "Neg", "inputs": [["arg", 0]], "params": {}},
             {"op": "LSTMGatesGrad", "inputs": [["node", 0, 0]] * 5, "params": {}}]
    document = _graph(nodes, [wide], {"ref": ["node", 1, 0]})
    with pytest.raises(ad.saved_model.FormatError,
                       match=r"\$.functions.f.traces\[0\].graph.nodes\[1\]: an LSTM gradient "
                             r"\(LSTMGatesGrad of 5 inputs\), saved in version 1 .* its units "
                             r"cannot be read"):
        upgrade.to_current(document, 1)


def test_references_keep_their_meaning_around_the_inserted_nodes():
    state = {"shape": [1, 3], "dtype": "float32"}
    z = {"shape": [1, 12], "dtype": "float32"}
    nodes = [{"op": "LSTMGates", "inputs": [["arg", 0], ["arg", 1]], "params": {}},
             {"op": "Neg", "inputs": [["node", 0, 2]], "params": {}},          # reads act5
             {"op": "LSTMGatesGrad", "inputs": [["node", 0, 2], ["arg", 1], ["node", 0, 0],
                                                ["node", 0, 1], ["node", 1, 0]], "params": {}},
             {"op": "AddV2", "inputs": [["node", 2, 1], ["node", 0, 1]], "params": {}},
             {"op": "Neg", "inputs": [["node", 0, 5]], "params": {}},          # invalid: 3 outputs
             {"op": "Neg", "inputs": [["node", 9, 0]], "params": {}}]          # invalid: later node
    document = _graph(nodes, [z, state], {"list": [{"ref": ["node", 0, 2]},
                                                   {"ref": ["node", 3, 0]}]})
    graph = upgrade.to_current(copy.deepcopy(document), 1)["functions"]["f"]["traces"][0]["graph"]
    assert graph["nodes"] == [
        nodes[0],
        {"op": "ConcatV2", "params": {"axis": 1}, "inputs": [["node", 0, 2], ["node", 0, 3]]},
        {"op": "Neg", "inputs": [["node", 1, 0]], "params": {}},
        {"op": "StridedSlice", "inputs": [["node", 2, 0]],
         "params": {"key": ["...", ["slice", 0, 12, None]]}},
        {"op": "StridedSlice", "inputs": [["node", 2, 0]],
         "params": {"key": ["...", ["slice", 12, 15, None]]}},
        {"op": "LSTMGatesGrad", "params": {},
         "inputs": [["node", 0, 2], ["node", 0, 3], ["arg", 1], ["node", 0, 0], ["node", 0, 1],
                    ["node", 3, 0], ["node", 4, 0]]},
        {"op": "AddV2", "inputs": [["node", 5, 1], ["node", 0, 1]], "params": {}},
        {"op": "Neg", "inputs": [["node", 0, 6]], "params": {}},
        {"op": "Neg", "inputs": [["node", 12, 0]], "params": {}}]
    assert graph["outputs"] == {"list": [{"ref": ["node", 1, 0]}, {"ref": ["node", 6, 0]}]}
    # a graph that reads tc (output 3) was written with the version-2 ops: left as it is
    nodes[4]["inputs"] = [["node", 0, 3]]
    assert upgrade.to_current(copy.deepcopy(document), 1) == document


def test_graphs_nested_in_control_flow_and_custom_gradients_are_lifted_too():
    state = {"shape": [1, 3], "dtype": "float32"}
    inner = {"args": [{"shape": [1, 12], "dtype": "float32"}, state],
             "nodes": [{"op": "LSTMGates", "inputs": [["arg", 0], ["arg", 1]], "params": {}},
                       {"op": "LSTMGatesGrad", "params": {}, "inputs": [
                           ["node", 0, 2], ["arg", 1], ["node", 0, 0], ["node", 0, 1],
                           ["arg", 0]]}],   # (a 12-wide d_act: the op would refuse it; sliced)
             "outputs": {"ref": ["node", 1, 0]}}
    nodes = [{"op": "While", "inputs": [], "control_flow": {
                 "subgraphs": [{"label": "body", "graph": copy.deepcopy(inner)}]}},
             {"op": "WhileGrad", "inputs": [], "gradient_of": {"op": "While", "control_flow": {
                 "subgraphs": [{"label": "body", "graph": copy.deepcopy(inner)}]}}},
             {"op": "IdentityN", "inputs": [], "custom_gradient": {"graph": copy.deepcopy(inner)}}]
    lifted = upgrade.to_current(_graph(nodes, [], {"list": []}), 1)
    lifted = lifted["functions"]["f"]["traces"][0]["graph"]["nodes"]
    for graph in (lifted[0]["control_flow"]["subgraphs"][0]["graph"],
                  lifted[1]["gradient_of"]["control_flow"]["subgraphs"][0]["graph"],
                  lifted[2]["custom_gradient"]["graph"]):
        assert [(n["op"], len(n["inputs"])) for n in graph["nodes"]] == [
            ("LSTMGates", 2), ("StridedSlice", 1), ("StridedSlice", 1), ("LSTMGatesGrad", 7)]
        assert graph["outputs"] == {"ref": ["node", 3, 0]}


WRONG_VALUES = [None, -1, 2 ** 70, "x", [], {}, True, [[["deep"]]], {"ref": ["node", 9, 9]},
                ["node", 0, 2], ["node", 13, 3], ["const", 0]]


@pytest.mark.slow
def test_damaged_version_1_lstm_graphs_fail_only_with_format_errors(v1, engine_backend):
    if engine_backend != "numpy":
        pytest.skip("the files are host data, the same on every backend: fuzzed once")
    original = _json(v1 / "v1")
    original["functions"] = {"gradients": original["functions"]["gradients"]}
    graph = original["functions"]["gradients"]["traces"][0]["graph"]
    lstm = {i for i, node in enumerate(graph["nodes"]) if node["op"].startswith("LSTMGates")}
    tried = refused = 0
    for path in list(_paths(original))[1:]:   # every value in the LSTM nodes, or the outputs
        if path[5:6] != ("outputs",) and not (path[5:6] == ("nodes",) and path[6:7]
                                              and path[6] in lstm):
            continue
        for wrong in WRONG_VALUES:
            document = copy.deepcopy(original)
            target = document
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = wrong
            (Path(store.resolve(str(v1 / "v1"))) / file_format.JSON_FILE).write_text(
                json.dumps(document))
            _reseal(v1 / "v1")
            tried += 1
            try:
                ad.saved_model.load(str(v1 / "v1"))
            except ad.saved_model.FormatError as err:
                assert str(v1 / "v1") in str(err)
                # a check that names the problem, not load's catch-all for a crash
                assert "malformed content" not in str(err), (path, wrong, str(err))
                refused += 1
    print(f"{tried} mutations, {refused} refused")
    assert tried > 1000 and refused > tried // 2
