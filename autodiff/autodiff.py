"""``ad.autodiff``: the namespace TensorFlow calls ``tf.autodiff``.

    >>> x, v = ad.constant(3.0), ad.constant(1.0)   # the point, the direction
    >>> with ad.autodiff.ForwardAccumulator(x, v) as acc:
    ...     y = x * x
    >>> float(acc.jvp(y))                          # dy/dx * v = 2x
    6.0

``ForwardAccumulator`` lives in ``forward.py``, ``GradientTape`` in ``tape.py``;
this module only gives them TensorFlow's address.
"""

from .forward import ForwardAccumulator
from .tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape"]
