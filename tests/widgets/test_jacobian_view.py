"""Jacobian and Hessian images: the pictures hold the engine's numbers, zero-centred."""

import warnings

import matplotlib

matplotlib.use("Agg")  # headless: figures render without a display

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import autodiff as ad  # noqa: E402
from widgets.plots.jacobian_view import (batch_jacobian_patches, flatten_jacobian,  # noqa: E402
                                   hessian_image, jacobian_image, off_diagonal_blocks)

WARNING_TEXT = "not block-diagonal: batch_jacobian would be wrong"


def _image(fig):
    return np.asarray(fig.axes[0].images[0].get_array())


def _texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


@pytest.fixture
def dense_case(rng):
    """A (4, 3) batch through a Dense layer of 2 units: a block-diagonal Jacobian."""
    x = ad.constant(rng.normal(size=(4, 3)))
    layer = ad.layers.Dense(2, activation="tanh")
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = layer(x)
    return tape, x, y


def test_jacobian_image_shows_the_flattened_jacobian_zero_centred(dense_case):
    tape, x, y = dense_case
    j = tape.jacobian(y, x)
    fig = jacobian_image(j)
    expected = j.numpy().reshape(8, 12)
    np.testing.assert_array_equal(_image(fig), expected)
    lo, hi = fig.axes[0].images[0].get_clim()
    assert hi == pytest.approx(np.abs(expected).max()) and lo == -hi
    assert len(fig.axes) == 2  # the image and its colorbar
    assert fig.axes[0].get_xlabel() == "input (flattened)"


def test_jacobian_image_of_a_gradient_is_one_row_and_of_zeros_has_unit_limits():
    fig = jacobian_image(np.array([1.0, -2.0, 3.0]), title="gradient")
    np.testing.assert_array_equal(_image(fig), [[1.0, -2.0, 3.0]])
    assert fig.axes[0].get_title() == "gradient"
    fig = jacobian_image(np.zeros((2, 3)))
    assert fig.axes[0].images[0].get_clim() == (-1.0, 1.0)


def test_flatten_jacobian_splits_in_half_or_as_told():
    assert flatten_jacobian(np.zeros((7, 10, 5, 10))).shape == (70, 50)
    assert flatten_jacobian(np.zeros((3, 2, 2)), n_out_dims=1).shape == (3, 4)
    assert flatten_jacobian(np.zeros((3, 2, 2)), n_out_dims=2).shape == (6, 2)
    with pytest.raises(ValueError, match="n_out_dims"):
        flatten_jacobian(np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="None"):
        jacobian_image(None)


def test_patches_of_a_dense_layer_are_block_diagonal_and_equal_batch_jacobian(dense_case):
    tape, x, y = dense_case
    j = tape.jacobian(y, x)                      # (4, 2, 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no warning for a block-diagonal Jacobian
        fig = batch_jacobian_patches(j)
    m = _image(fig)
    np.testing.assert_array_equal(m, j.numpy().reshape(8, 12))
    per_example = tape.batch_jacobian(y, x).numpy()   # (4, 2, 3): the diagonal patches
    for b in range(4):
        np.testing.assert_allclose(m[2 * b:2 * b + 2, 3 * b:3 * b + 3], per_example[b], rtol=1e-12)
    assert off_diagonal_blocks(j) == []
    assert WARNING_TEXT not in " ".join(_texts(fig))
    ax = fig.axes[0]
    separators = [line for line in ax.lines if line.get_color() == "#333333"]
    assert len(separators) == 2 * 3              # batch - 1 lines each way
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3"]


def test_patches_of_training_batchnorm_warn_on_the_image_and_in_python(rng):
    x = ad.constant(rng.normal(size=(4, 3)))
    bn = ad.layers.BatchNormalization()
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = bn(x, training=True)                 # each output uses the batch mean
    j = tape.jacobian(y, x)
    with pytest.warns(ad.AutodiffWarning, match=WARNING_TEXT):
        fig = batch_jacobian_patches(j)
    np.testing.assert_array_equal(_image(fig), j.numpy().reshape(12, 12))
    title = fig.axes[0].get_title()
    assert title.endswith("\n⚠ " + WARNING_TEXT.replace(": ", ":\n"))   # the title's last lines ...
    assert _texts(fig) == []                                # ... nothing over the patches
    coupled = off_diagonal_blocks(j)
    assert len(coupled) == 4 * 3 and all(b != c for b, c in coupled)
    assert len(fig.axes[0].patches) == len(coupled)  # each coupled patch is outlined


