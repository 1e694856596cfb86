"""Reading JSON that nobody vouches for: one error type, every key and value checked.

``file_format.py`` (graphs) and ``store.py`` (the pointer) read their
documents with these, so that any damage or mischief in a file ends as one
error type, ``FormatError``, whose message names the JSON path of the
problem:

- ``parse_json`` refuses what the writer never writes: a key twice in one
  object (Python's ``json`` keeps the last one silently), NaN and
  Infinity, nesting deeper than ``MAX_JSON_DEPTH``.
- ``check_keys`` refuses a key the format does not define, so a misspelt
  key is an error, never a key quietly ignored; ``field`` gives a key
  that must be there, of the given type.
- ``decode_shape`` and ``decode_dtype`` bound what a shape or dtype may be.
- ``short_text`` and ``short_repr`` cut long values in messages: a name in
  a file may be a megabyte long, its message stays readable.

    >>> from autodiff.saved_model.checked_json import parse_json
    >>> parse_json(b'{"n_y": 1, "n_x": 1, "n_y": 2}')
    Traceback (most recent call last):
    autodiff.saved_model.checked_json.FormatError: the key 'n_y' appears twice in one object

It reads no files (``safe_files.py`` does) and knows nothing of graphs.
"""

import json

from .. import dtypes

__all__ = ["FormatError", "parse_json", "check_keys", "field", "list_of", "decode_dtype",
           "decode_shape", "short_text", "short_repr", "MAX_JSON_DEPTH"]

MAX_JSON_DEPTH = 64          # our own files nest about 15 deep
MAX_RANK = 64
MAX_DIM = 1 << 48            # larger sizes are corruption, not models


class FormatError(ValueError):
    """A saved model's files are malformed: the one error ``load`` raises for a bad file.

    The message names the file and the JSON path, e.g. ``.../saved_model.json:
    $.functions.f.traces[0].graph.nodes[3].inputs[1]: ... is not a valid reference``.
    Public as ``ad.saved_model.FormatError``.
    """


def parse_json(raw):
    """The JSON document in ``raw`` (bytes), refusing what the writer never writes.

    Raises:
        FormatError: not UTF-8 JSON, a key twice in one object, NaN or
            Infinity, or nesting deeper than ``MAX_JSON_DEPTH``. The message
            does not name the file: the caller adds it.
    """
    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_object,
                              parse_constant=_constant)
    except RecursionError:
        raise FormatError(f"nested too deeply (over {MAX_JSON_DEPTH} levels)") from None
    except FormatError:
        raise
    except (ValueError, UnicodeDecodeError) as err:
        raise FormatError(f"is not valid JSON (truncated or corrupted?): {err}") from None
    _check_depth(document)
    return document


def _check_depth(document):
    """Refuses nesting deeper than MAX_JSON_DEPTH (checked without recursion)."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise FormatError(f"nested too deeply (over {MAX_JSON_DEPTH} levels)")
        children = value.values() if isinstance(value, dict) else \
            value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))


def _object(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise FormatError(f"the key {short_repr(twice)} appears twice in one object")
    return obj


def _constant(name):
    raise FormatError(f"{name} is not JSON (the format never writes NaN or Infinity)")


def check_keys(obj, where, allowed):
    """Refuses an object holding a key outside ``allowed``: a misspelt key is never ignored."""
    if not isinstance(obj, dict):
        raise FormatError(f"{where}: expected an object, got {short_repr(obj)}")
    unknown = next((key for key in obj if key not in allowed), None)
    if unknown is not None:
        raise FormatError(f"{where}: unknown key {short_repr(unknown)} (the format defines "
                          f"{', '.join(map(repr, allowed))} here)")


def short_text(text, limit=120):
    """``text``, its middle cut out if longer than ``limit`` (names in a file may be huge)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-(limit // 2):]}"


def short_repr(value):
    """``repr(value)``, cut to under 80 characters."""
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def list_of(value, where):
    """``value``, which must be a list."""
    if not isinstance(value, list):
        raise FormatError(f"{where}: expected a list, got {short_repr(value)}")
    return value


def field(obj, key, kinds, where):
    """``obj[key]``, which must exist and be one of ``kinds``."""
    if not isinstance(obj, dict):
        raise FormatError(f"{where}: expected an object, got {short_repr(obj)}")
    if key not in obj:
        raise FormatError(f"{where}: the key {key!r} is missing")
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _tuple(kinds)):
        raise FormatError(f"{where}.{key}: expected {_names(kinds)}, got {short_repr(value)}")
    return value


def _tuple(kinds):
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _names(kinds):
    return " or ".join(k.__name__ for k in _tuple(kinds))


def decode_dtype(name, where):
    try:
        return dtypes.as_dtype(name)
    except (TypeError, ValueError, KeyError):
        raise FormatError(f"{where}: unknown dtype {short_repr(name)}") from None


def decode_shape(shape, where, allow_none=False):
    if shape is None and allow_none:
        return None
    shape = list_of(shape, where)
    if len(shape) > MAX_RANK:
        raise FormatError(f"{where}: rank {len(shape)} is over the limit of {MAX_RANK}")
    if not all((isinstance(d, int) and not isinstance(d, bool) and d >= 0)
               or (allow_none and d is None) for d in shape) or \
            any(d is not None and d > MAX_DIM for d in shape):
        raise FormatError(f"{where}: {short_repr(shape)} is not a valid shape")
    return tuple(shape)
