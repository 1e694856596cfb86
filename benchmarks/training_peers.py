"""T1-T4's PyTorch and JAX columns: each training step as a practitioner of that library
writes it, from the Keras model's weights (``model.get_weights()`` order).

- **PyTorch** ("torch"): ``nn.LSTM`` and ``nn.GRU`` (its fused recurrent kernels; Keras'
  gates reordered into PyTorch's, the recurrent bias of the LSTM zero), the transformer
  block and the CNN as ``torch.nn.functional`` calls on ``nn.Parameter``s (NCHW images);
  ``torch.optim.AdamW`` with ``CosineAnnealingLR`` (T1) or ``torch.optim.Adam`` with
  ``ExponentialLR`` (T2-T4, gamma ``0.96 ** (1 / 100)``: Keras' ExponentialDecay per step),
  ``eps=1e-7`` as Keras; ``F.cross_entropy``; eager, as most PyTorch code runs.
- **JAX** ("jax"): pure functions of a parameter dict, ``lax.scan`` over time for the
  recurrent ones, the whole step (loss, ``jax.value_and_grad``, the optimizer, BatchNorm's
  moving statistics, Dropout's key) under one ``jax.jit``. optax is not among this
  project's extras, so Adam/AdamW and the schedules are written in ``jax.numpy`` (Keras'
  update: ``lr_t = lr sqrt(1 - b2^t) / (1 - b1^t)``, ``eps=1e-7``; AdamW's decay ``lr wd w``).

Each builder returns ``(predict, step)``: ``predict(x)`` is the inference output (NumPy),
for the check against the other columns; ``step()`` runs one training step on the fixed
batch and returns its loss.
"""

import math

import numpy as np

BETA1, BETA2, EPS = 0.9, 0.999, 1e-7


# ---- PyTorch ---------------------------------------------------------------------------
def _torch_gru_gates(a, units):
    """Keras' GRU gate blocks (z, r, h) in PyTorch's order (r, z, n)."""
    z, r, h = np.split(a, 3, axis=-1)
    return np.concatenate([r, z, h], axis=-1)


def _torch_forward(torch, key, ps, modules):
    f = torch.nn.functional
    if key in ("T3", "T4"):
        def forward(x, training):
            out, _ = modules["rnn"](x)
            return out[:, -1] @ ps[-2] + ps[-1]
    elif key == "T1":
        def forward(x, training):
            wq, bq, wk, bk, wv, bv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2, wh, bh = ps
            q = torch.einsum("btd,dnh->bnth", x, wq) + bq[None, :, None]
            k = torch.einsum("btd,dnh->bnth", x, wk) + bk[None, :, None]
            v = torch.einsum("btd,dnh->bnth", x, wv) + bv[None, :, None]
            attended = f.scaled_dot_product_attention(q, k, v)
            attended = torch.einsum("bnth,nhd->btd", attended, wo) + bo
            h = f.layer_norm(x + attended, (x.shape[-1],), g1, b1, eps=1e-3)
            h = f.layer_norm(h + f.relu(h @ w1 + c1) @ w2 + c2, (x.shape[-1],), g2, b2, eps=1e-3)
            return h.mean(1) @ wh + bh
    else:
        def forward(x, training):
            h = x
            for conv, bn in (("conv1", "bn1"), ("conv2", "bn2")):
                h = f.max_pool2d(f.relu(modules[bn](modules[conv](h))), 2)
            h = f.dropout(h.permute(0, 2, 3, 1).flatten(1), 0.25, training=training)
            return h @ ps[-2] + ps[-1]
    return forward


