"""Answers as plain data: what leaves a student's sandbox, and how the grader reads it back.

The grader never takes a verdict from a student's kernel. Inside the sandbox, each
graded check call hands its prediction to a ``Recorder``, which writes it as JSON
made of plain values only; the teacher's process reads the file back with
``from_plain`` (strict: anything else is "not an answer") and compares it with the
key using ``answers.verdict``. A student who fakes the file gains nothing that
typing an answer would not: the key never enters the sandbox.

The format, by example::

    None, True, 3, 2.5, "Log"          as JSON: null, true, 3, 2.5, "Log"
    float("nan")                       {"float": "nan"}     (also "inf", "-inf")
    (2, 3)                             {"tuple": [2, 3]}
    [1.0, None]                        [1.0, null]
    np.array([[1, 2]], "float32")      {"array": [[1.0, 2.0]], "dtype": "float32", "shape": [1, 2]}
    {"w": 2.0}                         {"dict": [["w", 2.0]]}
    ... (the blank)                    {"blank": true}
    anything else                      {"unsupported": "<its type's name>"}

A Tensor (anything with ``.numpy()``) becomes its array; a DType its name.

What it must not do: import ``autodiff`` at import time, or let a student's object
run code in the teacher's process (``from_plain`` builds only lists, tuples, dicts,
numbers, strings and NumPy arrays of number dtypes).
"""

import json
import math

import numpy as np

MAX_DEPTH = 16
MAX_ITEMS = 1_000_000      # numbers in one answer
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"}


class NotAnAnswer(ValueError):
    """What a sandbox handed back is not plain data in the format above."""


