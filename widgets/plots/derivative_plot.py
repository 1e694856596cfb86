"""Derivative plots: f and its first n derivatives, computed with nested tapes.

Owns ``derivatives`` (the numbers), ``plot_derivatives`` (a static
matplotlib figure) and ``DerivativeExplorer`` (an ipywidgets view with
sliders for the point and the order, and the tangent line at that point).
It reads the engine only through its public API and never changes it.

How n derivatives come out of n nested tapes (the lessons' recipe):

    >>> x = ad.constant(np.linspace(-3, 3, 7))
    >>> with ad.GradientTape() as t2:         # outer: sees the inner backward pass
    ...     t2.watch(x)
    ...     with ad.GradientTape() as t1:
    ...         t1.watch(x)
    ...         y = ad.sin(x)
    ...     dy = t1.gradient(y, x)             # cos x, recorded on t2
    >>> d2y = t2.gradient(dy, x)               # -sin x

``gradient`` differentiates the *sum* of its target. That gives every
pointwise derivative at once only because f is elementwise: y[i] depends on
x[i] alone, so d(sum y)/dx[i] = dy[i]/dx[i]. For a function that mixes
elements (a cumulative sum, a softmax) the curves would be something else;
use ``tape.jacobian`` there.
"""

import base64
import contextlib
import io
import math

import ipywidgets
import numpy as np
import traitlets

import autodiff as ad

__all__ = ["derivatives", "plot_derivatives", "DerivativeExplorer", "PALETTE"]

# Okabe and Ito's palette, which stays distinguishable under the common
# colour-vision deficiencies; line styles differ too, so a greyscale
# projector still separates the curves.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)))

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _as_tensor(x):
    """A floating 1-D Tensor for ``x`` (float32 for Python lists, NumPy keeps its dtype)."""
    t = x if isinstance(x, ad.Tensor) else ad.convert_to_tensor(x, dtype_hint=ad.float32)
    if not t.dtype.is_floating:
        t = ad.cast(t, ad.float32)
    if t.ndim > 1:
        raise ValueError(f"derivatives: x must be a scalar or 1-D, got shape {tuple(t.shape)}")
    return t


def derivatives(f, x, order=3):
    """f and its first ``order`` derivatives at the points ``x``.

    Args:
        f: an elementwise function of a Tensor written with ``ad`` ops
            (``ad.sin``, ``ad.tanh``, ``x ** 3``...). Each derivative is the
            gradient of the sum of the one before, which equals the pointwise
            derivative only for elementwise f (see the module docstring).
        x: the points: a 1-D array, list or Tensor (or a scalar).
        order: how many derivatives (0 gives f alone).

    Returns:
        A list of ``order + 1`` NumPy arrays shaped like ``x``:
        ``[f(x), f'(x), f''(x), ...]``. A derivative that does not depend on
        x any more (the third of ``x ** 2``) is zeros, not None.

    >>> from widgets.plots.derivative_plot import derivatives
    >>> ys = derivatives(ad.sin, np.linspace(0, 1, 5), order=2)
    >>> np.allclose(ys[2], -np.sin(np.linspace(0, 1, 5)))
    True
    """
    order = int(order)
    if order < 0:
        raise ValueError(f"derivatives: order must be >= 0, got {order}")
    x = _as_tensor(x)
    with contextlib.ExitStack() as stack:
        # The outermost tape is entered first; each inner tape's backward pass
        # is recorded by every tape outside it: one more derivative per tape.
        tapes = [stack.enter_context(ad.GradientTape()) for _ in range(order)]
        for tape in tapes:
            tape.watch(x)
        y = f(x)
        curves = [y]
        for tape in reversed(tapes):
            y = tape.gradient(y, x, unconnected_gradients="zero")
            curves.append(y)
    shape = tuple(x.shape)
    return [np.broadcast_to(np.asarray(ad.convert_to_tensor(c).numpy()), shape).copy()
            for c in curves]


def derivative_label(name, n):
    """``f(x)``, ``f'(x)``, ``f''(x)``, ``f'''(x)``, then ``f⁽⁴⁾(x)``."""
    if n <= 3:
        return f"{name}{chr(39) * n}(x)"
    return f"{name}⁽{str(n).translate(_SUPERSCRIPTS)}⁾(x)"


def _function_name(f):
    name = getattr(f, "__name__", "")
    return name if name.isidentifier() and name != "<lambda>" else "f"


_SHOWN_DPI = 90  # the explorer's picture is shown at this many pixels per inch


