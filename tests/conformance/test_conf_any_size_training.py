"""A training step with a tape inside ``ad.function`` and a ``None`` batch size, against
TensorFlow 2: one trace serves every batch size, as there.

Where they would write the batch size into the graph as a number, these read it in the
graph (``autodiff/ops/open_sizes.py``): the gradient rules of ``reduce_mean`` (its
``1/n``), ``reduce_sum`` (the broadcast back), reshapes, ``expand_dims``/``squeeze``,
slicing and broadcasting; a missing cotangent's zeros; Keras' loss reduction,
``Flatten``, ``Dense``, ``Dropout``, and the recurrent layers' zero states and input
projections. Each step's loss and the weights after it are compared with TensorFlow's
at batch sizes 2, 3, 5, 1 and 4 (the hand-written step traced and compiled).
"""

import numpy as np
import pytest

import autodiff as ad
from benchmarks.workloads_training import train_step

SIZES = (2, 3, 5, 1, 4)


def _raw_step(m, jit=False):
    """A hand-written softmax regression whose loss uses every rewritten rule."""
    w = m.Variable(np.linspace(-0.5, 0.5, 12, dtype=np.float32).reshape(4, 3))
    b = m.Variable(np.zeros(3, np.float32))
    kwargs = {"jit_compile": True} if jit else {}

    @m.function(input_signature=[m.TensorSpec([None, 4], m.float32),
                                 m.TensorSpec([None], m.int32)], **kwargs)
    def step(x, y):
        with m.GradientTape() as tape:
            h = m.nn.relu(m.matmul(x, w) + b)
            xent = m.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h)
            loss = m.reduce_mean(xent) + 0.1 * m.reduce_mean(m.square(h[:, 0]))
            loss += 0.01 * m.reduce_sum(m.squeeze(m.reshape(h, [-1, 1, 3]), axis=1))
            loss += 0.01 * m.reduce_mean(m.expand_dims(m.reduce_sum(h, axis=1), 1) * h)
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    return step, [w, b]


def _keras_step(m, kind):
    keras = m.keras
    m.keras.utils.set_random_seed(0)
    if kind == "mlp":
        layers = [keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                  keras.layers.Dense(3)]
    elif kind in ("lstm", "gru"):   # fused gates, their zero initial state, a batch of any size
        rnn = keras.layers.LSTM if kind == "lstm" else keras.layers.GRU
        layers = [keras.Input((4, 6)), rnn(5, return_sequences=True), rnn(4),
                  keras.layers.Dropout(0.0), keras.layers.Dense(3)]
    else:   # a sequence: layer norm, a Dense on a 3-D input, pooling, flatten
        layers = [keras.Input((4, 6)), keras.layers.LayerNormalization(), keras.layers.Dense(5, activation="tanh"),
                  keras.layers.GlobalAveragePooling1D(), keras.layers.Flatten(),
                  keras.layers.Dense(3)]
    model = keras.Sequential(layers)
    optimizer = keras.optimizers.Adam(0.01)
    optimizer.build(model.trainable_variables)
    shape = [None, 4] if kind == "mlp" else [None, 4, 6]
    step = m.function(train_step(m, model, optimizer),   # the benchmarks' T1-T4 step
                      input_signature=[m.TensorSpec(shape, m.float32),
                                       m.TensorSpec([None], m.int32)])
    return step, model


def _batches(kind):
    rng = np.random.default_rng(7)
    for n in SIZES:
        x = rng.standard_normal((n, 4) if kind == "mlp" else (n, 4, 6)).astype(np.float32)
        yield x, rng.integers(0, 3, size=n).astype(np.int32)


@pytest.mark.parametrize("jit", [False, True], ids=["traced", "compiled"])
def test_a_hand_written_step_is_traced_once_for_every_batch_size(tf, jit):
    ours, our_vars = _raw_step(ad, jit)
    theirs, their_vars = _raw_step(tf)
    for x, y in _batches("mlp"):
        np.testing.assert_allclose(float(ours(x, y)), float(theirs(x, y)), rtol=1e-5)
        for a, b in zip(our_vars, their_vars):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("kind", ["mlp", "sequence", "lstm", "gru"])
def test_a_keras_step_is_traced_once_for_every_batch_size(tf, kind):
    ours, our_model = _keras_step(ad, kind)
    theirs, their_model = _keras_step(tf, kind)
    their_model.set_weights([w.numpy() for w in our_model.weights])
    for x, y in _batches(kind):
        np.testing.assert_allclose(float(ours(x, y)), float(theirs(x, y)), rtol=1e-5)
    for a, b in zip(our_model.weights, their_model.weights):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-4, atol=1e-6)
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1
