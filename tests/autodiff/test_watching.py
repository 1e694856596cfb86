"""Only what a tape watches can receive a gradient from it (TensorFlow 2's rule).

A tape watches: tensors passed to ``watch``, trainable Variables read while it
records, and the outputs of the ops it records. An unwatched constant that
feeds a recorded op directly still gets None. The expected values below were
checked against TensorFlow 2.21; tests/conformance runs the same code on both.
"""

import numpy as np
import pytest

import autodiff as ad


def x_times_unwatched_constant(persistent=True):
    x = ad.constant(3.0)
    c = ad.constant(5.0)
    with ad.GradientTape(persistent=persistent) as tape:
        tape.watch(x)
        y = x * c
    return tape, x, c, y


def test_an_unwatched_constant_feeding_a_recorded_op_gets_no_gradient():
    tape, x, c, y = x_times_unwatched_constant()
    dx, dc = tape.gradient(y, [x, c])
    assert float(dx) == 5.0
    assert dc is None


def test_unconnected_zero_gives_zeros_for_an_unwatched_constant():
    tape, x, c, y = x_times_unwatched_constant()
    dx, dc = tape.gradient(y, [x, c], unconnected_gradients="zero")
    assert float(dx) == 5.0
    assert dc.dtype == ad.float32 and float(dc) == 0.0


def test_jacobian_of_an_unwatched_constant_is_none_or_zeros():
    x = ad.constant([1.0, 2.0])
    c = ad.constant([3.0, 4.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    jx, jc = tape.jacobian(y, [x, c])
    np.testing.assert_array_equal(jx.numpy(), np.diag([3.0, 4.0]))
    assert jc is None
    jc_zero = tape.jacobian(y, c, unconnected_gradients="zero")
    np.testing.assert_array_equal(jc_zero.numpy(), np.zeros((2, 2)))


def test_batch_jacobian_of_an_unwatched_constant_is_zeros():
    x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    c = ad.constant([[5.0, 6.0], [7.0, 8.0]])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    np.testing.assert_array_equal(tape.batch_jacobian(y, c).numpy(), np.zeros((2, 2, 2)))
    np.testing.assert_array_equal(tape.batch_jacobian(y, x).numpy(),
                                  [np.diag([5.0, 6.0]), np.diag([7.0, 8.0])])


def test_a_constant_watched_only_by_the_inner_tape_has_no_second_derivative():
    x = ad.constant(2.0)
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0
    assert outer.gradient(dy, x) is None


def test_the_target_itself_is_its_own_gradient_even_unwatched():
    c = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        pass
    np.testing.assert_array_equal(tape.gradient(c, c).numpy(), [1.0, 1.0])


def test_stop_gradient_output_is_not_watched_but_ones_like_output_is():
    x = ad.constant([1.0, -2.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        stopped = ad.stop_gradient(x)
        ones = ad.ones_like(x)
        zeros = ad.zeros_like(x)
        z_stopped, z_ones, z_zeros = stopped * 2.0, ones * 2.0, zeros * 2.0
    assert tape.gradient(z_stopped, stopped) is None
    np.testing.assert_array_equal(tape.gradient(z_ones, ones).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(tape.gradient(z_zeros, zeros).numpy(), [2.0, 2.0])
    # No gradient flows through ones_like / zeros_like to x.
    assert tape.gradient(z_ones, x) is None
    assert [r.op_type for r in tape.records][:3] == ["StopGradient", "OnesLike", "ZerosLike"]


@pytest.mark.parametrize("target_shape,source_shape", [((2,), (2, 2)), ((2, 2), (2,)), ((2,), (2,))])
def test_batch_jacobian_needs_rank_two_target_and_source(target_shape, source_shape):
    x = ad.ones(source_shape)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.ones(target_shape) * ad.reduce_sum(x)
    with pytest.raises(ValueError, match="rank at least 2"):
        tape.batch_jacobian(y, x)


def test_an_integer_source_gets_integer_zeros_with_unconnected_zero():
    # TensorFlow 2.21: the integer source is unconnected, and 'zero' fills it with int32 zeros.
    x = ad.constant([1, 2])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2
    with pytest.warns(ad.AutodiffWarning, match="returning zeros"):
        g = tape.gradient(y, x, unconnected_gradients="zero")
    assert g.dtype == ad.int32 and g.numpy().tolist() == [0, 0]
    with pytest.warns(ad.AutodiffWarning, match="returning None"):
        assert tape.gradient(y, x) is None
