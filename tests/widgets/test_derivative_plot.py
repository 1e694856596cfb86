"""Derivative plots: the numbers come from nested tapes, the figures show exactly those numbers."""

import io

import matplotlib

matplotlib.use("Agg")  # headless: figures render without a display

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import autodiff as ad  # noqa: E402
from widgets.plots.derivative_plot import (PALETTE, DerivativeExplorer, derivative_label,  # noqa: E402
                                     derivatives, plot_derivatives)

X = np.linspace(-3.0, 3.0, 13)


def test_derivatives_of_sin_cycle_through_cos_and_minus_sin():
    got = derivatives(ad.sin, X, order=4)
    expected = [np.sin(X), np.cos(X), -np.sin(X), -np.cos(X), np.sin(X)]
    assert len(got) == 5
    for g, e in zip(got, expected):
        assert g.dtype == np.float64  # a float64 array stays float64
        np.testing.assert_allclose(g, e, atol=1e-12)


def test_derivatives_of_a_cubic_end_in_zeros_not_none():
    got = derivatives(lambda x: x ** 3, [1.0, 2.0, -1.5], order=4)
    x = np.array([1.0, 2.0, -1.5])
    expected = [x ** 3, 3 * x ** 2, 6 * x, np.full(3, 6.0), np.zeros(3)]
    for g, e in zip(got, expected):
        assert g.dtype == np.float32  # Python floats become float32, as ad.constant does
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_derivatives_of_tanh_match_the_closed_forms_to_fourth_order():
    t = np.tanh(X)
    s = 1 - t ** 2
    expected = [t, s, -2 * t * s, -2 * s * (1 - 3 * t ** 2), 8 * t * s * (2 - 3 * t ** 2)]
    for g, e in zip(derivatives(ad.tanh, X, order=4), expected):
        np.testing.assert_allclose(g, e, atol=1e-10)


def test_derivatives_of_order_zero_is_f_alone():
    got = derivatives(ad.exp, X, order=0)
    assert len(got) == 1
    np.testing.assert_allclose(got[0], np.exp(X))


def test_derivatives_of_a_constant_function_are_broadcast_to_x():
    got = derivatives(lambda x: ad.constant(2.0, dtype=ad.float64), X, order=1)
    np.testing.assert_array_equal(got[0], np.full(X.shape, 2.0))
    np.testing.assert_array_equal(got[1], np.zeros(X.shape))


def test_derivatives_reject_a_negative_order_and_a_matrix():
    with pytest.raises(ValueError, match="order"):
        derivatives(ad.sin, X, order=-1)
    with pytest.raises(ValueError, match="1-D"):
        derivatives(ad.sin, np.zeros((2, 2)), order=1)


def test_derivative_labels_use_primes_then_a_superscript():
    assert [derivative_label("f", n) for n in range(5)] == [
        "f(x)", "f'(x)", "f''(x)", "f'''(x)", "f⁽⁴⁾(x)"]


def test_plot_derivatives_draws_the_engines_numbers_one_line_per_order():
    fig = plot_derivatives(ad.tanh, X, order=4)
    ax = fig.axes[0]
    curves = [line for line in ax.lines if line.get_label() and not line.get_label().startswith("_")]
    assert [line.get_label() for line in curves] == [
        "tanh(x)", "tanh'(x)", "tanh''(x)", "tanh'''(x)", "tanh⁽⁴⁾(x)"]
    for line, values in zip(curves, derivatives(ad.tanh, X, order=4)):
        np.testing.assert_array_equal(line.get_xdata(), X)
        np.testing.assert_array_equal(line.get_ydata(), values)
    colours = [line.get_color() for line in curves]
    assert colours == list(PALETTE[:5])  # the colour-blind-safe palette, all different
    assert ax.get_legend() is not None
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        line.get_label() for line in curves]


def test_plot_derivatives_names_a_lambda_f_and_accepts_labels():
    fig = plot_derivatives(lambda x: x * x, X, order=1)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["f(x)", "f'(x)"]
    fig = plot_derivatives(ad.sin, X, order=1, labels=["sin", "cos"])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["sin", "cos"]
    with pytest.raises(ValueError, match="labels"):
        plot_derivatives(ad.sin, X, order=2, labels=["only one"])


def test_plot_derivatives_draws_into_a_given_axes_and_renders_with_agg():
    from matplotlib.figure import Figure
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_derivatives(ad.sin, X, order=2, ax=ax) is fig
    assert len(ax.lines) >= 3
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue().startswith(b"\x89PNG")


