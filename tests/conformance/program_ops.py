"""The ops random programs draw from: one line each, as code over the module ``m``.

An op is a Python expression template over ``m`` (``tf`` or ``ad``) with its
arguments as ``{0}``, ``{1}`` and its parameters by name, so a single string
is both what runs on each library and what the repro prints (``m.`` becomes
``ad.``). Next to each template, ``gen`` picks arguments and parameters for
the shapes at hand: ``gen(rng, shape, dtype_is_64) -> (partner, params)``,
where ``partner`` is None (unary), ``"same"``, ``"broadcast"`` or an explicit
shape for a second argument, and ``params`` is plain data.
"""

import numpy as np

_UNARY = {
    "negative": "m.negative({0})", "abs": "m.abs({0})", "sin": "m.math.sin({0})",
    "cos": "m.math.cos({0})", "tanh": "m.math.tanh({0})", "sigmoid": "m.math.sigmoid({0})",
    "exp": "m.exp({0})", "log": "m.math.log({0})", "sqrt": "m.sqrt({0})",
    "square": "m.square({0})", "softplus": "m.math.softplus({0})", "relu": "m.nn.relu({0})",
    "relu6": "m.nn.relu6({0})", "elu": "m.nn.elu({0})", "selu": "m.nn.selu({0})",
    "nn_sigmoid": "m.nn.sigmoid({0})", "nn_tanh": "m.nn.tanh({0})", "sign": "m.sign({0})",
    "log1p": "m.math.log1p({0})", "self_mul": "({0} * {0})", "identity": "m.identity({0})",
    "stop_gradient": "(m.stop_gradient({0}) * {0})",
}
_BINARY = {
    "add": "m.add({0}, {1})", "subtract": "m.subtract({0}, {1})",
    "multiply": "m.multiply({0}, {1})", "divide": "m.divide({0}, {1})",
    "maximum": "m.maximum({0}, {1})", "minimum": "m.minimum({0}, {1})",
    "pow": "m.pow({0}, {1})", "operators": "(({0} - {1}) * {1} + {0} / 4.0)",
    "where": "m.where({0} > {thr}, {0}, {1})", "atan2": "m.math.atan2({0}, {1})",
}
# Binary ops with a Python number on one side, which takes the tensor's dtype (float64
# too); ``number_left``/``number_right`` draw one of these (a comparison feeds ``where``).
_WITH_NUMBER = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "pow",
                "math.atan2", "math.squared_difference", "math.xlogy", "math.xdivy",
                "math.divide_no_nan", "math.multiply_no_nan", "math.floormod", "math.floordiv",
                "math.truediv"]
_COMPARISONS = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal"]
_NUMBERS = [2, -1, 0, 1.5, -0.5, 0.25, 3.0]


def _axis(rng, rank):
    return int(rng.integers(-rank, rank)) if rank else None


def _unary(rng, shape, f64):
    return None, {}


def _binary(rng, shape, f64):
    return ("broadcast" if rng.random() < 0.5 else "same"), {"thr": float(rng.choice([0.0, 0.5]))}


def _a_number(rng):
    return _NUMBERS[int(rng.integers(len(_NUMBERS)))]   # an int stays an int


def _number(rng, shape, f64):
    return None, {"fn": str(rng.choice(_WITH_NUMBER)), "c": _a_number(rng)}


def _compare_number(rng, shape, f64):
    return None, {"cmp": str(rng.choice(_COMPARISONS)), "c": _a_number(rng)}


def _where_literal(rng, shape, f64):
    """A Python list of bools as the condition, broadcasting against the branches
    (``[[], []]`` when the shape is empty: it must convert as bool, not float32)."""
    cond_shape = broadcast_partner(rng, shape) if rng.random() < 0.5 else tuple(shape)
    cond = rng.random(cond_shape) < 0.5
    return ("broadcast" if rng.random() < 0.5 else "same"), {"cond": cond.tolist()}


def _l2_normalize(rng, shape, f64):
    return None, {"ns": str(rng.choice(["math", "linalg", "nn"])), "axis": _axis(rng, len(shape))}


def _leaky(rng, shape, f64):
    return None, {"alpha": float(rng.choice([0.01, 0.2, 1.5]))}


def _gelu(rng, shape, f64):
    return None, {"approximate": bool(rng.random() < 0.5)}


def _softmax(rng, shape, f64):
    return (None, {"axis": _axis(rng, len(shape))}) if shape else None


def _clip(rng, shape, f64):
    lo = float(rng.choice([-1.0, -0.5, 0.0]))
    return None, {"lo": lo, "hi": lo + float(rng.choice([0.5, 1.0, 2.0]))}


