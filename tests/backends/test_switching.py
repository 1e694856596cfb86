"""Choosing a backend, mixing backends (an error naming both) and moving tensors explicitly."""

import numpy as np
import pytest

import autodiff as ad
from autodiff import backend
from autodiff.errors import InvalidArgumentError


# ---- switching ---------------------------------------------------------------

def test_numpy_is_the_default_backend():
    assert ad.get_backend() == "numpy"
    assert ad.constant(1.0).backend == "numpy"


def test_set_backend_switches_and_new_tensors_follow():
    try:
        ad.set_backend("strict")
        assert ad.get_backend() == "strict"
        assert ad.constant([1.0]).backend == "strict"
        assert ad.zeros([2]).backend == "strict"
        assert ad.random.normal([2]).backend == "strict"
    finally:
        ad.set_backend("numpy")
    assert ad.constant([1.0]).backend == "numpy"


def test_use_backend_restores_the_previous_backend_even_on_error():
    with pytest.raises(RuntimeError, match="inside"):
        with ad.use_backend("strict"):
            assert ad.get_backend() == "strict"
            raise RuntimeError("inside")
    assert ad.get_backend() == "numpy"


def test_use_backend_nests():
    with ad.use_backend("strict"):
        with ad.use_backend("numpy"):
            assert ad.get_backend() == "numpy"
        assert ad.get_backend() == "strict"
    assert ad.get_backend() == "numpy"


def test_an_unknown_backend_is_a_value_error_listing_the_choices():
    with pytest.raises(ValueError, match="'numpy', 'strict', 'cupy'"):
        ad.set_backend("tpu")
    assert ad.get_backend() == "numpy"


def test_cupy_is_refused_with_a_reason_when_no_gpu_is_available():
    if "cupy" in backend.available_backends():
        pytest.skip("a GPU is available here: the refusal cannot be observed")
    with pytest.raises(ValueError, match="CuPy|GPU"):
        ad.set_backend("cupy")
    assert ad.get_backend() == "numpy"


def test_available_backends_always_has_numpy_and_strict():
    assert backend.available_backends()[:2] == ["numpy", "strict"]


# ---- mixing: an error naming both backends -----------------------------------

def _pair():
    host = ad.constant([1.0, 2.0])
    with ad.use_backend("strict"):
        device = ad.constant([3.0, 4.0])
    return host, device


@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: b * a,
                                lambda a, b: ad.concat([a, b], 0), lambda a, b: ad.stack([b, a]),
                                lambda a, b: ad.where(a > 1.0, a, b),
                                lambda a, b: ad.einsum("i,i->", a, b)])
def test_mixing_backends_in_one_op_names_both(op):
    host, device = _pair()
    with pytest.raises(InvalidArgumentError, match=r"on 'numpy' but input #\d is on 'strict'|"
                                                    r"on 'strict' but input #\d is on 'numpy'"):
        op(host, device)


def test_the_mixing_error_names_the_op_and_the_inputs():
    host, device = _pair()
    with pytest.raises(InvalidArgumentError) as info:
        host + device
    assert str(info.value).startswith("AddV2: input #0 is on 'numpy' but input #1 is on 'strict'")
    assert "ad.to_backend" in str(info.value)


def test_an_op_on_tensors_of_an_inactive_backend_says_which_is_active():
    _, device = _pair()
    with pytest.raises(InvalidArgumentError, match="Sin: the inputs are on 'strict' but the "
                                                   "active backend is 'numpy'"):
        ad.sin(device)


def test_assigning_a_tensor_of_another_backend_to_a_variable_raises():
    host, device = _pair()
    v = ad.Variable([0.0, 0.0])
    with pytest.raises(ValueError, match="'strict'.*'numpy'"):
        v.assign(device)
    with pytest.raises(ValueError, match="'strict'.*'numpy'"):
        v.assign_add(device)
    with pytest.raises(ValueError, match="initial value is on backend 'strict'"):
        ad.Variable(device)
    np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])


def test_a_variable_takes_python_values_on_its_own_backend():
    with ad.use_backend("strict"):
        v = ad.Variable([1.0, 2.0])
    v.assign([5.0, 6.0])          # made on 'strict', where v lives
    v.assign_sub(1.0)
    assert v.backend == "strict"
    np.testing.assert_array_equal(v.numpy(), [4.0, 5.0])


# ---- moving explicitly ---------------------------------------------------------

def test_to_backend_copies_to_the_named_backend():
    host, device = _pair()
    moved = ad.to_backend(device, "numpy")
    assert moved.backend == "numpy" and device.backend == "strict"
    np.testing.assert_array_equal(moved.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal((host + moved).numpy(), [4.0, 6.0])
    with ad.use_backend("strict"):
        assert ad.to_backend(host).backend == "strict"   # None: the active backend


def test_to_backend_on_the_same_backend_returns_the_tensor_itself():
    host, _ = _pair()
    assert ad.to_backend(host, "numpy") is host


def test_gradients_flow_back_through_a_move_to_the_source_backend():
    _, device = _pair()
    with ad.GradientTape() as tape:
        tape.watch(device)
        y = ad.reduce_sum(ad.to_backend(device, "numpy") ** 2)
    grad = tape.gradient(y, device)
    assert grad.backend == "strict"
    np.testing.assert_array_equal(grad.numpy(), [6.0, 8.0])


def test_a_move_is_on_the_tape_and_forward_mode_moves_the_tangent():
    _, device = _pair()
    with ad.GradientTape() as tape:
        tape.watch(device)
        y = ad.to_backend(device, "numpy")
    assert [r.op_type for r in tape.records] == ["ToBackend"]
    tangent = ad.to_backend(ad.constant([1.0, 0.0]), "strict")
    with ad.autodiff.ForwardAccumulator(device, tangent) as acc:
        y = ad.to_backend(device, "numpy") * 3.0
    jvp = acc.jvp(y)
    assert jvp.backend == "numpy"
    np.testing.assert_array_equal(jvp.numpy(), [3.0, 0.0])


def test_a_tape_recorded_on_one_backend_gives_gradients_outside_its_block():
    with ad.use_backend("strict"):
        x = ad.constant([[1.0], [2.0]])
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = ad.sin(x) * 0.5 + x * x
    assert ad.get_backend() == "numpy"
    grad = tape.gradient(y, x)
    assert grad.backend == "strict"
    np.testing.assert_allclose(grad.numpy(), 0.5 * np.cos([[1.0], [2.0]]) + [[2.0], [4.0]],
                               rtol=1e-6)
    assert tape.jacobian(y, x).backend == "strict"
    assert tape.batch_jacobian(y, x).backend == "strict"


# ---- the host: explicit copies only ------------------------------------------------

def test_numpy_and_printing_copy_a_strict_tensor_to_the_host_explicitly(strict):
    t = ad.constant([1.5, 2.5])
    host = t.numpy()
    assert type(host) is np.ndarray
    host[0] = 99.0
    assert t.numpy()[0] == 1.5
    assert str(t) == "ad.Tensor([1.5 2.5], shape=(2,), dtype=float32)"
    assert "numpy=array([1.5, 2.5]" in repr(t)
    assert float(t[0]) == 1.5 and f"{t[1]:.1f}" == "2.5"


def test_numpy_may_read_a_numpy_tensor_but_not_a_strict_one():
    host, device = _pair()
    np.testing.assert_array_equal(np.asarray(host), [1.0, 2.0])   # as TensorFlow allows
    with pytest.raises(TypeError, match=r"Implicit conversion.*\.numpy\(\)"):
        np.asarray(device)
