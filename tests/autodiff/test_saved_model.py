"""ad.saved_model: round trips (in this process and in a fresh one) and damaged directories.

The guide's promise: a model saved with ``experimental_custom_gradients=True``
gives the same gradient (2.0 for the clip example) in a *fresh* process;
saved without, differentiating its custom op there raises
``LookupError: No gradient defined for operation 'IdentityN' (op type: IdentityN)``.
A damaged directory must fail with an error naming the file and the problem.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad

ROOT = Path(__file__).resolve().parents[2]

GUIDE_MODULE = """
import autodiff as ad

@ad.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return ad.clip_by_norm(dy, 0.5)
    return y, backward

class MyModule(ad.Module):
    @ad.function(input_signature=[ad.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x)
"""

GUIDE_LOAD = """
import autodiff as ad
v = ad.Variable(2.0)
loaded = ad.saved_model.load({path!r})
with ad.GradientTape() as t:
    output = loaded.call_custom_grad(v * v)
print("output", float(output))
print("gradient", float(t.gradient(output, v)))
"""


def run_fresh(code):
    """Runs ``code`` in a new Python process (nothing registered but the library)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120)


def version_of(path):
    """The version directory a model's pointer names (``autodiff/saved_model/store.py``)."""
    return Path(ad.saved_model.store.resolve(str(path)))


def save_guide_module(path, custom_gradients):
    namespace = {}
    exec(GUIDE_MODULE, namespace)  # noqa: S102  (the guide's own code, defined here)
    options = ad.saved_model.SaveOptions(experimental_custom_gradients=custom_gradients)
    ad.saved_model.save(namespace["MyModule"](), str(path), options=options)


# ---- the guide's example -------------------------------------------------------------

