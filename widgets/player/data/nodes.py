"""What an op or a tensor node says of itself beyond its values: its dtype in
words, its params as one line, the set of tapes that recorded it.

Small lookups ``replay``'s builder makes once per node; pure Python (NumPy
only to name a dtype), no layout and no drawing.

    >>> from widgets.player.data.nodes import dtype_words
    >>> dtype_words("float32")
    ('f', 'float32')
"""

import numpy as np

__all__ = ["dtype_words", "params_text", "tape_groups"]

_DTYPE_WORDS = {}


def dtype_words(dtype):
    """``(kind, name)`` of a dtype, looked up once (NumPy's ``dtype.name`` is a Python
    property that cost a second per 10,000-record replay)."""
    words = _DTYPE_WORDS.get(dtype)
    if words is None:
        d = np.dtype(dtype)
        words = _DTYPE_WORDS[dtype] = (d.kind, d.name)
    return words


def params_text(params):
    """An op's params as one short line: ``'axis=0, keepdims=True'`` (60 characters at most)."""
    text = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()))
    return text if len(text) <= 60 else text[:59] + "…"


def tape_groups(ops):
    """Each distinct set of tapes that recorded an op: colour keys for the view."""
    groups, keys = [], {}
    for op in ops:
        tapes = tuple(op["tapes"])
        key = keys.get(tapes)
        if key is None:
            key = keys[tapes] = "+".join(str(t) for t in sorted(set(tapes)))
        op["group"] = key
        if key not in groups:
            groups.append(key)
    return groups
