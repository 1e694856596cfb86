"""Writes the version-1 saved models that ``tests/autodiff/test_saved_model_upgrade.py`` loads.

Run it with the code of commit 86713ce, from before a34adef gave ``LSTMGates`` four outputs:
there it had three (``h, c, act``, act 5 units wide) and saved models were version 1:

    rm -rf tests/autodiff/data/saved_model_v1_*
    git worktree add /tmp/wt-v1 86713ce
    PYTHONPATH=/tmp/wt-v1 python tests/autodiff/data/make_saved_model_v1.py tests/autodiff/data
    git worktree remove /tmp/wt-v1
    rm tests/autodiff/data/saved_model_v1_*/.lock     # the writers' lock: not part of a model

It writes, under the given directory:

- ``saved_model_v1_lstm/``: a tiny LSTM (batch 2, 3 steps, 2 features, 2 units) with four
  functions: ``forward``; ``gradients`` (a loss and its gradient with respect to the input and
  the weights); ``second_order`` (the gradient of the squared input gradient: a second
  derivative through the LSTM); ``train_step`` (one gradient-descent step, which assigns the
  weights);
- ``saved_model_v1_lstm_forward/``: the same LSTM with ``forward`` only;
- ``saved_model_v1_lstm_ops/``: the two ops alone on arguments (``RawOps``);
- ``saved_model_v1_expected.npz``: what 86713ce's own ``ad.saved_model.load`` of those
  directories computes, in the order ``run`` calls them (no pickle).
"""

import sys
from pathlib import Path

import numpy as np

import autodiff as ad
from autodiff.ops import recurrent
from autodiff.saved_model import file_format

BATCH, STEPS, FEATURES, UNITS = 2, 3, 2, 2
SPEC = ad.TensorSpec([BATCH, STEPS, FEATURES])
TARGET_SPEC = ad.TensorSpec([BATCH, UNITS])


def inputs():
    """The arguments the test calls the loaded functions with (the same in both processes)."""
    rng = np.random.default_rng(81)
    return (rng.normal(size=(BATCH, STEPS, FEATURES)).astype(np.float32),
            rng.normal(size=(BATCH, UNITS)).astype(np.float32))


class Forward(ad.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(80)
        self.layer = ad.keras.layers.LSTM(UNITS)
        self.layer.build((BATCH, STEPS, FEATURES))
        for w in self.layer.trainable_variables:
            w.assign(rng.normal(size=w.shape).astype(np.float32) * 0.7)

    @ad.function(input_signature=[SPEC])
    def forward(self, x):
        return self.layer(x)


class WithGradients(Forward):
    @ad.function(input_signature=[SPEC])
    def gradients(self, x):
        weights = list(self.layer.trainable_variables)
        with ad.GradientTape() as tape:
            tape.watch(x)
            loss = ad.reduce_sum(self.layer(x) ** 2)
        return [loss] + tape.gradient(loss, [x] + weights)

    @ad.function(input_signature=[SPEC])
    def second_order(self, x):
        weights = list(self.layer.trainable_variables)
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                loss = ad.reduce_sum(self.layer(x) ** 2)
            dx = inner.gradient(loss, x)
            penalty = ad.reduce_sum(dx * dx)
        return [penalty] + outer.gradient(penalty, [x] + weights)

    @ad.function(input_signature=[SPEC, TARGET_SPEC])
    def train_step(self, x, y):
        weights = list(self.layer.trainable_variables)
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((self.layer(x) - y) ** 2)
        for w, g in zip(weights, tape.gradient(loss, weights)):
            w.assign_sub(0.25 * g)   # by hand: 86713ce's optimizers could not be saved
        return loss


class RawOps(ad.Module):
    """The two ops themselves, on arguments: the gradient op's ``act`` then comes from no
    ``LSTMGates`` node, and the gates op's ``act`` is an output of the function."""

    @ad.function(input_signature=[ad.TensorSpec([BATCH, 4 * UNITS]), ad.TensorSpec([BATCH, UNITS])])
    def gates(self, z, c_prev):
        return list(recurrent.LSTM_GATES(z, c_prev))

    @ad.function(input_signature=[ad.TensorSpec([BATCH, 5 * UNITS])] +
                 [ad.TensorSpec([BATCH, UNITS])] * 3 + [ad.TensorSpec([BATCH, 5 * UNITS])])
    def gates_grad(self, act, c_prev, dh, dc, d_act):
        return list(recurrent.LSTM_GATES_GRAD(act, c_prev, dh, dc, d_act))


def raw_inputs():
    """``(z, c_prev)`` and ``(act, c_prev, dh, dc, d_act)`` for RawOps (d_act not zero)."""
    rng = np.random.default_rng(82)
    z, c_prev = (rng.normal(size=(BATCH, k * UNITS)).astype(np.float32) for k in (4, 1))
    act = rng.uniform(0.05, 0.95, size=(BATCH, 5 * UNITS)).astype(np.float32)
    dh, dc = (rng.normal(size=(BATCH, UNITS)).astype(np.float32) for _ in range(2))
    d_act = rng.normal(size=(BATCH, 5 * UNITS)).astype(np.float32)
    return (z, c_prev), (act, c_prev, dh, dc, d_act)


def run(loaded, loaded_forward, loaded_raw):
    """``{name: array}``: every value the test checks, computed in this order."""
    x, y = (ad.constant(a) for a in inputs())
    out = {"forward_only": loaded_forward.forward(x), "forward": loaded.forward(x)}
    gates_args, grad_args = raw_inputs()
    for k, value in enumerate(loaded_raw.gates(*map(ad.constant, gates_args))):
        out[f"gates_{k}"] = value
    for k, value in enumerate(loaded_raw.gates_grad(*map(ad.constant, grad_args))):
        out[f"gates_grad_{k}"] = value
    for name in ("gradients", "second_order"):
        for k, value in enumerate(getattr(loaded, name)(x)):
            out[f"{name}_{k}"] = value
    for step in range(2):
        out[f"train_step_{step}"] = loaded.train_step(x, y)
    for k, w in enumerate(loaded.saved_variables):
        out[f"variable_{k}"] = w
    out["forward_after_training"] = loaded.forward(x)
    return {name: np.asarray(value.numpy()) for name, value in out.items()}


def main(folder):
    assert file_format.FORMAT_VERSION == 1 and recurrent.LSTM_GATES.n_outputs == 3, \
        "run this with the code of commit 86713ce (see the docstring)"
    folder = Path(folder)
    ad.saved_model.save(WithGradients(), str(folder / "saved_model_v1_lstm"))
    ad.saved_model.save(Forward(), str(folder / "saved_model_v1_lstm_forward"))
    ad.saved_model.save(RawOps(), str(folder / "saved_model_v1_lstm_ops"))
    values = run(*(ad.saved_model.load(str(folder / f"saved_model_v1_lstm{part}"))
                   for part in ("", "_forward", "_ops")))
    np.savez(folder / "saved_model_v1_expected.npz", **values)
    print("\n".join(f"{k}: {v.shape} {v.dtype}" for k, v in values.items()))


if __name__ == "__main__":
    main(sys.argv[1])
