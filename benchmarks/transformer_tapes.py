"""A stack of transformer blocks with planted bugs: the debugger's held-out-style tapes.

``transformer_tape(n_records, bugs=...)`` records one training step of a
small language model with real tensor sizes (batch 16, 8 tokens, width 32,
MLP width 64 by default): an ``Embedding``, then as many blocks as make
about ``n_records`` records (each ``block_<i>`` holds ``ln1``, ``attention``
with ``q``/``k``/``v``/``out``, ``ln2`` and ``mlp`` with ``up``/``down``), a
``head`` and a cross-entropy ``loss``. About 55 records a block.

The bugs (each in one block, a third, a half, two thirds of the way down):

- ``"nan"``: a temperature typo, ``scores / 0.0`` instead of ``/ sqrt(d)``
  in ``block_<i>/attention``: Inf scores, and softmax makes NaN;
- ``"none"``: ``block_<i>/mlp``'s output goes through ``.numpy()`` and
  back (``ad.constant``): its variables get no gradient (None);
- ``"exploding"``: ``block_<i>/mlp/up``'s kernel initialised 100x too large;
- ``"dead"``: ``block_<i>/mlp/up``'s bias initialised to -100: its ReLU is dead.

Returns ``(tape, loss, model, where)``: ``where`` maps each planted bug to
the scope of the group that names its cause (what the debugger should
point at). Every tape is persistent. With ``history=True`` the step is
recorded inside ``widgets.explain.record_history()`` (the page then names
the ``.numpy()`` line).

    >>> tape, loss, model, where = transformer_tape(1000, bugs=("nan", "none"))
    >>> where["none"]
    'lm/block_12/mlp'
"""

import contextlib

import numpy as np

import autodiff as ad

__all__ = ["transformer_tape", "TinyLM", "RECORDS_PER_BLOCK"]

RECORDS_PER_BLOCK = 55
BUGS = ("nan", "none", "exploding", "dead")


class Block(ad.keras.layers.Layer):
    """Pre-norm transformer block: ``x + attention(ln1(x))``, then ``x + mlp(ln2(x))``."""

    def __init__(self, width, hidden, name, bug=None):
        super().__init__(name=name)
        self.width, self.bug = width, bug
        self.ln1 = ad.keras.layers.LayerNormalization(name="ln1")
        self.ln2 = ad.keras.layers.LayerNormalization(name="ln2")
        self.q, self.k, self.v, self.out = (ad.keras.layers.Dense(width, name=n)
                                            for n in ("q", "k", "v", "out"))
        self.up = ad.keras.layers.Dense(hidden, activation="relu", name="up")
        self.down = ad.keras.layers.Dense(width, name="down")

    def call(self, x):
        h = self.ln1(x)
        with ad.name_scope("attention"):
            q, k, v = self.q(h), self.k(h), self.v(h)
            temperature = 0.0 if self.bug == "nan" else float(np.sqrt(self.width))
            scores = ad.matmul(q, k, transpose_b=True) / temperature
            x = x + self.out(ad.matmul(ad.nn.softmax(scores), v))
        h = self.ln2(x)
        with ad.name_scope("mlp"):
            m = self.down(self.up(h))
            if self.bug == "none":       # the bug: out of the library and back
                m = ad.constant(m.numpy())
        return x + m


class TinyLM(ad.keras.Model):
    """Embedding, ``depth`` Blocks, a Dense head over the vocabulary."""

    def __init__(self, depth, vocab=64, width=32, hidden=64, bugs_at=None):
        super().__init__(name="lm")
        bugs_at = bugs_at or {}
        self.embed = ad.keras.layers.Embedding(vocab, width, name="embed")
        self.blocks = [Block(width, hidden, f"block_{i}", bugs_at.get(i)) for i in range(depth)]
        self.head = ad.keras.layers.Dense(vocab, name="head")

    def call(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def transformer_tape(n_records, bugs=(), batch=16, tokens=8, width=32, hidden=64, seed=0,
                     history=False):
    """One step of ``TinyLM`` with about ``n_records`` records and the ``bugs`` planted.

    Returns:
        ``(tape, loss, model, where)`` (see the module docstring); with
        ``history=True`` a fifth item, the History.
    """
    unknown = set(bugs) - set(BUGS)
    if unknown:
        raise ValueError(f"unknown bugs {sorted(unknown)}; choose from {BUGS}")
    depth = max(4, round((n_records - 12) / RECORDS_PER_BLOCK))
    at = {bug: depth * (k + 1) // (len(BUGS) + 1) for k, bug in enumerate(BUGS) if bug in bugs}
    ad.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    vocab = 64
    model = TinyLM(depth, vocab, width, hidden,
                   {i: bug for bug, i in at.items() if bug in ("nan", "none")})
    ids = rng.integers(0, vocab, size=(batch, tokens + 1))
    x, y = ad.constant(ids[:, :-1].astype(np.int32)), ad.constant(ids[:, 1:].astype(np.int32))
    model(x[:1])                                   # build the weights outside the tape
    if "exploding" in at:
        up = model.blocks[at["exploding"]].up
        up.kernel.assign(up.kernel.numpy() * 100.0)
    if "dead" in at:
        up = model.blocks[at["dead"]].up
        up.bias.assign(np.full(up.bias.shape, -100.0, np.float32))
    where = {bug: f"lm/block_{i}/" + ("attention" if bug == "nan" else
                                       "mlp" if bug == "none" else "mlp/up")
             for bug, i in at.items()}
    recorder = contextlib.nullcontext(None)
    if history:
        from widgets.explain import record_history
        recorder = record_history()
    with recorder as h:
        with ad.GradientTape(persistent=True) as tape:
            logits = model(x)
            with ad.name_scope("loss"):
                loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
    return (tape, loss, model, where) + ((h,) if history else ())
