"""ad.name_scope (tf.name_scope in eager mode) and the scope each TapeRecord carries."""

import threading

import numpy as np
import pytest

import autodiff as ad
from autodiff.tape import thread_state


def test_nested_scopes_join_with_slashes_and_return_the_full_name():
    with ad.name_scope("a") as a:
        with ad.name_scope("b") as b:
            assert thread_state.scope == "a/b"
        with ad.name_scope("c/") as absolute:
            assert thread_state.scope == "c"
        with ad.name_scope("") as top:
            assert thread_state.scope == ""
        assert thread_state.scope == "a"
    assert (a, b, absolute, top) == ("a/", "a/b/", "c/", "")
    assert thread_state.scope == ""


def test_name_scope_rejects_a_name_that_is_not_a_string():
    with pytest.raises(ValueError, match="must be a string"):
        ad.name_scope(3)


def test_scope_is_restored_when_the_block_raises():
    with pytest.raises(KeyError):
        with ad.name_scope("a"):
            raise KeyError("x")
    assert thread_state.scope == ""


def test_records_carry_the_scope_their_op_ran_in():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        with ad.name_scope("block"):
            z = ad.sin(y)
            with ad.name_scope("inner"):
                w = z + 1.0
        out = ad.reduce_sum(w)
    assert [r.scope for r in tape.records] == ["", "block", "block/inner", ""]
    assert "v3 = Sin(v2)  # block\n" in str(tape)
    assert tape.records[1]._asdict()["scope"] == "block"
    np.testing.assert_allclose(tape.gradient(out, x).numpy(), 2 * np.cos([2.0, 4.0]), rtol=1e-6)


def test_layers_and_modules_record_inside_their_own_scope():
    class Model(ad.Module):
        def __init__(self):
            super().__init__(name="model")
            self.hidden = ad.layers.Dense(3, activation="relu", name="hidden")
            self.out = ad.layers.Dense(1, name="out")

        def __call__(self, x):
            return self.out(self.hidden(x))

    model = Model()
    x = ad.ones([2, 4])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    scopes = [(r.op_type, r.scope) for r in tape.records]
    assert scopes == [("MatMul", "model/hidden"), ("AddV2", "model/hidden"),
                      ("Relu", "model/hidden"), ("MatMul", "model/out"), ("AddV2", "model/out")]
    assert y.shape == (2, 1)


def test_a_subclass_calling_super_call_does_not_repeat_its_scope():
    class Scaled(ad.layers.Dense):
        def __call__(self, inputs):
            return super().__call__(inputs) * 2.0

    layer = Scaled(2, name="scaled")
    x = ad.ones([1, 3])
    with ad.GradientTape() as tape:
        tape.watch(x)
        layer(x)
    assert {r.scope for r in tape.records} == {"scaled"}


def test_module_name_scope_and_with_name_scope():
    class Scaler(ad.Module):
        @ad.Module.with_name_scope
        def scale(self, x):
            return x * 3.0

    m = Scaler()
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        m.scale(x)
        with m.name_scope as s:
            ad.sin(x)
    assert s == "scaler/"
    assert [r.scope for r in tape.records] == ["scaler", "scaler"]


def test_each_thread_has_its_own_scope():
    seen = {}
    started = threading.Event()
    release = threading.Event()

    def worker():
        seen["start"] = thread_state.scope
        started.set()
        release.wait(5)
        seen["end"] = thread_state.scope

    with ad.name_scope("main"):
        t = threading.Thread(target=worker)
        t.start()
        started.wait(5)
        release.set()
        t.join(5)
    assert seen == {"start": "", "end": ""}
