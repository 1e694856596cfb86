"""The ``ad.random`` namespace: seeded random tensors (as ``tf.random``)."""

from .ops.random import *  # noqa: F401,F403

__all__ = sorted(name for name in dir() if not name.startswith("_"))
