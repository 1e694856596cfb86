"""The ``ad.debugging`` namespace: numeric checks (as ``tf.debugging``), and
``tape_memory`` (an extra: what a tape keeps for its backward pass)."""

from .memory import tape_memory
from .ops.debugging import check_numerics


def assert_all_finite(x, message, name=None):
    """``check_numerics(x, message)``, under the name ``tf.debugging`` also gives it."""
    return check_numerics(x, message, name=name)


__all__ = ["check_numerics", "assert_all_finite", "tape_memory"]
