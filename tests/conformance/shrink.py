"""Shrink a program spec on which ad and TensorFlow disagree to a small repro.

Greedy, in passes, keeping each change while the mismatch persists:

1. cut the program after an earlier op (that op's value becomes the output),
   or before one (its value, as TensorFlow computed it, becomes an input);
2. bypass an op: its readers read one of its arguments of the same shape;
3. plainer derivatives: mode ``grad2``/``(batch_)jacobian``/``jvp`` -> ``grad``;
   Variables and unwatched constants -> watched constants;
4. smaller shapes: one input axis at a time to 1 (or one less), keeping the
   leading values; a change TensorFlow rejects is skipped, and so is one the
   generator would not draw (``programs.not_comparable``: an empty convolution
   output, say, where TensorFlow's gradient is uninitialized memory);
5. simpler values: a whole input to 0.0 or 1.0, then each element to 0.0,
   1.0 or its rounded value.

``shrink(spec, still_fails)`` returns the smallest spec found; ``still_fails``
is a predicate on specs (in the tests, "ad and TensorFlow still differ").
"""

import copy
import time

import numpy as np

from .programs import apply_op, infer_shapes, input_array, not_comparable, prune

MAX_CHECKS = 300


def _candidates_structure(spec, shapes, values):
    for k in range(len(spec["ops"]) - 1):
        yield prune(dict(spec, ops=spec["ops"][: k + 1]))
    for i, op in enumerate(spec["ops"][:-1]):  # the op's value becomes a fresh input
        if op["out"] in values:
            value = values[op["out"]]
            fresh = {"name": op["out"], "shape": list(value.shape), "kind": "watched",
                     "values": value.tolist(), "tangent": np.full(value.shape, 0.5).tolist()}
            ops = spec["ops"][:i] + spec["ops"][i + 1:]
            yield prune(dict(spec, inputs=spec["inputs"] + [fresh], ops=ops))
    for i, op in enumerate(spec["ops"][:-1]):
        for a in dict.fromkeys(op["args"]):
            if shapes.get(a) == shapes.get(op["out"]):
                ops = [dict(o, args=[a if x == op["out"] else x for x in o["args"]])
                       for j, o in enumerate(spec["ops"]) if j != i]
                yield prune(dict(spec, ops=ops))
    if spec["mode"] != "grad":
        yield dict(spec, mode="grad")
    for i, inp in enumerate(spec["inputs"]):
        if inp["kind"] != "watched":
            yield _with_input(spec, i, kind="watched")


def _with_input(spec, i, **changes):
    inputs = list(spec["inputs"])
    inputs[i] = dict(inputs[i], **changes)
    return dict(spec, inputs=inputs)


def _shrunk_axis(inp, axis, size):
    out = {}
    for key in ("values", "tangent"):
        arr = np.asarray(inp[key], dtype=float).reshape(inp["shape"])
        out[key] = np.take(arr, range(size), axis=axis).tolist()
    shape = list(inp["shape"])
    shape[axis] = size
    return dict(inp, shape=shape, **out)


def _candidates_shapes(spec):
    for i, inp in enumerate(spec["inputs"]):
        for axis, d in enumerate(inp["shape"]):
            for size in dict.fromkeys([1, d - 1]):
                if 0 < size < d:
                    inputs = list(spec["inputs"])
                    inputs[i] = _shrunk_axis(inp, axis, size)
                    yield dict(spec, inputs=inputs)


def _candidates_values(spec):
    for i, inp in enumerate(spec["inputs"]):
        arr = np.asarray(inp["values"], dtype=float)
        for fill in (0.0, 1.0):
            if arr.size and not np.all(arr == fill):
                yield _with_input(spec, i, values=np.full(arr.shape, fill).tolist())
    for i, inp in enumerate(spec["inputs"]):
        arr = np.asarray(inp["values"], dtype=float)
        flat = arr.reshape(-1)
        for j, v in enumerate(flat):
            for simple in (0.0, 1.0, float(np.round(v)) if np.isfinite(v) else 0.0):
                if not (v == simple):
                    new = flat.copy()
                    new[j] = simple
                    yield _with_input(spec, i, values=new.reshape(arr.shape).tolist())
                    break


def forward_values(tf, spec):
    """{value name: NumPy value} of every input and op, computed by TensorFlow."""
    xs = [tf.constant(input_array(inp, spec["dtype"])) for inp in spec["inputs"]]
    env = {inp["name"]: x for inp, x in zip(spec["inputs"], xs)}
    for op in spec["ops"]:
        env[op["out"]] = apply_op(tf, op, env)
    return {k: np.asarray(v.numpy()) for k, v in env.items()}


def size(spec):
    """How big a spec is: ops, elements, mode, unwatched inputs, then non-simple values."""
    elements = sum(int(np.prod(inp["shape"])) for inp in spec["inputs"])
    fancy = sum(int(np.sum(~np.isin(np.asarray(inp["values"], dtype=float), [0.0, 1.0])))
                for inp in spec["inputs"])
    unwatched = sum(inp["kind"] != "watched" for inp in spec["inputs"])
    return (len(spec["ops"]), elements, spec["mode"] != "grad", unwatched, fancy)


def shrink(tf, spec, still_fails, max_checks=MAX_CHECKS, max_seconds=None):
    """The smallest spec reachable greedily on which ``still_fails`` holds
    (within ``max_checks`` calls of it and, if given, ``max_seconds``)."""
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    best = copy.deepcopy(spec)
    checks = 0
    improved = True
    while improved and checks < max_checks:
        improved = False
        try:
            values = forward_values(tf, best)
        except Exception:  # noqa: BLE001
            values = {}
        shapes = {k: v.shape for k, v in values.items()}
        passes = (_candidates_structure(best, shapes, values), _candidates_shapes(best),
                  _candidates_values(best))
        for candidates in passes:
            for cand in candidates:
                if checks >= max_checks or (deadline and time.monotonic() > deadline):
                    checks = max_checks
                    break
                if size(cand) >= size(best):
                    continue
                try:
                    cand_shapes = infer_shapes(tf, cand)
                except Exception:  # noqa: BLE001 - TensorFlow rejects it: not a program
                    continue
                if not_comparable(cand, cand_shapes):
                    continue   # one the generator never draws (TensorFlow's limits)
                checks += 1
                if still_fails(cand):
                    best, improved = cand, True
                    break
            if improved:
                break
    return best