def _new_axes(ax, figsize=(6.4, 4.0)):
    """``ax`` and its figure, or a fresh Figure (not pyplot's: nothing stays open)."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _draw_curves(ax, x, curves, labels):
    for n, (y, label) in enumerate(zip(curves, labels)):
        ax.plot(x, y, color=PALETTE[n % len(PALETTE)], linestyle=LINESTYLES[n % len(LINESTYLES)],
                linewidth=2.0 if n == 0 else 1.6, label=label)
    ax.axhline(0.0, color="#999999", linewidth=0.8, zorder=0)
    ax.set_xlabel("x")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", frameon=True, framealpha=0.85)


def plot_derivatives(f, x, order=3, ax=None, labels=None):
    """Plots f and its first ``order`` derivatives on one figure.

    Args:
        f: an elementwise function of a Tensor (see ``derivatives``).
        x: the points (a 1-D array, list or Tensor).
        order: how many derivatives to draw.
        ax: a matplotlib Axes to draw into (default: a new Figure).
        labels: one legend label per curve (default ``f(x)``, ``f'(x)``...,
            with the function's own name when it has one: ``sin'(x)``).

    Returns:
        The matplotlib Figure; line n of ``fig.axes[0].lines`` holds the
        n-th derivative's values.

    >>> import widgets
    >>> fig = widgets.plot_derivatives(ad.tanh, np.linspace(-5, 5, 201), order=4)
    >>> [line.get_label() for line in fig.axes[0].lines][:3]
    ['tanh(x)', "tanh'(x)", "tanh''(x)"]
    """
    x_values = np.asarray(_as_tensor(x).numpy())
    curves = derivatives(f, x, order)
    if labels is None:
        name = _function_name(f)
        labels = [derivative_label(name, n) for n in range(len(curves))]
    elif len(labels) != len(curves):
        raise ValueError(f"plot_derivatives: {len(labels)} labels for {len(curves)} curves")
    fig, ax = _new_axes(ax)
    _draw_curves(ax, x_values, curves, labels)
    return fig


def _value_and_slope(f, x0, dtype):
    """f(x0) and f'(x0) at one point, from a tape (exact, not read off the curve)."""
    x = ad.constant(x0, dtype=dtype)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    slope = tape.gradient(y, x, unconnected_gradients="zero")
    return float(ad.convert_to_tensor(y).numpy()), float(slope.numpy())


