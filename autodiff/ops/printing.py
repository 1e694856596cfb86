"""``ad.print``: TensorFlow's ``tf.print``, a print that is an op.

A Python ``print`` inside ``ad.function`` runs once, while the function is
traced. ``ad.print`` is a graph node (``PrintV2``), so it prints on every
call, with that call's values, in the order the program ran it:

    >>> import sys
    >>> @ad.function
    ... def step(x):
    ...     ad.print("x is", x, output_stream=sys.stdout)
    ...     return x + 1
    >>> _ = step(ad.constant([1, 2]))
    x is [1 2]
    >>> _ = step(ad.constant([3, 4]))
    x is [3 4]

What this module owns: building the text the way ``tf.print`` does (a
template made with ``pprint.pformat`` of the inputs' structure, each
tensor in it written as TensorFlow's C++ ``SummarizeValue`` writes it:
``[1 2.5 3]``, ``[0 1 2 ... 7 8 9]``, bools as 1 and 0, float32 with six
significant digits unless nine are needed to read the value back), and the
op that writes it. The op's params are plain data (the template's pieces,
``summarize``, the stream's name, ``end``), so a saved model keeps it.

The op is *stateful*, so a traced graph and a compiled program keep it
although nothing uses its output, and it is never folded or merged. Its
output is a bool scalar no one reads: tapes record no op with a bool
output, so a GradientTape around it records nothing and nothing gets a
gradient through it. While a graph is being built (a tracer records the
node) it stays quiet: the graph prints when it runs.
"""

import contextlib
import pprint
import random as _random
import sys
import threading

import numpy as np

from .. import backend, nest
from .. import tape as _tape
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor

__all__ = ["print_v2"]   # and quiet(), for control_flow/staged.py

_STREAMS = ("stdout", "stderr")


class _Quiet(threading.local):
    depth = 0


_quiet = _Quiet()


@contextlib.contextmanager
def quiet():
    """Prints nothing inside: for a run that only computes a tracer's values (a
    control-flow op runs its branch while the function around it is traced)."""
    _quiet.depth += 1
    try:
        yield
    finally:
        _quiet.depth -= 1


def _builds_graph():
    """Whether a graph is being built in this thread (a tracer records, or ``quiet``)."""
    return _quiet.depth > 0 or any(getattr(r, "builds_graph", False)
                                   for r in _tape.thread_state.active)


def _element(value, dtype):
    """One element as TensorFlow's C++ ``StrCat`` writes it."""
    kind = dtype.kind
    if kind == "b":
        return "1" if value else "0"
    if kind in "iu":
        return str(int(value))
    if kind == "c":
        return f"({_element(value.real, value.real.dtype)},{_element(value.imag, value.imag.dtype)})"
    if kind == "f" or dtype.name == "bfloat16":
        number = float(value)
        if number != number:
            return "-nan" if np.signbit(number) else "nan"
        wide = dtype == np.float64
        short, full, back = (15, 17, float) if wide else (6, 9, np.float32)
        target = number if wide else np.float32(number)   # half and bfloat16: as floats
        text = "%.*g" % (short, number)
        return text if back(text) == target else "%.*g" % (full, number)
    return str(value)


def _spacing(dim, ndim):
    if dim == ndim - 1:
        return " "
    return "\n" * (ndim - dim - 1) + " " * (dim + 1)


def _summarize(array, summarize):
    """A whole array as ``SummarizeValue(summarize, print_v2=True)`` writes it."""
    size = array.size
    limit = size if summarize < 0 else min(summarize, size)
    if array.ndim == 0:
        return _element(array[()], array.dtype) if limit else ("..." if size else "")
    flat = array.reshape(-1)

    def dim_text(dim, start):
        if dim == array.ndim:
            return _element(flat[start], array.dtype)
        count = array.shape[dim]
        step = int(np.prod(array.shape[dim + 1:], dtype=np.int64))
        parts = [dim_text(dim + 1, start + step * i) for i in range(min(limit, count))]
        text = "[" + _spacing(dim, array.ndim).join(parts)
        if count > 2 * limit:
            text += _spacing(dim, array.ndim) + "..."
        for i in range(max(limit, count - limit), count):
            text += _spacing(dim, array.ndim) + dim_text(dim + 1, start + step * i)
        return text + "]"

    return dim_text(0, 0)


