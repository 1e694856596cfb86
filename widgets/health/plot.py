"""The picture of a ``TrainingRecorder``: per-layer trends and histograms over steps.

``plot_recorder(recorder)`` draws, on a fresh matplotlib Figure (not pyplot's:
nothing stays open, nothing is shown or saved unless the caller asks):

- four trend panels, one line per layer, the same colour for a layer in
  each: the gradient norm and the weight norm (log scale), the
  gradient/weight ratio (solid) with the update/weight ratio (dashed, log
  scale), and the shares of exactly-zero (solid) and NaN/Inf (dotted)
  gradient entries; the norms are of the finite entries, so every panel
  keeps its steps after a NaN; a step where a layer's gradient held NaN/Inf
  gets a red ``x`` on the gradient-norm panel (its weights: on the
  weight-norm panel), a None gradient a grey ``o``, and a
  gradient norm of exactly 0 (which a log scale cannot show) a triangle at
  the bottom in the layer's colour;
- one histogram panel per layer: the gradient's histogram at each recorded
  step, drawn as a line offset by its step, later steps darker (TensorBoard's
  "offset" histogram view), so a distribution that narrows to 0 (vanishing),
  widens (exploding) or collapses onto 0 (dead) is seen at a glance.

Only reads the recorder's lists; see ``widgets/health/recorder.py``.
"""

import numpy as np

__all__ = ["plot_recorder"]

MAX_RIDGES = 40     # histogram lines per layer; longer runs are thinned evenly


