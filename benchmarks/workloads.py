"""The benchmark workloads, each with its hand-written NumPy yardstick.

Each workload pairs a hand-written NumPy forward+backward (the baseline:
what a careful person would write with no autodiff at all) with the same
computation through `autodiff`, and, when they are installed, through HIPS
autograd and PyTorch. Its `build()` creates the inputs, checks that every
implementation agrees with NumPy (registry.check_against_numpy), and
returns zero-argument callables for `run.py` to time or, for memory
workloads, to measure what their results keep alive.

To add a workload, write its functions and a `@register`-ed build here
(or in a sibling module imported at the end of this file, as
`workloads_jacobian.py` for W3 and W4). Nothing in this file measures (see
`harness.py`), and nothing edits the engine.
"""

import importlib

import numpy as np

from benchmarks import harness
# REGISTRY is imported for run.py: importing this module is what fills it.
from benchmarks.registry import (REGISTRY, add_engine, add_jit, add_peers,  # noqa: F401
                                 check_against_numpy, load_autodiff, register)


# ---------------------------------------------------------------- W1
# 500 x (Sin, Mul, Add) on a tiny vector: the arrays are so small that the
# time is almost all per-op bookkeeping, which is what W1 is about.
W1_STEPS = 500
W1_OPS = 3 * W1_STEPS
W1_SCALE, W1_SHIFT = 1.0001, 0.1
# y settles near 0.85, so each step scales the gradient by about
# cos(0.85) = 0.66: after 500 steps it has underflowed to zero in float32.
# Gradients are therefore also checked on a chain this short, where they
# are still of order 1e-3.
W1_CHECK_STEPS = 20


def w1_numpy(x, steps):
    """Forward keeps each Sin input; backward walks the chain rule in reverse."""
    a, b = np.float32(W1_SCALE), np.float32(W1_SHIFT)
    saved = []
    y = x
    for _ in range(steps):
        saved.append(y)  # d/dy sin y = cos y: backward needs y itself
        y = np.sin(y) * a + b
    loss = y.sum()
    g = np.ones_like(y)  # d sum(y) / dy = 1
    for y_in in reversed(saved):
        g = g * a * np.cos(y_in)  # Add passes g on, Mul scales it, Sin: cos
    return loss, g


def w1_autodiff(ad, x, steps):
    """The same chain on a tape that watches the constant x: (loss, dloss/dx)."""
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(steps):
            y = ad.sin(y) * W1_SCALE + W1_SHIFT
        loss = ad.reduce_sum(y)
    return loss, tape.gradient(loss, x)


def _w1_autograd(autograd, x, steps):
    anp = importlib.import_module("autograd.numpy")

    def f(x):
        y = x
        for _ in range(steps):
            y = anp.sin(y) * W1_SCALE + W1_SHIFT
        return anp.sum(y)

    return lambda: autograd.value_and_grad(f)(x)


def _w1_torch(torch, x, steps):
    x = torch.tensor(x, requires_grad=True)

    def run():
        y = x
        for _ in range(steps):
            y = torch.sin(y) * W1_SCALE + W1_SHIFT
        loss = y.sum()
        return loss, torch.autograd.grad(loss, x)[0]

    return run


def _w1_impls(x, steps):
    """{name: callable} for the chain of `steps` steps on the array x."""
    impls = {"numpy": lambda: w1_numpy(x, steps)}
    ad = load_autodiff()
    if ad is not None:
        x_ad = ad.constant(x)
        impls["autodiff"] = lambda: w1_autodiff(ad, x_ad, steps)
        add_jit(impls, ad, lambda x: w1_autodiff(ad, x, steps), x_ad)
    add_peers(impls, {"autograd": _w1_autograd, "torch": _w1_torch}, x, steps)
    return impls


@register("W1", "op overhead", "time", "us/op", 1e6 / W1_OPS,
          "<= 6 us/op", lambda numpy, autodiff: autodiff <= 6.0)
def build_w1():
    x = np.random.default_rng(0).standard_normal(8).astype(np.float32)
    check_against_numpy("W1", _w1_impls(x, W1_CHECK_STEPS))
    impls = _w1_impls(x, W1_STEPS)
    check_against_numpy("W1", impls)
    return impls


# ---------------------------------------------------------------- W2, W7
# An MLP 784 -> 256 -> 256 -> 10 with relu, float32, batch 256: big enough
# that matmuls dominate, so an engine's per-op cost should almost vanish.
W2_SIZES = (784, 256, 256, 10)
W2_BATCH = 256


def mlp_data(sizes=W2_SIZES, batch=W2_BATCH):
    """(params, x, target) as float32 arrays; params = [w1, b1, w2, b2, w3, b3]."""
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        # He scaling keeps the relu activations of order one at every layer.
        w = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)
        params += [w.astype(np.float32),
                   (0.1 * rng.standard_normal(fan_out)).astype(np.float32)]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    target = rng.standard_normal((batch, sizes[-1])).astype(np.float32)
    return params, x, target


def mlp_forward_numpy(params, x, target):
    """Returns (loss, saved), saved = (h1, h2, diff): all backward needs.

    Relu's outputs are enough for its backward (h > 0 exactly where the
    input was > 0), so pre-activations are overwritten in place.
    """
    w1, b1, w2, b2, w3, b3 = params
    h1 = x @ w1
    h1 += b1
    np.maximum(h1, 0, out=h1)
    h2 = h1 @ w2
    h2 += b2
    np.maximum(h2, 0, out=h2)
    diff = h2 @ w3
    diff += b3
    diff -= target
    return np.mean(np.square(diff)), (h1, h2, diff)


