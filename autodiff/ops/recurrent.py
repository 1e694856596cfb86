"""The LSTM cell's gates as one op, and its gradient as another (``LSTMGates``,
``LSTMGatesGrad``), as TensorFlow's ``LSTMBlockCell`` and cuDNN fuse them.

Written op by op, one LSTM step is four slices, three sigmoids, two tanhs,
three products and a sum, and its backward pass about thirty ops more. Here
the elementwise part of a step is one op each way:

    h, c, act = LSTMGates(z, c_prev)   # z = x @ kernel + h_prev @ recurrent_kernel + bias
    dz, dc_prev = LSTMGatesGrad(act, c_prev, dh, dc, d_act)

with Keras' gate order in ``z`` (i, f, c, o; each ``units`` wide):

    i, f, o = sigmoid(z_i), sigmoid(z_f), sigmoid(z_o);  g = tanh(z_c)
    c = f * c_prev + i * g;                               h = o * tanh(c)

``act`` keeps ``[i, f, g, o, tanh(c)]`` for the gradient, as TensorFlow's
LSTMBlockCell outputs its gates, so the backward pass computes no exp or
tanh again. By the chain rule through the two lines above,

    dct = dc + dh * o * (1 - tanh(c)^2)
    dz = [dct g i (1 - i), dct c_prev f (1 - f), dct i (1 - g^2), dh tanh(c) o (1 - o)]
    dc_prev = dct * f

(plus ``d_act`` times each activation's slope, which is zero unless a second
derivative flows through ``act``). The matmuls stay ordinary ``MatMul`` ops,
so the tape still shows where the weights meet the state. Second
derivatives: the gradient op's own VJP differentiates the formulas above
written with this library's ops (``_gates_grad_composite``), under a tape of
its own.

Both ops are used by ``LSTMCell`` when its activations are Keras' defaults
(``models/layers/recurrent_cells.py``); this module has no public names.

    >>> from autodiff.ops.recurrent import lstm_gates
    >>> h, c = lstm_gates(ad.zeros([1, 4]), ad.ones([1, 1]))   # gates 0.5, g = 0: c = 0.5
    >>> c.numpy(), h.numpy()
    (array([[0.5]], dtype=float32), array([[0.2310586]], dtype=float32))
"""

import numpy as np

from ..errors import InvalidArgumentError
from ..registry import Primitive
from .elementwise import sigmoid, tanh
from .join import concat, split

__all__ = []   # reached through lstm_gates (LSTMCell's helper)

_REALS = (-2.0, 2.0)
_CASES = [(((2, 8), (2, 2)), {}), (((3, 12), (3, 3)), {}), (((1, 4), (1, 1)), {})]
_GRAD_CASES = [(((2, 10), (2, 2), (2, 2), (2, 2), (2, 10)), {}),
               (((3, 15), (3, 3), (3, 3), (3, 3), (3, 15)), {})]


def _blocks(a, units, n):
    return [a[..., k * units:(k + 1) * units] for k in range(n)]


def _check_shapes(op, names, wide, wide_by, *narrow):
    """Each ``wide`` input is [..., wide_by * units], each ``narrow`` one [..., units]."""
    state = narrow[0].shape
    if (len(state) < 1 or any(a.shape != state[:-1] + (wide_by * state[-1],) for a in wide)
            or any(a.shape != state for a in narrow)):
        shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(names, wide + narrow))
        raise InvalidArgumentError(
            f"{op}: {' and '.join(names[:len(wide)])} must have shape [..., {wide_by} * units] "
            f"and {', '.join(names[len(wide):])} [..., units], with the same leading axes; "
            f"got {shapes}")


def _lstm_gates_forward(xp, z, c_prev):
    """h, c and act = [sig(z_i), sig(z_f), tanh(z_c), sig(z_o), tanh(c)], one exp for the
    gates (``tanh x = 2 sig(2x) - 1``, exact to rounding: 6e-8 absolute in float32)."""
    _check_shapes("LSTMGates", ("z", "c_prev"), (z,), 4, c_prev)
    units = c_prev.shape[-1]
    act = xp.empty(z.shape[:-1] + (5 * units,), dtype=z.dtype)
    gates = act[..., :4 * units]
    xp.multiply(z, -1.0, out=gates)
    i, f, g, o, tc = _blocks(act, units, 5)
    g *= 2
    with np.errstate(over="ignore"):   # exp(-z) = inf for z < -88 (float32): sigmoid is 0
        xp.exp(gates, out=gates)
    gates += 1
    xp.reciprocal(gates, out=gates)
    g *= 2
    g -= 1
    c = f * c_prev
    c += i * g
    xp.tanh(c, out=tc)
    return o * tc, c, act