def _figure(n_hist):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 5.5 + 2.2 * ((n_hist + 2) // 3)), layout="constrained")
    rows = 2 + (n_hist + 2) // 3 if n_hist else 2
    grid = fig.add_gridspec(rows, 6)
    trends = [fig.add_subplot(grid[r, c * 3:(c + 1) * 3]) for r in range(2) for c in range(2)]
    hists = [fig.add_subplot(grid[2 + i // 3, (i % 3) * 2:(i % 3) * 2 + 2]) for i in range(n_hist)]
    return fig, trends, hists


def _positive(values):
    """Values for a log axis: NaN where a value is missing, not finite or not positive."""
    values = np.asarray(values, float)
    return np.where(np.isfinite(values) & (values > 0), values, np.nan)


def plot_recorder(recorder, layers=None, histograms=True, max_histograms=6):
    """Draws ``recorder``'s trends (and histograms) on a new Figure.

    Args:
        recorder: a TrainingRecorder with at least one step.
        layers: the layers to draw (default: all, in the order first recorded).
        histograms: also draw one histogram panel per layer.
        max_histograms: at most this many histogram panels (the first layers).

    Returns:
        The matplotlib Figure. ``fig.axes[0]`` is the gradient-norm panel, one
        line per layer labelled with the layer's name.

    >>> import widgets
    >>> kernel = ad.Variable(np.ones((3, 2), np.float32), name="mlp/dense/kernel")
    >>> bias = ad.Variable(np.zeros(2, np.float32), name="mlp/dense_1/bias")
    >>> recorder = widgets.TrainingRecorder()
    >>> for step in range(2):
    ...     grads = [ad.ones((3, 2)) * (step + 1.0), ad.ones(2)]
    ...     _ = recorder.record(grads, [kernel, bias])
    >>> fig = widgets.plot_recorder(recorder)
    >>> [line.get_label() for line in fig.axes[0].lines][:2]
    ['mlp/dense', 'mlp/dense_1']
    """
    if not recorder.steps:
        raise ValueError("plot: nothing recorded yet (call record() in the training loop first)")
    layers = list(recorder.layers) if layers is None else list(layers)
    hist_layers = layers[:max_histograms] if histograms else []
    fig, (ax_g, ax_w, ax_r, ax_z), hist_axes = _figure(len(hist_layers))
    steps = np.asarray(recorder.steps, float)
    colours = {layer: f"C{i % 10}" for i, layer in enumerate(layers)}
    for layer in layers:
        c = colours[layer]
        ax_g.plot(steps, _positive(recorder.series(layer, "grad_norm")[1]), color=c, label=layer,
                  marker=".", ms=3)
        ax_w.plot(steps, _positive(recorder.series(layer, "weight_norm")[1]), color=c, label=layer)
        ax_r.plot(steps, _positive(recorder.series(layer, "ratio")[1]), color=c, label=layer)
        ax_r.plot(steps, _positive(recorder.series(layer, "update_ratio")[1]), color=c, ls="--")
        ax_z.plot(steps, recorder.series(layer, "zero_fraction")[1], color=c, label=layer)
        ax_z.plot(steps, recorder.series(layer, "nonfinite_fraction")[1], color=c, ls=":")
    _mark_bad_steps(ax_g, recorder, layers, steps, colours)
    _mark_bad_steps(ax_w, recorder, layers, steps, colours, key="weight_nonfinite_fraction")
    for ax, title, log in ((ax_g, "gradient norm", True), (ax_w, "weight norm", True),
                           (ax_r, "gradient/weight (solid), update/weight (dashed)", True),
                           (ax_z, "share of gradient entries: zero (solid), NaN/Inf (dotted)",
                            False)):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
        if log and any(np.isfinite(line.get_ydata()).any() for line in ax.lines):
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    ax_z.set_ylim(-0.03, 1.03)
    ax_g.legend(fontsize=8, loc="best")
    for ax, layer in zip(hist_axes, hist_layers):
        _ridges(ax, recorder, layer)
    return fig


def _mark_bad_steps(ax, recorder, layers, steps, colours, key="nonfinite_fraction"):
    """On the gradient panel (log scale: 0, NaN and None have no place on it): a red
    x at the top where a layer's gradient held NaN/Inf, a grey o at the bottom where
    it was None, a triangle in the layer's colour at the bottom where it was all 0.
    On the weight panel (``key="weight_nonfinite_fraction"``): the red x only, where
    its weights held NaN/Inf (the line goes on with the norm of the finite ones)."""
    finite = [v for line in ax.lines for v in np.asarray(line.get_ydata(), float)
              if np.isfinite(v) and v > 0]
    top, bottom = (max(finite), min(finite)) if finite else (1.0, 1.0)
    for layer in layers:
        s = recorder.layers[layer]
        bad = np.array([bool(f) for f in s.get(key, ())] or [False] * len(steps))
        if key != "nonfinite_fraction":
            if bad.any():
                ax.plot(steps[bad], np.full(bad.sum(), top), "x", color="red", ms=8)
            continue
        none = np.array([bool(n) for n in s["none"]])
        if bad.any():
            ax.plot(steps[bad], np.full(bad.sum(), top), "x", color="red", ms=8)
        if none.any():
            ax.plot(steps[none], np.full(none.sum(), bottom), "o", color="grey", mfc="none")
        zero = np.array([g == 0 for g in s["grad_norm"]])
        if zero.any():
            ax.plot(steps[zero], np.full(zero.sum(), bottom), "v", color=colours[layer], ms=5)


def _ridges(ax, recorder, layer):
    """TensorBoard's offset view: one histogram line per step, offset by the step."""
    from matplotlib import colormaps

    hists = recorder.layers[layer]["hist"]
    known = [i for i, h in enumerate(hists) if h is not None]
    if len(known) > MAX_RIDGES:
        known = [known[int(round(j))] for j in np.linspace(0, len(known) - 1, MAX_RIDGES)]
    ax.set_title(f"{layer}: gradient histogram", fontsize=10)
    if not known:
        ax.text(0.5, 0.5, "no finite gradient", ha="center", va="center", transform=ax.transAxes)
        return
    tallest = max(max(hists[i][2]) for i in known) or 1
    spacing = 1.0 / max(len(known), 1)
    cmap = colormaps["viridis_r"]
    for rank, i in enumerate(known):
        lo, hi, counts = hists[i]
        edges = np.linspace(lo, hi if hi > lo else lo + 1, len(counts) + 1)
        centres = (edges[:-1] + edges[1:]) / 2
        base = -rank * spacing          # later steps lower, as TensorBoard stacks them
        height = np.asarray(counts, float) / tallest * spacing * 3
        shade = cmap(0.15 + 0.85 * rank / max(len(known) - 1, 1))
        ax.fill_between(centres, base, base + height, color="white", zorder=rank)
        ax.plot(centres, base + height, color=shade, lw=1, zorder=rank + 0.5)
    ticks = [0, len(known) - 1] if len(known) > 1 else [0]
    ax.set_yticks([-t * spacing for t in ticks],
                  [f"step {recorder.steps[known[t]]}" for t in ticks])
    ax.set_xlabel("gradient value")
