"""The ``ad.random`` namespace: seeded random tensors (as ``tf.random``)."""

from .ops.random import *  # noqa: F401,F403
