"""``ad.autodiff``: the namespace TensorFlow calls ``tf.autodiff``.

    >>> with ad.autodiff.ForwardAccumulator(x, v) as acc:
    ...     y = f(x)
    >>> acc.jvp(y)

``ForwardAccumulator`` lives in ``forward.py``, ``GradientTape`` in ``tape.py``;
this module only gives them TensorFlow's address.
"""

from .forward import ForwardAccumulator
from .tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape"]
