"""Custom gradients in graphs: an ``IdentityN`` node whose VJP runs a traced ``grad_fn``.

``ad.custom_gradient`` records one ``IdentityN`` op whose VJP is the user's
``grad_fn``, a Python closure over values of *that* call (``e = exp(x)`` in
``log1pexp``). A graph cannot keep that closure: its values would be stale
on the next call. So, as TensorFlow does, the tracer (``graph.py``) turns
the call into a node

    IdentityN(y..., x..., variables..., captures...)

whose outputs are copies of its inputs (only the first ones, ``y``, are
used downstream), and traces ``grad_fn`` itself into a *gradient graph*
whose arguments are the upstream gradients ``dy`` followed by the node's
inputs. Whatever ``grad_fn`` uses from the forward pass (``e``) becomes a
capture: an extra input of the node, so the gradient graph always sees
*this* call's value:

    graph(a0: float32[]) captures c0=1.0            # log1pexp, traced
      n0 = Exp(a0)
      n1 = AddV2(c0, n0)
      n2 = Log(n1)
      n3 = IdentityN(n2, a0, n0)  # custom gradient: y=n2, x=a0, capture e=n0
      return n3.0

The node's VJP (below) runs the gradient graph with ``dy`` and the node's
inputs and returns gradients for ``x`` and the variables only. Those ops
are ordinary primitives, so an outer tape differentiates them again
(second derivatives through a custom gradient, back through ``e`` to
``x``). Saved models store the gradient graph as JSON.
"""

from ..registry import Primitive

__all__ = ["CustomGradient", "custom_gradient_primitive"]


class CustomGradient:
    """What a custom-gradient IdentityN node needs to compute its VJP.

    Attributes:
        n_y: how many of the node's inputs (its first ones) are ``y``.
        n_x: how many inputs after them get gradients (the call's inputs
            and the variables ``f`` read); captures follow them.
        graph: the gradient graph, a Graph from ``(dy..., node inputs...)``
            to the n_x gradients (None entries allowed); or None with
            ``error`` set when ``grad_fn`` could not be traced.
    """

    __slots__ = ("n_y", "n_x", "graph", "error", "check_shapes", "__weakref__")

    def __init__(self, n_y, n_x, graph=None, error=None):
        self.n_y, self.n_x, self.graph, self.error = n_y, n_x, graph, error
        self.check_shapes = False  # True for a gradient graph read from a saved model


def custom_gradient_primitive(custom, n_inputs):
    """The one-off ``IdentityN`` whose VJP runs a custom gradient's graph.

    Its outputs are copies of all its inputs (TensorFlow's IdentityN); its
    VJP gets one upstream gradient per output, runs the gradient graph on
    the first ``n_y`` of them and the inputs, and returns the gradients for
    the ``n_x`` inputs after ``y`` (None for ``y`` and the captures).
    """
    def forward(xp, *arrays):
        return arrays if n_inputs > 1 else arrays[0]

    def vjp(g, ans, *inputs):
        if custom.graph is None:
            raise LookupError(f"No gradient defined for operation 'IdentityN' (op type: "
                              f"IdentityN): its custom grad_fn could not be traced: "
                              f"{type(custom.error).__name__}: {custom.error}") from custom.error
        dys = g if isinstance(g, tuple) else (g,)
        grads = custom.graph.run(list(dys[:custom.n_y]) + list(inputs))
        tail = len(inputs) - custom.n_y - custom.n_x
        if custom.check_shapes:
            _check_gradients(grads, inputs[custom.n_y:custom.n_y + custom.n_x])
        return [None] * custom.n_y + list(grads) + [None] * tail

    prim = Primitive("IdentityN", forward, vjp, saves="inputs", dtype_args=(),
                     n_outputs=n_inputs, batch_aware=False, register=False,
                     doc="the gradient is a traced custom gradient (ad.custom_gradient)")
    prim.custom_gradient = custom
    return prim


def _check_gradients(grads, xs):
    """A loaded gradient graph must give each x a gradient of x's shape and dtype (or None)."""
    grads = list(grads)
    if len(grads) != len(xs):
        raise ValueError(f"the saved custom gradient returned {len(grads)} gradient(s) for "
                         f"{len(xs)} input(s)")
    for k, (grad, x) in enumerate(zip(grads, xs)):
        if grad is not None and (tuple(grad.shape) != tuple(x.shape) or grad.dtype != x.dtype):
            raise ValueError(f"the saved custom gradient returned, for input {k}, a gradient of "
                             f"shape {list(grad.shape)} and dtype {grad.dtype.name}; the input "
                             f"has shape {list(x.shape)} and dtype {x.dtype.name}")
