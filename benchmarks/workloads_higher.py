"""The second-order workloads: W5 (Hessian, Hessian-vector product) and W6 (nested tapes).

Each baseline is the *analytic* answer written in NumPy by someone who did
the calculus by hand, including the forward pass that the autodiff side also
runs; the engine's answer must equal it (`check_against_numpy`, shape and
dtype included) before anything is timed.

- W5: x (64, 32) through ``h1 = tanh(x K1 + b1)`` (32 -> 32) and
  ``out = tanh(h1 K2 + b2)`` (32 -> 16), ``loss = mean(out**2)``, float32;
  the Hessian with respect to K1, shape (32, 32, 32, 32). Rows are
  independent, so with ``d2 = d^2 loss / dz1[n]^2`` (a 32 x 32 block per
  example) the Hessian is ``H[a, j, b, k] = sum_n x[n, a] x[n, b] d2[n, j, k]``.
  Per example, with ``s1 = 1 - h1^2``, ``s2 = 1 - out^2`` and ``c = 2 / out.size``:

      d2[n] = diag(s1) K2 diag(c s2 (1 - 3 out^2)) K2^T diag(s1)
              - 2 diag(h1 s1 (c out s2 K2^T))

  The middle factor is the Gauss-Newton part (``c s2^2``) plus the second
  tanh's curvature (``-2 c out^2 s2``); the last line is the first tanh's
  curvature times the gradient reaching h1. Verified against central finite
  differences of the analytic gradient in float64 (agreement to 2e-11).
  The engine side is the guide's pattern (nested tapes, then
  ``jacobian``); ``tape.hessian`` and ``ad.functional.hessian`` are timed
  alongside it (JSON columns ``autodiff/tape.hessian``, ``autodiff/functional``).
- W5-HVP: ``H v`` for v shaped like K1, forward-over-reverse
  (``ad.functional.hvp``); W5-HVP-RR: the same product reverse-over-reverse
  (the gradient of ``<grad, v>``). Baseline: Pearlmutter's R-operator by
  hand, a tangent forward pass and then the backward pass with its tangents.
- W6: ``f(x) = sin(x)**2`` on 1000 float32 points, first to fourth
  derivative with four nested tapes (each level's gradient of the implicit
  sum, as the guide's ``t2.gradient(dy_dx, x)``). Baseline: the closed forms
  ``sin 2x, 2 cos 2x, -4 sin 2x, -8 cos 2x``.

No peer columns: HIPS autograd and PyTorch were not installed where these
were written, and an untested peer would risk voiding the row.
`workloads.py` imports this module, which is what registers the workloads.
"""

import numpy as np

from benchmarks.registry import add_jit, check_against_numpy, load_autodiff, register

# ---------------------------------------------------------------- W5
W5_BATCH, W5_SIZES = 64, (32, 32, 16)


def w5_data():
    """(x, [k1, b1, k2, b2], v) as float32 arrays; v is the HVP's direction, shaped like k1.

    Glorot-scaled kernels keep the tanh layers off saturation, so every term
    of the Hessian matters.
    """
    rng = np.random.default_rng(5)
    x = rng.standard_normal((W5_BATCH, W5_SIZES[0])).astype(np.float32)
    params = []
    for fan_in, fan_out in zip(W5_SIZES[:-1], W5_SIZES[1:]):
        k = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / (fan_in + fan_out))
        params += [k.astype(np.float32), (0.1 * rng.standard_normal(fan_out)).astype(np.float32)]
    v = rng.standard_normal(params[0].shape).astype(np.float32)
    return x, params, v


def _w5_forward_numpy(x, params):
    """(h1, out) of the two tanh layers, pre-activations overwritten in place."""
    k1, b1, k2, b2 = params
    z1 = x @ k1
    z1 += b1
    h1 = np.tanh(z1, out=z1)
    z2 = h1 @ k2
    z2 += b2
    return h1, np.tanh(z2, out=z2)