def test_patches_reject_a_jacobian_whose_batch_axes_differ():
    with pytest.raises(ValueError, match="batch axes differ"):
        batch_jacobian_patches(np.zeros((4, 2, 3, 3)))
    with pytest.raises(ValueError, match="expected"):
        batch_jacobian_patches(np.zeros((4, 2, 3)))


def test_hessian_image_of_one_variable_is_the_tapes_hessian():
    x = ad.constant([1.0, -2.0, 0.5], dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_sum(x ** 3)
    h = tape.hessian(y, x)
    fig = hessian_image(h)
    np.testing.assert_allclose(_image(fig), np.diag(6 * x.numpy()))
    np.testing.assert_array_equal(_image(fig), h.numpy())
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["x"]
    lo, hi = fig.axes[0].images[0].get_clim()
    assert (lo, hi) == (-12.0, 12.0)


def test_hessian_image_of_several_variables_places_and_labels_each_block(rng):
    x = ad.constant(rng.normal(size=(4, 3)))
    w = ad.Variable(rng.normal(size=(3, 2)), name="w")
    b = ad.Variable(rng.normal(size=(2,)), name="b")
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(ad.tanh(x @ w + b))
    blocks = tape.hessian(loss, [w, b])
    fig = hessian_image(blocks, names=["w", "b"])
    m = _image(fig)
    assert m.shape == (8, 8)
    np.testing.assert_array_equal(m[:6, :6], blocks[0][0].numpy().reshape(6, 6))
    np.testing.assert_array_equal(m[:6, 6:], blocks[0][1].numpy().reshape(6, 2))
    np.testing.assert_array_equal(m[6:, :6], blocks[1][0].numpy().reshape(2, 6))
    np.testing.assert_array_equal(m[6:, 6:], blocks[1][1].numpy())
    np.testing.assert_allclose(m, m.T, atol=1e-12)   # a Hessian is symmetric
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["w", "b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "b"] * 2   # below and above
    assert ax.xaxis.get_tick_params()["labeltop"]          # columns named above the image too
    assert _texts(fig) == []                                # nothing drawn over the data
    assert ax.get_title() == "Hessian blocks H[row, column]"


def test_hessian_image_takes_functional_hessian_blocks_and_draws_none_as_zero():
    f = lambda a, c: ad.reduce_sum(a * a) * 2.0 + ad.reduce_sum(c)  # noqa: E731
    a = ad.constant([1.0, 2.0], dtype=ad.float64)
    c = ad.constant([3.0], dtype=ad.float64)
    blocks = ad.functional.hessian(f, argnums=(0, 1))(a, c)
    m = _image(hessian_image(blocks))
    np.testing.assert_allclose(m, [[4, 0, 0], [0, 4, 0], [0, 0, 0]])
    m = _image(hessian_image([[np.eye(2), None], [None, np.ones((1, 1))]], names=["a", "c"]))
    np.testing.assert_array_equal(m, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="names"):
        hessian_image(blocks, names=["only one"])


DEVICE_BACKENDS = [pytest.param(n, marks=pytest.mark.gpu) if n == "cupy" else n
                   for n in ad.backend.available_backends() if n != "numpy"]


@pytest.mark.parametrize("name", DEVICE_BACKENDS)
def test_images_of_a_device_tape_hold_its_numbers(name, rng):
    """The strict backend refuses implicit host copies, as CuPy does: the views copy explicitly."""
    with ad.use_backend(name):
        x = ad.constant(rng.normal(size=(3, 2)))
        layer = ad.layers.Dense(2, activation="tanh")
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = layer(x)
            loss = ad.reduce_sum(y ** 2)
        j = tape.jacobian(y, x)
        h = tape.hessian(loss, x)
        assert j.backend == name
        expected_j, expected_h = j.numpy().reshape(6, 6), h.numpy().reshape(6, 6)
        np.testing.assert_array_equal(_image(jacobian_image(j)), expected_j)
        np.testing.assert_array_equal(_image(batch_jacobian_patches(j)), expected_j)
        np.testing.assert_array_equal(_image(hessian_image(h)), expected_h)


def test_jacobian_image_ticks_rows_and_columns_with_integers_only():
    fig = jacobian_image(np.arange(20.0).reshape(4, 5))
    ax = fig.axes[0]
    fig.canvas.draw()
    for ticks in (ax.get_xticks(), ax.get_yticks()):
        assert len(ticks) > 1 and np.all(ticks == np.round(ticks))
    assert "2.5" not in [t.get_text() for t in ax.get_yticklabels()]