# ---- the interactive explorer: driven through its traitlets ---------------------------

def test_explorer_slope_is_the_tapes_derivative_at_x0():
    explorer = DerivativeExplorer(ad.sin, x_range=(-3, 3), order=2)
    explorer.x0 = 0.7
    assert explorer.x0_slider.value == pytest.approx(0.7)
    assert explorer.slope == pytest.approx(np.cos(0.7), abs=1e-12)
    assert explorer.value == pytest.approx(np.sin(0.7), abs=1e-12)


def test_explorer_slider_drives_the_trait_and_redraws_the_image():
    explorer = DerivativeExplorer(ad.tanh, x_range=(-2, 2), order=1)
    before = bytes(explorer.image.value)
    assert before.startswith(b"\x89PNG")
    explorer.x0_slider.value = 1.0
    assert explorer.x0 == pytest.approx(1.0)
    assert explorer.slope == pytest.approx(1 - np.tanh(1.0) ** 2, abs=1e-12)
    assert bytes(explorer.image.value) != before
    assert "0.42" in explorer.readout.value  # f'(1) = 0.41997...


def test_explorer_tangent_touches_f_at_x0_with_slope_f_prime():
    explorer = DerivativeExplorer(ad.exp, x_range=(-1, 1), order=0, x0=0.5)
    x, line = explorer.tangent()
    np.testing.assert_allclose(line, np.exp(0.5) + np.exp(0.5) * (x - 0.5), rtol=1e-12)
    figure_lines = {line.get_label(): line for line in explorer.figure.axes[0].lines}
    tangent = next(v for k, v in figure_lines.items() if k.startswith("tangent"))
    np.testing.assert_allclose(tangent.get_ydata(), line)


def test_explorer_order_slider_sets_how_many_curves_are_drawn():
    explorer = DerivativeExplorer(ad.sin, order=1)
    assert explorer.order_slider.max == 4  # the lessons plot up to the 4th derivative
    for order in (0, 2, 4):
        explorer.order_slider.value = order
        assert explorer.order == order
        labels = [t.get_text() for t in explorer.figure.axes[0].get_legend().get_texts()]
        assert labels[:order + 1] == [derivative_label("sin", n) for n in range(order + 1)]
        assert labels[-1].startswith("tangent")
        assert len(labels) == order + 2
    np.testing.assert_allclose(explorer.curves[4], np.sin(explorer.x), atol=1e-12)


def test_explorer_rejects_an_empty_range():
    with pytest.raises(ValueError, match="x_range"):
        DerivativeExplorer(ad.sin, x_range=(1, 1))


DEVICE_BACKENDS = [pytest.param(n, marks=pytest.mark.gpu) if n == "cupy" else n
                   for n in ad.backend.available_backends() if n != "numpy"]


@pytest.mark.parametrize("name", DEVICE_BACKENDS)
def test_derivatives_on_a_device_backend_come_back_as_numpy(name):
    with ad.use_backend(name):
        got = derivatives(ad.sin, X, order=2)
        explorer = DerivativeExplorer(ad.sin, x_range=(-1, 1), order=2, num=21)
        explorer.x0 = 0.25
    assert all(type(g) is np.ndarray for g in got)
    np.testing.assert_allclose(got[2], -np.sin(X), atol=1e-12)
    assert explorer.slope == pytest.approx(np.cos(0.25), abs=1e-12)


def test_explorer_keeps_x0_and_order_inside_its_sliders():
    explorer = DerivativeExplorer(ad.sin, x_range=(-1, 2), order=1, max_order=3)
    explorer.order = 9
    assert explorer.order == explorer.order_slider.value == 3
    explorer.x0 = 10.0
    assert explorer.x0 == explorer.x0_slider.value == 2.0
    assert explorer.slope == pytest.approx(np.cos(2.0), abs=1e-12)


def test_explorer_picture_is_drawn_at_twice_the_pixels_it_is_shown_at():
    explorer = DerivativeExplorer(ad.sin, order=1)
    png = bytes(explorer.image.value)
    width = int.from_bytes(png[16:20], "big")      # the PNG header's width field
    assert explorer.image.layout.width == f"{width // 2}px"
    assert width == 2 * 576                        # a 6.4-inch figure shown at 90 dpi
