"""Per-layer gradient statistics across training steps, as trends, a summary and a plot.

``TrainingRecorder.record`` takes one step's gradients and variables (one
line in a training loop) and keeps, per layer and step: the gradient norm,
the weight norm, their ratio, the update/weight ratio (the weights' change
since the previous record, or the updates given), the share of gradient
entries that are exactly 0 and that are NaN/Inf (norms are of the finite
entries, so a trend goes on past a NaN), whether a gradient was
None, and a small histogram of the gradient's finite values. Vanishing,
exploding and dead layers then show as trends:

    >>> import widgets
    >>> ad.random.set_seed(0)
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(4),
    ...                              ad.keras.layers.Dense(1)], name="mlp")
    >>> x, y = ad.random.normal([8, 3]), ad.random.normal([8, 1])
    >>> loss_fn, optimizer = ad.keras.losses.MeanSquaredError(), ad.keras.optimizers.SGD(0.1)
    >>> recorder = widgets.TrainingRecorder()
    >>> for step in range(5):
    ...     with ad.GradientTape() as tape:
    ...         loss = loss_fn(y, model(x))
    ...     grads = tape.gradient(loss, model.trainable_variables)
    ...     _ = recorder.record(grads, model.trainable_variables, step)
    ...     _ = optimizer.apply_gradients(zip(grads, model.trainable_variables))
    >>> print(recorder)          # the layers flagged, and why
    TrainingRecorder: 5 steps (0..4), 2 layers; at step 4:
      layer            |grad| |weights|    grad/w  update/w  zero   NaN
      dense ...
      dense_1 ...
    no layer flagged
    >>> fig = recorder.plot()    # a matplotlib Figure; nothing is written to disk

A layer is a variable's name up to its last ``/`` (``dense_1/kernel`` ->
``dense_1``); pass the model itself as ``variables`` to name them by module
path (``mlp/dense_1``), or ``layer_of=`` to group them your own way.

Inside ``ad.function`` the Python body runs only while tracing, so a
``record`` there would run once: return the gradients from the compiled step
and record them outside it (it records eager values; a warning says so when
it is called during tracing).

The rules behind ``flags()`` (and ``print``), on the recorded history:

- ``nan``: NaN/Inf in a layer's gradient, naming the first step;
- ``none``: its gradient was None at the last step;
- ``dead``: 90% or more of its gradient is exactly 0 at the last step;
  ``partly dead``: over half of it (``PARTLY_DEAD``), but for an embedding
  (a lookup sends gradient to the rows it read only);
- ``exploding``: its gradient norm at the last step is 100x its first one,
  or its weights' norm grew 10x;
- and, at the last step, the rules of ``widgets.health.outliers.relative_flags``
  against the other layers (weights' RMS 10x their median; gradient/weight
  and update/weight ratios 100x off their median, e.g. a vanishing layer).
"""

import warnings

import numpy as np

from autodiff import IndexedSlices, Module, backend, convert_to_tensor, tape as _tape

from .rows import ZERO_SHARE
from .outliers import compact, relative_flags
from ..tape_names import module_paths

__all__ = ["TrainingRecorder"]

GROWTH = 100.0          # gradient norm this many times its first value: exploding
LOOKUPS = ("embed", "embedding", "embeddings")   # a lookup's gradient is mostly 0 by design
WEIGHT_GROWTH = 10.0    # weights' norm this many times its first value: exploding
PARTLY_DEAD = 0.5       # share of exact zeros in a gradient that makes a layer partly dead
KEYS = ("grad_norm", "weight_norm", "weight_rms", "ratio", "update_ratio", "zero_fraction",
        "nonfinite_fraction", "weight_nonfinite_fraction", "none", "hist")


def _numpy(value):
    if isinstance(value, IndexedSlices):   # an Embedding(sparse_update=True) gradient
        value = convert_to_tensor(value)    # its dense tensor: rows of repeated ids added
    return None if value is None else np.asarray(backend.to_numpy(getattr(value, "_value", value)))


def _sq(array):
    flat = np.asarray(np.abs(array) if array.dtype.kind == "c" else array, np.float64).reshape(-1)
    return float(np.dot(flat, flat))


