"""The LSTM and GRU cells' gates as one op each, and their gradients as another
(``LSTMGates``, ``LSTMGatesGrad``; ``GRUGates``, ``GRUGatesGrad``), as TensorFlow's
``LSTMBlockCell``/``GRUBlockCell`` and cuDNN fuse them.

Written op by op, one LSTM step is four slices, three sigmoids, two tanhs,
three products and a sum, and its backward pass about thirty ops more. Here
the elementwise part of a step is one op each way:

    h, c, act, tc = LSTMGates(z, c_prev)   # z = x @ kernel + h_prev @ recurrent_kernel + bias
    dz, dc_prev = LSTMGatesGrad(act, tc, c_prev, dh, dc, d_act, d_tc)

with Keras' gate order in ``z`` (i, f, c, o; each ``units`` wide):

    i, f, o = sigmoid(z_i), sigmoid(z_f), sigmoid(z_o);  g = tanh(z_c)
    c = f * c_prev + i * g;                               h = o * tanh(c)

``act`` keeps the gates ``[i, f, g, o]`` (as ``z``, ``[batch, 4 units]``) and
``tc`` keeps ``tanh(c)`` for the gradient, as TensorFlow's LSTMBlockCell
outputs its gates, so the backward pass computes no exp or tanh again. (Two
arrays, not one: each is then contiguous, and NumPy runs a ufunc over a
contiguous array in one loop, over a column slice in one loop a row.) By the
chain rule through the two lines above,

    dct = dc + dh * o * (1 - tanh(c)^2)
    dz = [dct g i (1 - i), dct c_prev f (1 - f), dct i (1 - g^2), dh tanh(c) o (1 - o)]
    dc_prev = dct * f

(plus ``d_act`` and ``d_tc`` times each activation's slope, which are zero unless a
second derivative flows through ``act`` or ``tc``). The matmuls stay ordinary
``MatMul`` ops, so the tape still shows where the weights meet the state. Second
derivatives: the gradient op's own VJP differentiates the formulas above
written with this library's ops (``_gates_grad_composite``), under a tape of
its own.

Both ops are used by ``LSTMCell`` when its activations are Keras' defaults
(``models/layers/recurrent_cells.py``); this module has no public names.

The GRU's step (Keras 3's default ``reset_after=True``; gate order z, r, h)
is the same idea, from the input's and the state's projections:

    h, act = GRUGates(x_proj, h_proj, h_prev)   # x_proj = x @ kernel + bias[0],
                                                # h_proj = h_prev @ recurrent_kernel + bias[1]
    z, r = sig(x_z + h_z), sig(x_r + h_r);  hh = tanh(x_h + r * h_h)
    h = z * h_prev + (1 - z) * hh               # act = [z, r, hh]

    dhh = dh (1 - z) (1 - hh^2);  dz = dh (h_prev - hh) z (1 - z);  dr = dhh h_h r (1 - r)
    dx_proj = [dz, dr, dhh];  dh_proj = [dz, dr, dhh * r];  dh_prev = dh * z

(``dx_proj, dh_proj, dh_prev = GRUGatesGrad(act, h_proj, h_prev, dh, d_act)``).
``GRUCell`` uses them with its default activations and ``reset_after=True``.

    >>> from autodiff.ops.recurrent import lstm_gates
    >>> h, c = lstm_gates(ad.zeros([1, 4]), ad.ones([1, 1]))   # gates 0.5, g = 0: c = 0.5
    >>> c.numpy(), h.numpy()
    (array([[0.5]], dtype=float32), array([[0.2310586]], dtype=float32))
    >>> from autodiff.ops.recurrent import gru_gates   # z = 0.5, hh = 0: h = h_prev / 2
    >>> gru_gates(ad.zeros([1, 3]), ad.zeros([1, 3]), ad.ones([1, 1])).numpy()
    array([[0.5]], dtype=float32)
"""

import numpy as np

from ..errors import InvalidArgumentError
from ..registry import Primitive
from .elementwise import sigmoid, tanh
from .join import concat, split

