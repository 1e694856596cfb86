"""Error types raised by the engine, named as in ``tf.errors``.

``InvalidArgumentError`` is also a ValueError, so ``except ValueError`` catches
it. That is an extension: TensorFlow's ``tf.errors.InvalidArgumentError``
derives from ``tf.errors.OpError`` only, and ``except ValueError`` misses it.
"""

__all__ = ["InvalidArgumentError", "OpError", "OutOfRangeError", "ResourceExhaustedError",
           "OperatorNotAllowedInGraphError", "InaccessibleTensorError"]


class OpError(Exception):
    """Base class for errors raised while running an op."""


class InvalidArgumentError(OpError, ValueError):
    """An op received an argument it cannot use: a wrong shape, dtype or value.

    The message always names the op type, e.g.
    ``AddV2: cannot mix dtypes float32 and float64 (x: float32, y: float64)``.
    """


class OutOfRangeError(OpError):
    """An iteration read past the end of its input (``ad.scan`` or ``ad.foldl`` over no
    elements and without an initializer), as TensorFlow's ``tf.errors.OutOfRangeError``."""


class OperatorNotAllowedInGraphError(TypeError):
    """A traced tensor was used as a Python bool (or iterated over) inside ``ad.function``,
    where its value changes from call to call (TensorFlow's error of the same name).

    With ``autograph=True`` (the default) a Python ``if``, ``while`` or ``for`` on such a
    tensor becomes ``ad.cond`` / ``ad.while_loop``; elsewhere, and with ``autograph=False``,
    the trace refuses to keep one call's answer for every later call.
    """


class InaccessibleTensorError(ValueError):
    """A tensor made inside a loop or branch body of a traced function was used outside that
    body (TensorFlow's error of the same name, which is also a ValueError only).

    Inside ``ad.function`` a body (of ``ad.while_loop``, ``ad.cond``, ``ad.map_fn`` ... or
    of a Python ``if``/``for``/``while`` that AutoGraph converted) is traced once; a tensor
    it leaks through a Python list, dict, attribute or nonlocal holds that trace's value,
    not any call's. Its way out is the body's return values, loop variables or a TensorArray.
    TensorFlow does not list this class in ``tf.errors``; it raises it all the same.
    """


class ResourceExhaustedError(OpError, MemoryError):
    """The work would not fit in memory (TensorFlow's name for out-of-memory).

    Raised up front, before anything is allocated, where the engine can
    tell: ``tape.jacobian`` of a result larger than the free memory or the
    process's address-space limit (``autodiff.jacobian.JacobianMemoryError``).
    Also a MemoryError, so ``except MemoryError`` catches it.
    """
