"""Assigning through a slice of a Variable (``v[1:3].assign(...)``) against TensorFlow 2:
the new values eagerly, in a traced function and compiled; the return value (the whole
variable); the error classes for a part of the wrong shape or dtype; and gradients
through a read of a slice. ``assign_add``/``assign_sub`` on a slice are extensions
(TensorFlow's slices have only ``assign``): they are checked against TensorFlow's
``v[key].assign(v[key] + delta)``."""

import numpy as np
import pytest

import autodiff as ad

# (initial value, key, new part)
CASES = {
    "1-D int index": ([1.0, 2.0, 3.0, 4.0], 0, 5.0),
    "1-D negative index": ([1.0, 2.0, 3.0, 4.0], -1, 9.0),
    "1-D range": ([1.0, 2.0, 3.0, 4.0], slice(1, 3), [7.0, 8.0]),
    "1-D negative step": ([1.0, 2.0, 3.0, 4.0], slice(None, None, -2), [10.0, 20.0]),
    "1-D scalar broadcast": ([1.0, 2.0, 3.0, 4.0], slice(1, None), 0.5),
    "2-D column": ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], (slice(None), 1), [9.0, 8.0]),
    "2-D row with ellipsis": ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], (0, Ellipsis), [7.0, 8.0, 9.0]),
    "2-D negative and step": ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], (-1, slice(None, None, 2)),
                              [[0.0, -1.0]][0]),
    "2-D block, row broadcast": ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                                 (slice(None), slice(1, None)), [1.0, 2.0]),
    "3-D ellipsis last": (np.arange(24.0).reshape(2, 3, 4).tolist(), (Ellipsis, -2), 0.0),
    "new axis": ([1.0, 2.0, 3.0, 4.0], (None, slice(0, 2)), [[3.0, 4.0]]),
}
MODES = ["eager", "function", "jit_compile"]


def _run(m, mode, body):
    if mode == "eager":
        return body()
    return m.function(body, jit_compile=(mode == "jit_compile"))()


def _sliced(m, mode, initial, key, value, how):
    v = m.Variable(initial)

    def body():
        if how == "assign":
            return v[key].assign(value)
        delta = m.constant(value, m.float32)
        # TensorFlow's slices have no assign_add: the same update written out
        if m is ad:
            return getattr(v[key], how)(delta)
        return v[key].assign(v[key] + delta if how == "assign_add" else v[key] - delta)

    result = _run(m, mode, body)
    return np.asarray(result.numpy()), v.numpy()


