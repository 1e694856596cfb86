"""Neural-network activations and losses (``ad.nn``).

``Relu`` follows TensorFlow: its VJP is a separate op, ``ReluGrad``, that
passes ``g`` where the output is positive. relu'(0) is 0. ``ReluGrad`` is
linear in ``g``, so its own VJP is ReluGrad again: that gives relu's
second derivative (zero almost everywhere) without a special case.
"""

from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["relu"]

AWAY_FROM_ZERO = ((0.3, 2.0), "signs")

RELU_GRAD = Primitive("ReluGrad", lambda xp, g, ans: g * (ans > 0),
                      (lambda gg, ans_, g, ans: relu_grad(gg, ans), lambda gg, ans_, g, ans: None),
                      saves="inputs", domain=(AWAY_FROM_ZERO, AWAY_FROM_ZERO),
                      cases=[(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 3), (2, 3)), {})],
                      dtype_args=(0, 1), label="ReluGrad({0}, {1})",
                      doc="linear in g: passes g where the relu output is positive")
RELU = Primitive("Relu", lambda xp, x: xp.maximum(x, 0), (lambda g, ans, x: relu_grad(g, ans),),
                 saves="ans", domain=AWAY_FROM_ZERO, label="relu({0})",
                 doc="d/dx relu x = 1 if x > 0 else 0 (0 at x = 0)")


def relu_grad(g, ans):
    """``g`` where ``ans > 0``, else 0 (``g`` may carry leading batch axes)."""
    return RELU_GRAD(g, ans)


def relu(features, name=None):
    """max(x, 0) elementwise. ``ad.nn.relu(ad.constant([-1.0, 2.0]))`` -> ``[0., 2.]``."""
    return RELU(convert_to_tensor(features))
