"""Saved models keep control flow (issue 33): cond, switch_case, while_loop, scan, map_fn,
foldl, foldr and AutoGraph's if/for are saved as nodes with their subgraphs
(``autodiff/saved_model/control_flow.py``) and rebuilt on load (``control_flow/loaded.py``).

A loaded function gives the original's values and gradients bit for bit, on inputs that
take every branch and loop count; a trace that differentiates a loop inside keeps its
gradient node; the file stays JSON read without trust: a damaged layout, an unknown op or
a subgraph that does not fit is refused before anything runs.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad


def version_of(path):
    """The version directory a model's pointer names (``autodiff/saved_model/store.py``)."""
    return Path(ad.saved_model.store.resolve(str(path)))


def _edit_json(path, edit):
    document = json.loads((version_of(path) / "saved_model.json").read_text())
    edit(document)
    (version_of(path) / "saved_model.json").write_text(json.dumps(document))


class Flow(ad.Module):
    def __init__(self):
        super().__init__()
        self.w = ad.Variable([1.0, 2.0, 3.0], name="w")

    @ad.function(input_signature=[ad.TensorSpec([None, 3])])
    def __call__(self, x):
        rows, s = ad.reduce_sum(x, axis=1), ad.reduce_sum(x)
        index = ad.cast(s > 1.0, ad.int32) + ad.cast(s > 3.0, ad.int32)
        picked = ad.switch_case(index, {0: lambda: rows * 0.5, 1: lambda: -rows,
                                        2: lambda: rows + 1.0})
        i, z = ad.while_loop(
            lambda i, z: ad.reduce_sum(z) < 50.0, lambda i, z: (i + 1, z * 2.0 + 1.0),
            (ad.constant(0), ad.cond(s > 0, lambda: x * self.w, lambda: x - self.w)),
            maximum_iterations=6)
        return {"z": z, "i": i, "picked": picked,
                "scan": ad.scan(lambda a, e: a * 0.5 + e, rows),
                "scan_r": ad.scan(lambda a, e: a - e, rows, initializer=ad.constant(1.0),
                                  reverse=True),
                "map": ad.map_fn(lambda r: ad.reduce_max(r) * r[0], x),
                "foldl": ad.foldl(lambda a, e: a * 0.9 + ad.sin(e), rows),
                "foldr": ad.foldr(lambda a, e: (a[0] + e, a[1] * e), rows,
                                  initializer=(ad.constant(0.0), ad.constant(1.0)))}

    @ad.function(input_signature=[ad.TensorSpec([4, 3])])
    def converted(self, x):
        total = ad.zeros([3])
        for row in x:               # AutoGraph: a while loop over the rows ...
            if ad.reduce_sum(row) > 0:   # ... with an If inside
                total += row * self.w
            else:
                total -= row * 0.5
        return total

    @ad.function(input_signature=[ad.TensorSpec([None, 3])])
    def loss_and_grad(self, x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            z = ad.while_loop(lambda z: ad.reduce_sum(z) < 20.0, lambda z: z * 1.5 + self.w,
                              [x * self.w])[0]
            loss = ad.reduce_sum(ad.cond(ad.reduce_sum(x) > 0, lambda: z * z, lambda: -z))
        return loss, tape.gradient(loss, [self.w, x])


def _inputs():
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((n, 3)).astype(np.float32) for n in (1, 2, 5, 1, 3)]
    xs += [np.full((2, 3), 0.3, np.float32), np.full((4, 3), -2.0, np.float32),
           np.zeros((0, 3), np.float32)]
    return [ad.constant(x) for x in xs]


def _same(a, b):
    for u, v in zip(ad.nest.flatten(a), ad.nest.flatten(b)):
        if u is None or v is None:
            assert u is None and v is None
            continue
        assert u.dtype == v.dtype and np.array_equal(u.numpy(), v.numpy(), equal_nan=True), \
            (u, v)
    assert len(ad.nest.flatten(a)) == len(ad.nest.flatten(b))


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model"
    module = Flow()
    ad.saved_model.save(module, str(path))
    return module, path


