"""``tensor_scatter_nd_update``/``_add``/``_sub`` against TensorFlow 2: values eagerly, traced
and compiled, gradients for both the tensor and the updates (and against finite
differences, to second order), and the error class for indices or updates that do not fit."""

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing

# (tensor, indices, updates); no place named twice (TensorFlow leaves the order of an
# update's repeats open; for add and sub, repeats are in REPEATS)
CASES = {
    "vector elements": (np.arange(1.0, 6.0), [[1], [4]], [10.0, 20.0]),
    "matrix elements": (np.arange(6.0).reshape(2, 3), [[0, 2], [1, 0]], [7.0, 8.0]),
    "matrix rows": (np.arange(6.0).reshape(2, 3), [[1]], [[5.0, 6.0, 7.0]]),
    "3-D slices, 2-D indices": (np.arange(24.0).reshape(2, 3, 4), [[[0, 1]], [[1, 2]]],
                                np.ones((2, 1, 4))),
}
REPEATS = (np.arange(1.0, 4.0), [[0], [0], [2]], [1.0, 2.0, 3.0])
KINDS = ["update", "add", "sub"]
MODES = ["eager", "function", "jit_compile"]


def _scatter(m, kind, mode, tensor, indices, updates):
    op = getattr(m, f"tensor_scatter_nd_{kind}")
    t = m.constant(tensor, m.float32)
    u = m.constant(updates, m.float32)
    if mode == "eager":
        return op(t, indices, u).numpy()
    f = m.function(lambda t, u: op(t, indices, u), jit_compile=(mode == "jit_compile"))
    return f(t, u).numpy()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_tensorflow(tf, case, kind, mode):
    args = CASES[case]
    np.testing.assert_array_equal(_scatter(ad, kind, mode, *args), _scatter(tf, kind, mode, *args))


@pytest.mark.parametrize("kind", ["add", "sub"])
def test_repeated_places_add_up_as_in_tensorflow(tf, kind):
    np.testing.assert_array_equal(_scatter(ad, kind, "eager", *REPEATS),
                                  _scatter(tf, kind, "eager", *REPEATS))


def _gradients(m, kind, tensor, indices, updates):
    t = m.constant(tensor, m.float32)
    u = m.constant(updates, m.float32)
    weights = m.constant(np.linspace(-1.0, 2.0, np.size(tensor)).reshape(np.shape(tensor)),
                         m.float32)
    with m.GradientTape() as tape:
        tape.watch([t, u])
        y = m.reduce_sum(getattr(m, f"tensor_scatter_nd_{kind}")(t, indices, u) * weights)
    return [g.numpy() for g in tape.gradient(y, [t, u])]


# (repeated places with ``update``: which repeat TensorFlow keeps is unspecified, so that
# pair is not compared)
@pytest.mark.parametrize("case, kind", [(case, kind) for case in sorted(CASES) + ["repeats"]
                                        for kind in KINDS
                                        if not (case == "repeats" and kind == "update")])
def test_gradients_for_tensor_and_updates_match_tensorflow(tf, case, kind):
    args = REPEATS if case == "repeats" else CASES[case]
    for ours, theirs in zip(_gradients(ad, kind, *args), _gradients(tf, kind, *args)):
        np.testing.assert_allclose(ours, theirs)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", ["matrix elements", "3-D slices, 2-D indices"])
def test_gradients_match_finite_differences_to_second_order(case, kind):
    tensor, indices, updates = CASES[case]
    op = getattr(ad, f"tensor_scatter_nd_{kind}")
    # squared so that the second derivative is not zero
    testing.check_grads(lambda t, u: op(t, indices, u) ** 2,
                        [np.asarray(tensor), np.asarray(updates, dtype=np.float64)], order=2,
                        modes=("rev",))


BAD = {"an index out of range": ([[3]], [1.0]),
       "updates of the wrong shape": ([[0], [1]], [1.0, 2.0, 3.0]),
       "too many indices per row": ([[0, 1]], [1.0]),
       "scalar updates": ([2], 9.0)}


@pytest.mark.parametrize("bad", sorted(BAD))
def test_indices_or_updates_that_do_not_fit_raise_tensorflows_error_class(tf, bad):
    indices, updates = BAD[bad]
    errors = {}
    for m in (tf, ad):
        with pytest.raises(Exception) as info:   # noqa: PT011 - the class is compared below
            m.tensor_scatter_nd_update(m.zeros([3]), indices, m.constant(updates))
        errors[m] = info.value
    assert type(errors[tf]).__name__ == "InvalidArgumentError", errors[tf]
    assert isinstance(errors[ad], ad.errors.InvalidArgumentError), errors[ad]
