"""Random programs over the ops ad and TensorFlow share: a plain-data spec and its runner.

A spec is JSON-like data, so it can be printed, shrunk and turned into code::

    {"dtype": "float32", "mode": "grad",           # grad | grad2 | jacobian | jvp
     "inputs": [{"name": "a", "shape": [2, 3], "values": [...], "kind": "watched"}],
     "ops": [{"out": "v0", "op": "sin", "args": ["a"], "params": {}}, ...],
     "tangents": {"a": [...]}}                      # jvp only

The program's output is the last op's result. ``run(m, spec)`` runs it on the
module ``m`` (``tf`` or ``ad``) and returns the forward value and the
derivatives the mode asks for: ``grad`` one tape; ``grad2`` two nested tapes
(the gradient of the sum of the first gradients); ``jacobian``;
``batch_jacobian`` (with respect to the first input, when its leading axis
matches the output's); ``jvp`` a
ForwardAccumulator with the spec's tangents. Inputs of kind ``watched`` are
watched, ``variable`` ones are trainable Variables (watched by access) and
``constant`` ones are not watched: their derivative must be None.
``generate(seed, ...)`` builds a random spec whose shapes TensorFlow accepts.
"""

import numpy as np

from .program_ops import OPS, broadcast_partner, random_values
from .program_ops_indexing import jvp_refused
from .program_ops_nn import (RANKS, empty_window, finite, has_max_pool, reads_an_input,
                             refused, second_order_refused)

MODES = ("grad", "grad", "grad", "grad2", "jacobian", "jvp")
_CODE_CACHE = {}


def expression(op, argnames, module="m"):
    """The op's Python expression over ``module`` with these argument names."""
    template = OPS[op["op"]][0].replace("m.", module + ".")
    return template.format(*argnames, **op["params"])


def apply_op(m, op, env):
    """Runs one op of a spec on ``m``, reading its arguments from ``env``."""
    names = [f"_a{i}" for i in range(len(op["args"]))]
    src = expression(op, names)
    code = _CODE_CACHE.get(src)
    if code is None:
        code = _CODE_CACHE[src] = compile(src, "<program>", "eval")
    scope = {"m": m, "np": np}   # templates may build index arrays with np
    scope.update(zip(names, (env[a] for a in op["args"])))
    return eval(code, scope)  # noqa: S307 - our own templates, from program_ops.OPS


def input_array(inp, dtype, key="values"):
    return np.asarray(inp[key], dtype=dtype).reshape(inp["shape"])


def _inputs(m, spec):
    xs = []
    for inp in spec["inputs"]:
        value = input_array(inp, spec["dtype"])
        xs.append(m.Variable(value) if inp["kind"] == "variable" else m.constant(value))
    return xs


def forward(m, spec, xs):
    env = {inp["name"]: x for inp, x in zip(spec["inputs"], xs)}
    for op in spec["ops"]:
        env[op["out"]] = apply_op(m, op, env)
    return env[spec["ops"][-1]["out"]]


def _watch(tape, spec, xs):
    for inp, x in zip(spec["inputs"], xs):
        if inp["kind"] == "watched":
            tape.watch(x)


def run(m, spec):
    """Runs the spec on ``m``: a dict of the forward value and the derivatives."""
    xs = _inputs(m, spec)
    mode = spec["mode"]
    if mode == "jvp":
        primals = [x for inp, x in zip(spec["inputs"], xs) if inp["kind"] != "constant"]
        tangents = [m.constant(input_array(inp, spec["dtype"], "tangent"))
                    for inp in spec["inputs"] if inp["kind"] != "constant"]
        with m.autodiff.ForwardAccumulator(primals, tangents) as acc:
            y = forward(m, spec, xs)
        return {"y": y, "jvp": acc.jvp(y)}
    if mode == "grad2":
        with m.GradientTape() as outer:
            _watch(outer, spec, xs)
            with m.GradientTape() as inner:
                _watch(inner, spec, xs)
                y = forward(m, spec, xs)
            g = inner.gradient(y, xs)
            connected = [m.reduce_sum(v) for v in g if v is not None]
            total = None
            for v in connected:
                total = v if total is None else total + v
        h = outer.gradient(total, xs) if total is not None else None
        return {"y": y, "g": g, "h": h}
    with m.GradientTape() as tape:
        _watch(tape, spec, xs)
        y = forward(m, spec, xs)
    if mode == "jacobian":
        return {"y": y, "jacobian": tape.jacobian(y, xs)}
    if mode == "batch_jacobian":
        return {"y": y, "batch_jacobian": tape.batch_jacobian(y, xs[0])}
    return {"y": y, "grad": tape.gradient(y, xs)}