class TrainingRecorder:
    """Keeps per-layer gradient statistics across training steps.

    Args:
        bins: histogram bins per layer and step.
        layer_of: optional ``name -> layer name`` (default: the name up to its last ``/``).

    Attributes:
        steps: the step numbers recorded, in order.
        layers: ``{layer: {statistic: [one value per step]}}`` with the
            statistics of ``KEYS`` (None where a layer had no value that step);
            ``hist`` holds ``(low, high, counts)`` or None.

    >>> import widgets
    >>> ad.random.set_seed(0)
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(4),
    ...                              ad.keras.layers.Dense(1)], name="mlp")
    >>> x, y = ad.random.normal([8, 3]), ad.random.normal([8, 1])
    >>> optimizer = ad.keras.optimizers.SGD(0.1)
    >>> recorder = widgets.TrainingRecorder()
    >>> for step in range(3):
    ...     with ad.GradientTape() as tape:
    ...         loss = ad.reduce_mean(model(x) ** 2)
    ...     grads = tape.gradient(loss, model.trainable_variables)
    ...     _ = recorder.record(grads, model)          # the one line: named by module path
    ...     _ = optimizer.apply_gradients(zip(grads, model.trainable_variables))
    >>> recorder.steps, list(recorder.layers)[:2]
    ([0, 1, 2], ['mlp/dense', 'mlp/dense_1'])
    >>> steps, norms = recorder.series("mlp/dense", "grad_norm")
    >>> steps
    array([0., 1., 2.])
    >>> recorder.flags()             # {layer: [reasons]} for the layers a rule flags
    {}
    """

    def __init__(self, bins=30, layer_of=None):
        self.bins = int(bins)
        self.layer_of = layer_of or (lambda name: name.rpartition("/")[0] or name)
        self.steps = []
        self.layers = {}
        self._previous = {}    # variable id -> its value at the last record
        self._warned = False

    # ---- recording ---------------------------------------------------------
    def callback(self, every=1):
        """A Keras callback recording each step of ``model.fit`` here (``fit_callback.py``).

        >>> import widgets
        >>> model = ad.keras.Sequential([ad.keras.layers.Dense(1, input_dim=2)])
        >>> model.compile(optimizer="adam", loss="mae")
        >>> recorder = widgets.TrainingRecorder()
        >>> callbacks = [recorder.callback()]
        >>> _ = model.fit(ad.ones([6, 2]), ad.zeros([6, 1]), epochs=3, callbacks=callbacks,
        ...               verbose=0)
        >>> recorder.steps                 # one batch per epoch here
        [0, 1, 2]
        """
        from .fit_callback import RecorderCallback
        return RecorderCallback(self, every)

    def record(self, grads, variables=None, step=None, *, target=None, updates=None):
        """Adds one step's statistics.

        Args:
            grads: the gradients, one per variable (None allowed); or the
                ``(gradient, variable)`` pairs given to ``apply_gradients``
                (then no ``variables``); or a GradientTape together with
                ``target=`` (its ``gradient`` is taken; a non-persistent tape
                is used up).
            variables: the variables (a list), or a module (its trainable
                variables, named by module path).
            step: the step number (default: one more than the last).
            target: the loss, when ``grads`` is a tape.
            updates: optional updates the optimizer applied, one per variable;
                by default the change of each variable since the last record.

        Returns:
            The recorder, so ``print(recorder.record(...))`` works.

        >>> import widgets
        >>> w = ad.Variable([1.0, 2.0], name="dense/kernel")
        >>> with ad.GradientTape() as tape:
        ...     loss = ad.reduce_sum(w * w)
        >>> grads = tape.gradient(loss, [w])
        >>> recorder = widgets.TrainingRecorder()
        >>> recorder.record(grads, [w], step=3).steps[-1]
        3
        """
        if self._tracing() and not self._warned:
            self._warned = True
            warnings.warn("TrainingRecorder.record runs inside a traced ad.function: the "
                          "Python body runs only while tracing, so only this step is kept. "
                          "Return the gradients from the compiled step and record them outside.",
                          stacklevel=2)
        grads, variables, names, updates = _read_inputs(grads, variables, target, updates)
        step = (self.steps[-1] + 1 if self.steps else 0) if step is None else int(step)
        by_layer = {}
        for k, (g, v) in enumerate(zip(grads, variables)):
            by_layer.setdefault(self._layer(v, k, names), []).append(
                (k, _numpy(g), _numpy(v), v))
        index = len(self.steps)
        self.steps.append(step)
        for layer, items in by_layer.items():
            series = self.layers.setdefault(layer, {key: [None] * index for key in KEYS})
            for key, value in self._stats(items, updates).items():
                series[key].append(value)
        for series in self.layers.values():          # a layer missing this step
            for values in series.values():
                if len(values) < len(self.steps):
                    values.append(None)
        self._previous = {v._id: w.copy() for _, _, w, v in
                          (item for items in by_layer.values() for item in items) if w is not None}
        return self

    @staticmethod
    def _tracing():
        return any(type(o).__module__.startswith("autodiff.tracing") for o in _tape.observers)

    def _layer(self, variable, k, names):
        name = (names or {}).get(getattr(variable, "_id", None))
        if name is None:
            name = getattr(variable, "_name", None) or f"variable_{k}"
            if name == "Variable":    # unnamed: one layer each, by position
                name = f"Variable_{k}"
        return self.layer_of(name)

    def _stats(self, items, updates):
        """The statistics of one layer's variables at one step.

        Norms are of the finite entries (the NaN/Inf ones are counted in
        ``nonfinite_fraction`` and ``weight_nonfinite_fraction``), so every
        trend goes on past the step a NaN appears instead of stopping there.
        """
        g_sq = w_sq = u_sq = 0.0
        entries = zeros = bad = size = w_bad = 0
        none, finite, has_update = False, [], False
        for k, g, w, v in items:
            if w is not None:
                ok = np.isfinite(w)
                n_bad = int(w.size - np.count_nonzero(ok))
                w_bad += n_bad
                w_sq += _sq(w[ok] if n_bad else w)
                size += w.size
            update = updates[k] if updates is not None else None
            if update is None and updates is None and v._id in self._previous and w is not None \
                    and self._previous[v._id].shape == w.shape:
                update = w - self._previous[v._id]
            if update is not None:
                u_sq += _sq(update)
                has_update = True
            if g is None:
                none = True
                continue
            entries += g.size
            zeros += int(np.count_nonzero(g == 0))
            ok = np.isfinite(g)
            bad += int(g.size - np.count_nonzero(ok))
            finite.append(np.abs(g[ok]) if g.dtype.kind == "c" else g[ok].astype(np.float64))
            g_sq += _sq(finite[-1])
        grad = g_sq ** 0.5 if entries else None
        weight = w_sq ** 0.5
        values = np.concatenate(finite) if finite else np.zeros(0)
        hist = None
        if values.size:
            lo, hi = float(values.min()), float(values.max())
            counts = np.histogram(values, bins=self.bins, range=(lo, hi if hi > lo else lo + 1))[0]
            hist = (lo, hi, counts.tolist())
        return {"grad_norm": grad, "weight_norm": weight,
                "weight_rms": weight / size ** 0.5 if size else None,
                "ratio": grad / weight if grad is not None and weight else None,
                "update_ratio": u_sq ** 0.5 / weight if has_update and weight else None,
                "zero_fraction": zeros / entries if entries else None,
                "nonfinite_fraction": bad / entries if entries else None,
                "weight_nonfinite_fraction": w_bad / size if size else None,
                "none": none, "hist": hist}

    # ---- reading -------------------------------------------------------------
    def series(self, layer, key):
        """``(steps, values)`` of one statistic of one layer, as float arrays (NaN where none).

        >>> import widgets
        >>> w = ad.Variable([3.0, 4.0], name="dense_1/kernel")
        >>> recorder = widgets.TrainingRecorder()
        >>> _ = recorder.record([ad.constant([3.0, 4.0])], [w])
        >>> steps, norms = recorder.series("dense_1", "grad_norm")
        >>> steps, norms
        (array([0.]), array([5.]))
        """
        values = [np.nan if v is None else float(v) for v in self.layers[layer][key]]
        return np.asarray(self.steps, float), np.asarray(values, float)

    def flags(self):
        """``{layer: [reason, ...]}`` for every layer a rule flags (module docstring)."""
        found = {}
        last = len(self.steps) - 1
        rows = []
        for layer, s in self.layers.items():
            reasons = found.setdefault(layer, [])
            bad = [i for i, f in enumerate(s["nonfinite_fraction"]) if f]
            if bad:
                reasons.append(f"NaN/Inf in its gradient at {len(bad)} step(s), first at step "
                               f"{self.steps[bad[0]]} ({s['nonfinite_fraction'][bad[-1]]:.0%} of "
                               f"entries at step {self.steps[bad[-1]]})")
            if s["none"][last]:
                reasons.append(f"no gradient (None) at step {self.steps[last]}")
            zero = s["zero_fraction"][last]
            if zero is not None and zero >= ZERO_SHARE:
                reasons.append(f"dead: gradient exactly 0 for {zero:.0%} of its weights "
                               f"at step {self.steps[last]}")
            elif zero is not None and zero > PARTLY_DEAD and not layer.endswith(LOOKUPS):
                reasons.append(f"partly dead: gradient exactly 0 for {zero:.0%} of its weights "
                               f"at step {self.steps[last]} (over {PARTLY_DEAD:.0%}: units that "
                               f"no longer fire, as a ReLU after a big step)")
            for key, limit, what in (("grad_norm", GROWTH, "gradient"),
                                     ("weight_norm", WEIGHT_GROWTH, "weights'")):
                known = [(i, v) for i, v in enumerate(s[key]) if v is not None and np.isfinite(v)]
                if len(known) >= 2 and known[0][1] > 0 and known[-1][1] >= limit * known[0][1]:
                    growth = compact(known[-1][1] / known[0][1])
                    reasons.append(f"exploding: {what} norm grew {growth}x "
                                   f"from step {self.steps[known[0][0]]} to step "
                                   f"{self.steps[known[-1][0]]}")
            rows.append({"layer": layer, "grad_of": "weights", "flags": [],
                         "ratio": _finite(s["ratio"][last]),
                         "update_ratio": _finite(s["update_ratio"][last]),
                         "rms": _finite(s["weight_rms"][last])})
        relative_flags(rows, others="layers")
        for row in rows:
            found[row["layer"]].extend(f"{f['reason']} at step {self.steps[last]}"
                                       for f in row["flags"])
        return {layer: reasons for layer, reasons in found.items() if reasons}

    def __str__(self):
        if not self.steps:
            return "TrainingRecorder: nothing recorded yet"
        last = len(self.steps) - 1
        width = max([12] + [len(layer) for layer in self.layers])
        lines = [f"TrainingRecorder: {len(self.steps)} steps ({self.steps[0]}..{self.steps[-1]}), "
                 f"{len(self.layers)} layers; at step {self.steps[-1]}:",
                 f"  {'layer':<{width}}  {'|grad|':>9} {'|weights|':>9} {'grad/w':>9} "
                 f"{'update/w':>9} {'zero':>5} {'NaN':>5}"]
        for layer, s in self.layers.items():
            cells = [_cell(s[k][last])
                     for k in ("grad_norm", "weight_norm", "ratio", "update_ratio")]
            fractions = [f"{s[k][last]:.0%}" if s[k][last] is not None else "—"
                         for k in ("zero_fraction", "nonfinite_fraction")]
            lines.append(f"  {layer:<{width}}  " + " ".join(f"{c:>9}" for c in cells) + " " +
                         " ".join(f"{c:>5}" for c in fractions))
        flags = self.flags()
        lines.append("flagged:" if flags else "no layer flagged")
        for layer, reasons in flags.items():
            lines.extend(f"  {layer}: {reason}" for reason in reasons)
        return "\n".join(lines)

    def __repr__(self):
        return f"<TrainingRecorder: {len(self.steps)} steps, {len(self.layers)} layers>"

    def plot(self, layers=None, histograms=True, max_histograms=6):
        """The trends as a matplotlib Figure (nothing is shown or saved unless asked).

        Top: gradient norm, weight norm, gradient/weight and update/weight
        ratios (log scales) and the shares of zero and NaN entries, one line
        per layer. Below, with ``histograms``: each layer's gradient histogram
        at every step, stacked over the steps as TensorBoard draws them
        (later steps lower and darker), for at most ``max_histograms`` layers.

        >>> import widgets
        >>> w = ad.Variable([3.0, 4.0], name="dense/kernel")
        >>> recorder = widgets.TrainingRecorder()
        >>> _ = recorder.record([ad.constant([3.0, 4.0])], [w])
        >>> fig = recorder.plot(); fig.savefig("trends.png")   # saving is yours
        """
        from .plot import plot_recorder

        return plot_recorder(self, layers=layers, histograms=histograms,
                             max_histograms=max_histograms)


