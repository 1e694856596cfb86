"""T1-T4: whole training steps (forward, gradient, an Adam/AdamW update with a learning-rate
schedule), here against TensorFlow.

Each model is written once against the Keras API and built twice, from
``ad.keras`` and from ``tf.keras``, with the same weights (``set_weights``);
the step is the custom loop a practitioner writes::

    with GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

Columns: ``autodiff`` (the step run eagerly), ``jit`` (``ad.function(step,
jit_compile=True)``), ``tf`` (``tf.function(step)``, the baseline the ratios
divide by: no hand-written NumPy exists for these), ``xla``
(``tf.function(step, jit_compile=True)``), ``torch`` and ``jax``
(``training_peers.py``: each library's own idiom and optimizer). Every implementation has its own
model and optimizer, so the steps do not share state. Before timing, every
model's inference output on the batch must agree with the others (rtol 1e-4),
and so must the first step's loss where no Dropout draws differ (T1, T3, T4).

``--smoke`` builds a batch of 4 and leaves out the xla column (its compile
takes seconds per model; the step it compiles is the tf column's).

- T1 transformer block: batch 32, 16 tokens of width 32, 4-head self-attention,
  residual + LayerNorm, a 128-wide relu MLP, residual + LayerNorm, mean over
  tokens, 10 logits; AdamW (weight decay 1e-4) on a cosine-decay schedule.
- T2 CNN: batch 32, 16x16x3, (conv 3x3 16 + BatchNorm + relu + max-pool 2) then
  the same with 32 channels, Dropout 0.25, 10 logits; Adam on exponential decay.
- T3 LSTM and T4 GRU: batch 32, 20 steps of 16 features, 64 units, 10 logits;
  Adam on exponential decay.

The loss is sparse softmax cross-entropy from logits. The ``torch`` and
``jax`` columns (``training_peers.py``) start from the same weights, and
their inference output and first loss are checked against autodiff's too.
"""

import numpy as np

from benchmarks import registry, training_peers
from benchmarks.registry import import_peer, load_autodiff, note, register

BATCH = 32


def transformer(k, seq=16, width=32, heads=4):
    """A post-norm transformer encoder block and a classifier head (Keras functional)."""
    layers = k.layers
    inputs = k.Input((seq, width))
    attended = layers.MultiHeadAttention(heads, width // heads)(inputs, inputs)
    h = layers.LayerNormalization()(layers.Add()([inputs, attended]))
    mlp = layers.Dense(width)(layers.Dense(4 * width, activation="relu")(h))
    h = layers.LayerNormalization()(layers.Add()([h, mlp]))
    return k.Model(inputs, layers.Dense(10)(layers.GlobalAveragePooling1D()(h)))


def cnn(k, hw=16):
    """Two conv + BatchNorm + relu + pool stages, Dropout, a dense head."""
    layers = k.layers
    stages = []
    for channels in (16, 32):
        stages += [layers.Conv2D(channels, 3, padding="same"), layers.BatchNormalization(),
                   layers.ReLU(), layers.MaxPooling2D()]
    return k.Sequential([k.Input((hw, hw, 3)), *stages, layers.Flatten(),
                         layers.Dropout(0.25), layers.Dense(10)])


def recurrent(kind):
    def make(k, steps=20, features=16, units=64):
        return k.Sequential([k.Input((steps, features)), getattr(k.layers, kind)(units),
                             k.layers.Dense(10)])
    return make


def adamw_cosine(k):
    return k.optimizers.AdamW(k.optimizers.schedules.CosineDecay(1e-3, 1000),
                              weight_decay=1e-4)


def adam_exponential(k):
    return k.optimizers.Adam(k.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.96))


def train_step(module, model, optimizer):
    """The custom training loop's step for ``module`` (``ad`` or ``tf``)."""
    loss_fn = module.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with module.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def _data(model_input_shape, seed):
    batch = 4 if registry.SMOKE else BATCH
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch,) + tuple(model_input_shape)).astype(np.float32)
    return x, rng.integers(0, 10, batch).astype(np.int32)