def _torch_modules(torch, key, weights):
    nn = torch.nn
    if key in ("T3", "T4"):
        kernel, recurrent, bias = weights[:3]
        units = recurrent.shape[0]
        if key == "T3":
            rnn = nn.LSTM(kernel.shape[0], units, batch_first=True)
            w_ih, w_hh, b_ih, b_hh = kernel.T, recurrent.T, bias, np.zeros_like(bias)
        else:
            rnn = nn.GRU(kernel.shape[0], units, batch_first=True)
            w_ih, w_hh = _torch_gru_gates(kernel, units).T, _torch_gru_gates(recurrent, units).T
            b_ih, b_hh = _torch_gru_gates(bias[0], units), _torch_gru_gates(bias[1], units)
        with torch.no_grad():
            for name, value in (("weight_ih_l0", w_ih), ("weight_hh_l0", w_hh),
                                ("bias_ih_l0", b_ih), ("bias_hh_l0", b_hh)):
                getattr(rnn, name).copy_(torch.tensor(np.ascontiguousarray(value)))
        head = [nn.Parameter(torch.tensor(w)) for w in weights[3:]]
        return {"rnn": rnn}, head, list(rnn.parameters()) + head
    if key == "T1":
        ps = [nn.Parameter(torch.tensor(w)) for w in weights]
        return {}, ps, ps
    modules, k = {}, 0
    for index in (1, 2):   # conv (HWIO -> OIHW), BatchNorm (Keras momentum 0.99, eps 1e-3)
        kernel, bias, gamma, beta, mean, var = weights[k:k + 6]
        conv = nn.Conv2d(kernel.shape[2], kernel.shape[3], 3, padding=1)
        bn = nn.BatchNorm2d(kernel.shape[3], eps=1e-3, momentum=0.01)
        with torch.no_grad():
            conv.weight.copy_(torch.tensor(kernel.transpose(3, 2, 0, 1).copy()))
            conv.bias.copy_(torch.tensor(bias))
            for name, value in (("weight", gamma), ("bias", beta), ("running_mean", mean),
                                ("running_var", var)):
                getattr(bn, name).copy_(torch.tensor(value))
        modules[f"conv{index}"], modules[f"bn{index}"] = conv, bn
        k += 6
    head = [nn.Parameter(torch.tensor(w)) for w in weights[k:]]
    params = [p for m in modules.values() for p in m.parameters()] + head
    return modules, head, params


def torch_step(torch, key, weights, x, y):
    """``(predict, step)`` for PyTorch (see the module docstring)."""
    modules, ps, params = _torch_modules(torch, key, weights)
    forward = _torch_forward(torch, key, ps, modules)
    if key == "T1":
        optimizer = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-4, eps=EPS)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=1000)
    else:
        optimizer = torch.optim.Adam(params, lr=1e-3, eps=EPS)
        schedule = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.96 ** (1 / 100))
    x_t, y_t = _torch_input(torch, key, x), torch.tensor(y).long()

    def train(mode):
        for module in modules.values():
            module.train(mode)

    def predict(inputs):
        train(False)
        with torch.no_grad():
            return forward(_torch_input(torch, key, inputs), False).numpy()

    def step():
        train(True)
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(forward(x_t, True), y_t)
        loss.backward()
        optimizer.step()
        schedule.step()
        return loss.detach()

    return predict, step


def _torch_input(torch, key, x):
    return torch.tensor(x.transpose(0, 3, 1, 2).copy() if key == "T2" else x)


