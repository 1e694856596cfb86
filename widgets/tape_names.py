"""Display names of a tape's tensors, in linear time (``tape.names()`` does the same).

``GradientTape.names()`` counts the ``v`` names given so far once per new
tensor, which is quadratic in the records (0.3 s at 2,000 records, called
once per source by ``explain`` and again by ``str(tape)``). This gives the
same names with a running count; a test checks it against ``tape.names()``.

    >>> tape_names(tape) == tape.names()
    True
"""

__all__ = ["tape_names", "TEXT_LIMIT", "TEXT_CHARS", "NAME_LIMIT"]

TEXT_LIMIT = 300      # records; a longer tape's printout is not stored in a replay
TEXT_CHARS = 60_000   # characters; nor is a printout longer than this (very long names)
NAME_LIMIT = 64    # characters of a variable's name shown; a saved model may carry any name


def tape_names(tape, records=None):
    """``{tensor id: name}``: variables by name, other tensors v0, v1, ... in order.

    A variable's name longer than NAME_LIMIT characters is shortened (its
    first characters, then its length), so a hostile name cannot bloat a page.

    Args:
        tape: a GradientTape.
        records: its records if already read (None: read them; a freed tape has none).
    """
    if records is None:
        try:
            records = tape.records
        except RuntimeError:
            records = ()
    names = {v._id: _shown(v._name) for v in tape.watched_variables()}
    count = sum(1 for n in names.values() if n.startswith("v"))
    for rec in records:
        for t in rec.inputs + rec.outputs:
            if t._id not in names:
                names[t._id] = f"v{count}"
                count += 1
    return names


def _shown(name):
    """``name``, or its first characters and its length when it is longer than NAME_LIMIT.

    >>> _shown("w" * 100000)[-20:]
    'www…(100,000 chars)'
    """
    if len(name) <= NAME_LIMIT:
        return name
    return f"{name[:NAME_LIMIT - 16]}…({len(name):,} chars)"