def _xla_refuses(initial, key, value):
    long_step = any(isinstance(k, slice) and k.step not in (None, 1, -1)
                    for k in (key if isinstance(key, tuple) else (key,)))
    return long_step or np.shape(value) != np.asarray(initial)[key].shape


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["assign", "assign_add", "assign_sub"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_sliced_assign_gives_tensorflows_values_and_returns_the_whole_variable(tf, case, how,
                                                                                mode):
    initial, key, value = CASES[case]
    # XLA refuses TensorFlow's sliced assign with a step other than 1 or -1 or a part that
    # must be broadcast (UnimplementedError); ad compiles both, so TF runs traced there
    tf_mode = "function" if mode == "jit_compile" and _xla_refuses(initial, key, value) else mode
    tf_result, tf_after = _sliced(tf, tf_mode, initial, key, value, how)
    ad_result, ad_after = _sliced(ad, mode, initial, key, value, how)
    np.testing.assert_array_equal(ad_after, tf_after)
    np.testing.assert_array_equal(ad_result, tf_result)
    assert ad_result.shape == np.shape(initial)


def test_the_eager_return_value_is_the_variable_itself(tf):
    v = ad.Variable([1.0, 2.0, 3.0])
    assert v[0].assign(5.0) is v
    assert v[0].assign(6.0, read_value=False) is None
    np.testing.assert_array_equal(v.numpy(), [6.0, 2.0, 3.0])
    t = tf.Variable([1.0, 2.0, 3.0])
    assert repr(t[0].assign(5.0).numpy()) == repr(ad.Variable([1.0, 2.0, 3.0])[0].assign(5.0).numpy())


BAD = {"too many elements": ([1.0, 2.0, 3.0, 4.0], slice(1, 3), lambda m: [1.0, 2.0, 3.0]),
       "a matrix for a row": ([[1.0, 2.0], [3.0, 4.0]], 0, lambda m: [[1.0], [2.0], [3.0]]),
       "an int tensor": ([1.0, 2.0, 3.0, 4.0], slice(1, 3), lambda m: m.constant([1, 2])),
       "a float64 tensor": ([1.0, 2.0, 3.0, 4.0], 0, lambda m: m.constant(1.0, m.float64)),
       "fractions for ints": ([1, 2, 3], slice(0, 2), lambda m: [1.5, 2.0])}


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_part_of_the_wrong_shape_or_dtype_raises_tensorflows_error_class(tf, bad, mode):
    initial, key, make = BAD[bad]
    errors = {}
    for m in (tf, ad):
        v = m.Variable(initial)
        with pytest.raises(Exception) as info:   # noqa: PT011 - the class is compared below
            _run(m, mode, lambda: v[key].assign(make(m)))
        np.testing.assert_array_equal(v.numpy(), initial)   # nothing was written
        errors[m] = info.value
    tf_class = type(errors[tf])
    if tf_class.__name__ == "InvalidArgumentError":
        assert isinstance(errors[ad], ad.errors.InvalidArgumentError)
    else:
        assert isinstance(errors[ad], tf_class), (errors[tf], errors[ad])


def test_a_read_of_a_slice_sends_its_gradient_to_the_variable(tf):
    grads = {}
    for m in (tf, ad):
        w = m.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        with m.GradientTape() as tape:
            y = m.reduce_sum(w[:, 1:] * w[-1, 1:]) + 3.0 * w[0, 0]
        grads[m] = tape.gradient(y, w).numpy()
    np.testing.assert_allclose(grads[ad], grads[tf])


def test_snapshots_read_before_a_sliced_assign_keep_their_values():
    v = ad.Variable([1.0, 2.0, 3.0])
    before, part = v.read_value(), v[1:]
    v[1:].assign([0.0, 0.0])
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(part.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 0.0, 0.0])


def test_an_optimizer_steps_a_variable_after_a_traced_sliced_assign(tf):
    results = {}
    for m in (tf, ad):
        v = m.Variable([1.0, 2.0, 3.0])
        opt = m.keras.optimizers.SGD(0.5)

        @m.function
        def step():
            v[0].assign(10.0)
            with m.GradientTape() as tape:
                loss = m.reduce_sum(v * v)
            opt.apply_gradients([(tape.gradient(loss, v), v)])
            return loss

        losses = [float(step()) for _ in range(2)]
        results[m] = (losses, v.numpy())
    np.testing.assert_allclose(results[ad][0], results[tf][0])
    np.testing.assert_allclose(results[ad][1], results[tf][1])


def test_a_key_computed_in_a_traced_function_is_refused_with_what_is_supported():
    v = ad.Variable([1.0, 2.0, 3.0])

    @ad.function
    def put(i):
        return v[i].assign(0.0)

    with pytest.raises(TypeError, match="known when tracing"):
        put(ad.constant(1))


def test_a_saved_model_replays_a_sliced_assign(tmp_path):
    class Holder(ad.Module):
        def __init__(self):
            self.v = ad.Variable([1.0, 2.0, 3.0])

        @ad.function(input_signature=[ad.TensorSpec([2], ad.float32)])
        def put(self, x):
            self.v[1:].assign_add(x)
            return self.v.read_value()

    ad.saved_model.save(Holder(), str(tmp_path))
    loaded = ad.saved_model.load(str(tmp_path))
    np.testing.assert_array_equal(loaded.put(ad.constant([7.0, 8.0])).numpy(), [1.0, 9.0, 11.0])
    np.testing.assert_array_equal(loaded.put(ad.constant([1.0, 1.0])).numpy(), [1.0, 10.0, 12.0])