def training_impls(key, make_model, make_optimizer, input_shape, same_first_loss):
    """{name: callable one training step} with the checks described above."""
    ad, tf = load_autodiff(), import_peer("tensorflow")
    x, y = _data(input_shape, seed=len(key))
    variants = {}   # name: (module, model, step)
    reference = None
    for name, module, compile_with in [("autodiff", ad, None), ("jit", ad, "jit"),
                                       ("tf", tf, "graph"), ("xla", tf, "xla")]:
        if module is None or (registry.SMOKE and compile_with == "xla"):
            continue   # the smoke run leaves out XLA's compile (seconds per model)
        model = make_model(module.keras)
        if reference is None:
            reference = model.get_weights()
        model.set_weights(reference)
        step = train_step(module, model, make_optimizer(module.keras))
        if compile_with is not None:
            step = module.function(step, jit_compile=compile_with != "graph")
        variants[name] = (module, model, step)
    inputs = {name: (m.constant(x), m.constant(y)) for name, (m, _, _) in variants.items()}
    outputs = {name: model(inputs[name][0], training=False).numpy()
               for name, (_, model, _) in variants.items()}
    first = next(iter(outputs.values()))
    for name, out in outputs.items():
        if not np.allclose(out, first, rtol=1e-4, atol=1e-5):
            raise registry.GradientMismatch(f"{key}: {name}'s model output differs by "
                                            f"{np.abs(out - first).max():.3g}")
    losses = {name: float(step(*inputs[name])) for name, (_, _, step) in variants.items()}
    if same_first_loss and not np.allclose(list(losses.values()), losses["autodiff"],
                                           rtol=1e-4):
        raise registry.GradientMismatch(f"{key}: first-step losses differ: {losses}")
    if not all(np.isfinite(list(losses.values()))):
        raise registry.GradientMismatch(f"{key}: a first-step loss is not finite: {losses}")
    if "tf" not in variants:
        note(f"{key}: TensorFlow is not installed; the row has no baseline")
    impls = {name: (lambda step=step, args=inputs[name]: step(*args))
             for name, (_, _, step) in variants.items()}
    for name, build in (("torch", training_peers.torch_step), ("jax", training_peers.jax_step)):
        module = import_peer(name)
        if module is not None:
            impls[name] = _checked_peer(key, name, build(module, key, reference, x, y), x,
                                        first, losses["autodiff"] if same_first_loss else None)
    return impls


def _checked_peer(key, name, peer, x, output, loss):
    """A peer's step, once its inference output (and first loss) agree with autodiff's."""
    predict, step = peer
    out = predict(x)
    if out.shape != output.shape or not np.allclose(out, output, rtol=1e-4, atol=1e-5):
        raise registry.GradientMismatch(f"{key}: {name}'s model output differs by "
                                        f"{np.abs(out - output).max():.3g}")
    first = float(step())
    if not np.isfinite(first) or (loss is not None and not np.isclose(first, loss, rtol=1e-4)):
        raise registry.GradientMismatch(f"{key}: {name}'s first-step loss {first} is not "
                                        f"autodiff's {loss}")
    return step


MODELS = {
    "T1": ("transformer training step", transformer, adamw_cosine, (16, 32), True),
    "T2": ("CNN+BN+Dropout training step", cnn, adam_exponential, (16, 16, 3), False),
    "T3": ("LSTM training step", recurrent("LSTM"), adam_exponential, (20, 16), True),
    "T4": ("GRU training step", recurrent("GRU"), adam_exponential, (20, 16), True),
}


def _register(key, title, make_model, make_optimizer, input_shape, same_first_loss):
    @register(key, title, "time", "ms", 1e3, "jit <= 1.0x tf",
              lambda tf, jit: jit <= tf, baseline="tf", judged="jit")
    def build():
        return training_impls(key, make_model, make_optimizer, input_shape, same_first_loss)
    return build


for _key, _spec in MODELS.items():
    _register(_key, *_spec)