def mlp_backward_numpy(params, x, saved):
    """Gradients of mean(diff**2) for [w1, b1, w2, b2, w3, b3]."""
    _, _, w2, _, w3, _ = params
    h1, h2, diff = saved
    g = diff * np.float32(2.0 / diff.size)  # d mean(d**2) / dd = 2 d / n
    dw3, db3 = h2.T @ g, g.sum(axis=0)
    g = g @ w3.T
    g *= h2 > 0  # relu passes g only where it was active
    dw2, db2 = h1.T @ g, g.sum(axis=0)
    g = g @ w2.T
    g *= h1 > 0
    dw1, db1 = x.T @ g, g.sum(axis=0)
    return [dw1, db1, dw2, db2, dw3, db3]


def mlp_step_numpy(params, x, target):
    """One hand-written training gradient: (loss, [dw1, db1, ..., db3])."""
    loss, saved = mlp_forward_numpy(params, x, target)
    return loss, mlp_backward_numpy(params, x, saved)


def mlp_forward_autodiff(ad, params, x, target):
    """The W2 loss with autodiff ops, written as a TensorFlow user would."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = ad.nn.relu(ad.matmul(x, w1) + b1)
    h2 = ad.nn.relu(ad.matmul(h1, w2) + b2)
    out = ad.matmul(h2, w3) + b3
    return ad.reduce_mean(ad.square(out - target))


def mlp_step_autodiff(ad, params, x, target):
    """(loss, gradients for the six Variables), the tape watching them itself."""
    with ad.GradientTape() as tape:
        loss = mlp_forward_autodiff(ad, params, x, target)
    return loss, tape.gradient(loss, params)


def _mlp_loss_autograd(params, x, target):
    anp = importlib.import_module("autograd.numpy")
    w1, b1, w2, b2, w3, b3 = params
    h1 = anp.maximum(anp.dot(x, w1) + b1, 0.0)
    h2 = anp.maximum(anp.dot(h1, w2) + b2, 0.0)
    return anp.mean(anp.square(anp.dot(h2, w3) + b3 - target))


def _w2_autograd(autograd, params, x, target):
    step = autograd.value_and_grad(_mlp_loss_autograd)
    return lambda: step(params, x, target)


def _w2_torch(torch, params, x, target, device="cpu"):
    params = [torch.tensor(p, requires_grad=True, device=device) for p in params]
    x, target = torch.as_tensor(x, device=device), torch.as_tensor(target, device=device)

    def run():
        w1, b1, w2, b2, w3, b3 = params
        h1 = torch.relu(x @ w1 + b1)
        h2 = torch.relu(h1 @ w2 + b2)
        loss = torch.mean(torch.square(h2 @ w3 + b3 - target))
        return loss, torch.autograd.grad(loss, params)

    return run


@register("W2", "MLP gradient", "time", "ms", 1e3,
          "<= 1.1x numpy", lambda numpy, autodiff: autodiff <= 1.1 * numpy)
def build_w2():
    return mlp_impls(*mlp_data(), key="W2")


def mlp_impls(params, x, target, key, rtol=1e-4, peers=True, atol_scale=1e-6):
    """W2's implementations for the given data, checked against NumPy (to ``rtol``: a
    larger MLP sums more float32 terms, so its rounding differs more between libraries);
    ``peers=False`` leaves out the CPU peers (autograd, PyTorch)."""
    impls = {"numpy": lambda: mlp_step_numpy(params, x, target)}
    ad = load_autodiff()
    if ad is not None:
        add_engine(impls, ad, mlp_step_autodiff, params, x, target)
    if peers:
        add_peers(impls, {"autograd": _w2_autograd, "torch": _w2_torch}, params, x, target)
    check_against_numpy(key, impls, rtol=rtol, atol_scale=atol_scale)
    return impls


def _w7_autograd(autograd, params, x, target):
    # make_vjp runs the forward and returns the VJP closure, which holds
    # autograd's graph, the counterpart of a tape kept for later.
    return lambda: autograd.make_vjp(_mlp_loss_autograd)(params, x, target)


@register("W7", "tape memory", "memory", "MiB", harness.mib(1),
          "<= 1.0x numpy", lambda numpy, autodiff: autodiff <= numpy)
def build_w7():
    # Everything but the forward pass exists before measuring, so the figure
    # is only what each side keeps for its backward pass (W2 checks that the
    # forward passes agree).
    params, x, target = mlp_data()
    impls = {"numpy": lambda: mlp_forward_numpy(params, x, target)}
    ad = load_autodiff()
    if ad is not None:
        ad_params = [ad.Variable(p) for p in params]
        x_ad, target_ad = ad.constant(x), ad.constant(target)

        def record():
            with ad.GradientTape(persistent=True) as tape:
                loss = mlp_forward_autodiff(ad, ad_params, x_ad, target_ad)
            return tape, loss

        impls["autodiff"] = record
    # PyTorch's CPU allocator does not report to tracemalloc: no torch column.
    add_peers(impls, {"autograd": _w7_autograd}, params, x, target)
    return impls


# W3 (jacobian) and W4 (batch_jacobian) register themselves on import; they
# come after W1, W2 and W7 in the table.
from benchmarks import workloads_jacobian  # noqa: E402,F401
from benchmarks import workloads_higher  # noqa: E402,F401  (W5, W5-HVP, W5-HVP-RR, W6)
from benchmarks import workloads_cnn  # noqa: E402,F401  (W8, the CNN gradient, with peers)
from benchmarks import workloads_training  # noqa: E402,F401  (T1-T4, training steps vs tf)