def _write(stream, text):
    if stream.startswith("file://"):
        with open(stream[len("file://"):], "a", encoding="utf-8") as f:
            f.write(text)
        return
    out = sys.stdout if stream == "stdout" else sys.stderr   # looked up now: capture works
    out.write(text)
    out.flush()


def _print_forward(xp, *arrays, pieces=("",), summarize=3, stream="stderr", end="\n"):
    if not _builds_graph():
        values = [_summarize(backend.to_numpy(a), summarize) for a in arrays]
        _write(stream, pieces[0] + "".join(v + p for v, p in zip(values, pieces[1:])) + end)
    return xp.zeros((), dtype=bool)


PRINT = Primitive("PrintV2", _print_forward, NotDifferentiable, saves="shapes", stateful=True,
                  label="PrintV2(...)", batch_aware=False, domain=(-3.0, 3.0),
                  cases=[(((),), {"pieces": ["x = ", ""]}), (((2, 3),), {"pieces": ["", ""]})],
                  doc="no derivative: a side effect whose output carries nothing")


def _stream_name(output_stream):
    if output_stream is None:
        return "stderr"
    if output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    if output_stream is sys.stderr or output_stream is sys.__stderr__:
        return "stderr"
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    raise ValueError(f"ad.print: unsupported output_stream {output_stream!r}; use sys.stdout, "
                     f"sys.stderr or a 'file://<path>' string (TensorFlow's logging levels "
                     f"are not supported)")


def _is_tensor(x):
    return isinstance(x, Tensor)


def _template(inputs, sep):
    """The text around the tensors, as pieces: ``len(tensors) + 1`` strings."""
    free = [nest.map_structure(lambda x: "" if _is_tensor(x) else x, i) for i in inputs]
    placeholder, rng = "{}", _random.Random(5)   # one that appears nowhere else, as TF picks it
    joined = " ".join(pprint.pformat(x) for x in free)
    while placeholder in joined:
        placeholder += str(rng.randint(0, 9))
    templates, tensors = [], []
    for item in inputs:
        leaves = []
        for x in nest.flatten(item):
            if _is_tensor(x):
                tensors.append(x)
                leaves.append(placeholder)
            else:
                leaves.append(x)
        if isinstance(item, str):
            templates.append(item)
        else:
            templates.append(pprint.pformat(nest.pack_sequence_as(item, leaves)))
    template = sep.join(templates).replace("'" + placeholder + "'", placeholder)
    pieces = template.split(placeholder)
    if len(pieces) != len(tensors) + 1:   # a Python string held the placeholder after all
        raise ValueError(f"ad.print: could not lay out {len(tensors)} tensor(s) in {template!r}")
    return pieces, tensors


def print_v2(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """Prints tensors, Python values and structures of them, as ``tf.print`` does.

    Inside ``ad.function`` (also with ``jit_compile=True``) it prints on every call,
    with that call's values; a Python ``print`` there prints only while tracing.

    Args:
        *inputs: tensors, Python values, or lists, tuples and dicts of them.
        output_stream: ``sys.stdout``, ``sys.stderr`` or a ``"file://<path>"``
            string (the text is appended to that file). None (the default) is
            ``sys.stderr`` as it is at the call, as TensorFlow looks it up.
        summarize: how many elements to show at each end of every dimension
            before eliding the middle with ``...``; -1 shows all.
        sep: what goes between the inputs.
        end: what goes after the last one.
        name: unused (TensorFlow's op name).

    Returns:
        None.

    Raises:
        ValueError: an output_stream that is none of the above.

    Example:

        >>> import sys
        >>> ad.print("loss:", ad.constant(0.25), [ad.constant([1, 2, 3])], output_stream=sys.stdout)
        loss: 0.25 [[1 2 3]]
    """
    stream = _stream_name(output_stream)
    inputs = [convert_to_tensor(x) if isinstance(x, Tensor) else x for x in inputs]
    pieces, tensors = _template(inputs, sep)
    params = {"pieces": pieces, "summarize": int(summarize), "stream": stream, "end": end}
    if _builds_graph():
        PRINT(*tensors, **params)   # a node: the graph prints each time it runs
    else:
        _print_forward(backend.xp, *[t._value for t in tensors], **params)
    return None
