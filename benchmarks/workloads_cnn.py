"""W8: a small CNN's gradient, against hand-written im2col NumPy and the libraries people use.

The network (float32, NHWC as TensorFlow): a batch of 32 images 16x16x3,
``conv 3x3 (3 -> 16, SAME) + bias, relu, conv 3x3 (16 -> 32, SAME) + bias,
relu, max-pool 2x2 (stride 2)``, flattened to 2048, a dense layer to 10
logits and the mean sparse softmax cross-entropy; the gradient with respect
to all six parameters.

The baseline is what a careful person writes by hand (``w8_numpy``): each
convolution an im2col (``sliding_window_view`` of the padded input, one
copy into rows) and one matmul; its input gradient one matmul and a
col2im of nine slice-adds; the pool a reshape (stride == window) whose
backward routes ``g`` by equality with the window's maximum (a tie can only
happen at zero after relu, where relu's backward drops it anyway).

Peer columns, when installed: PyTorch (eager autograd), TensorFlow's
``tf.function`` ("tf") and ``tf.function(jit_compile=True)`` ("xla"), and
``jax.jit(jax.value_and_grad)`` ("jax"). ``W8_FORMS`` below the table says
which convolution and pooling formulations the engine picked for these
shapes (``autodiff/ops/conv_kernels.py``, ``pool_kernels.py``); compiled,
each filter gradient also reads the im2col rows its forward convolution
kept (``autodiff/compiler/conv_rows.py``).
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from benchmarks import registry
from benchmarks.registry import (add_engine, add_peers, check_against_numpy, load_autodiff,
                                 note, register)

W8_BATCH, W8_HW, W8_CHANNELS, W8_CLASSES = 32, 16, (3, 16, 32), 10


def w8_data(batch=W8_BATCH, hw=W8_HW, channels=W8_CHANNELS):
    """(params, x, labels): params = [w1, b1, w2, b2, w3, b3] (HWIO kernels), float32."""
    rng = np.random.default_rng(8)
    params = []
    for c_in, c_out in zip(channels[:-1], channels[1:]):
        w = rng.standard_normal((3, 3, c_in, c_out)) * np.sqrt(2.0 / (9 * c_in))
        params += [w.astype(np.float32), (0.1 * rng.standard_normal(c_out)).astype(np.float32)]
    flat = (hw // 2) ** 2 * channels[-1]
    params += [(rng.standard_normal((flat, W8_CLASSES)) / np.sqrt(flat)).astype(np.float32),
               np.zeros(W8_CLASSES, np.float32)]
    x = rng.standard_normal((batch, hw, hw, channels[0])).astype(np.float32)
    labels = rng.integers(0, W8_CLASSES, batch).astype(np.int32)
    return params, x, labels


# ---------------------------------------------------------------- the hand-written baseline
def _rows(x):
    """NHWC -> (N * H * W, 9 * C): each SAME 3x3 receptive field as one row (HWC order)."""
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    fields = sliding_window_view(padded, (3, 3), axis=(1, 2))       # (N, H, W, C, 3, 3)
    return fields.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, 9 * c)


def _col2im(rows, shape):
    """The adjoint of ``_rows``: adds each row's nine taps back into an NHWC array."""
    n, h, w, c = shape
    cols = rows.reshape(n, h, w, 3, 3, c)
    padded = np.zeros((n, h + 2, w + 2, c), rows.dtype)
    for i in range(3):
        for j in range(3):
            padded[:, i:i + h, j:j + w] += cols[:, :, :, i, j]
    return padded[:, 1:-1, 1:-1]