__all__ = []   # reached through lstm_gates and gru_gates (the cells' helpers)

_REALS = (-2.0, 2.0)
_CASES = [(((2, 8), (2, 2)), {}), (((3, 12), (3, 3)), {}), (((1, 4), (1, 1)), {})]
_GRAD_CASES = [(((2, 8), (2, 2), (2, 2), (2, 2), (2, 2), (2, 8), (2, 2)), {}),
               (((3, 12), (3, 3), (3, 3), (3, 3), (3, 3), (3, 12), (3, 3)), {})]
_GRU_CASES = [(((2, 6), (2, 6), (2, 2)), {}), (((3, 9), (3, 9), (3, 3)), {}),
              (((1, 3), (1, 3), (1, 1)), {})]
_GRU_GRAD_CASES = [(((2, 6), (2, 6), (2, 2), (2, 2), (2, 6)), {}),
                   (((3, 9), (3, 9), (3, 3), (3, 3), (3, 9)), {})]


def _check_shapes(op, names, wide, wide_by, *narrow):
    """Each ``wide`` input is [..., wide_by * units], each ``narrow`` one [..., units].
    (Plain loops: this runs twice a time step, and generators cost more than the test.)"""
    state = narrow[0].shape
    bad = len(state) < 1
    if not bad:
        wide_shape = state[:-1] + (wide_by * state[-1],)
        for a in wide:
            bad = bad or a.shape != wide_shape
        for a in narrow:
            bad = bad or a.shape != state
    if bad:
        shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(names, wide + narrow))
        raise InvalidArgumentError(
            f"{op}: {' and '.join(names[:len(wide)])} must have shape [..., {wide_by} * units] "
            f"and {', '.join(names[len(wide):])} [..., units], with the same leading axes; "
            f"got {shapes}")


_ROWS = {}   # (array module, units, dtype): the rows below, made once per size


def _rows(xp, units, dtype):
    """Rows of ``4 * units`` (one value per gate i, f, c, o) that let one ufunc call do
    over all four gates what differs per gate, on a contiguous array (exact: each
    product is by a power of two, one or zero, each sum with zero or one):

    - ``exponent``: ``[-1, -1, -2, -1]``, z into the exponents ``-z_i, -z_f, -2 z_c, -z_o``;
    - ``scale``, ``shift``: ``[1, 1, 2, 1]``, ``[0, 0, -1, 0]``, sigmoids into
      ``[i, f, 2 sig(2 z_c) - 1 = tanh(z_c), o]``;
    - ``keep``, ``one``: ``[1, 1, 0, 1]``, ``[0, 0, 1, 0]``, so ``a keep + one - a^2`` is
      each gate's slope: ``s - s^2`` (sigmoid) and ``1 - g^2`` (tanh).
    """
    key = (xp, units, dtype)
    if key not in _ROWS:
        def row(i_f_o, c):
            values = np.full((4, units), float(i_f_o))
            values[2] = c
            return xp.asarray(values.reshape(-1).astype(dtype))
        _ROWS[key] = (row(-1, -2), row(1, 2), row(0, -1), row(1, 0), row(0, 1))
    return _ROWS[key]


_SLICES = {}   # (units, n): the n column blocks of a [..., n * units] array, as indices


def _blocks(a, units, n):
    key = (units, n)
    if key not in _SLICES:
        _SLICES[key] = [(Ellipsis, slice(k * units, (k + 1) * units)) for k in range(n)]
    return [a[index] for index in _SLICES[key]]