def infer_shapes(tf, spec):
    """{value name: shape} by running the ops on zeros in TensorFlow (raises if invalid)."""
    env = {inp["name"]: tf.zeros(inp["shape"], dtype=spec["dtype"]) for inp in spec["inputs"]}
    for op in spec["ops"]:
        env[op["out"]] = apply_op(tf, op, env)
    return {k: tuple(int(d) for d in v.shape) for k, v in env.items()}


def _new_input(rng, spec, shape, edge):
    letters = "abcdefghijklnopqrstuwxyz"  # no m (the module), no v (op outputs)
    n = len(spec["inputs"])
    name = letters[n] if n < len(letters) else f"x{n}"
    kind = str(rng.choice(["watched"] * 6 + ["variable", "constant"]))
    spec["inputs"].append({"name": name, "shape": list(shape), "kind": kind,
                           "values": random_values(rng, shape, edge).tolist(),
                           "tangent": np.round(rng.uniform(-1, 1, size=shape), 1).tolist()})
    return name


def _unrounded(rng, inp):
    """A convolution's filter gets values with four decimals, not one: a window's sum of
    one-decimal products often cancels exactly in one summation order and leaves an ulp in
    the other, which a later ``sign`` or tie turns into a different answer."""
    finite = np.isfinite(np.asarray(inp["values"], dtype=float))
    jitter = np.round(rng.uniform(-0.05, 0.05, size=finite.shape), 4)
    inp["values"] = np.where(finite, np.asarray(inp["values"], dtype=float) + jitter,
                             np.asarray(inp["values"], dtype=float)).tolist()


def _random_shape(rng, empty):
    rank = int(rng.choice([0, 1, 1, 2, 2, 2, 3]))
    shape = [int(rng.integers(1, 4)) for _ in range(rank)]
    return _emptied(rng, shape, empty)


def _emptied(rng, shape, empty):
    """``shape`` with one axis of size 0 when the program tests zero-size tensors."""
    if empty and shape:
        shape[int(rng.integers(len(shape)))] = 0
    return shape