def w8_numpy(params, x, labels):
    """(loss, [dw1, db1, dw2, db2, dw3, db3]) of the W8 network, by hand."""
    w1, b1, w2, b2, w3, b3 = params
    n, hw = x.shape[0], x.shape[1]
    rows1 = _rows(x)
    h1 = np.maximum(rows1 @ w1.reshape(-1, w1.shape[-1]) + b1, 0)
    h1 = h1.reshape(n, hw, hw, -1)
    rows2 = _rows(h1)
    h2 = np.maximum(rows2 @ w2.reshape(-1, w2.shape[-1]) + b2, 0)
    c = h2.shape[-1]
    windows = h2.reshape(n, hw // 2, 2, hw // 2, 2, c)
    pooled = windows.max(axis=(2, 4))
    flat = pooled.reshape(n, -1)
    logits = flat @ w3 + b3
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    total = e.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(total[:, 0]) - logits[np.arange(n), labels])
    g = e / total                                          # softmax - one-hot, over n
    g[np.arange(n), labels] -= 1
    g *= np.float32(1.0 / n)
    dw3, db3 = flat.T @ g, g.sum(axis=0)
    g_pool = (g @ w3.T).reshape(n, hw // 2, 1, hw // 2, 1, c)
    g2 = np.where(windows == pooled[:, :, None, :, None], g_pool, np.float32(0))
    g2 = g2.reshape(-1, c) * (h2 > 0)
    dw2, db2 = (rows2.T @ g2).reshape(w2.shape), g2.sum(axis=0)
    g1 = _col2im(g2 @ w2.reshape(-1, c).T, h1.shape).reshape(-1, h1.shape[-1])
    g1 *= h1.reshape(g1.shape) > 0
    dw1, db1 = (rows1.T @ g1).reshape(w1.shape), g1.sum(axis=0)
    return loss, [dw1, db1, dw2, db2, dw3, db3]


# ---------------------------------------------------------------- the engine and its peers
def w8_loss(nn, ops, params, x, labels):
    """The W8 loss with TensorFlow's API (``nn`` is ``ad.nn`` or ``tf.nn``, ``ops`` the
    top-level module): the same text runs on both."""
    w1, b1, w2, b2, w3, b3 = params
    h = nn.relu(nn.conv2d(x, w1, 1, "SAME") + b1)
    h = nn.relu(nn.conv2d(h, w2, 1, "SAME") + b2)
    h = nn.max_pool2d(h, 2, 2, "VALID")
    logits = ops.matmul(ops.reshape(h, [h.shape[0], -1]), w3) + b3
    return ops.reduce_mean(nn.sparse_softmax_cross_entropy_with_logits(labels, logits))


def _w8_tape(module, params, x, labels):
    with module.GradientTape() as tape:
        loss = w8_loss(module.nn, module, params, x, labels)
    return loss, tape.gradient(loss, params)


def _w8_tf(jit_compile):
    def make(tf, params, x, labels):
        variables = [tf.Variable(p) for p in params]
        x_tf, labels_tf = tf.constant(x), tf.constant(labels)
        step = tf.function(lambda a, b: _w8_tape(tf, variables, a, b), jit_compile=jit_compile)
        return lambda: step(x_tf, labels_tf)
    return make


def _w8_torch(torch, params, x, labels):
    f = torch.nn.functional
    ps = [torch.tensor(p if p.ndim != 4 else p.transpose(3, 2, 0, 1), requires_grad=True)
          for p in params]                       # OIHW kernels, NCHW images: PyTorch's own
    x_t, labels_t = torch.tensor(x.transpose(0, 3, 1, 2)), torch.tensor(labels).long()

    def run():
        w1, b1, w2, b2, w3, b3 = ps
        h = f.max_pool2d(f.relu(f.conv2d(f.relu(f.conv2d(x_t, w1, b1, padding=1)), w2, b2,
                                         padding=1)), 2)
        flat = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)   # NHWC order, as w3 expects
        loss = f.cross_entropy(flat @ w3 + b3, labels_t)
        grads = torch.autograd.grad(loss, ps)
        return loss, [g.permute(2, 3, 1, 0) if g.ndim == 4 else g for g in grads]

    return run


def _w8_jax(jax, params, x, labels):
    jnp, lax = jax.numpy, jax.lax

    def loss_fn(ps, x, labels):
        w1, b1, w2, b2, w3, b3 = ps
        dims = ("NHWC", "HWIO", "NHWC")
        h = jax.nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "SAME",
                                                 dimension_numbers=dims) + b1)
        h = jax.nn.relu(lax.conv_general_dilated(h, w2, (1, 1), "SAME",
                                                 dimension_numbers=dims) + b2)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ w3 + b3
        picked = jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1)
        return -jnp.mean(picked)

    step = jax.jit(jax.value_and_grad(loss_fn))
    ps, x_j, labels_j = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(labels)

    def run():
        loss, grads = step(ps, x_j, labels_j)
        loss.block_until_ready()
        return loss, grads

    return run


def w8_impls(params, x, labels, key="W8"):
    """{name: callable} for W8 on these arrays, every one checked against the baseline."""
    impls = {"numpy": lambda: w8_numpy(params, x, labels)}
    ad = load_autodiff()
    if ad is not None:
        add_engine(impls, ad, _w8_tape, params, x, labels)
        note(f"{key}: formulations run: " + describe_forms(x.shape, params))
    add_peers(impls, {"torch": _w8_torch, "jax": _w8_jax}, params, x, labels)
    for column, jit_compile in (("tf", False), ("xla", True)):
        add_peers(impls, {"tensorflow": _w8_tf(jit_compile)}, params, x, labels)
        if "tensorflow" in impls:
            impls[column] = impls.pop("tensorflow")
    check_against_numpy(key, impls, rtol=1e-3, atol_scale=1e-5)
    return impls


def describe_forms(x_shape, params):
    """What each convolution's three ops and the pool run (ops/conv_kernels.py,
    ops/pool_kernels.py), e.g. ``conv1 Conv2D=im2col ...; pool MaxPool=blocks``."""
    try:
        from autodiff.ops import conv_kernels, pool_kernels
    except ImportError:   # an engine from before issue 37: one formulation
        return "the reference (im2col by stacked slices) everywhere"
    same, parts = ((1, 1), (1, 1)), []
    shape = tuple(x_shape)
    for index, w in enumerate(params[0:4:2], start=1):
        forms = conv_kernels.describe(shape, w.shape, (1, 1), (1, 1), same)
        parts.append(f"conv{index} " + " ".join(f"{op}={f}" for op, f in forms.items()))
        shape = shape[:3] + (w.shape[-1],)
    pooled = pool_kernels.tiles(shape, (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
    return "; ".join(parts + [f"pool MaxPool={'blocks' if pooled else 'reference'}"])


@register("W8", "CNN gradient", "time", "ms", 1e3,
          "jit <= 1.0x tf", lambda tf, jit: jit <= tf, judged="jit", versus="tf")
def build_w8():
    if registry.SMOKE:
        return w8_impls(*w8_data(batch=4, hw=8))
    return w8_impls(*w8_data())