def _lstm_gates_forward(xp, z, c_prev):
    """h, c, act = [sig(z_i), sig(z_f), tanh(z_c), sig(z_o)] and tc = tanh(c), one exp for
    the gates (``tanh x = 2 sig(2x) - 1``, exact to rounding: 6e-8 absolute in float32)."""
    state = c_prev.shape
    if not state or z.shape != state[:-1] + (4 * state[-1],):   # (the test inline: 3 us less)
        _check_shapes("LSTMGates", ("z", "c_prev"), (z,), 4, c_prev)
    units = state[-1]
    exponent, scale, shift, _, _ = _rows(xp, units, z.dtype)
    act = xp.multiply(z, exponent)     # -z; -2 z_c
    with np.errstate(over="ignore"):   # exp(-z) = inf for z < -88 (float32): sigmoid is 0
        xp.exp(act, out=act)
    act += 1
    xp.reciprocal(act, out=act)
    act *= scale                       # g = 2 sig(2 z_c) - 1; the sigmoids times 1, plus 0
    act += shift
    i, f, g, o = _blocks(act, units, 4)
    c = f * c_prev
    tc = xp.multiply(i, g)             # tc is scratch until tanh(c) is written there
    c += tc
    xp.tanh(c, out=tc)
    return o * tc, c, act, tc


def _lstm_gates_grad_forward(xp, act, tc, c_prev, dh, dc, d_act, d_tc, act_zero=False):
    state = c_prev.shape
    if not (state and act.shape == d_act.shape == state[:-1] + (4 * state[-1],)
            and tc.shape == dh.shape == dc.shape == d_tc.shape == state):
        _check_shapes("LSTMGatesGrad", ("act", "d_act", "tc", "c_prev", "dh", "dc", "d_tc"),
                      (act, d_act), 4, tc, c_prev, dh, dc, d_tc)
    units = state[-1]
    _, _, _, keep, one = _rows(xp, units, act.dtype)
    i, f, g, o = _blocks(act, units, 4)
    square = xp.multiply(act, act)
    slope = xp.multiply(act, keep)     # sig' = s - s^2 on i, f, o; tanh' = 1 - g^2 on c
    slope += one
    slope -= square
    dct = xp.multiply(dh, o)
    if not act_zero:
        dct += d_tc
    tanh_slope = xp.multiply(tc, tc)
    dct *= xp.subtract(1, tanh_slope, out=tanh_slope)
    dct += dc
    d_i, d_f, d_c, d_o = _blocks(square, units, 4)   # square is scratch from here on
    xp.multiply(dct, g, out=d_i)
    xp.multiply(dct, c_prev, out=d_f)
    xp.multiply(dct, i, out=d_c)
    xp.multiply(dh, tc, out=d_o)
    if not act_zero:
        square += d_act
    square *= slope
    return square, xp.multiply(dct, f, out=dct)


def _gates_grad_composite(act, tc, c_prev, dh, dc, d_act, gtc):
    """LSTMGatesGrad's formulas in this library's ops, for its own VJP."""
    i, f, g, o = split(act, 4, axis=-1)
    gi, gf, gg, go = split(d_act, 4, axis=-1)
    dct = dc + (dh * o + gtc) * (1 - tc * tc)
    dz = concat([(dct * g + gi) * i * (1 - i), (dct * c_prev + gf) * f * (1 - f),
                 (dct * i + gg) * (1 - g * g), (dh * tc + go) * o * (1 - o)], axis=-1)
    return dz, dct * f


def _gradient_op(name, forward, composite, outputs, cases):
    """A gates op's gradient op (the inputs of ``cases``, ``outputs`` outputs), whose own VJP
    is a tape over ``composite``: the same formulas in library ops. Its param
    ``act_zero=True`` (set by ``_zero_in_trace``) lets the forward skip adding the saved
    activations' cotangents, known to be zeros; the composite reads them whatever the
    param, so derivatives are unchanged."""
    def vjp(g, ans, *inputs, act_zero=False):
        from ..tape import GradientTape   # the tape imports the ops: import it when needed
        with GradientTape() as tape:
            for x in inputs:
                tape.watch(x)
            results = composite(*inputs)
        return tape.gradient(list(results), list(inputs), output_gradients=list(g))
    return Primitive(
        name, forward, vjp, n_outputs=len(outputs), saves="inputs", domain=_REALS,
        cases=cases, batch_aware=False,
        label=name + "(" + ", ".join("{%d}" % k for k in range(len(cases[0][0]))) + ")",
        doc=f"({', '.join(outputs)}) = the VJP of {name[:-4]} from its saved act; its own "
            f"VJP differentiates those formulas (a tape over their composite)")


