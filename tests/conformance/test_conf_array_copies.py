"""A NumPy array handed to the library is copied, as TensorFlow 2 copies it: writing to
the user's array afterwards changes no tensor made from it (``constant``,
``convert_to_tensor``, an op's argument), no gradient of a tape that saved it, and no
traced function that captured it (the trace keeps the values it saw, eager, in
``ad.function`` and with ``jit_compile=True``, as ``tf.function`` does)."""

import numpy as np
import pytest

import autodiff as ad

MAKERS = {"constant": lambda xp, a: xp.constant(a),
          "convert_to_tensor": lambda xp, a: xp.convert_to_tensor(a),
          "op argument": lambda xp, a: xp.identity(a),
          "Variable": lambda xp, a: xp.Variable(a)}


@pytest.mark.parametrize("make", sorted(MAKERS))
def test_a_tensor_keeps_the_values_it_was_made_from(tf, make):
    for xp in (tf, ad):
        a = np.array([1.0, 2.0, 3.0], np.float32)
        tensor = MAKERS[make](xp, a)
        a *= 5
        np.testing.assert_array_equal(tensor.numpy(), [1.0, 2.0, 3.0], err_msg=xp.__name__)


def test_a_tape_differentiates_at_the_values_it_saw(tf):
    got = {}
    for xp in (tf, ad):
        a = np.array([0.5, 1.0], np.float32)
        x = xp.Variable([2.0, 3.0])
        with xp.GradientTape() as tape:
            y = xp.reduce_sum(xp.sin(x * a))   # the tape saves a (as a tensor) for the gradient
        a[:] = 100.0
        got[xp.__name__] = tape.gradient(y, x).numpy()
    want = np.float32([0.5, 1.0]) * np.cos(np.float32([1.0, 3.0]))
    np.testing.assert_allclose(got["autodiff"], want, rtol=1e-6)
    np.testing.assert_allclose(got["autodiff"], got["tensorflow"], rtol=1e-6)


@pytest.mark.parametrize("jit_compile", [False, True], ids=["function", "jit_compile"])
def test_a_trace_keeps_a_captured_array_as_it_was_when_traced(tf, jit_compile):
    results = {}
    for xp in (tf, ad):
        b = np.ones(3, np.float32)
        f = xp.function(lambda x: x * 2.0 + b, jit_compile=jit_compile and xp is ad)
        first = f(xp.constant([1.0, 1.0, 1.0])).numpy()
        b *= 7
        results[xp.__name__] = (first, f(xp.constant([1.0, 1.0, 1.0])).numpy())
    for name, (first, second) in results.items():
        np.testing.assert_array_equal(first, [3.0, 3.0, 3.0], err_msg=name)
        np.testing.assert_array_equal(second, [3.0, 3.0, 3.0], err_msg=name)
