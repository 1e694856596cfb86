"""PyTorch on a GPU: the GPU benchmark's peer column, the same workloads on the same data.

Each builder takes the workload's NumPy data and a torch device and returns
a callable giving ``(result, gradients)`` in the shape
`registry.check_against_numpy` compares, so a PyTorch column that computes
something else fails its check before it is timed. Each is written the way
a PyTorch user would write it: autograd for gradients, ``torch.func`` for
Jacobians, Hessians and forward-over-reverse products.

- W2 / W2-large: ``workloads._w2_torch`` with ``device=``.
- W3: ``jacrev`` of the layer with respect to the kernel.
- W4: ``vmap(jacrev(...))`` over the examples (the per-example Jacobian).
- W5: ``torch.func.hessian`` (forward-over-reverse) of the loss in K1.
- W5-HVP: ``jvp`` of ``grad``; W5-HVP-RR: the gradient of ``<grad, v>``.
"""

from benchmarks import workloads, workloads_higher, workloads_jacobian


def _on(torch, device, *arrays):
    return [torch.as_tensor(a, device=device) for a in arrays]


def w2(torch, device, data=None):
    params, x, target = data if data is not None else workloads.mlp_data()
    return workloads._w2_torch(torch, params, x, target, device=device)


def w3(torch, device):
    x, kernel, bias = _on(torch, device, *workloads_jacobian.w3_data())
    jacobian = torch.func.jacrev(lambda k: torch.relu(x @ k + bias))
    return lambda: (jacobian(kernel), [])


def w4(torch, device):
    x, params = workloads_jacobian.w4_data()
    x = _on(torch, device, x)[0]
    w1, b1, w2_, b2 = _on(torch, device, *params)
    elu = torch.nn.functional.elu

    def one_example(row):
        return elu(elu(row @ w1 + b1) @ w2_ + b2)

    per_example = torch.func.vmap(torch.func.jacrev(one_example))
    return lambda: (per_example(x), [])


def _w5_setup(torch, device):
    x, params, v = workloads_higher.w5_data()
    x, v = _on(torch, device, x, v)
    k1, b1, k2, b2 = _on(torch, device, *params)

    def loss(k):
        h1 = torch.tanh(x @ k + b1)
        out = torch.tanh(h1 @ k2 + b2)
        return torch.mean(out ** 2)

    return loss, k1, v


def w5(torch, device):
    loss, k1, _ = _w5_setup(torch, device)
    hessian = torch.func.hessian(loss)
    return lambda: (hessian(k1), [])


def w5_hvp(torch, device):
    loss, k1, v = _w5_setup(torch, device)
    gradient = torch.func.grad(loss)
    return lambda: (torch.func.jvp(gradient, (k1,), (v,))[1], [])


def w5_hvp_rr(torch, device):
    loss, k1, v = _w5_setup(torch, device)
    k1 = k1.clone().requires_grad_()

    def run():
        (g,) = torch.autograd.grad(loss(k1), k1, create_graph=True)
        (hv,) = torch.autograd.grad(torch.sum(g * v), k1)
        return hv, []

    return run


BUILDERS = {"W2": w2, "W3": w3, "W4": w4, "W5": w5, "W5-HVP": w5_hvp, "W5-HVP-RR": w5_hvp_rr}
