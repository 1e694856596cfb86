"""Random programs' convolutions and pooling: every ``tf.nn`` spelling ad has.

Each gen reads the input's shape (channels last) and draws a window, strides,
dilations and padding; a window larger than the input is drawn on purpose now
and then: VALID padding then gives an empty output (or an error, both as in
TensorFlow, when it overhangs by a stride or more). Convolutions get a fresh
filter input as their partner. ``RANKS`` says which input ranks each op takes,
for a fresh input drawn to fit it.

Some of TensorFlow's answers cannot be compared (FINDINGS.md, "Not counted"):
where an output is empty and the input or filter is not, its max pool and
filter gradients are uninitialized memory (such draws are refused), and its
second-order and forward-mode rules fail (``empty_window``: such programs take
one plain gradient); its gradients of dilated convolutions refuse dilations on
the CPU (not drawn); its second derivative through ``tf.nn.convolution``
fails (``second_order_refused``). Max pooling over NaN or inf differs (FINDINGS.md, F14), so a
max pool reads a program input, never an op's result (``reads_an_input``), and
programs with one get finite inputs (``has_max_pool``, ``finite``). TensorFlow's
average pool gradient is wrong where a SAME window is larger than the input
(README, deliberate differences): not drawn.
"""

import numpy as np

RANKS = {"conv2d": (4,), "conv1d": (3,), "convolution": (3, 4), "pool2d": (4,),
         "pool1d": (3,), "pool_nd": (3, 4), "pool_any_rank": (3, 4)}


def _out(n, k, s, d, padding):
    """TensorFlow's output length along one axis (negative: it raises)."""
    if padding == "SAME":
        return -(-n // s)
    m = n - ((k - 1) * d + 1) + s
    return m // s if m >= 0 else -(-m // s)


def _window(rng, spatial):
    """A window size per spatial axis: mostly 1 to 3, sometimes one past the input."""
    return [n + 1 if rng.random() < 0.15 else int(rng.integers(1, 4)) for n in spatial]


def _strides_dilations(rng, n, dilate):
    if dilate and rng.random() < 0.3:
        return [1] * n, [int(rng.integers(1, 3)) for _ in range(n)]
    return [int(rng.integers(1, 3)) for _ in range(n)], [1] * n


def _empty_out(shape, window, strides, dilations, padding):
    """Whether the output has a zero-size axis (batch, a spatial one; not the channels)."""
    outs = [_out(n, k, s, d, padding) for n, k, s, d in
            zip(shape[1:-1], window, strides, dilations)]
    return 0 in outs or shape[0] == 0


def _conv(rank):
    def gen(rng, shape, f64):
        if len(shape) not in rank or shape[-1] == 0:
            return None
        n = len(shape) - 2
        window = _window(rng, shape[1:-1])
        # no dilations: TensorFlow's CPU kernels for the gradients refuse them
        strides, dilations = _strides_dilations(rng, n, dilate=False)
        out_channels = 0 if 0 in shape and rng.random() < 0.3 else int(rng.integers(1, 4))
        padding = str(rng.choice(["VALID", "SAME"]))
        if out_channels and _empty_out(shape, window, strides, dilations, padding):
            return None   # TensorFlow's filter gradient would be uninitialized memory
        params = {"pad": padding, "s": strides, "d": dilations}
        if rank == (3,):
            params.update(s=strides[0], d=dilations[0])
        return tuple(window) + (shape[-1], out_channels), params
    return gen


def _pool(rank, generic=False):
    def gen(rng, shape, f64):
        if len(shape) not in rank:
            return None
        n = len(shape) - 2
        window = _window(rng, shape[1:-1])
        strides, dilations = _strides_dilations(rng, n, dilate=generic)
        kind = str(rng.choice(["max", "avg"]))
        padding = "VALID" if max(dilations) > 1 else str(rng.choice(["VALID", "SAME"]))
        if kind == "max" and 0 not in shape and _empty_out(shape, window, strides, dilations,
                                                            padding):
            return None   # TensorFlow's gradient would be uninitialized memory
        if kind == "avg" and padding == "SAME" and any(k > n for k, n in zip(window, shape[1:-1])):
            return None   # TensorFlow's gradient is wrong there (README, deliberate differences)
        params = {"kind": kind, "pad": padding, "k": window, "s": strides}
        if generic:
            params.update(ptype=kind.upper(), d=dilations)
        elif rng.random() < 0.4 and len(set(window)) == 1 and len(set(strides)) == 1:
            params.update(k=window[0], s=strides[0])   # one int for every axis
        return None, params
    return gen


OPS = {
    "conv2d": ("m.nn.conv2d({0}, {1}, strides={s}, padding='{pad}', dilations={d})", _conv((4,))),
    "conv1d": ("m.nn.conv1d({0}, {1}, stride={s}, padding='{pad}', dilations={d})", _conv((3,))),
    "convolution": ("m.nn.convolution({0}, {1}, strides={s}, padding='{pad}', dilations={d})",
                    _conv((3, 4))),
    "pool2d": ("m.nn.{kind}_pool2d({0}, {k}, {s}, '{pad}')", _pool((4,))),
    "pool1d": ("m.nn.{kind}_pool1d({0}, {k}, {s}, '{pad}')", _pool((3,))),
    "pool_any_rank": ("m.nn.{kind}_pool({0}, {k}, {s}, '{pad}')", _pool((3, 4))),
    "pool_nd": ("m.nn.pool({0}, {k}, '{ptype}', strides={s}, padding='{pad}', dilations={d})",
                _pool((3, 4), generic=True)),
}
MAX_POOLS = ("pool2d", "pool1d", "pool_any_rank", "pool_nd")   # with params["kind"] == "max"


def empty_window(spec, shapes):
    """Whether a convolution or pool of the program reads or writes an empty tensor."""
    return any(op["op"] in OPS and (0 in shapes[op["out"]] or 0 in shapes[op["args"][0]])
               for op in spec["ops"])


def refused(spec, shapes):
    """Whether the program holds a draw the gens refuse (for the shrinker, whose smaller
    shapes can make one): an empty output beside a non-empty filter or max-pooled input,
    an average pool's SAME window larger than its input."""
    for op in spec["ops"]:
        if op["op"] not in OPS:
            continue
        x, out = shapes[op["args"][0]], shapes[op["out"]]
        if op["op"] in ("conv2d", "conv1d", "convolution"):
            if 0 in out and 0 not in shapes[op["args"][1]]:
                return True
        elif op["params"]["kind"] == "max":
            if 0 in out and 0 not in x:
                return True
        else:
            window = op["params"]["k"]
            window = [window] * (len(x) - 2) if isinstance(window, int) else window
            if op["params"]["pad"] == "SAME" and any(k > n for k, n in zip(window, x[1:-1])):
                return True
    return False


def second_order_refused(spec):
    """Whether TensorFlow fails to take the program's second derivative: the gradient op of
    ``tf.nn.convolution``'s first-order gradient has no data_format (AttributeError)."""
    return any(op["op"] == "convolution" for op in spec["ops"])


def reads_an_input(opname, params):
    """Whether the op must read a program input (whose values the generator keeps finite)."""
    return opname in MAX_POOLS and params["kind"] == "max"


def has_max_pool(spec):
    return any(op["op"] in MAX_POOLS and op["params"]["kind"] == "max" for op in spec["ops"])


def finite(values):
    """``values`` (nested lists) with NaN and inf replaced by plain numbers, for max pools."""
    v = np.asarray(values, dtype=float)
    return np.nan_to_num(v, nan=0.5, posinf=2.0, neginf=-2.0).tolist()
