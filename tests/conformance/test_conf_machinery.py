"""The conformance machinery itself: comparison, error families, generator, shrinker.

If the harness could not tell two results apart, every conformance test
would pass; these tests make sure it can.
"""

import numpy as np

import autodiff as ad

from . import programs
from .harness import Arr, Raised, differences, error_family, normalize
from .shrink import shrink, size


def test_differences_see_dtype_shape_value_and_none(tf):
    a = normalize(ad.constant([1.0, 2.0]))
    assert differences(a, normalize(tf.constant([1.0, 2.0]))) == []
    assert differences(a, normalize(tf.constant([1.0, 2.0], dtype=tf.float64)))
    assert differences(a, normalize(tf.constant([[1.0, 2.0]])))
    assert differences(a, normalize(tf.constant([1.0, 2.1])))
    assert differences([a, None], [a, a])
    assert differences({"k": a}, {"j": a})
    nan = normalize(ad.constant([np.nan, np.inf]))
    assert differences(nan, normalize(tf.constant([np.nan, np.inf]))) == []
    assert differences(nan, normalize(tf.constant([np.nan, -np.inf])))


def test_error_families_pair_ad_and_tf_errors(tf):
    assert error_family(ad.errors.InvalidArgumentError("x")) == "InvalidArgument"
    assert error_family(tf.errors.InvalidArgumentError(None, None, "x")) == "InvalidArgument"
    assert error_family(ValueError("x")) == "InvalidArgument"
    assert error_family(TypeError("x")) == "TypeError"
    assert error_family(AttributeError("x")) == "AttributeError"
    assert differences(Raised("TypeError", ""), Raised("InvalidArgument", ""))
    assert differences(Raised("TypeError", "a"), Raised("TypeError", "b")) == []


def test_indexed_slices_become_dense(tf):
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.gather(x, [0, 0])
    got = normalize(t.gradient(y, x))
    assert isinstance(got, Arr) and got.value.tolist() == [2.0, 0.0, 0.0]


def test_generator_is_deterministic_and_valid(tf):
    for seed in range(30):
        spec = programs.generate(tf, seed)
        assert spec == programs.generate(tf, seed)
        programs.infer_shapes(tf, spec)  # TensorFlow accepts it
        assert spec["ops"] and spec["inputs"]


def test_shrinker_reaches_a_one_op_repro_that_runs(tf):
    # a stand-in mismatch: "the program uses sin"; the shrinker must keep only that
    def uses_sin(spec):
        return any(op["op"] == "sin" for op in spec["ops"])

    spec = next(s for s in (programs.generate(tf, 7000 + k, n_ops=5, must_use="sin")
                            for k in range(50)) if len(s["ops"]) >= 3)
    small = shrink(tf, spec, uses_sin)
    assert [op["op"] for op in small["ops"]] == ["sin"]
    assert size(small) < size(spec)
    assert all(d <= 1 for inp in small["inputs"] for d in inp["shape"])
    scope = {}
    exec(compile(programs.to_code(small), "<repro>", "exec"), scope)  # noqa: S102
    assert "tape" in scope or "acc" in scope or "outer" in scope