def test_a_loaded_function_with_control_flow_gives_the_same_values(saved):
    module, path = saved
    loaded = ad.saved_model.load(str(path))
    for x in _inputs():
        if x.shape[0] == 0:
            with pytest.raises(ad.errors.OutOfRangeError):   # scan of no rows, no initializer
                loaded(x)
            continue
        _same(module(x), loaded(x))
        if x.shape[0] == 4:
            _same(module.converted(x), loaded.converted(x))


def test_a_loaded_loop_serves_every_batch_size_from_one_trace(saved):
    _, path = saved
    document = json.loads((version_of(path) / "saved_model.json").read_text())
    assert len(document["functions"]["__call__"]["traces"]) == 1
    text = json.dumps(document)
    for op in ("If", "While", "Case", "Scan", "MapFn", "Foldl", "Foldr"):
        assert f'"op": "{op}"' in text, op
    assert '"op": "WhileGrad"' in text and '"op": "IfGrad"' in text


def test_a_tape_outside_a_loaded_function_gets_the_originals_gradient(saved):
    module, path = saved
    loaded = ad.saved_model.load(str(path))
    for x in _inputs()[:6]:
        grads = []
        for fn in (module, loaded):
            with ad.GradientTape() as tape:
                tape.watch(x)
                out = fn(x)
                y = ad.reduce_sum(out["z"]) + ad.reduce_sum(out["scan"]) + out["foldr"][1]
            grads.append(tape.gradient(y, x))
        _same(grads[0], grads[1])


def test_a_saved_gradient_through_a_loop_inside_the_trace_loads(saved):
    module, path = saved
    loaded = ad.saved_model.load(str(path))
    # (a gradient's shapes are constants of its trace: saved at sizes 1 and 2, one trace each)
    for x in [x for x in _inputs() if x.shape[0] in (1, 2)]:
        _same(module.loss_and_grad(x), loaded.loss_and_grad(x))


def _control_flow_node(document, op):
    def walk(graph):
        for node in graph["nodes"]:
            if node["op"] == op:
                return node
            for sub in node.get("control_flow", {}).get("subgraphs", []):
                found = walk(sub["graph"])
                if found:
                    return found
        return None
    return walk(document["functions"]["__call__"]["traces"][0]["graph"])


@pytest.mark.parametrize("edit, message", [
    (lambda n: n["control_flow"].update(own=[99]), "position 99 is not one of the node's"),
    (lambda n: n["control_flow"].update(own=[True]), "True is not a count or a position"),
    (lambda n: n["control_flow"]["info"].pop("maximum_iterations"),
     r"While takes info \['maximum_iterations'\], got \[\]"),
    (lambda n: n["control_flow"]["subgraphs"].pop(), "While takes 2 subgraphs, got 1"),
    (lambda n: n["control_flow"].update(captures=[[0], []]),
     "subgraph 'cond' takes 2 arguments, but the node gives it 2 and 1 captured"),
    (lambda n: n["control_flow"].update(code="__import__('os')"), "'code'"),
    (lambda n: n.update(op="Exec"), "'Exec' is not a control-flow op"),
    (lambda n: n["control_flow"]["subgraphs"][1]["graph"]["nodes"][0].update(op="__import__"),
     "op type '__import__' is not registered in this process"),
])
def test_a_damaged_control_flow_node_is_refused_before_anything_runs(tmp_path, edit, message):
    path = tmp_path / "model"
    ad.saved_model.save(Flow(), str(path))
    _edit_json(path, lambda d: edit(_control_flow_node(d, "While")))
    with pytest.raises(ad.saved_model.FormatError, match=message) as info:
        ad.saved_model.load(str(path))
    assert "saved_model.json" in str(info.value)
