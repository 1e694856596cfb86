"""Error types raised by the engine, named as in ``tf.errors``.

``InvalidArgumentError`` is also a ValueError, so ``except ValueError`` catches
it. That is an extension: TensorFlow's ``tf.errors.InvalidArgumentError``
derives from ``tf.errors.OpError`` only, and ``except ValueError`` misses it.
"""

__all__ = ["InvalidArgumentError", "OpError", "ResourceExhaustedError"]


class OpError(Exception):
    """Base class for errors raised while running an op."""


class InvalidArgumentError(OpError, ValueError):
    """An op received an argument it cannot use: a wrong shape, dtype or value.

    The message always names the op type, e.g.
    ``AddV2: cannot mix dtypes float32 and float64 (x: float32, y: float64)``.
    """


class ResourceExhaustedError(OpError, MemoryError):
    """The work would not fit in memory (TensorFlow's name for out-of-memory).

    Raised up front, before anything is allocated, where the engine can
    tell: ``tape.jacobian`` of a result larger than the free memory or the
    process's address-space limit (``autodiff.jacobian.JacobianMemoryError``).
    Also a MemoryError, so ``except MemoryError`` catches it.
    """
