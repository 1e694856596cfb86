"""Control-flow ops for the random programs (issue 33, item 6): ``cond``, ``while_loop``,
``scan``, ``map_fn``, ``foldl`` and ``foldr`` over one tensor, each with smooth functions
inside so that every derivative mode compares.

Each template works on a tensor of any shape (the sequence ops run along its flattened
values, with an initializer so that an empty tensor is fine). The generated tests run them
eagerly and compiled (``test_compiled_programs.py``: inside ``ad.function``, where they are
staged nodes and a tape inside the trace differentiates them).
"""


def _threshold(rng, shape, f64):
    return None, {"t": float(rng.choice([-1.0, 0.0, 0.5]))}


def _iterations(rng, shape, f64):
    return None, {"n": int(rng.integers(0, 4))}


def _none(rng, shape, f64):
    return None, {}


OPS = {
    "cond": ("m.cond(m.reduce_sum({0}) > {t}, lambda: m.sin({0}) * {0}, "
             "lambda: m.square({0}) + 1.0)", _threshold),
    "while_loop": ("m.while_loop(lambda i, v: i < {n}, lambda i, v: (i + 1, m.tanh(v) * 1.5 + "
                   "{0}), (m.constant(0), {0}))[1]", _iterations),
    "scan": ("m.scan(lambda a, e: a * 0.5 + m.sin(e), m.reshape({0}, [-1]), "
             "initializer=m.zeros([], dtype={0}.dtype))", _none),
    "map_fn": ("m.map_fn(lambda e: e * m.cos(e), m.reshape({0}, [-1]))", _none),
    "foldl": ("m.foldl(lambda a, e: a * m.cos(e) + e, m.reshape({0}, [-1]), "
              "initializer=m.ones([], dtype={0}.dtype))", _none),
    "foldr": ("m.foldr(lambda a, e: a * 0.5 - m.sin(e) * e, m.reshape({0}, [-1]), "
              "initializer=m.zeros([], dtype={0}.dtype))", _none),
}
