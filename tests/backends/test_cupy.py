"""CuPy on a real GPU (marker ``gpu``): skipped only where no GPU is lent.

Where CuPy works, ``tests/autodiff/conftest.py`` also runs the whole engine
suite on it (the ``[cupy]`` runs); these tests check what only a real
device shows: the arrays' type, the copies, and NumPy agreement.
"""

import numpy as np
import pytest

import autodiff as ad

pytestmark = pytest.mark.gpu


def test_tensors_made_on_cupy_hold_cupy_arrays(cupy):
    x = ad.constant([1.0, 2.0])
    y = ad.reduce_sum(ad.sin(x) * x)
    assert type(x._value) is cupy.ndarray and type(y._value) is cupy.ndarray
    assert x.backend == y.backend == "cupy"


def test_gradients_on_the_gpu_match_numpy(cupy):
    values = np.random.default_rng(0).standard_normal((4, 3))
    results = {}
    for name in ("numpy", "cupy"):
        with ad.use_backend(name):
            x = ad.constant(values)
            w = ad.Variable(np.ones((3, 2)) / 3)
            with ad.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = ad.nn.gelu(x @ w)
                loss = ad.reduce_sum(ad.nn.softmax(y) * y)
            grads = tape.gradient(loss, [x, w])
            results[name] = [g.numpy() for g in grads] + [tape.jacobian(y, x).numpy()]
            assert all(g.backend == name for g in grads)
    for host, device in zip(results["numpy"], results["cupy"]):
        np.testing.assert_allclose(device, host, rtol=1e-10, atol=1e-12)


def test_moving_between_the_gpu_and_the_host_is_explicit(cupy):
    x = ad.constant([1.0, 2.0])
    host = ad.to_backend(x, "numpy")
    assert type(host._value) is np.ndarray
    with pytest.raises(ad.errors.InvalidArgumentError, match="'cupy'.*'numpy'"):
        x + host
    with pytest.raises(ad.errors.InvalidArgumentError, match="'numpy'.*'cupy'"):
        host ** 2          # ops run on the active backend: the host tensor must be moved back
    with ad.GradientTape() as tape:
        tape.watch(x)
        moved = ad.to_backend(x, "numpy")
        with ad.use_backend("numpy"):   # or compute on the host where the values are
            y = ad.reduce_sum(moved ** 2)
    g = tape.gradient(y, x)
    assert g.backend == "cupy"
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_a_singular_matrix_raises_as_on_numpy(cupy):
    with pytest.raises(ad.errors.InvalidArgumentError, match="MatrixInverse"):
        ad.linalg.inv(ad.constant([[1.0, 2.0], [2.0, 4.0]]))