def _read_inputs(grads, variables, target, updates):
    """``(grads, variables, {variable id: module path} or None, updates)`` as lists
    from what ``record`` accepts (a module, pairs, a tape and its target)."""
    names = None
    if isinstance(variables, Module):
        names = {v._id: path for path, v in module_paths(variables).items()}
        variables = variables.trainable_variables
    if hasattr(grads, "gradient") and hasattr(grads, "watched_variables"):
        if target is None:
            raise ValueError("record(tape, variables): pass the loss as target= too, "
                             "or pass the gradients themselves")
        grads = grads.gradient(target, list(variables))
    if variables is None:
        pairs = list(grads)
        grads, variables = [g for g, _ in pairs], [v for _, v in pairs]
    variables, grads = list(variables), list(grads)
    if len(grads) != len(variables):
        raise ValueError(f"record: {len(grads)} gradients for {len(variables)} variables")
    updates = None if updates is None else [_numpy(u) for u in updates]
    if updates is not None and len(updates) != len(variables):
        raise ValueError(f"record: {len(updates)} updates for {len(variables)} variables")
    return grads, variables, names, updates


def _finite(x):
    return float(x) if x is not None and np.isfinite(x) else None


def _cell(x):
    return "—" if x is None else ("NaN" if not np.isfinite(x) else compact(float(x)))

