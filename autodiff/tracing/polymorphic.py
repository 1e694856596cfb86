"""One trace for every size a ``None`` dimension of an ``input_signature`` allows.

TensorFlow traces ``input_signature=[ad.TensorSpec([None, 3])]`` once,
symbolically. Here a trace is made on real values, so it is made at the first
call's size; whether it serves every other size is then *checked*, not
assumed. At the first call with another size the function is traced again
there, and the two graphs are compared (``same_graph``): op by op, with every
parameter, every captured constant's value, and everything else but the
sizes. Equal graphs mean nothing in the trace depended on the size (no
``x.shape[0]`` baked into a constant, no reshape to a fixed size), so the
first trace serves every size from then on, and the check does not count as
a trace (``experimental_get_tracing_count()`` stays 1, as in TensorFlow).
Graphs that differ keep one trace per size, as before: never a silently
wrong answer.

    >>> f = ad.function(lambda x: ad.reduce_sum(x * 2.0, axis=1),
    ...                 input_signature=[ad.TensorSpec([None, 3])])
    >>> _ = f(ad.ones([2, 3])), f(ad.ones([5, 3])), f(ad.ones([7, 3]))
    >>> f.experimental_get_tracing_count()
    1
"""

import json

import numpy as np

from .. import backend, nest
from .signature import TensorSpec

__all__ = ["general_key", "general_description", "same_graph", "fits"]


def general_description(input_signature, description):
    """``description`` (a call's key, as data) with the sizes the signature leaves open
    (``None``) set to None; None when the signature leaves no size open."""
    if input_signature is None:
        return None
    specs = [s for s in nest.flatten(list(input_signature)) if isinstance(s, TensorSpec)]
    if not any(s.shape is None or None in s.shape for s in specs):
        return None
    open_sizes = iter(specs)

    def widen(d):
        ((kind, body),) = d.items()
        if kind == "tensor":
            spec = next(open_sizes)
            shape = None if spec.shape is None else \
                [None if want is None else size for want, size in zip(spec.shape, body[0])]
            return {"tensor": [shape, body[1]]}
        if kind in ("list", "tuple"):
            return {kind: [widen(v) for v in body]}
        if kind == "dict":
            return {kind: [[k, widen(v)] for k, v in body]}
        return d

    return widen(description)


def general_key(input_signature, description):
    general = general_description(input_signature, description)
    return None if general is None else json.dumps(general, sort_keys=True)


def fits(general, description):
    """Whether a call's key fits a key with None sizes (same structure, dtypes, known sizes)."""
    if isinstance(general, dict) and isinstance(description, dict):
        if "tensor" in general and "tensor" in description:
            (shape, dtype), (got, got_dtype) = general["tensor"], description["tensor"]
            return dtype == got_dtype and (shape is None or (
                len(shape) == len(got) and all(s is None or s == g for s, g in zip(shape, got))))
        return general.keys() == description.keys() and all(
            fits(general[k], description[k]) for k in general)
    if isinstance(general, list) and isinstance(description, list):
        return len(general) == len(description) and all(
            fits(a, b) for a, b in zip(general, description))
    return general == description


def same_graph(a, b):
    """Whether two traces of one function differ only in their arguments' sizes."""
    return _fingerprint(a) == _fingerprint(b)


def _fingerprint(graph):
    nodes = []
    for node in graph.nodes:
        specs = tuple(str(np.dtype(dtype)) for _, dtype in (node.specs or ()))
        custom = node.custom.graph if node.custom is not None else None
        nodes.append((node.op_type, tuple(tuple(r.as_list()) for r in node.inputs),
                      repr(sorted(node.params.items())), specs,
                      tuple(_fingerprint(sub.graph) for sub in node.subgraphs),
                      None if custom is None else _fingerprint(custom)))
    constants = tuple((t.dtype.name, tuple(t.shape), backend.to_numpy(t._value).tobytes())
                      for t in graph.constants)
    variables = tuple(id(v) for v in graph.variables)
    outputs = repr(nest.map_structure(lambda leaf: leaf.as_list() if hasattr(leaf, "as_list")
                                      else leaf, graph.outputs))
    dtypes = tuple(str(np.dtype(getattr(dtype, "_np", dtype))) for _, dtype in graph.arg_specs)
    return nodes, constants, variables, outputs, dtypes, tuple(graph.backward_starts)
