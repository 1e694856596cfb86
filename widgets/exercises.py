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
        prediction: a number, list, array or None (the student's guess).
        answer: what the engine computed: a Tensor, array, number, tuple or None.
        rtol, atol: tolerances for numbers.

    Raises:
        AssertionError: "Not quite: ..." with both values.
    """
    if prediction is None or answer is None:
        assert prediction is None and answer is None, \
            f"Not quite: you predicted {prediction}, the tape says {answer}"
    else:
        value = answer.numpy() if hasattr(answer, "numpy") else np.asarray(answer)
        assert np.shape(prediction) == np.shape(value) or np.ndim(prediction) == 0, \
            f"Not quite: you predicted shape {np.shape(prediction)}, the answer has shape {np.shape(value)}"
        assert np.allclose(prediction, value, rtol=rtol, atol=atol), \
            f"Not quite: you predicted {prediction}, the tape says {value}"
    print("Correct! The tape says:", answer)