def to_plain(value, _depth=0):
    """``value`` as JSON-ready plain data (run inside the sandbox, on a student's value).

    Example:
        >>> to_plain((2, [1.5, None]))
        {'tuple': [2, [1.5, None]]}
    """
    if _depth > MAX_DEPTH:
        return {"unsupported": "nested too deeply"}
    if value is None or value is Ellipsis:
        return None if value is None else {"blank": True}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    if isinstance(value, str):
        return str(value)
    if isinstance(value, tuple):
        return {"tuple": [to_plain(v, _depth + 1) for v in value]}
    if isinstance(value, list):
        return [to_plain(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        return {"dict": [[str(k), to_plain(v, _depth + 1)] for k, v in value.items()]}
    if type(value).__name__ == "DType" and isinstance(getattr(value, "name", None), str):
        return str(value.name)
    if isinstance(value, np.dtype):
        return str(value)
    try:
        if hasattr(value, "numpy"):                       # a Tensor, a Variable
            array = np.asarray(value.numpy())
        elif isinstance(value, (np.ndarray, np.generic)):
            array = np.asarray(value)
        else:
            return {"unsupported": type(value).__name__}
    except Exception:
        return {"unsupported": type(value).__name__}
    if array.dtype.name not in DTYPES or array.size > MAX_ITEMS:
        return {"unsupported": f"array of {array.dtype.name}"}
    items = array.astype(np.float64 if array.dtype.kind == "f" else array.dtype).tolist()
    return {"array": _numbers(items), "dtype": array.dtype.name, "shape": list(array.shape)}


def from_plain(data):
    """The value ``to_plain`` described, rebuilt in the teacher's process.

    Raises:
        NotAnAnswer: ``data`` is not in the format (or too big, or too deep).

    Example:
        >>> from_plain({"array": [1.0, 2.0], "dtype": "float32", "shape": [2]})
        array([1., 2.], dtype=float32)
    """
    return _rebuild(data, 0, [0])


def _rebuild(data, depth, count):
    count[0] += 1
    if depth > MAX_DEPTH or count[0] > MAX_ITEMS:
        raise NotAnAnswer("an answer nested too deeply or too big")
    if data is None or isinstance(data, (bool, str)):
        return data
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        return float(data)
    if isinstance(data, list):
        return [_rebuild(v, depth + 1, count) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 3):
        raise NotAnAnswer(f"not plain data: {type(data).__name__}")
    (key, value), *_ = data.items()
    if set(data) == {"blank"} and value is True:
        return Ellipsis
    if set(data) == {"float"} and value in ("nan", "inf", "-inf"):
        return float(value)
    if set(data) == {"tuple"} and isinstance(value, list):
        return tuple(_rebuild(v, depth + 1, count) for v in value)
    if set(data) == {"dict"} and isinstance(value, list):
        pairs = [(k, _rebuild(v, depth + 1, count)) for k, v in _pairs(value)]
        return dict(pairs)
    if set(data) == {"unsupported"}:
        raise NotAnAnswer(f"not an answer: {str(value)[:80]}")
    if set(data) == {"array", "dtype", "shape"}:
        return _array(data, count)
    raise NotAnAnswer(f"not plain data: keys {sorted(data)[:4]}")


def _pairs(value):
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise NotAnAnswer("a dict answer must be [key, value] pairs with string keys")
        yield pair


def _array(data, count):
    dtype, shape = data["dtype"], data["shape"]
    if dtype not in DTYPES:
        raise NotAnAnswer(f"an array of dtype {str(dtype)[:20]!r} is not an answer")
    if not (isinstance(shape, list) and len(shape) <= MAX_DEPTH
            and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape)):
        raise NotAnAnswer("an array's shape must be a list of sizes")
    size = math.prod(shape)
    count[0] += size
    if size > MAX_ITEMS or count[0] > MAX_ITEMS:
        raise NotAnAnswer("an array answer is too big")
    flat = []
    _flatten(data["array"], shape, flat)
    values = [float(v) if isinstance(v, str) else v for v in flat]
    return np.array(values, dtype=np.float64 if dtype.startswith("float") else None
                    ).astype(dtype).reshape(shape)


def _flatten(nested, shape, out):
    """Checks that ``nested`` has exactly ``shape`` and holds numbers (or nan/inf strings)."""
    if not shape:
        if isinstance(nested, str) and nested in ("nan", "inf", "-inf"):
            out.append(nested)
        elif isinstance(nested, (int, float)):   # bool is an int: a bool array's entries
            out.append(nested)
        else:
            raise NotAnAnswer("an array's entries must be numbers")
        return
    if not (isinstance(nested, list) and len(nested) == shape[0]):
        raise NotAnAnswer("an array's entries do not have its shape")
    for item in nested:
        _flatten(item, shape[1:], out)


def _number(x):
    return x if math.isfinite(x) else {"float": "nan" if math.isnan(x) else
                                       ("inf" if x > 0 else "-inf")}


def _numbers(items):
    if isinstance(items, list):
        return [_numbers(v) for v in items]
    if isinstance(items, float) and not math.isfinite(items):
        return "nan" if math.isnan(items) else ("inf" if items > 0 else "-inf")
    return items


def op_derivatives(op, args, order):
    """An op's values and its derivatives up to ``order`` at ``args``, as lists of arrays
    (what ``check_gradients`` grades: the sum of each order's results, differentiated
    again). Runs in the kernel, with ``autodiff``."""
    import autodiff as ad

    xs = [ad.constant(np.asarray(a, dtype=np.float64)) for a in args]
    levels = _levels(ad, op, xs, order)
    return [[None if t is None else t.numpy() for t in level] for level in levels]


def _levels(ad, op, xs, order):
    if order == 0:
        out = op(*xs)
        return [list(out) if isinstance(out, (list, tuple)) else [out]]
    with ad.GradientTape(persistent=True) as tape:
        for x in xs:
            tape.watch(x)
        lower = _levels(ad, op, xs, order - 1)
        total = ad.add_n([ad.reduce_sum(t) for t in lower[-1] if t is not None])
    grads = tape.gradient(total, xs)
    del tape
    return lower + [list(grads)]


class Recorder:
    """What a graded check cell calls in the sandbox instead of ``check``: one JSON line
    per call, ``{"grade_id", "index", "prediction"}`` (and, for the key, the answer,
    its text and the check's options).

    Args:
        path: the answers file (the sandbox's output folder).
        key: record the answer side too (running the teacher edition to make the key).
    """

    def __init__(self, path, key=False):
        self.path, self.key = path, key

    def __call__(self, kind, grade_id, index, prediction, answer, options):
        entry = {"grade_id": grade_id, "index": index, "kind": kind}
        try:
            entry["prediction"] = self._plain(kind, prediction())
        except Exception as error:    # NameError for a cell never run, the student's bug...
            entry["prediction"] = {"unsupported": f"{type(error).__name__} while reading it"}
        if self.key:
            args, kwargs = options()
            answer_value = answer()
            entry["answer"] = self._plain(kind, answer_value)
            entry["answer_text"] = str(answer_value)[:2000]
            entry["options"] = _options(kind, args, kwargs)
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    @staticmethod
    def _plain(kind, value):
        if kind == "check_gradients":
            if isinstance(value, tuple) and value and value[0] is Ellipsis:
                return {"blank": True}
            op, args, order = value
            return to_plain(op_derivatives(op, args, order))
        return to_plain(value)


def _options(kind, args, kwargs):
    names = ("hint", "rtol", "atol") if kind == "check" else ("order", "hint")
    options = dict(zip(names, args))
    options.update(kwargs)
    return {k: options[k] for k in ("hint", "rtol", "atol", "order") if k in options}