def _pow_scalar(rng, shape, f64):
    return None, {"p": float(rng.choice([2.0, 3.0, 0.5, -1.0]))}


def _reduce(rng, shape, f64):
    r = len(shape)
    kind = rng.integers(3) if r else 0
    if kind == 0:
        axis = None
    elif kind == 1:
        axis = _axis(rng, r)
    else:
        count = int(rng.integers(1, r + 1))
        axis = sorted(int(a) for a in rng.choice(r, size=count, replace=False))
    return None, {"axis": axis, "keepdims": bool(rng.random() < 0.4)}


def _transpose(rng, shape, f64):
    return (None, {"perm": [int(p) for p in rng.permutation(len(shape))]}) if shape else None


def _expand(rng, shape, f64):
    return None, {"axis": int(rng.integers(-len(shape) - 1, len(shape) + 1))}


def _squeeze(rng, shape, f64):
    ones = [i for i, d in enumerate(shape) if d == 1]
    return (None, {"axes": ones}) if ones else None


def _cat(rng, shape, f64):
    return ("same", {"axis": _axis(rng, len(shape))}) if shape else None


def _self_cat(rng, shape, f64):
    return (None, {"axis": _axis(rng, len(shape))}) if shape else None


def _stack(rng, shape, f64):
    return "same", {"axis": int(rng.integers(-len(shape) - 1, len(shape) + 1))}


def _tile(rng, shape, f64):
    # rank <= 2: TF's second-order and forward-mode rules for Tile broadcast in
    # twice the rank, and TF's BroadcastTo stops at rank 5 (UnimplementedError)
    if len(shape) > 2:
        return None
    return None, {"mult": [int(rng.integers(1, 3)) for _ in shape]}


def _pad(rng, shape, f64):
    return None, {"pads": [[int(rng.integers(0, 2)), int(rng.integers(0, 2))] for _ in shape],
                  "cv": float(rng.choice([0.0, 1.5]))}


def _broadcast_to(rng, shape, f64):
    return None, {"lead": int(rng.integers(1, 3))}


def _slice(rng, shape, f64):
    if not shape:
        return None
    parts = [":"] * len(shape)
    i = int(rng.integers(len(shape)))
    parts[i] = str(rng.choice(["1:", ":-1", "::2", "::-1", "1:2", "-2:"]))
    return None, {"sl": ", ".join(parts)}


def _gather(rng, shape, f64):
    if not shape or 0 in shape:
        return None
    axis = int(rng.integers(len(shape)))
    idx = [int(i) for i in rng.integers(0, shape[axis], size=int(rng.integers(1, 4)))]
    return None, {"idx": idx, "axis": axis}


def _matmul(rng, shape, f64):
    if len(shape) < 2:
        return None
    n = 0 if 0 in shape and rng.random() < 0.5 else int(rng.integers(1, 4))
    return tuple(shape[:-2]) + (shape[-1], n), {}


def _einsum2(rng, shape, f64):
    if len(shape) == 2:
        return (shape[1], int(rng.integers(1, 4))), {"eq": "ij,jk->ik"}
    if len(shape) == 1:
        return (int(rng.integers(1, 4)),), {"eq": "i,j->ij"}
    if len(shape) == 3:
        return (shape[0], shape[2], int(rng.integers(1, 3))), {"eq": "bij,bjk->bik"}
    if len(shape) == 4:
        return tuple(shape), {"eq": "bxby,bxby->bxy"}
    return None


def _einsum1(rng, shape, f64):
    eqs = {1: ["i->", "i->i"], 2: ["ij->ji", "ij->j", "ij->"], 3: ["bij->bji", "bij->b"]}
    return (None, {"eq": str(rng.choice(eqs[len(shape)]))}) if len(shape) in eqs else None


def _square(rng, shape, f64):
    if len(shape) >= 2 and shape[-1] == shape[-2] and shape[-1] > 0:
        return None, {"n": int(shape[-1])}
    return None


def _solve(rng, shape, f64):
    got = _square(rng, shape, f64)
    return None if got is None else (tuple(shape[:-1]) + (int(rng.integers(1, 3)),), got[1])


_SHIFTED = "(m.math.tanh({0}) + {n}.0 * m.eye({n}, dtype={0}.dtype))"
_SPD = ("(m.matmul(m.math.tanh({0}), m.math.tanh({0}), transpose_b=True) "
        "+ {n}.0 * m.eye({n}, dtype={0}.dtype))")