def generate(tf, seed, n_ops=None, dtype=None, must_use=None, op_names=None):
    """A random valid spec from ``seed``; ``must_use`` forces one op into it."""
    rng = np.random.default_rng(seed)
    names = sorted(op_names or OPS)
    edge = rng.random() < 0.15
    empty = rng.random() < 0.1
    spec = {"seed": seed, "dtype": dtype or str(rng.choice(["float32", "float64"])),
            "mode": str(rng.choice(MODES)), "inputs": [], "ops": []}
    _new_input(rng, spec, _random_shape(rng, empty), edge)
    shapes = infer_shapes(tf, spec)
    n_ops = n_ops or int(rng.integers(1, 6))
    plan = [str(rng.choice(names)) for _ in range(n_ops)]
    if must_use:
        plan[int(rng.integers(n_ops))] = must_use
        plan.append(must_use)  # tried only if the op did not make it into the program
    for step, opname in enumerate(plan):
        if must_use and step == len(plan) - 1 and any(
                o["op"] == must_use for o in prune(dict(spec))["ops"] or []):
            break
        for _attempt in range(8):
            # mostly continue from the latest value, sometimes from any earlier one
            pool = list(shapes)
            src = pool[-1] if rng.random() < 0.7 else str(rng.choice(pool))
            picked = OPS[opname][1](rng, shapes[src], spec["dtype"] == "float64")
            if picked is None:
                if rng.random() < 0.5 or _attempt > 3:  # give this op a fitting fresh input
                    src = _new_input(rng, spec, _fitting_shape(rng, opname, empty), edge)
                    shapes = infer_shapes(tf, spec)
                    picked = OPS[opname][1](rng, shapes[src], spec["dtype"] == "float64")
                if picked is None:
                    continue
            partner, params = picked
            if reads_an_input(opname, params) and src not in [i["name"] for i in spec["inputs"]]:
                src = _new_input(rng, spec, list(shapes[src]), False)   # same shape, finite
                shapes = infer_shapes(tf, spec)
            args = [src]
            if partner is not None:
                if partner == "same":
                    same = [k for k, s in shapes.items() if s == shapes[src] and k != src]
                    pshape = shapes[src]
                    args.append(str(rng.choice(same)) if same and rng.random() < 0.5
                                else _new_input(rng, spec, pshape, edge))
                else:
                    pshape = (broadcast_partner(rng, shapes[src]) if partner == "broadcast"
                              else partner)
                    args.append(_new_input(rng, spec, pshape, edge))
                    if opname in RANKS:   # a filter: see _unrounded
                        _unrounded(rng, spec["inputs"][-1])
                if rng.random() < 0.3 and opname not in _ORDERED:
                    args.reverse()
            op = {"out": f"v{step}", "op": opname, "args": args, "params": params}
            spec["ops"].append(op)
            try:
                shapes = infer_shapes(tf, spec)
            except Exception:  # noqa: BLE001 - an invalid draw: try again
                spec["ops"].pop()
                continue
            break
    if not spec["ops"]:
        spec["ops"].append({"out": "v0", "op": "identity", "args": [spec["inputs"][0]["name"]],
                            "params": {}})
        shapes = infer_shapes(tf, spec)
    spec = prune(spec)
    if (spec["mode"] == "jvp" and jvp_refused(spec)) or empty_window(spec, shapes) \
            or (spec["mode"] == "grad2" and second_order_refused(spec)):
        spec["mode"] = "grad"   # what TensorFlow can differentiate there (program_ops_*.py)
    if has_max_pool(spec):   # TensorFlow's max pooling skips NaN (FINDINGS.md, F14)
        spec["inputs"] = [dict(inp, values=finite(inp["values"])) for inp in spec["inputs"]]
    out_shape, in_shape = shapes[spec["ops"][-1]["out"]], tuple(spec["inputs"][0]["shape"])
    if spec["mode"] == "jacobian" and not 0 < int(np.prod(out_shape)) <= 64:
        spec["mode"] = "grad"  # small; never empty (TF's jacobian fails on empty targets)
    if spec["mode"] == "jacobian" and len(out_shape) >= 2 and len(in_shape) >= 2 \
            and out_shape[0] == in_shape[0] and 0 not in out_shape + in_shape \
            and rng.random() < 0.5:
        # same leading (batch) axis. Not on empty tensors: TF's batch_jacobian
        # divides by the batch size there (ZeroDivisionError), a TF bug
        spec["mode"] = "batch_jacobian"
    return spec


def not_comparable(spec, shapes):
    """Whether TensorFlow cannot give a comparable answer on the spec (the limits the
    generator keeps to, in program_ops_*.py): for the shrinker."""
    mode = spec["mode"]
    return refused(spec, shapes) or (mode != "grad" and empty_window(spec, shapes)) \
        or (mode == "jvp" and jvp_refused(spec)) \
        or (mode == "grad2" and second_order_refused(spec)) \
        or any(op["op"] == "gather_traced" and 0 in shapes[op["args"][0]] for op in spec["ops"]) \
        or (has_max_pool(spec) and any(inp["values"] != finite(inp["values"])
                                       for inp in spec["inputs"]))


def _fitting_shape(rng, opname, empty=False):
    n = int(rng.integers(1, 4))
    if opname in ("solve", "inv", "det", "cholesky"):
        return [n, n] if rng.random() < 0.8 else [2, n, n]
    if opname in ("matmul", "einsum"):
        return _emptied(rng, [int(rng.integers(1, 4)), n], empty)
    if opname in RANKS:   # [batch, (height,) width, channels]
        rank = int(rng.choice(RANKS[opname]))
        return _emptied(rng, [int(rng.integers(1, 3))] + [int(rng.integers(1, 5))
                                                           for _ in range(rank - 2)]
                        + [int(rng.integers(1, 3))], empty)
    return _emptied(rng, [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))],
                    empty)


