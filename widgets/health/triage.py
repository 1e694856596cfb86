"""Cause first: which health row names a cause, in plain words, and in what order to read them.

A broken step flags hundreds of rows, and most of them only received the
damage: one Softmax makes a NaN and every layer before it sends NaN back.
``triage`` gives each row of ``group_health`` what the panel needs to show
the causes first:

- ``rank``: where the row goes when rows are read cause-first (smallest
  first; rows of one rank keep the forward order): the group that made the
  first NaN/Inf (0), rows whose variables get no gradient (1), a dead ReLU
  (2), exploding weights (3), an exploding gradient or update (4), a dead
  gradient (5), a vanishing gradient or update (6), rows that only
  received a NaN/Inf made elsewhere (7), rows with quiet flags only (8),
  healthy rows (9);
- ``kind``: the plain word of its first cause (``"NaN made"``, ``"None"``,
  ``"dead"``, ``"exploding"``, ``"vanishing"``, ``"NaN received"``) and
  ``kinds``: every word it earns, for the panel's counts and the boxes' badges;
- its ``flags`` sorted the same way (the cause's reason first, quiet ones last);
- ``status`` from its loud flags only (``"nan"``, ``"none"``, ``"flagged"``, ``"ok"``).

Quiet flags keep their reason, marked ``"quiet": True``, and count for
nothing: an embedding's gradient/weight ratio (a lookup sends gradient to the
rows it read only, so its ratio is far from a dense layer's by design), and a
vanishing ratio on a row whose weights are flagged as exploding (large
weights make the ratio small; the weights are the cause).

``cause_order(rows)`` is the order itself; ``health.js`` sorts the same way.

    >>> from widgets import group_health, replay
    >>> from widgets.health.triage import cause_order
    >>> model = ad.keras.Sequential([ad.keras.Input((3,)), ad.keras.layers.Dense(4),
    ...                              ad.keras.layers.Dense(1)], name="mlp")
    >>> _ = model.layers[1].kernel.assign(np.full((4, 1), np.nan, np.float32))
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.reduce_mean(model(ad.ones([2, 3])))
    >>> r = replay(tape, loss, model.trainable_variables)
    >>> rows = group_health(r.data, r.trace, model.trainable_variables)  # triage applied
    >>> [rows[i]["scope"] for i in cause_order(rows)][:2]      # the NaN layer first
    ['mlp/dense_1', 'mlp/dense']
"""

__all__ = ["triage", "cause_order", "RULES", "QUIET_RANK", "OK_RANK"]

RULES = {   # rule: (rank, plain word)
    "nan_made": (0, "NaN made"), "nan_weights": (0, "NaN made"),
    "none_gradient": (1, "None"),
    "dead_relu": (2, "dead"),
    "large_weights": (3, "exploding"),
    "ratio_high": (4, "exploding"), "update_high": (4, "exploding"),
    "update_large": (4, "exploding"),
    "zero_gradient": (5, "dead"),
    "ratio_low": (6, "vanishing"), "update_low": (6, "vanishing"),
    "nan_fed": (7, "NaN received"), "nan_gradient": (7, "NaN received"),
}
QUIET_RANK = 8
OK_RANK = 9
NAN_WORDS = {"NaN made", "NaN received"}
RELATIVE = {"ratio_high", "ratio_low", "update_high", "update_low"}


def _quiet(flag, why):
    flag["quiet"] = True
    flag["reason"] = f"{flag['reason']} (quiet: {why})"


def triage(rows, lookups=()):
    """Marks quiet flags and sets each row's ``rank``, ``kind``, ``kinds`` and ``status``.

    Args:
        rows: the rows of ``group_health`` (flags filled in).
        lookups: group ids whose variables are read by a lookup (``Gather``):
            embeddings, whose relative ratios are quiet.
    """
    lookups = set(lookups)
    for row in rows:
        flags = row["flags"]
        rules = {f["rule"] for f in flags}
        for f in flags:
            if f["rule"] in RELATIVE and row["group"] in lookups:
                _quiet(f, "an embedding's gradient reaches only the rows it looked up")
            elif f["rule"] == "ratio_low" and "large_weights" in rules:
                _quiet(f, "its large weights make the ratio small")
        flags.sort(key=lambda f: QUIET_RANK if f.get("quiet") else RULES.get(f["rule"], (7,))[0])
        loud = [f for f in flags if not f.get("quiet")]
        ranked = sorted((RULES.get(f["rule"], (QUIET_RANK - 1, "flagged")) for f in loud))
        kinds = []
        for _, word in ranked:
            if word not in kinds:
                kinds.append(word)
        row["rank"] = ranked[0][0] if ranked else (QUIET_RANK if flags else OK_RANK)
        row["kind"] = kinds[0] if kinds else None
        row["kinds"] = kinds
        row["status"] = ("nan" if NAN_WORDS & set(kinds) else "none" if "None" in kinds
                         else "flagged" if kinds else "ok")
    return rows


def cause_order(rows):
    """Row positions cause-first: by ``rank``, then in forward (group) order."""
    return sorted(range(len(rows)), key=lambda i: (rows[i].get("rank", OK_RANK), i))