# ---- JAX -------------------------------------------------------------------------------
def _jax_forward(jax, key):
    jnp, lax = jax.numpy, jax.lax

    def layer_norm(h, gamma, beta):
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        return (h - mean) * lax.rsqrt(var + 1e-3) * gamma + beta

    if key == "T1":
        def forward(p, stats, x, training, rng):
            wq, bq, wk, bk, wv, bv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2, wh, bh = p
            q = jnp.einsum("btd,dnh->btnh", x, wq) + bq
            k = jnp.einsum("btd,dnh->btnh", x, wk) + bk
            v = jnp.einsum("btd,dnh->btnh", x, wv) + bv
            scores = jnp.einsum("btnh,bsnh->bnts", q, k) / math.sqrt(q.shape[-1])
            attended = jnp.einsum("bnts,bsnh->btnh", jax.nn.softmax(scores, axis=-1), v)
            h = layer_norm(x + jnp.einsum("btnh,nhd->btd", attended, wo) + bo, g1, b1)
            h = layer_norm(h + jax.nn.relu(h @ w1 + c1) @ w2 + c2, g2, b2)
            return h.mean(1) @ wh + bh, stats
    elif key == "T2":
        def forward(p, stats, x, training, rng):
            h, new_stats = x, []
            for k in (0, 4):
                kernel, bias, gamma, beta = p[k:k + 4]
                mean, var = stats[k // 2:k // 2 + 2]
                h = lax.conv_general_dilated(h, kernel, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC")) + bias
                if training:
                    batch_mean, batch_var = h.mean((0, 1, 2)), h.var((0, 1, 2))
                    new_stats += [0.99 * mean + 0.01 * batch_mean, 0.99 * var + 0.01 * batch_var]
                    mean, var = batch_mean, batch_var
                h = (h - mean) * lax.rsqrt(var + 1e-3) * gamma + beta
                h = lax.reduce_window(jax.nn.relu(h), -jnp.inf, lax.max, (1, 2, 2, 1),
                                      (1, 2, 2, 1), "VALID")
            h = h.reshape(h.shape[0], -1)
            if training:
                keep = jax.random.bernoulli(rng, 0.75, h.shape)
                h = jnp.where(keep, h / 0.75, 0.0)
            return h @ p[-2] + p[-1], (new_stats if training else stats)
    else:
        def forward(p, stats, x, training, rng):
            kernel, recurrent, bias, wh, bh = p
            units = recurrent.shape[0]
            steps = jnp.swapaxes(x, 0, 1) @ kernel        # every step's input product at once
            if key == "T3":
                steps = steps + bias
            zeros = jnp.zeros((x.shape[0], units), x.dtype)
            if key == "T3":
                def cell(carry, z_x):
                    h, c = carry
                    i, f, g, o = jnp.split(z_x + h @ recurrent, 4, axis=-1)
                    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                    h = jax.nn.sigmoid(o) * jnp.tanh(c)
                    return (h, c), None
                (h, _), _ = lax.scan(cell, (zeros, zeros), steps)
            else:
                def cell(h, z_x):
                    x_z, x_r, x_h = jnp.split(z_x + bias[0], 3, axis=-1)
                    r_z, r_r, r_h = jnp.split(h @ recurrent + bias[1], 3, axis=-1)
                    z, r = jax.nn.sigmoid(x_z + r_z), jax.nn.sigmoid(x_r + r_r)
                    return z * h + (1 - z) * jnp.tanh(x_h + r * r_h), None
                h, _ = lax.scan(cell, zeros, steps)
            return h @ wh + bh, stats
    return forward


def jax_step(jax, key, weights, x, y):
    """``(predict, step)`` for JAX (see the module docstring)."""
    jnp = jax.numpy
    forward = _jax_forward(jax, key)
    stats_at = [4, 5, 10, 11] if key == "T2" else []
    params = [jnp.asarray(w) for k, w in enumerate(weights) if k not in stats_at]
    stats = [jnp.asarray(weights[k]) for k in stats_at]

    def learning_rate(t):   # t: the step about to run, from 0
        if key == "T1":
            return 1e-3 * 0.5 * (1 + jnp.cos(jnp.pi * jnp.minimum(t, 1000) / 1000))
        return 1e-3 * 0.96 ** (t / 100)

    def loss_fn(p, stats, x, y, rng):
        logits, new_stats = forward(p, stats, x, True, rng)
        picked = jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1)
        return -jnp.mean(picked), new_stats

    @jax.jit
    def train_step(state, x, y):
        p, m, v, stats, t, rng = state
        rng, drop = jax.random.split(rng)
        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, stats, x, y, drop)
        lr = learning_rate(t)
        t = t + 1
        lr_t = lr * jnp.sqrt(1 - BETA2 ** t) / (1 - BETA1 ** t)
        m = [BETA1 * a + (1 - BETA1) * g for a, g in zip(m, grads)]
        v = [BETA2 * a + (1 - BETA2) * g * g for a, g in zip(v, grads)]
        decay = 1e-4 if key == "T1" else 0.0
        p = [w - lr * decay * w - lr_t * a / (jnp.sqrt(b) + EPS) for w, a, b in zip(p, m, v)]
        return (p, m, v, stats, t, rng), loss

    zeros = [jnp.zeros_like(w) for w in params]
    state = [(params, zeros, list(zeros), stats, jnp.float32(0), jax.random.PRNGKey(0))]
    x_j, y_j = jnp.asarray(x), jnp.asarray(y)
    infer = jax.jit(lambda p, stats, x: forward(p, stats, x, False, None)[0])

    def predict(inputs):
        p, _, _, stats, _, _ = state[0]
        return np.asarray(infer(p, stats, jnp.asarray(inputs)))

    def step():
        state[0], loss = train_step(state[0], x_j, y_j)
        return loss.block_until_ready()

    return predict, step
