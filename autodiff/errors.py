"""Error types raised by the engine, named as in ``tf.errors``.

``InvalidArgumentError`` is also a ValueError, so ``except ValueError`` catches
it. That is an extension: TensorFlow's ``tf.errors.InvalidArgumentError``
derives from ``tf.errors.OpError`` only, and ``except ValueError`` misses it.
"""

__all__ = ["InvalidArgumentError", "OpError"]


class OpError(Exception):
    """Base class for errors raised while running an op."""


class InvalidArgumentError(OpError, ValueError):
    """An op received an argument it cannot use: a wrong shape, dtype or value.

    The message always names the op type, e.g.
    ``AddV2: cannot mix dtypes float32 and float64 (x: float32, y: float64)``.
    """