def w5_numpy(x, params):
    """The forward, the per-example blocks d2[n] (see the module docstring), then one matmul."""
    _, _, k2, _ = params
    h1, out = _w5_forward_numpy(x, params)
    c = 2.0 / out.size
    s1, s2 = 1 - h1 * h1, 1 - out * out
    curvature = c * s2 * (1 - 3 * out * out)          # d^2 loss / dz2^2, diagonal per example
    a = s1[:, :, None] * k2                           # (n, hidden, out): diag(s1) K2
    blocks = np.matmul(a * curvature[:, None, :], a.transpose(0, 2, 1))   # (n, hidden, hidden)
    grad_h1 = (c * out * s2) @ k2.T
    diagonal = np.einsum("njj->nj", blocks)           # a writeable view
    diagonal -= 2 * h1 * s1 * grad_h1
    n, d, h = x.shape[0], x.shape[1], h1.shape[1]
    outer = (x[:, :, None] * x[:, None, :]).reshape(n, d * d)
    hessian = (outer.T @ blocks.reshape(n, h * h)).reshape(d, d, h, h)
    # Contiguous, as the engine's is: the guide reshapes it to a matrix for Newton's step.
    return np.ascontiguousarray(hessian.transpose(0, 2, 1, 3)), []


def _w5_loss(ad, x, params):
    k1, b1, k2, b2 = params
    h1 = ad.tanh(ad.matmul(x, k1) + b1)
    out = ad.tanh(ad.matmul(h1, k2) + b2)
    return ad.reduce_mean(out ** 2)


def w5_autodiff(ad, x, params):
    """The guide's Hessian: the gradient recorded on an outer tape, then its jacobian."""
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            loss = _w5_loss(ad, x, params)
        g = inner.gradient(loss, params[0])
    return outer.jacobian(g, params[0]), []


def w5_tape_hessian(ad, x, params):
    """The engine's own helper on a tape: ``tape.hessian``."""
    with ad.GradientTape() as tape:
        loss = _w5_loss(ad, x, params)
    return tape.hessian(loss, params[0]), []


def w5_functional_hessian(ad, x, params):
    """JAX-style: ``ad.functional.hessian`` of the loss as a function of K1."""
    k1, b1, k2, b2 = params
    hessian = ad.functional.hessian(lambda k: _w5_loss(ad, x, [k, b1, k2, b2]))
    return hessian(k1), []


@register("W5", "hessian", "time", "ms", 1e3,
          "<= 10x numpy", lambda numpy, autodiff: autodiff <= 10 * numpy)
def build_w5():
    x, params, _ = w5_data()
    impls = {"numpy": lambda: w5_numpy(x, params)}
    ad = load_autodiff()
    if ad is not None:
        x_ad = ad.constant(x)
        variables = [ad.Variable(p) for p in params]
        k1 = ad.constant(params[0])
        impls["autodiff"] = lambda: w5_autodiff(ad, x_ad, variables)
        add_jit(impls, ad, lambda x: w5_autodiff(ad, x, variables), x_ad)
        impls["autodiff/tape.hessian"] = lambda: w5_tape_hessian(ad, x_ad, variables)
        impls["autodiff/functional"] = lambda: w5_functional_hessian(
            ad, x_ad, [k1] + variables[1:])
    check_against_numpy("W5", impls)
    return impls


def w5_hvp_numpy(x, params, v):
    """Pearlmutter's R-operator by hand: tangents forward, then backward with tangents.

    R{.} is the directional derivative along v of each backward quantity.
    """
    _, _, k2, _ = params
    h1, out = _w5_forward_numpy(x, params)
    c = 2.0 / out.size
    s1, out2 = 1 - h1 * h1, out * out
    s2 = 1 - out2
    dh1 = s1 * (x @ v)                           # tangent of h1
    dout = s2 * (dh1 @ k2)                       # tangent of out
    delta2 = c * out * s2                        # d loss / dz2
    r_delta2 = c * dout * (1 - 3 * out2)         # R{delta2}: d/dout of c out (1 - out^2)
    grad_h1 = delta2 @ k2.T
    r_delta1 = (r_delta2 @ k2.T) * s1 - 2 * grad_h1 * h1 * dh1   # R{grad_h1 s1}
    return x.T @ r_delta1, []


