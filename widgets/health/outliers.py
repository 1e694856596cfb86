"""The rules that compare one group (or layer) with the others, and how their numbers read.

A layer that explodes or vanishes is one whose numbers are far from the
other layers': ``relative_flags`` adds, to a list of rows, the flags of the
rules that compare each row with the median of the OTHER rows, or of the
rows of its role (the same layer in the other blocks of a repeated stack).
Each reason starts with the plain word (exploding, vanishing) and gives the
value, how far off it is, and the median it is compared with:

- ``large_weights``: its weights' RMS is ``LARGE_WEIGHTS`` (10) times the
  median ("exploding weights");
- ``ratio_high`` / ``ratio_low``: its gradient/weight ratio ``RATIO_OFF``
  (100) times above or below the median ("exploding gradient", "vanishing gradient");
- ``update_high`` / ``update_low``: the same for the update/weight ratio;
- ``update_large``: one update changes its weights by more than
  ``UPDATE_LARGE`` (10%), whatever the others do.

``widgets/health/rows.py`` uses them on the groups of one replay, and
``TrainingRecorder.flags`` on the layers at the last recorded step.
``medians_of_others`` gives every position its median in one sort (a
median per row over the rest would be quadratic: an unrolled RNN has
thousands of groups); ``compact`` writes a number as the health panel does.

    >>> from widgets.health.outliers import relative_flags
    >>> rows = [{"rms": r, "ratio": None, "grad_of": "weights", "update_ratio": None,
    ...          "flags": []} for r in (0.5, 0.4, 40.0, 0.45)]
    >>> relative_flags(rows); rows[2]["flags"]
    [{'rule': 'large_weights', 'reason': 'exploding weights: RMS 40, 88.9x the median of the other groups (0.45)'}]
"""

import re

import numpy as np

__all__ = ["relative_flags", "medians_of_others", "compact", "flag", "role_of", "LARGE_WEIGHTS",
           "RATIO_OFF", "UPDATE_LARGE", "PEERS"]

LARGE_WEIGHTS = 10.0   # weights' RMS this many times the others' median
RATIO_OFF = 100.0      # gradient/weight (or update/weight) ratio this far off the median
UPDATE_LARGE = 0.1     # an update that changes the weights by more than this share
PEERS = 3              # rows of one role (the same layer in repeated blocks) compared together


def flag(rule, reason):
    """A row's flag: ``{"rule": rule, "reason": reason}``."""
    return {"rule": rule, "reason": reason}


def medians_of_others(values):
    """For each position, the median of the OTHER positive values (None: fewer than two).

    One sort for all positions (a median per group over the rest would be
    quadratic in the groups: an unrolled RNN has thousands).
    """
    ranked = sorted((v, i) for i, v in enumerate(values) if v is not None and v > 0)
    order = {i: p for p, (_, i) in enumerate(ranked)}
    ordered = [v for v, _ in ranked]
    n = len(ordered)
    medians = []
    for i, v in enumerate(values):
        p = order.get(i)
        m = n - 1 if p is not None else n          # how many others
        if m < 2:
            medians.append(None)
            continue

        def at(k):   # the k-th of the others, skipping position p
            return ordered[k + 1] if p is not None and k >= p else ordered[k]
        medians.append(at(m // 2) if m % 2 else (at(m // 2 - 1) + at(m // 2)) / 2)
    return medians


def compact(x):
    """3 significant digits, an exponent below 1e-3 and from 1e3 up, as health.js shows
    numbers: ``1.87e-9``, ``8.95e3``, ``0.25``, ``2``."""
    if x == 0 or not np.isfinite(x):
        return str(x)
    text = f"{x:.2e}" if abs(x) < 1e-3 or abs(x) >= 1e3 else f"{x:.3g}"
    mantissa, _, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def _times(x):
    return f"{compact(x)}x" if x >= 1 else f"1/{compact(1 / x)}"


def role_of(scope):
    """A group's role: its scope with every number a ``*`` (``lm/block_7/mlp/up`` ->
    ``lm/block_*/mlp/up``), so the same layer of repeated blocks shares one."""
    return re.sub(r"\d+", "*", scope)


def _medians(values, roles):
    """Per position ``(median of the others, who the others are)``: the others of the
    same role when that role has at least ``PEERS`` values, else every other row."""
    overall = medians_of_others(values)
    out = [(m, None) for m in overall]
    if roles is None:
        return out
    by_role = {}
    for i, role in enumerate(roles):
        by_role.setdefault(role, []).append(i)
    for role, where in by_role.items():
        sub = [values[i] for i in where]
        if sum(v is not None and v > 0 for v in sub) < PEERS:
            continue
        for i, m in zip(where, medians_of_others(sub)):
            out[i] = (m, role)
    return out


def relative_flags(rows, others="groups"):
    """Adds the rules that compare a row with the median of the others to ``rows``.

    A layer of a repeated block is compared with the same layer of the other
    blocks (rows with the same ``role``, when ``PEERS`` or more have a value):
    the query kernels of attention have their own normal ratio, unlike an MLP's.

    Args:
        rows: dicts with ``rms`` (weights' root mean square), ``ratio``,
            ``grad_of`` and ``update_ratio`` (None where unknown), a
            ``flags`` list and optionally a ``role`` (``role_of(scope)``);
            the training recorder uses it too, per step.
        others: what the rows are, for the reasons ("the median of the other groups").
    """
    roles = [r.get("role") for r in rows] if any("role" in r for r in rows) else None
    rms = [r["rms"] for r in rows]
    ratios = [r["ratio"] if r["grad_of"] == "weights" else None for r in rows]
    updates = [r["update_ratio"] for r in rows]
    medians = {"rms": _medians(rms, roles), "gradient/weight": _medians(ratios, roles),
               "update/weight": _medians(updates, roles)}

    def median_text(med, role):
        whom = f"{role} {others}" if role else others
        return f"the median of the other {whom} ({compact(med)})"

    for i, row in enumerate(rows):
        med, role = medians["rms"][i]
        if med and rms[i] and rms[i] >= LARGE_WEIGHTS * med:
            row["flags"].append(flag("large_weights", f"exploding weights: RMS {compact(rms[i])}, "
                                     f"{_times(rms[i] / med)} {median_text(med, role)}"))
        for name, values, high, low in (("gradient/weight", ratios, "ratio_high", "ratio_low"),
                                        ("update/weight", updates, "update_high", "update_low")):
            med, role = medians[name][i]
            value = values[i]
            if not med or not value:
                continue
            what = "gradient" if name == "gradient/weight" else "update"
            if value >= RATIO_OFF * med:
                row["flags"].append(flag(high, f"exploding {what}: {name} {compact(value)}, "
                                               f"{_times(value / med)} {median_text(med, role)}"))
            elif value * RATIO_OFF <= med:
                row["flags"].append(flag(low, f"vanishing {what}: {name} {compact(value)}, "
                                              f"{_times(value / med)} of {median_text(med, role)}"))
        if updates[i] is not None and updates[i] > UPDATE_LARGE:
            row["flags"].append(flag("update_large", f"exploding update: one update changes its "
                                     f"weights by {updates[i]:.0%} (over {UPDATE_LARGE:.0%})"))