def _zero_in_trace(*d_act):
    """True when each ``d_act`` (the cotangent of a gates op's ``act``, or ``tc``) is a
    constant of a trace being recorded, not computed from its arguments, and all zeros:
    then it is zeros at every call of the compiled program. That is the usual case: ``act``
    feeds only the gradient op, so it gets a cotangent only when a second derivative flows
    through it.
    Eager steps never look (a look at the value would wait for a device each step)."""
    from .. import backend, tape, validate   # (they import the ops' modules)
    if not any(getattr(r, "follows", None) for r in tape.thread_state.active):
        return False
    for cotangent in d_act:
        if validate.traced(cotangent):
            return False
        value = cotangent._value
        if backend.host_scalar(backend.namespace(backend.backend_of(value)).any(value)):
            return False
    return True


LSTM_GATES_GRAD = _gradient_op("LSTMGatesGrad", _lstm_gates_grad_forward,
                               _gates_grad_composite, ("dz", "dc_prev"), _GRAD_CASES)


def _lstm_gates_vjp(g, ans, z, c_prev):
    dh, dc, d_act, d_tc = g
    if _zero_in_trace(d_act, d_tc):
        return list(LSTM_GATES_GRAD(ans[2], ans[3], c_prev, dh, dc, d_act, d_tc, act_zero=True))
    return list(LSTM_GATES_GRAD(ans[2], ans[3], c_prev, dh, dc, d_act, d_tc))


LSTM_GATES = Primitive(
    "LSTMGates", _lstm_gates_forward, _lstm_gates_vjp, n_outputs=4, saves="both",
    domain=_REALS, cases=_CASES, batch_aware=False, label="LSTMGates({0}, {1})",
    doc="c = sig(z_f) c_prev + sig(z_i) tanh(z_c), h = sig(z_o) tanh(c), act = the four "
        "gates, tc = tanh(c): (dz, dc_prev) = LSTMGatesGrad(act, tc, c_prev, dh, dc, d_act, "
        "d_tc)")


def lstm_gates(z, c_prev):
    """``(h, c)`` of one LSTM step from its pre-activations ``z`` ([batch, 4 units],
    gates i, f, c, o) and the previous cell state ``c_prev`` ([batch, units])."""
    h, c, _, _ = LSTM_GATES(z, c_prev)
    return h, c


def _sigmoid_into(xp, z, out):
    """``out = 1 / (1 + exp(-z))``, in place; exp overflows to inf (sigmoid 0) for z < -88."""
    xp.negative(z, out=out)
    with np.errstate(over="ignore"):
        xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


def _gru_gates_forward(xp, x_proj, h_proj, h_prev):
    """h and act = [z, r, hh], the update and reset gates and the candidate (the gates
    computed in a contiguous array and copied into ``act`` once, as in LSTMGates)."""
    _check_shapes("GRUGates", ("x_proj", "h_proj", "h_prev"), (x_proj, h_proj), 3, h_prev)
    units = h_prev.shape[-1]
    gates = xp.add(x_proj[..., :2 * units], h_proj[..., :2 * units])
    _sigmoid_into(xp, gates, gates)
    act = xp.empty(x_proj.shape, dtype=x_proj.dtype)
    act[..., :2 * units] = gates
    z, r = gates[..., :units], gates[..., units:]
    hh = act[..., 2 * units:]
    xp.multiply(r, h_proj[..., 2 * units:], out=hh)
    hh += x_proj[..., 2 * units:]
    xp.tanh(hh, out=hh)
    h = xp.subtract(h_prev, hh)          # h = z h_prev + (1 - z) hh = hh + z (h_prev - hh)
    h *= z
    h += hh
    return h, act


