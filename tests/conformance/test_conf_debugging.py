"""``ad.debugging.check_numerics`` against ``tf.debugging.check_numerics``.

What must agree: which inputs raise, the words that say why ("Tensor had NaN
values", "Inf", "Inf and NaN"), the gradient passing through unchanged and
being checked itself, integer inputs refused, and inside a traced function a
check whose result is unused still running.
"""

import numpy as np
import pytest

import autodiff as ad


def _error_of(m, errors, run):
    try:
        run()
    except errors as err:
        return str(err)
    return None


@pytest.mark.parametrize("values, words", [([1.0, np.nan], "Tensor had NaN values"),
                                           ([np.inf, 1.0], "Tensor had Inf values"),
                                           ([-np.inf, np.nan], "Tensor had Inf and NaN values"),
                                           ([1.0, -2.0], None)])
def test_check_numerics_raises_on_the_same_inputs_with_the_same_words(tf, values, words):
    for m, errors in ((tf, tf.errors.InvalidArgumentError), (ad, ad.errors.InvalidArgumentError)):
        message = _error_of(m, errors, lambda: m.debugging.check_numerics(
            m.constant(values, dtype=m.float32), "my check"))
        if words is None:
            assert message is None
        else:
            assert message is not None and "my check : " + words in message, (m.__name__, message)


def test_check_numerics_passes_the_value_and_the_gradient_through(tf):
    for m in (tf, ad):
        x = m.Variable([1.0, 2.0])
        with m.GradientTape() as tape:
            y = m.debugging.check_numerics(x * 3.0, "ok") ** 2
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [18.0, 36.0])
        np.testing.assert_allclose(m.debugging.check_numerics(x, "ok").numpy(), [1.0, 2.0])


def test_check_numerics_checks_the_gradient_too(tf):
    for m, errors in ((tf, tf.errors.InvalidArgumentError), (ad, ad.errors.InvalidArgumentError)):
        x = m.Variable([1.0, 2.0])
        with m.GradientTape() as tape:
            y = m.debugging.check_numerics(x * 2.0, "forward") * np.inf
        message = _error_of(m, errors, lambda: tape.gradient(y, x))
        assert message is not None
        assert "detected in gradient" in message and "Tensor had Inf values" in message


def test_check_numerics_refuses_integers(tf):
    for m, errors in ((tf, tf.errors.InvalidArgumentError), (ad, ad.errors.InvalidArgumentError)):
        assert _error_of(m, errors, lambda: m.debugging.check_numerics(
            m.constant([1, 2]), "ints")) is not None


@pytest.mark.parametrize("jit", [False, True])
def test_an_unused_check_in_a_traced_function_still_runs(tf, jit):
    def body(m):
        def f(a):
            m.debugging.check_numerics(a, "unused")
            return a + 1.0
        return f

    tf_f, ad_f = tf.function(body(tf)), ad.function(body(ad), jit_compile=jit)
    for m, f, errors in ((tf, tf_f, tf.errors.InvalidArgumentError),
                         (ad, ad_f, ad.errors.InvalidArgumentError)):
        np.testing.assert_allclose(f(m.constant([1.0])).numpy(), [2.0])
        message = _error_of(m, errors, lambda: f(m.constant([np.nan])))
        assert message is not None and "unused : Tensor had NaN values" in message