class DerivativeExplorer(ipywidgets.VBox):
    """f and its derivatives with a movable point: sliders for x0 and the order.

    The tangent line at x0 has the slope f'(x0) that a tape computes at that
    point. The figure is a PNG drawn with matplotlib's Agg backend into an
    ``ipywidgets.Image``, so the widget needs no ipympl and renders in any
    front end; ``.figure`` gives the same picture as a Figure (the static,
    kernel-free form).

    Args:
        f: an elementwise function of a Tensor (see ``derivatives``).
        x_range: ``(lo, hi)`` of the plot and of the x0 slider.
        order: how many derivatives to show at first.
        max_order: the order slider's maximum (derivatives up to it are
            computed once, at construction).
        num: number of points on the curves.
        x0: the starting point (default: the middle of ``x_range``).
        continuous_update: redraw while the x0 slider is dragged. Off by
            default: a redraw takes a good part of a second (matplotlib), and
            the events of a long drag would queue up behind each other.

    State (traitlets): ``x0``, ``order``; ``slope`` and ``value`` (read-only
    in spirit: f'(x0) and f(x0)); ``x0_slider`` and ``order_slider`` are the
    controls, linked both ways.

    >>> import widgets
    >>> explorer = widgets.DerivativeExplorer(ad.tanh, order=2)
    >>> explorer.x0 = 0.5                 # moves the slider and redraws
    >>> round(explorer.slope, 4)          # 1 - tanh(0.5)**2
    0.7864
    """

    x0 = traitlets.Float(0.0)
    order = traitlets.Int(3)
    slope = traitlets.Float(0.0)
    value = traitlets.Float(0.0)

    def __init__(self, f, x_range=(-2 * math.pi, 2 * math.pi), order=3, max_order=4, num=401,
                 x0=None, continuous_update=False, **kwargs):
        lo, hi = (float(v) for v in x_range)
        if not hi > lo:
            raise ValueError(f"DerivativeExplorer: x_range must be (lo, hi) with lo < hi, got {x_range}")
        max_order = max(int(max_order), int(order))
        self.f = f
        self.x = np.linspace(lo, hi, int(num))
        self.curves = derivatives(f, self.x, max_order)
        self.name = _function_name(f)
        self.x0_slider = ipywidgets.FloatSlider(value=(lo + hi) / 2 if x0 is None else x0, min=lo,
                                                max=hi, step=(hi - lo) / 200, description="x0",
                                                continuous_update=continuous_update,
                                                readout_format=".3f")
        self.order_slider = ipywidgets.IntSlider(value=int(order), min=0, max=max_order,
                                                 description="order")
        self.readout = ipywidgets.HTML()
        # Drawn at twice the pixels it is shown at, and shown at a fixed width: a PNG that
        # the page stretches to its own width turns blurry.
        width = round(_new_axes(None)[0].get_figwidth() * _SHOWN_DPI)
        self.image = ipywidgets.Image(format="png", layout=ipywidgets.Layout(width=f"{width}px"))
        super().__init__(children=[ipywidgets.HBox([self.x0_slider, self.order_slider]),
                                   self.image, self.readout], **kwargs)
        # Set before linking, so that linking does not draw twice.
        self.set_trait("order", int(order))
        self.set_trait("x0", float(self.x0_slider.value))
        ipywidgets.link((self.x0_slider, "value"), (self, "x0"))
        ipywidgets.link((self.order_slider, "value"), (self, "order"))
        self._live = None
        self.observe(self._update, names=["x0", "order"])
        self._update()

    @traitlets.validate("order")
    def _valid_order(self, proposal):
        return min(max(int(proposal["value"]), 0), len(self.curves) - 1)

    @traitlets.validate("x0")
    def _valid_x0(self, proposal):
        return min(max(float(proposal["value"]), float(self.x[0])), float(self.x[-1]))

    def _update(self, change=None):
        self.value, self.slope = _value_and_slope(self.f, self.x0, self.x.dtype)
        name = self.name
        self.readout.value = (f"<code>x0 = {self.x0:.4g}</code> &nbsp; "
                              f"<code>{name}(x0) = {self.value:.4g}</code> &nbsp; "
                              f"<code>{name}'(x0) = {self.slope:.4g}</code> (slope of the tangent)")
        first = self._live is None
        if first:  # one figure for the widget's life: a redraw only moves artists
            self._live = self._build()
        self._show_state(*self._live)
        buffer = io.BytesIO()
        self._live[0].savefig(buffer, format="png", dpi=2 * _SHOWN_DPI)
        if first:  # keep the layout the first draw found: laying out text is most of a redraw
            self._live[0].set_layout_engine("none")
        self.image.value = buffer.getvalue()

    def tangent(self):
        """The tangent line at x0 on the plotted range: ``(x, f(x0) + f'(x0) (x - x0))``."""
        return self.x, self.value + self.slope * (self.x - self.x0)

    def _build(self):
        """A figure with every curve up to ``max_order``, a tangent, a point and a guide line."""
        fig, ax = _new_axes(None)
        lines = [ax.plot(self.x, y, color=PALETTE[n % len(PALETTE)],
                         linestyle=LINESTYLES[n % len(LINESTYLES)], linewidth=2.0 if n == 0 else 1.6,
                         label=derivative_label(self.name, n))[0]
                 for n, y in enumerate(self.curves)]
        tangent = ax.plot(self.x, self.x, color="#555555", linewidth=1.2, linestyle=(0, (4, 2)))[0]
        point = ax.plot([0.0], [0.0], marker="o", markersize=7, color=PALETTE[0],
                        markeredgecolor="white", zorder=5)[0]
        guide = ax.axvline(0.0, color="#999999", linewidth=0.8, zorder=0)
        ax.axhline(0.0, color="#999999", linewidth=0.8, zorder=0)
        ax.set_xlabel("x")
        ax.set_xlim(self.x[0], self.x[-1])
        ax.grid(True, alpha=0.3)
        return fig, ax, lines, tangent, point, guide

    def _show_state(self, fig, ax, lines, tangent, point, guide):
        """Puts the current x0 and order on a figure made by ``_build``."""
        n = self.order + 1
        for k, line in enumerate(lines):
            line.set_visible(k < n)
        x, y = self.tangent()
        tangent.set_ydata(y)
        tangent.set_label(f"tangent at x0 (slope {self.slope:.3g})")
        point.set_data([self.x0], [self.value])
        guide.set_xdata([self.x0, self.x0])
        finite = np.concatenate([c[np.isfinite(c)] for c in self.curves[:n]])
        if finite.size:  # the tangent must not stretch the y axis to infinity
            lo, hi = finite.min(), finite.max()
            pad = 0.1 * (hi - lo) if hi > lo else 1.0
            ax.set_ylim(lo - pad, hi + pad)
        # A fixed place: matplotlib's "best" search costs more than the rest of a redraw.
        ax.legend(handles=lines[:n] + [tangent], loc="upper left", frameon=True, framealpha=0.85,
                  fontsize="small")

    def _repr_mimebundle_(self, **kwargs):
        # The picture now shown travels with the saved output (image/png), so an
        # untrusted notebook or a code host shows it; a live kernel shows the widget.
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data or {})
        if self.image.value:
            data["image/png"] = base64.b64encode(bytes(self.image.value)).decode("ascii")
        data["text/plain"] = (f"Derivative explorer: {self.name} and {self.order} derivative"
                              f"{'' if self.order == 1 else 's'}, x0 = {self.x0:.4g}, "
                              f"slope {self.slope:.4g}")
        return data, metadata

    @property
    def figure(self):
        """The current view as a new matplotlib Figure (renders without a kernel)."""
        built = self._build()
        self._show_state(*built)
        return built[0]
