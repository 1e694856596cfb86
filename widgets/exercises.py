"""Checks for the lessons' "predict the gradient" exercises.

A student writes a prediction, runs the cell, and ``check`` compares it with
the tape's answer. ``None`` is an answer too (an unconnected gradient), and
only matches ``None``.

    >>> from widgets.exercises import check
    >>> check(6.0, tape.gradient(y, x))
    Correct! The tape says: ad.Tensor(6.0, shape=(), dtype=float32)
"""

import numpy as np

__all__ = ["check"]


def check(prediction, answer, rtol=1e-5, atol=1e-6):
    """Asserts that ``prediction`` matches ``answer`` and says so.

    Args:
        prediction: the student's guess: a number, list, array, shape tuple,
            string, bool or None.
        answer: what the engine gave: a Tensor, array, number, shape, string,
            bool or None.
        rtol, atol: tolerances for numbers.

    ``None`` only matches ``None``; strings, bools and shapes must be equal;
    numbers and arrays must be close, with the same shape unless the
    prediction is a single number.

    Raises:
        AssertionError: "Not quite: ..." with both values.
    """
    message = f"Not quite: you predicted {prediction!r}, the answer is {answer!r}"
    if prediction is None or answer is None:
        assert prediction is None and answer is None, message
    elif isinstance(answer, (str, bool, tuple)) or isinstance(prediction, str):
        assert (tuple(prediction) if isinstance(answer, tuple) else prediction) == answer, message
    else:
        value = answer.numpy() if hasattr(answer, "numpy") else np.asarray(answer)
        assert np.ndim(prediction) == 0 or np.shape(prediction) == np.shape(value), message
        assert np.allclose(prediction, value, rtol=rtol, atol=atol), message
    print("Correct! The answer is:", answer)