# ops whose second argument is not interchangeable with the first (never swapped)
_ORDERED = ("matmul", "einsum", "solve", "conv2d", "conv1d", "convolution")


def prune(spec):
    """Drops ops the output does not depend on, and inputs nothing reads."""
    if not spec["ops"]:
        return spec
    needed = {spec["ops"][-1]["out"]}
    kept = []
    for op in reversed(spec["ops"]):
        if op["out"] in needed:
            kept.append(op)
            needed.update(op["args"])
    spec = dict(spec, ops=kept[::-1])
    spec["inputs"] = [inp for inp in spec["inputs"] if inp["name"] in needed]
    return spec


def to_code(spec):
    """A runnable repro of the spec on ad (print the forward value and derivatives)."""
    dt = spec["dtype"]
    lines = ["import numpy as np", "import autodiff as ad", "nan, inf = np.nan, np.inf", ""]
    for inp in spec["inputs"]:
        arr = f"np.array({inp['values']!r}, dtype='{dt}').reshape({inp['shape']})"
        maker = "ad.Variable" if inp["kind"] == "variable" else "ad.constant"
        note = "  # not watched" if inp["kind"] == "constant" else ""
        lines.append(f"{inp['name']} = {maker}({arr}){note}")
    names = [inp["name"] for inp in spec["inputs"]]
    watched = [inp["name"] for inp in spec["inputs"] if inp["kind"] == "watched"]
    body = [f"{op['out']} = " + expression(op, op["args"], "ad") for op in spec["ops"]]
    out, mode = spec["ops"][-1]["out"], spec["mode"]
    src = "[" + ", ".join(names) + "]"
    if mode == "jvp":
        prim = [inp for inp in spec["inputs"] if inp["kind"] != "constant"]
        tang = ", ".join(f"ad.constant(np.array({p['tangent']!r}, dtype='{dt}')"
                         f".reshape({p['shape']}))" for p in prim)
        primals = ", ".join(p["name"] for p in prim)
        lines.append(f"with ad.autodiff.ForwardAccumulator([{primals}], [{tang}]) as acc:")
        lines += ["    " + b for b in body] + [f"print({out})", f"print(acc.jvp({out}))"]
    elif mode == "grad2":
        lines.append("with ad.GradientTape() as outer:")
        lines.append(f"    outer.watch([{', '.join(watched)}])" if watched else "    pass")
        lines.append("    with ad.GradientTape() as inner:")
        lines.append(f"        inner.watch([{', '.join(watched)}])" if watched else "        pass")
        lines += ["        " + b for b in body]
        lines.append(f"    g = inner.gradient({out}, {src})")
        lines.append("    total = sum(ad.reduce_sum(v) for v in g if v is not None)")
        lines += [f"print({out})", "print(g)", f"print(outer.gradient(total, {src}))"]
    else:
        lines.append("with ad.GradientTape() as tape:")
        lines.append(f"    tape.watch([{', '.join(watched)}])" if watched else "    pass")
        lines += ["    " + b for b in body] + [f"print({out})"]
        if mode == "batch_jacobian":
            lines.append(f"print(tape.batch_jacobian({out}, {names[0]}))")
        else:
            call = "jacobian" if mode == "jacobian" else "gradient"
            lines.append(f"print(tape.{call}({out}, {src}))")
    return "\n".join(lines)


TOLERANCE = {"float32": (1e-3, 1e-4), "float64": (1e-6, 1e-8)}


def mismatch(tf, spec):
    """The differences between ad and TensorFlow on this spec (empty: they agree)."""
    from .harness import differences, modules, outcome

    ad, _ = modules()
    return differences(outcome(lambda m: run(m, spec), ad), outcome(lambda m: run(m, spec), tf),
                       tol=TOLERANCE[spec["dtype"]])
