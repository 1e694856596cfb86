"""``ad.recompute_grad``: the same values and gradients as the plain function, less on the tape.

TensorFlow's behaviour is compared in tests/conformance/test_conf_recompute.py;
these tests pin what the engine does on its own: the memory effect (counted
with the tape's records), the calls of ``f``, tracing and compiling, errors.
"""

import numpy as np
import pytest

import autodiff as ad


def _chain(x, depth=10):
    for _ in range(depth):
        x = ad.tanh(x) * 1.5
    return x


def _value_and_grads(f, x, variables=()):
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_sum(f(x))
    return y, tape.gradient(y, [x, *variables])


def _assert_close(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_values_and_gradients_equal_the_plain_function():
    x = ad.constant(np.linspace(-1.0, 1.0, 300, dtype=np.float32))
    plain = _value_and_grads(_chain, x)
    checkpointed = _value_and_grads(ad.recompute_grad(_chain), x)
    _assert_close(plain[0], checkpointed[0])
    _assert_close(plain[1][0], checkpointed[1][0])


def test_the_call_is_one_record_and_keeps_a_tenth_of_the_arrays():
    x = ad.ones([1000])
    with ad.GradientTape() as plain:
        plain.watch(x)
        _chain(x)
    with ad.GradientTape() as checkpointed:
        checkpointed.watch(x)
        ad.recompute_grad(_chain)(x)
    assert len(plain.records) == 20
    assert [r.op_type for r in checkpointed.records] == ["_chain"]
    kept_plain = ad.debugging.tape_memory(plain)
    kept = ad.debugging.tape_memory(checkpointed)
    # Tanh keeps its output (10 arrays of 4000 bytes), Mul its inputs (the same arrays, and
    # the 4-byte 1.5, one array for all ten); the checkpointed record keeps only the result.
    assert kept_plain.bytes == 10 * 4000 + 4 and kept_plain.arrays == 11
    assert kept.bytes == 4000 and kept.arrays == 1


def test_the_function_runs_again_in_the_backward_pass_only():
    calls = []

    def block(x):
        calls.append(1)
        return ad.sin(x) * x

    checkpointed = ad.recompute_grad(block)
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_sum(checkpointed(checkpointed(checkpointed(x))))
    assert len(calls) == 3
    tape.gradient(y, x)
    assert len(calls) == 6


def test_variables_read_inside_get_their_gradients_and_are_watched():
    w = ad.Variable([0.5, -2.0], name="w")
    f = ad.recompute_grad(lambda x: ad.sin(x * w))
    x = ad.constant([1.0, 3.0])
    with ad.GradientTape() as tape:
        y = ad.reduce_sum(f(x))
    assert tape.watched_variables() == (w,)
    dx, dw = tape.gradient(y, [x, w])
    assert dx is None   # x was never watched
    np.testing.assert_allclose(dw.numpy(), np.cos([0.5, -6.0]) * [1.0, 3.0], rtol=1e-6)


def test_a_captured_constant_gets_none_and_an_argument_gets_its_gradient():
    c = ad.constant(2.0)
    f = ad.recompute_grad(lambda x: x * c)
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch([x, c])
        y = f(x)
    dx, dc = tape.gradient(y, [x, c])
    assert float(dx) == 2.0 and dc is None


def test_nested_arguments_keyword_arguments_several_outputs_and_integers():
    f = ad.recompute_grad(lambda d, n, scale=1.0: (d["a"] * d["b"] * scale,
                                                   d["a"] * ad.cast(n, ad.float32)))
    a, b = ad.constant([1.0, 2.0]), ad.constant([3.0, 4.0])
    with ad.GradientTape() as tape:
        tape.watch([a, b])
        y, z = f({"a": a, "b": b}, ad.constant(5), scale=2.0)
    np.testing.assert_allclose(y.numpy(), [6.0, 16.0])
    da, db = tape.gradient([y, z], [a, b])
    np.testing.assert_allclose(da.numpy(), [2 * 3.0 + 5, 2 * 4.0 + 5])
    np.testing.assert_allclose(db.numpy(), [2.0, 4.0])


def test_an_unused_output_and_output_gradients():
    f = ad.recompute_grad(lambda x: (ad.sin(x), x * 10.0))
    x = ad.constant([0.0, 1.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        s, _ = f(x)
    g = tape.gradient(s, x, output_gradients=ad.constant([2.0, 3.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 3.0 * np.cos(1.0)], rtol=1e-6)


def test_persistent_tape_jacobian_and_batch_jacobian():
    f = ad.recompute_grad(lambda x: ad.sin(x) * 2.0)
    x = ad.constant([[0.0, 1.0], [2.0, 3.0]])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    first, second = tape.gradient(y, x), tape.gradient(y, x)
    _assert_close(first, second)
    np.testing.assert_allclose(first.numpy(), 2 * np.cos(x.numpy()), rtol=1e-6)
    batch = tape.batch_jacobian(y, x)
    full = tape.jacobian(y, x)
    np.testing.assert_allclose(batch.numpy(), np.einsum("bxby->bxy", full.numpy()))


def _first_and_second(f, x, *more_sources):
    """f'(x) from an inner tape, and its gradient for [x, *more_sources] from an outer one."""
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    return dy, outer.gradient(dy, [x, *more_sources])


def test_second_derivative_through_nested_tapes():
    dy, (d2x,) = _first_and_second(ad.recompute_grad(lambda x: x ** 3), ad.constant(2.0))
    assert (float(dy), float(d2x)) == (12.0, 12.0)


def test_second_derivative_with_a_variable_both_tapes_watch():
    # TensorFlow raises NotImplementedError here (test_conf_documented_differences.py); the
    # plain function's derivative is the right answer, and that is what comes out.
    w = ad.Variable(3.0)
    dy, (d2x, dxdw) = _first_and_second(ad.recompute_grad(lambda x: x * x * w),
                                        ad.constant(2.0), w)
    assert (float(dy), float(d2x), float(dxdw)) == (12.0, 6.0, 4.0)


def test_forward_mode_gives_the_plain_jvp():
    w = ad.Variable([0.5, 3.0])
    plain = lambda x: ad.reduce_sum(ad.sin(x * w) * x)  # noqa: E731
    x, v = ad.constant([1.0, 2.0]), ad.constant([1.0, -1.0])
    results = []
    for f in (plain, ad.recompute_grad(plain)):
        with ad.autodiff.ForwardAccumulator(x, v) as acc:
            y = f(x)
        results.append(acc.jvp(y))
    _assert_close(*results)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_inside_a_traced_function_compiled_or_not(jit_compile):
    w = ad.Variable([0.5, 3.0])
    block = ad.recompute_grad(lambda x: ad.reduce_sum(ad.sin(x * w) * x))

    def step(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = block(x)
        return y, tape.gradient(y, [x, w])

    x = ad.constant([1.0, 2.0])
    eager = step(x)
    traced = ad.function(step, jit_compile=jit_compile)(x)
    _assert_close(eager[0], traced[0])
    for a, b in zip(eager[1], traced[1]):
        _assert_close(a, b)


def test_a_traced_checkpointed_function_differentiates_under_a_tape():
    block = ad.function(ad.recompute_grad(lambda x: ad.tanh(x) * x))
    x = ad.constant([0.5, -1.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = block(x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), t + x.numpy() * (1 - t * t),
                               rtol=1e-6)


def test_a_saved_and_loaded_checkpointed_function_keeps_its_gradient(tmp_path):
    class Model(ad.Module):
        def __init__(self):
            super().__init__()
            self.w = ad.Variable([0.5, 2.0])
            self.block = ad.recompute_grad(lambda x: ad.reduce_sum(ad.sin(x * self.w)))

        @ad.function(input_signature=[ad.TensorSpec([2])])
        def __call__(self, x):
            return self.block(x)

    model = Model()
    ad.saved_model.save(model, str(tmp_path), options=ad.saved_model.SaveOptions(
        experimental_custom_gradients=True))
    results = []
    for f in (model, ad.saved_model.load(str(tmp_path))):
        x = ad.constant([1.0, 2.0])
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        results.append((y, tape.gradient(y, x)))
    for a, b in zip(*results):
        _assert_close(a, b)
    np.testing.assert_allclose(results[1][1].numpy(), np.cos([0.5, 4.0]) * [0.5, 2.0], rtol=1e-6)


def test_on_a_method_self_is_bound_not_an_input():
    class Scale(ad.Module):
        def __init__(self):
            super().__init__()
            self.w = ad.Variable(2.0)

        @ad.recompute_grad
        def __call__(self, x):
            return x * self.w

    model, x = Scale(), ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    assert [float(g) for g in tape.gradient(y, [x, model.w])] == [2.0, 3.0]


def test_keeps_the_name_and_docstring():
    def block(x):
        """A block."""
        return x

    wrapped = ad.recompute_grad(block)
    assert wrapped.__name__ == "block" and wrapped.__doc__ == "A block."
    assert wrapped.__wrapped__ is block


def test_other_recorders_keep_their_order():
    # The forward pass pauses the tapes and puts them back in the same order.
    x = ad.constant(1.0)
    with ad.GradientTape() as first, ad.GradientTape() as second:
        first.watch(x)
        second.watch(x)
        before = list(ad.tape.thread_state.active)
        ad.recompute_grad(ad.sin)(x)
        assert ad.tape.thread_state.active == before


@pytest.mark.parametrize("bad", [3, None, "f"])
def test_something_not_callable_is_a_type_error(bad):
    with pytest.raises(TypeError, match="recompute_grad takes a function"):
        ad.recompute_grad(bad)