# name -> (template, gen)
OPS = {name: (t, _unary) for name, t in _UNARY.items()}
OPS.update({name: (t, _binary) for name, t in _BINARY.items()})
OPS.update({
    "leaky_relu": ("m.nn.leaky_relu({0}, alpha={alpha})", _leaky),
    "gelu": ("m.nn.gelu({0}, approximate={approximate})", _gelu),
    "softmax": ("m.nn.softmax({0}, axis={axis})", _softmax),
    "log_softmax": ("m.nn.log_softmax({0}, axis={axis})", _softmax),
    "clip_by_value": ("m.clip_by_value({0}, {lo}, {hi})", _clip),
    "pow_scalar": ("m.pow({0}, {p})", _pow_scalar),
    "reduce_sum": ("m.reduce_sum({0}, axis={axis}, keepdims={keepdims})", _reduce),
    "reduce_mean": ("m.reduce_mean({0}, axis={axis}, keepdims={keepdims})", _reduce),
    "reduce_max": ("m.reduce_max({0}, axis={axis}, keepdims={keepdims})", _reduce),
    "reduce_min": ("m.reduce_min({0}, axis={axis}, keepdims={keepdims})", _reduce),
    "reduce_prod": ("m.reduce_prod({0}, axis={axis}, keepdims={keepdims})", _reduce),
    "reduce_logsumexp": ("m.reduce_logsumexp({0}, axis={axis}, keepdims={keepdims})", _reduce),
    "reshape_flat": ("m.reshape({0}, [-1])", _unary),
    "reshape_reversed": ("m.reshape({0}, list(reversed({0}.shape)))", _unary),
    "transpose": ("m.transpose({0}, perm={perm})", _transpose),
    "expand_dims": ("m.expand_dims({0}, axis={axis})", _expand),
    "squeeze": ("m.squeeze({0}, axis={axes})", _squeeze),
    "concat": ("m.concat([{0}, {1}], axis={axis})", _cat),
    "concat_self": ("m.concat([{0}, {0}], axis={axis})", _self_cat),
    "stack": ("m.stack([{0}, {1}], axis={axis})", _stack),
    "tile": ("m.tile({0}, {mult})", _tile),
    "pad": ("m.pad({0}, {pads}, constant_values={cv})", _pad),
    "broadcast_to": ("m.broadcast_to({0}, [{lead}] + list({0}.shape))", _broadcast_to),
    "slice": ("{0}[{sl}]", _slice),
    "gather": ("m.gather({0}, {idx}, axis={axis})", _gather),
    "number_right": ("m.{fn}({0}, {c})", _number),
    "number_left": ("m.{fn}({c}, {0})", _number),
    "compare_number": ("m.where(m.{cmp}({c}, {0}), {0}, {c})", _compare_number),
    "where_literal": ("m.where({cond}, {0}, {1})", _where_literal),
    "l2_normalize": ("m.{ns}.l2_normalize({0}, axis={axis})", _l2_normalize),
    "matmul": ("m.matmul({0}, {1})", _matmul),
    "einsum": ("m.einsum('{eq}', {0}, {1})", _einsum2),
    "einsum_unary": ("m.einsum('{eq}', {0})", _einsum1),
    "solve": ("m.linalg.solve(" + _SHIFTED + ", {1})", _solve),
    "inv": ("m.linalg.inv(" + _SHIFTED + ")", _square),
    "det": ("m.linalg.det(" + _SHIFTED + ")", _square),
    "cholesky": ("m.linalg.cholesky(" + _SPD + ")", _square),
})


def broadcast_partner(rng, shape):
    """A shape that broadcasts against ``shape``: some axes set to 1, maybe fewer axes."""
    out = [1 if rng.random() < 0.4 else d for d in shape]
    drop = int(rng.integers(0, len(out) + 1)) if out else 0
    return tuple(out[drop:])


def random_values(rng, shape, edge):
    """Input values: one decimal (so ties and exact zeros happen), some specials when ``edge``."""
    v = np.asarray(np.round(rng.uniform(-2.0, 2.0, size=shape), 1))
    if edge and v.size:
        mask = rng.random(shape) < 0.15
        v[mask] = rng.choice([0.0, np.nan, np.inf, -np.inf, 1.0, -1.0], size=int(mask.sum()))
    return v


# the families kept in files of their own
from .program_ops_indexing import OPS as _INDEXING  # noqa: E402
from .program_ops_nn import OPS as _NN  # noqa: E402
from .program_ops_control_flow import OPS as _CONTROL_FLOW  # noqa: E402

OPS.update(_INDEXING)
OPS.update(_NN)
OPS.update(_CONTROL_FLOW)