def _gru_gates_grad_forward(xp, act, h_proj, h_prev, dh, d_act, act_zero=False):
    _check_shapes("GRUGatesGrad", ("act", "h_proj", "d_act", "h_prev", "dh"),
                  (act, h_proj, d_act), 3, h_prev, dh)
    units = h_prev.shape[-1]
    z, r, hh = _blocks(act, units, 3)
    gz, gr, ghh = _blocks(d_act, units, 3)
    dx = xp.empty(act.shape, dtype=act.dtype)
    d_z, d_r, d_hh = _blocks(dx, units, 3)
    xp.multiply(dh, z, out=d_hh)          # d_hh = (dh (1 - z) + ghh) (1 - hh^2)
    xp.subtract(dh, d_hh, out=d_hh)
    if not act_zero:
        d_hh += ghh
    d_hh *= 1 - hh * hh
    xp.subtract(h_prev, hh, out=d_z)      # d_z = (dh (h_prev - hh) + gz) z (1 - z)
    d_z *= dh
    if not act_zero:
        d_z += gz
    xp.multiply(d_hh, h_proj[..., 2 * units:], out=d_r)   # d_r = (d_hh r_h + gr) r (1 - r)
    if not act_zero:
        d_r += gr
    gates = act[..., :2 * units]
    slope = 1 - gates                     # s (1 - s), not s - s^2: exact enough as s -> 1
    slope *= gates
    dx[..., :2 * units] *= slope
    dh_proj = xp.empty(act.shape, dtype=act.dtype)
    dh_proj[..., :2 * units] = dx[..., :2 * units]
    xp.multiply(d_hh, r, out=dh_proj[..., 2 * units:])
    return dx, dh_proj, dh * z


def _gru_grad_composite(act, h_proj, h_prev, dh, d_act):
    """GRUGatesGrad's formulas in this library's ops, for its own VJP."""
    z, r, hh = split(act, 3, axis=-1)
    gz, gr, ghh = split(d_act, 3, axis=-1)
    r_h = split(h_proj, 3, axis=-1)[2]
    d_hh = (dh * (1 - z) + ghh) * (1 - hh * hh)
    d_z = (dh * (h_prev - hh) + gz) * z * (1 - z)
    d_r = (d_hh * r_h + gr) * r * (1 - r)
    return (concat([d_z, d_r, d_hh], axis=-1), concat([d_z, d_r, d_hh * r], axis=-1), dh * z)


GRU_GATES_GRAD = _gradient_op("GRUGatesGrad", _gru_gates_grad_forward, _gru_grad_composite,
                              ("dx_proj", "dh_proj", "dh_prev"), _GRU_GRAD_CASES)


def _gru_gates_vjp(g, ans, x_proj, h_proj, h_prev):
    dh, d_act = g
    if _zero_in_trace(d_act):
        return list(GRU_GATES_GRAD(ans[1], h_proj, h_prev, dh, d_act, act_zero=True))
    return list(GRU_GATES_GRAD(ans[1], h_proj, h_prev, dh, d_act))


GRU_GATES = Primitive(
    "GRUGates", _gru_gates_forward, _gru_gates_vjp, n_outputs=2, saves="both",
    domain=_REALS, cases=_GRU_CASES, batch_aware=False, label="GRUGates({0}, {1}, {2})",
    doc="z, r = sig(x_z + h_z), sig(x_r + h_r), hh = tanh(x_h + r h_h), h = z h_prev + "
        "(1 - z) hh, act = [z, r, hh]: (dx_proj, dh_proj, dh_prev) = GRUGatesGrad(act, "
        "h_proj, h_prev, dh, d_act)")


def gru_gates(x_proj, h_proj, h_prev):
    """The new state ``h`` of one GRU step (Keras' ``reset_after=True``) from the input's
    projection ``x_proj = x @ kernel + bias[0]`` and the state's ``h_proj = h_prev @
    recurrent_kernel + bias[1]`` (each ``[batch, 3 units]``, gates z, r, h)."""
    return GRU_GATES(x_proj, h_proj, h_prev)[0]