def w5_hvp_forward_over_reverse(ad, x, params, v):
    """``ad.functional.hvp``: an accumulator carrying v around the gradient's tape."""
    k1, b1, k2, b2 = params
    return ad.functional.hvp(lambda k: _w5_loss(ad, x, [k, b1, k2, b2]), k1, v), []


def w5_hvp_reverse_over_reverse(ad, x, params, v):
    """The gradient of <grad, v>: two nested tapes, as TensorFlow's guide suggests."""
    k1 = params[0]
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            loss = _w5_loss(ad, x, params)
        g = inner.gradient(loss, k1)
        g_dot_v = ad.reduce_sum(g * v)
    return outer.gradient(g_dot_v, k1), []


def _w5_hvp_impls(hvp):
    x, params, v = w5_data()
    impls = {"numpy": lambda: w5_hvp_numpy(x, params, v)}
    ad = load_autodiff()
    if ad is not None:
        x_ad, v_ad = ad.constant(x), ad.constant(v)
        variables = [ad.Variable(p) for p in params]
        impls["autodiff"] = lambda: hvp(ad, x_ad, variables, v_ad)
        add_jit(impls, ad, lambda x, v: hvp(ad, x, variables, v), x_ad, v_ad)
    return impls


@register("W5-HVP", "hvp (fwd-over-rev)", "time", "us", 1e6,
          "<= 2.5x numpy", lambda numpy, autodiff: autodiff <= 2.5 * numpy)
def build_w5_hvp():
    impls = _w5_hvp_impls(w5_hvp_forward_over_reverse)
    check_against_numpy("W5-HVP", impls)
    return impls


@register("W5-HVP-RR", "hvp (rev-over-rev)", "time", "us", 1e6,
          "<= 2.5x numpy", lambda numpy, autodiff: autodiff <= 2.5 * numpy)
def build_w5_hvp_rr():
    impls = _w5_hvp_impls(w5_hvp_reverse_over_reverse)
    check_against_numpy("W5-HVP-RR", impls)
    return impls


# ---------------------------------------------------------------- W6
W6_POINTS = 1000


def w6_data():
    """1000 float32 points spread over a few periods of sin^2."""
    return np.random.default_rng(6).uniform(-3.0, 3.0, W6_POINTS).astype(np.float32)


def w6_numpy(x):
    """sin(x)^2 and its closed-form derivatives: sin 2x, 2 cos 2x, -4 sin 2x, -8 cos 2x."""
    s = np.sin(x)
    two_x = x + x
    sin2, cos2 = np.sin(two_x), np.cos(two_x)
    return s * s, [sin2, 2 * cos2, -4 * sin2, -8 * cos2]


def w6_autodiff(ad, x):
    """Four nested tapes; each inner gradient is recorded by every tape around it."""
    with ad.GradientTape() as t4:
        t4.watch(x)
        with ad.GradientTape() as t3:
            t3.watch(x)
            with ad.GradientTape() as t2:
                t2.watch(x)
                with ad.GradientTape() as t1:
                    t1.watch(x)
                    y = ad.sin(x) ** 2
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
    d4 = t4.gradient(d3, x)
    return y, [d1, d2, d3, d4]


@register("W6", "4th derivative", "time", "us", 1e6,
          "<= 60x numpy", lambda numpy, autodiff: autodiff <= 60 * numpy)
def build_w6():
    x = w6_data()
    impls = {"numpy": lambda: w6_numpy(x)}
    ad = load_autodiff()
    if ad is not None:
        x_ad = ad.constant(x)
        impls["autodiff"] = lambda: w6_autodiff(ad, x_ad)
        add_jit(impls, ad, lambda x: w6_autodiff(ad, x), x_ad)
    check_against_numpy("W6", impls)
    return impls