def test_guide_custom_gradient_survives_a_fresh_process(tmp_path):
    path = tmp_path / "saved_model"
    result = run_fresh(GUIDE_MODULE + f"""
ad.saved_model.save(MyModule(), {str(path)!r},
                    options=ad.saved_model.SaveOptions(experimental_custom_gradients=True))
""")
    assert result.returncode == 0, result.stderr
    result = run_fresh(GUIDE_LOAD.format(path=str(path)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["output", "4.0", "gradient", "2.0"]


def test_without_custom_gradients_a_fresh_process_raises_lookup_error(tmp_path):
    path = tmp_path / "saved_model"
    save_guide_module(path, custom_gradients=False)
    result = run_fresh(GUIDE_LOAD.format(path=str(path)))
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == \
        "LookupError: No gradient defined for operation 'IdentityN' (op type: IdentityN)"
    assert "output 4.0" in result.stdout   # the forward pass still works


def test_without_custom_gradients_the_saving_process_still_knows_the_gradient(tmp_path):
    # The guide's note: the gradient registry of the saving process still holds it.
    save_guide_module(tmp_path / "m", custom_gradients=False)
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    v = ad.Variable(2.0)
    with ad.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert t.gradient(output, v).numpy() == 2.0


def test_a_loaded_model_saved_again_keeps_its_custom_gradient(tmp_path):
    save_guide_module(tmp_path / "first", custom_gradients=True)
    ad.saved_model.save(ad.saved_model.load(str(tmp_path / "first")), str(tmp_path / "second"))
    result = run_fresh(GUIDE_LOAD.format(path=str(tmp_path / "second")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["output", "4.0", "gradient", "2.0"]


def test_saved_custom_gradient_uses_each_calls_values(tmp_path):
    result = run_fresh(f"""
import autodiff as ad

@ad.custom_gradient
def log1pexp(x):
    e = ad.exp(x)
    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return ad.math.log(1 + e), grad

class M(ad.Module):
    @ad.function(input_signature=[ad.TensorSpec([])])
    def f(self, x):
        return log1pexp(x)

ad.saved_model.save(M(), {str(tmp_path / 'm')!r})
""")
    assert result.returncode == 0, result.stderr
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    for value, expected in [(0.0, 0.5), (100.0, 1.0)]:
        x = ad.constant(value)
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = loaded.f(x)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-6)


# ---- modules with variables -----------------------------------------------------------

class Regressor(ad.Module):
    def __init__(self):
        super().__init__()
        self.hidden = ad.layers.Dense(4, activation="tanh")
        self.out = ad.layers.Dense(1)
        self.hidden(ad.zeros([1, 3]))
        self.out(ad.zeros([1, 4]))

    @ad.function(input_signature=[ad.TensorSpec([None, 3])])
    def __call__(self, x):
        return ad.reduce_sum(self.out(self.hidden(x)), axis=1)

    @ad.function
    def loss(self, x, power):
        return ad.reduce_mean(self(x) ** power)


def test_module_round_trip_keeps_values_variables_and_gradients(tmp_path):
    model = Regressor()
    x = ad.random.normal([5, 3])
    model.loss(x, 2)
    ad.saved_model.save(model, str(tmp_path / "m"))
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    # a saved model keeps each variable's label ('dense/kernel', what tapes show); a Keras 3
    # layer's variable itself is named 'kernel' (its path says where it lives)
    assert [v.name for v in loaded.trainable_variables] == \
        [f"{v._name}:0" for v in model.trainable_variables]
    assert [v.shape for v in loaded.variables] == [v.shape for v in model.variables]
    np.testing.assert_allclose(loaded.loss(x, 2).numpy(), model.loss(x, 2).numpy(), rtol=1e-6)
    grads = []
    for m in (model, loaded):
        with ad.GradientTape() as tape:
            loss = m.loss(x, 2)
        grads.append(tape.gradient(loss, m.trainable_variables))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    before = loaded(x).numpy()
    out_bias = loaded.trainable_variables[3]
    assert out_bias.name == f"{model.out.bias._name}:0"
    out_bias.assign([1.5])       # the loaded graphs read the loaded variables
    np.testing.assert_allclose(loaded(x).numpy(), before + 1.5, rtol=1e-6)
    np.testing.assert_allclose(model(x).numpy(), before, rtol=1e-6)


def test_loaded_function_checks_its_signature_and_its_traces(tmp_path):
    model = Regressor()
    model(ad.zeros([2, 3]))
    ad.saved_model.save(model, str(tmp_path / "m"))
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    assert loaded(ad.ones([2, 3])).shape == (2,)
    with pytest.raises(TypeError, match="argument 'x' has shape"):
        loaded(ad.ones([2, 4]))
    # one trace serves every batch size its None allows (issue 33): as in TensorFlow
    assert loaded(ad.ones([7, 3])).shape == (7,)
    np.testing.assert_allclose(loaded(ad.ones([7, 3])).numpy(), model(ad.ones([7, 3])).numpy())
    # loss has no input_signature and was never called: nothing to save
    assert "loss" not in loaded.functions and not hasattr(loaded, "loss")


def test_params_come_back_as_tuples(tmp_path):
    class M(ad.Module):
        @ad.function(input_signature=[ad.TensorSpec([2, 3])])
        def f(self, x):
            return ad.reduce_sum(ad.transpose(x, [1, 0])[1:, ::-1], axis=[0, 1])

    ad.saved_model.save(M(), str(tmp_path / "m"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert ad.saved_model.load(str(tmp_path / "m")).f(x).numpy() == x.T[1:, ::-1].sum()


# ---- writing safely ---------------------------------------------------------------

def test_saving_over_a_model_replaces_it_and_leaves_nothing_behind(tmp_path):
    path = tmp_path / "m"
    save_guide_module(path, True)
    ad.saved_model.save(Regressor(), str(path))
    assert "__call__" in ad.saved_model.load(str(path)).functions
    assert sorted(os.listdir(tmp_path)) == ["m"]


def test_a_failing_save_keeps_the_old_model_intact(tmp_path):
    path = tmp_path / "m"
    save_guide_module(path, True)
    version = version_of(path)
    before = {name: (version / name).read_bytes() for name in os.listdir(version)}

    class Bad(ad.Module):
        @ad.function(input_signature=[ad.TensorSpec([])])
        def f(self, x):
            return x, object()          # a Python object cannot be saved

    with pytest.raises(ValueError, match="neither a tensor nor a plain Python value"):
        ad.saved_model.save(Bad(), str(path))
    assert version_of(path) == version
    assert {name: (version / name).read_bytes() for name in os.listdir(version)} == before
    assert sorted(os.listdir(tmp_path)) == ["m"]


def test_refuses_to_replace_a_directory_that_is_not_a_saved_model(tmp_path):
    (tmp_path / "notes.txt").write_text("precious")
    with pytest.raises(ValueError, match="not a saved model"):
        save_guide_module(tmp_path, True)
    assert (tmp_path / "notes.txt").read_text() == "precious"


# ---- damaged directories ------------------------------------------------------------

@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "m"
    model = Regressor()
    model(ad.zeros([2, 3]))
    ad.saved_model.save(model, str(path))
    return path


def _edit_json(path, edit):
    document = json.loads((version_of(path) / "saved_model.json").read_text())
    edit(document)
    (version_of(path) / "saved_model.json").write_text(json.dumps(document))


def _first_node(document):
    return document["functions"]["__call__"]["traces"][0]["graph"]["nodes"][0]


def test_missing_directory_and_missing_files_raise_os_errors(tmp_path, saved):
    with pytest.raises(OSError, match="no saved model at"):
        ad.saved_model.load(str(tmp_path / "nowhere"))
    (version_of(saved) / "variables.npz").unlink()
    with pytest.raises(ad.saved_model.MissingFileError, match="variables.npz"):
        ad.saved_model.load(str(saved))


def test_truncated_files_name_the_file(saved):
    npz = (version_of(saved) / "variables.npz").read_bytes()
    (version_of(saved) / "variables.npz").write_bytes(npz[: len(npz) // 2])
    with pytest.raises(ad.saved_model.FormatError, match="variables.npz: cannot be read"):
        ad.saved_model.load(str(saved))
    text = (version_of(saved) / "saved_model.json").read_text()
    (version_of(saved) / "saved_model.json").write_text(text[: len(text) // 2])
    with pytest.raises(ad.saved_model.FormatError, match="saved_model.json: is not valid JSON"):
        ad.saved_model.load(str(saved))


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(version=3), "format version 3 is not supported"),
    (lambda d: d.update(format="something else"), r"\$.format: 'something else' is not"),
    (lambda d: d.pop("variables"), "the key 'variables' is missing"),
    (lambda d: d["variables"][0].update(shape=[9, 9]),
     r"'variable_0.npy' declares 176 bytes uncompressed, but \$.variables\[0\] declares "
     r"shape \[9, 9\]"),
    (lambda d: d["variables"][0].update(array="variable_99"), "'variable_99' is missing"),
    (lambda d: d["variables"][0].update(dtype="float99"), "unknown dtype 'float99'"),
    (lambda d: _first_node(d).update(op="__import__"),
     "op type '__import__' is not registered in this process"),
    (lambda d: _first_node(d).update(inputs=[["node", 5, 0]]), r"points past the 0 node\(s\)"),
    (lambda d: _first_node(d).update(inputs=[["arg", "0"]]),
     r"\$.functions.__call__.traces\[0\].graph.nodes\[0\].inputs\[0\]: .* is not a valid "
     r"reference"),
    (lambda d: _first_node(d).update(params=[]), "expected dict"),
])
def test_tampered_json_is_refused_with_the_file_and_the_problem(saved, edit, message):
    _edit_json(saved, edit)
    with pytest.raises(ad.saved_model.FormatError, match=message) as info:
        ad.saved_model.load(str(saved))
    assert "saved_model.json" in str(info.value) or "variables.npz" in str(info.value)


def test_pickled_arrays_are_refused(saved):
    np.savez(version_of(saved) / "variables.npz", variable_0=np.array([object()], dtype=object))
    with pytest.raises(ad.saved_model.FormatError, match="variables.npz: .*variable_0"):
        ad.saved_model.load(str(saved))


def test_an_op_unknown_to_the_loading_process_is_refused(tmp_path):
    path = tmp_path / "m"
    result = run_fresh(f"""
import autodiff as ad

@ad.primitive("MyCube")
def my_cube(xp, x):
    return x * x * x

class M(ad.Module):
    @ad.function(input_signature=[ad.TensorSpec([])])
    def f(self, x):
        return my_cube(x)

ad.saved_model.save(M(), {str(path)!r})
""")
    assert result.returncode == 0, result.stderr
    with pytest.raises(ValueError, match="op type 'MyCube' is not registered") as info:
        ad.saved_model.load(str(path))
    assert "saved_model.json" in str(info.value)


@ad.custom_gradient
def cube(x):
    def first(dy):
        @ad.custom_gradient
        def first_custom(unused_x):
            return 3.0 * x * x, lambda ddy: ddy * 600.0 * x
        return dy * first_custom(x)
    return x * x * x, first


def second_derivative(fn, value):
    x = ad.constant(value)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        dy = inner.gradient(y, x)
    return dy.numpy(), outer.gradient(dy, x).numpy()


def test_nested_custom_gradients_are_saved_with_their_own_gradient_graphs(tmp_path):
    class M(ad.Module):
        @ad.function(input_signature=[ad.TensorSpec([])])
        def f(self, x):
            return cube(x)

    ad.saved_model.save(M(), str(tmp_path / "m"))
    text = (version_of(tmp_path / "m") / "saved_model.json").read_text()
    assert text.count('"custom_gradient"') == 2        # the grad_fn's own custom gradient
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    assert second_derivative(loaded.f, 3.0) == second_derivative(cube, 3.0) == (27.0, 1800.0)


def test_a_saved_assign_updates_the_loaded_variable_on_every_call(tmp_path):
    class Counter(ad.Module):
        def __init__(self):
            super().__init__()
            self.count = ad.Variable(0.0, trainable=False)

        @ad.function(input_signature=[ad.TensorSpec([], ad.float32)])
        def add(self, amount):
            self.count.assign_add(amount)
            return self.count.read_value()

    counter = Counter()
    ad.saved_model.save(counter, str(tmp_path / "counter"))
    assert counter.count.numpy() == 0.0   # saving traced add without running it
    loaded = ad.saved_model.load(str(tmp_path / "counter"))
    assert loaded.add(ad.constant(2.0)).numpy() == 2.0
    assert loaded.add(ad.constant(3.0)).numpy() == 5.0
    assert [v.numpy() for v in loaded.variables] == [5.0]


def test_the_saving_process_keeps_the_gradient_after_the_module_is_collected(tmp_path):
    # The registry holds it as TensorFlow's does, not through a weak reference.
    import gc
    save_guide_module(tmp_path / "m", custom_gradients=False)
    gc.collect()
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    v = ad.Variable(2.0)
    with ad.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert t.gradient(output, v).numpy() == 2.0
