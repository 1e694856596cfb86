"""The ``ad.nn`` namespace: activations and losses (as ``tf.nn``)."""

from .ops.elementwise import sigmoid, softplus, tanh  # noqa: F401
from .ops.nn import *  # noqa: F401,F403
