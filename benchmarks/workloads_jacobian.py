"""The Jacobian workloads: W3 (tape.jacobian) and W4 (tape.batch_jacobian).

Each baseline is the *analytic* Jacobian written in NumPy by someone who
knows its structure, including the forward pass that the autodiff side
also runs. That is the hardest yardstick there is: reverse mode has to push
one cotangent per output element (W3: 4096 of them) through the whole
backward pass, while the baseline writes the nonzero entries directly.

- W3: ``y = relu(x @ K + b)`` with x (64, 32), K (32, 64); the full
  Jacobian of y with respect to K, shape (64, 64, 32, 64), float32. Only
  one entry in 64 can be nonzero: ``J[i, j, k, l] = [j == l] x[i, k]
  relu'(z[i, j])``.
- W4: x (512, 64) through two elu Dense layers, 64 -> 128 -> 64; the
  per-example Jacobian of the output with respect to x, (512, 64, 64):
  ``J[b] = diag(elu'(z2[b])) W2^T diag(elu'(z1[b])) W1^T`` (out, in).

The results are returned as the "loss" of `check_against_numpy` (with no
gradients), so the engine's Jacobian must equal the analytic one, shape and
dtype included, before anything is timed. `workloads.py` imports this
module, which is what registers W3 and W4. No peer columns yet: HIPS
autograd and PyTorch were not installed where these were written, and an
untested peer would risk voiding the row.
"""

import numpy as np

from benchmarks.registry import add_jit, check_against_numpy, load_autodiff, register

# ---------------------------------------------------------------- W3
W3_BATCH, W3_IN, W3_OUT = 64, 32, 64


def w3_data():
    """(x, K, b) as float32 arrays, He-scaled so that about half the relus are active."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((W3_BATCH, W3_IN)).astype(np.float32)
    kernel = (rng.standard_normal((W3_IN, W3_OUT)) * np.sqrt(2.0 / W3_IN)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(W3_OUT)).astype(np.float32)
    return x, kernel, bias


def w3_numpy(x, kernel, bias):
    """The forward, then J[i, j, k, j] = x[i, k] relu'(z[i, j]) written into zeros."""
    z = x @ kernel
    z += bias
    jacobian = np.zeros((W3_BATCH, W3_OUT, W3_IN, W3_OUT), dtype=np.float32)
    # einsum's diagonal is a writeable view: this writes only the 1-in-64 nonzeros
    diagonal = np.einsum("ijkj->ijk", jacobian)
    np.multiply(x[:, None, :], (z > 0)[:, :, None], out=diagonal)
    return jacobian, []


def w3_autodiff(ad, x, kernel, bias):
    """What a TensorFlow user writes: record the layer, ask for the Jacobian."""
    with ad.GradientTape() as tape:
        y = ad.nn.relu(ad.matmul(x, kernel) + bias)
    return tape.jacobian(y, kernel), []


@register("W3", "jacobian", "time", "ms", 1e3,
          "<= 15x numpy", lambda numpy, autodiff: autodiff <= 15 * numpy)
def build_w3():
    x, kernel, bias = w3_data()
    impls = {"numpy": lambda: w3_numpy(x, kernel, bias)}
    ad = load_autodiff()
    if ad is not None:
        x_ad, kernel_ad, bias_ad = ad.constant(x), ad.Variable(kernel), ad.Variable(bias)
        impls["autodiff"] = lambda: w3_autodiff(ad, x_ad, kernel_ad, bias_ad)
        add_jit(impls, ad, lambda x: w3_autodiff(ad, x, kernel_ad, bias_ad), x_ad)
    check_against_numpy("W3", impls)
    return impls


# ---------------------------------------------------------------- W4
W4_BATCH, W4_SIZES = 512, (64, 128, 64)


def w4_data():
    """(x, [w1, b1, w2, b2]) as float32 arrays; Glorot-scaled, so both elu branches occur."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((W4_BATCH, W4_SIZES[0])).astype(np.float32)
    params = []
    for fan_in, fan_out in zip(W4_SIZES[:-1], W4_SIZES[1:]):
        w = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / (fan_in + fan_out))
        params += [w.astype(np.float32), (0.1 * rng.standard_normal(fan_out)).astype(np.float32)]
    return x, params


def _elu_and_slope(z):
    """elu(z) and elu'(z); the slope is exp(min(z, 0)), which is 1 where z > 0."""
    slope = np.exp(np.minimum(z, 0))
    return np.where(z > 0, z, np.expm1(np.minimum(z, 0))), slope


def w4_numpy(x, params):
    """The forward, then J[b] = diag(s2[b]) W2^T diag(s1[b]) W1^T as one batched matmul."""
    w1, b1, w2, b2 = params
    z1 = x @ w1
    z1 += b1
    h1, s1 = _elu_and_slope(z1)
    z2 = h1 @ w2
    z2 += b2
    _, s2 = _elu_and_slope(z2)
    scaled = w2.T[None, :, :] * s1[:, None, :]      # (batch, out, hidden): W2^T diag(s1[b])
    jacobian = np.matmul(scaled, w1.T)              # (batch, out, in)
    jacobian *= s2[:, :, None]
    return jacobian, []


def w4_autodiff(ad, x, params):
    """The guide's pattern: watch only x, then batch_jacobian."""
    w1, b1, w2, b2 = params
    with ad.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        h = ad.nn.elu(ad.matmul(x, w1) + b1)
        y = ad.nn.elu(ad.matmul(h, w2) + b2)
    return tape.batch_jacobian(y, x), []


@register("W4", "batch_jacobian", "time", "ms", 1e3,
          "<= 1.5x numpy", lambda numpy, autodiff: autodiff <= 1.5 * numpy)
def build_w4():
    x, params = w4_data()
    impls = {"numpy": lambda: w4_numpy(x, params)}
    ad = load_autodiff()
    if ad is not None:
        x_ad, params_ad = ad.constant(x), [ad.Variable(p) for p in params]
        impls["autodiff"] = lambda: w4_autodiff(ad, x_ad, params_ad)
        add_jit(impls, ad, lambda x: w4_autodiff(ad, x, params_ad), x_ad)
    check_against_numpy("W4", impls)
    return impls