def _lstm_gates_grad_forward(xp, act, c_prev, dh, dc, d_act):
    _check_shapes("LSTMGatesGrad", ("act", "d_act", "c_prev", "dh", "dc"), (act, d_act), 5,
                  c_prev, dh, dc)
    units = c_prev.shape[-1]
    i, f, g, o, tc = _blocks(act, units, 5)
    gi, gf, gg, go, gtc = _blocks(d_act, units, 5)
    gates = act[..., :4 * units]
    slope = gates - gates * gates          # sig' = s (1 - s) on i, f, o; tanh' = 1 - g^2 on c
    slope_c = slope[..., 2 * units:3 * units]
    xp.multiply(g, g, out=slope_c)
    xp.subtract(1, slope_c, out=slope_c)
    dct = dh * o
    dct += gtc
    dct *= 1 - tc * tc
    dct += dc
    dz = xp.empty(slope.shape, dtype=slope.dtype)
    d_i, d_f, d_c, d_o = _blocks(dz, units, 4)
    xp.multiply(dct, g, out=d_i)
    xp.multiply(dct, c_prev, out=d_f)
    xp.multiply(dct, i, out=d_c)
    xp.multiply(dh, tc, out=d_o)
    dz += d_act[..., :4 * units]
    dz *= slope
    return dz, xp.multiply(dct, f, out=dct)


def _gates_grad_composite(act, c_prev, dh, dc, d_act):
    """LSTMGatesGrad's formulas in this library's ops, for its own VJP."""
    i, f, g, o, tc = split(act, 5, axis=-1)
    gi, gf, gg, go, gtc = split(d_act, 5, axis=-1)
    dct = dc + (dh * o + gtc) * (1 - tc * tc)
    dz = concat([(dct * g + gi) * i * (1 - i), (dct * c_prev + gf) * f * (1 - f),
                 (dct * i + gg) * (1 - g * g), (dh * tc + go) * o * (1 - o)], axis=-1)
    return dz, dct * f


def _lstm_gates_grad_vjp(g, ans, *inputs):
    from ..tape import GradientTape   # the tape imports the ops: import it when needed
    with GradientTape() as tape:
        for x in inputs:
            tape.watch(x)
        outputs = _gates_grad_composite(*inputs)
    return tape.gradient(list(outputs), list(inputs), output_gradients=list(g))


LSTM_GATES_GRAD = Primitive(
    "LSTMGatesGrad", _lstm_gates_grad_forward, _lstm_gates_grad_vjp, n_outputs=2,
    saves="inputs", domain=_REALS, cases=_GRAD_CASES, batch_aware=False,
    label="LSTMGatesGrad({0}, {1}, {2}, {3}, {4})",
    doc="(dz, dc_prev) = the VJP of LSTMGates for (dh, dc, d_act), from its saved act; its "
        "own VJP differentiates those formulas (a tape over their composite)")


def _lstm_gates_vjp(g, ans, z, c_prev):
    dh, dc, d_act = g
    return list(LSTM_GATES_GRAD(ans[2], c_prev, dh, dc, d_act))


LSTM_GATES = Primitive(
    "LSTMGates", _lstm_gates_forward, _lstm_gates_vjp, n_outputs=3, saves="both",
    domain=_REALS, cases=_CASES, batch_aware=False, label="LSTMGates({0}, {1})",
    doc="c = sig(z_f) c_prev + sig(z_i) tanh(z_c), h = sig(z_o) tanh(c), act = the five "
        "activations: (dz, dc_prev) = LSTMGatesGrad(act, c_prev, dh, dc, d_act)")


def lstm_gates(z, c_prev):
    """``(h, c)`` of one LSTM step from its pre-activations ``z`` ([batch, 4 units],
    gates i, f, c, o) and the previous cell state ``c_prev`` ([batch, units])."""
    h, c, _ = LSTM_GATES(z, c_prev)
    return h, c
