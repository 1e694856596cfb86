"""Tapes of real models for the tape player's benchmark, tests and examples.

- ``rnn_tape``: a hand-written RNN cell ``h = tanh(h @ W + x_t @ U + b)``
  unrolled to about ``n`` records (five a step, each step in its name scope
  ``rnn/step_<t>``), a NaN optionally planted in one step's input;
- ``gru_tape``: an ``ad.keras.layers.GRU`` with ``use_cudnn=False`` (its
  gates op by op: 23 records a step, all in ``gru/gru_cell``) under a Dense
  head and a mean squared loss;
- ``planted_mlp``: a Keras MLP with four planted bugs on two branches: a
  NaN weight (``nan_layer``), the layer it feeds (``fed``), a detached layer
  (``aux``, through ``stop_gradient``: its gradient is None) and an
  exploding layer (``explode``, kernel ~N(0, 40));
- ``lesson14_mlp``: lesson 14's model (Dense 2 -> 16 -> 16 -> 2 in scopes
  ``mlp/hidden1``... and ``loss``), one training step.

Each returns ``(tape, loss, variables)`` (``planted_mlp``: the model, whose
``trainable_variables`` are the sources); every tape is persistent, so it
can be replayed (and its gradient taken) more than once.

    >>> tape, loss, model = planted_mlp()
    >>> rep = widgets.replay(tape, loss, model.trainable_variables)
    >>> [g["scope"] for g in rep.data["groups"]][:3]
    ['mlp/d0', 'mlp/nan_layer', 'mlp/fed']
"""

import numpy as np

import autodiff as ad

__all__ = ["rnn_tape", "gru_tape", "planted_mlp", "lesson14_mlp", "HIDDEN"]

HIDDEN = 4


def rnn_tape(n_records, hidden=HIDDEN, seed=0, scoped=True, nan_at=None):
    """A persistent tape of a hand-written RNN with about ``n_records`` records.

    Args:
        scoped: each step in name scope ``rnn/step_<t>``, the loss in ``loss``.
        nan_at: plant a NaN in the input of that step (for the debugging views).

    Returns:
        ``(tape, loss, [W, U, b])``.
    """
    rng = np.random.default_rng(seed)
    steps = max(1, round((n_records - 1) / 5))
    W = ad.Variable(rng.normal(size=(hidden, hidden)) * 0.5, name="W")
    U = ad.Variable(rng.normal(size=(2, hidden)) * 0.5, name="U")
    b = ad.Variable(np.zeros((1, hidden)), name="b")
    xs = [ad.constant(rng.normal(size=(1, 2))) for _ in range(steps)]
    if nan_at is not None:
        xs[nan_at] = ad.constant(np.array([[np.nan, 0.0]]))
    with ad.GradientTape(persistent=True) as tape:
        h = ad.constant(np.zeros((1, hidden)))
        for t, x in enumerate(xs):
            with ad.name_scope(f"rnn/step_{t}" if scoped else ""):
                h = ad.tanh(ad.matmul(h, W) + ad.matmul(x, U) + b)
        with ad.name_scope("loss" if scoped else ""):
            loss = ad.reduce_sum(h)
    return tape, loss, [W, U, b]


def gru_tape(n_records, units=8, seed=0, nan_at=None):
    """A tape of a Keras GRU (``ad.keras.layers.GRU``) unrolled to about ``n_records``.

    Each step records 23 ops in scope ``gru/gru_cell`` (``use_cudnn=False``: the
    gates one op each, not the fused ``GRUGates``); a Dense head and a mean
    squared error add five. ``nan_at``: a NaN in the input of that step.

    Returns:
        ``(tape, loss, variables)``.
    """
    rng = np.random.default_rng(seed)
    steps = max(1, round((n_records - 5) / 23))
    layer = ad.keras.layers.GRU(units, name="gru", use_cudnn=False)
    head = ad.keras.layers.Dense(1, name="head")
    x = rng.normal(size=(2, steps, 3)).astype("float32")
    if nan_at is not None:
        x[0, min(nan_at, steps - 1), 0] = np.nan
    x, y = ad.constant(x), ad.constant(rng.normal(size=(2, 1)).astype("float32"))
    head(layer(x[:, :1]))                       # build the weights outside the tape
    with ad.GradientTape(persistent=True) as tape:
        out = head(layer(x))
        with ad.name_scope("loss"):
            loss = ad.reduce_mean((out - y) ** 2)
    return tape, loss, layer.trainable_variables + head.trainable_variables


class PlantedMLP(ad.keras.Model):
    """A trunk ``d0`` and two branches whose losses are added: ``nan_layer -> fed``
    (a NaN kernel entry) and ``explode -> head`` with ``stop_gradient(aux(h))``
    added in. The two branches keep the exploding layer's gradient finite: the
    sum's VJP sends the seed to each loss, and only the NaN branch multiplies
    by a NaN."""

    def __init__(self):
        super().__init__(name="mlp")
        self.d0 = ad.keras.layers.Dense(8, activation="tanh", name="d0")
        self.nan_layer = ad.keras.layers.Dense(8, activation="tanh", name="nan_layer")
        self.fed = ad.keras.layers.Dense(1, name="fed")
        self.explode = ad.keras.layers.Dense(8, activation="tanh", name="explode")
        self.aux = ad.keras.layers.Dense(8, activation="tanh", name="aux")
        self.head = ad.keras.layers.Dense(1, name="head")

    def call(self, x):
        h = self.d0(x)
        a = self.fed(self.nan_layer(h))
        b = self.head(self.explode(h) + ad.stop_gradient(self.aux(h)))
        return a, b


def planted_mlp(seed=0, batch=16):
    """The four-bug MLP (``PlantedMLP``) and one step of its loss.

    Returns:
        ``(tape, loss, model)``: the model's ``trainable_variables`` are the sources.
    """
    ad.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    x = ad.constant(rng.normal(size=(batch, 3)).astype(np.float32))
    model = PlantedMLP()
    model(x)
    kernel = model.nan_layer.kernel.numpy()
    kernel[0, 0] = np.nan
    model.nan_layer.kernel.assign(kernel)
    model.explode.kernel.assign(rng.normal(0.0, 40.0, size=(8, 8)).astype(np.float32))
    with ad.GradientTape(persistent=True) as tape:
        a, b = model(x)
        with ad.name_scope("loss"):
            loss = ad.reduce_mean(a ** 2) + ad.reduce_mean(b ** 2)
    return tape, loss, model


class Lesson14MLP(ad.keras.Model):
    """Lesson 14's model: 2 -> 16 -> 16 -> 2 logits, relu in between."""

    def __init__(self):
        super().__init__(name="mlp")
        self.hidden1 = ad.keras.layers.Dense(16, activation="relu", name="hidden1")
        self.hidden2 = ad.keras.layers.Dense(16, activation="relu", name="hidden2")
        self.logits = ad.keras.layers.Dense(2, name="logits")

    def call(self, x):
        return self.logits(self.hidden2(self.hidden1(x)))


def lesson14_mlp(seed=0, batch=64):
    """One step of lesson 14's MLP on random points: ``(tape, loss, variables)``."""
    ad.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    x = ad.constant(rng.normal(size=(batch, 2)).astype(np.float32))
    labels = ad.constant(rng.integers(0, 2, batch).astype(np.int32))
    model = Lesson14MLP()
    with ad.GradientTape(persistent=True) as tape:
        logits = model(x)
        with ad.name_scope("loss"):
            loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    return tape, loss, model.trainable_variables
