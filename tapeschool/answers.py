"""Checks for the lessons' "predict the gradient" exercises.

A student writes a prediction in place of ``...``, runs the cell, then runs
the check below it. ``check`` compares the prediction with the tape's answer
and prints one line: ``Correct!`` (with the answer), or ``Not yet:`` and a
hint. A wrong or missing prediction never raises and never shows the answer,
so "Run All" reaches the end of the lesson and a student can try again.
``None`` is an answer too (an unconnected gradient), and only matches ``None``.

    >>> from widgets.exercises import check      # the lessons' import; defined here
    >>> check(6.0, tape.gradient(y, x))
    Correct! The answer is: ad.Tensor(6.0, shape=(), dtype=float32)
    >>> check(..., tape.gradient(y, x))
    Not yet: type your prediction in place of `...` in the cell above, run it, then run this check.
    >>> check(5.0, tape.gradient(y, x), hint="the product rule gives two terms")
    Not yet: the product rule gives two terms.

Grading never trusts this function: it runs in the student's kernel, which the
student controls. The grader (``tapeschool/course/grading.py``) runs each
submission in a sandbox where the check cells hand their predictions to a
``Recorder`` as plain data (``to_plain``: numbers, None, booleans, strings,
lists, tuples, arrays with their dtype and shape), then decides in the
teacher's process with ``verdict``, the very rules ``check`` prints with,
against a key made from the teacher edition. Under nbgrader's *Validate*
button (``NBGRADER_EXECUTION`` set) a prediction that is not correct raises
``AssertionError`` with the "Not yet" line, so the student sees which checks
fail; the message still does not contain the answer.

What it must not do: import ``autodiff`` at import time (the teacher's process
compares answers without the engine), or show an answer that was not earned.
"""

import os

import numpy as np

__all__ = ["check", "check_gradients", "verdict"]

BLANK = "type your prediction in place of `...` in the cell above, run it, then run this check"
GENERIC = "that is not what the tape says. Work through it on paper once more"


def check(prediction, answer, hint=None, rtol=1e-5, atol=1e-6):
    """Says whether ``prediction`` matches ``answer``, without ever revealing a wrong one.

    Args:
        prediction: the student's guess: a number, list, array, shape tuple,
            string, bool, None, or a dict of these; ``...`` (the blank) is not
            a guess yet.
        answer: what the engine gave: a Tensor, array, number, shape, string,
            bool or None.
        hint: what to print after "Not yet:" when the prediction is wrong
            (default: a general nudge, or a note that the shapes differ).
        rtol, atol: tolerances for numbers.

    Returns:
        None. Prints "Correct! The answer is: ..." or "Not yet: <hint>."

    ``None`` only matches ``None``; bools only match bools (``1`` is not
    ``True``); strings match ignoring case and surrounding spaces (``"log"``
    is ``"Log"``); shapes must be equal; numbers and arrays must be close and
    have the same shape (a single number matches only a one-element answer:
    ``5.0`` is not ``[5, 5, 5]``).

    Raises:
        AssertionError: only under nbgrader (``NBGRADER_EXECUTION`` set), when
            the prediction is not correct; the message is the "Not yet" line.
    """
    correct, message = verdict(prediction, answer, hint, rtol, atol)
    if not correct:
        return _not_yet(message)
    print(message)
    return None


def verdict(prediction, answer, hint=None, rtol=1e-5, atol=1e-6, answer_text=None):
    """The rules of ``check`` as a value: ``(correct, message)``, printing nothing.

    ``message`` is ``"Correct! The answer is: <answer>"`` or the "Not yet" hint (without
    "Not yet: "), never the answer. The grader calls this with values rebuilt by
    ``from_plain`` and the key's ``answer_text``, so a lesson's check and its grade agree.

    Example:
        >>> verdict(5.0, 6.0, hint="count the terms")
        (False, 'count the terms')
    """
    if _has_blank(prediction):
        return False, BLANK
    try:
        correct, shape_note = _matches(prediction, answer, rtol, atol)
    except Exception:  # a prediction of a kind that cannot be compared (a set, a function...)
        return False, hint or "give a number, a list, a tuple, a string, True/False or None"
    if not correct:
        return False, hint or shape_note or GENERIC
    shown = str(answer) if answer_text is None else answer_text   # print's text, not format's
    return True, f"Correct! The answer is: {shown}"


def check_gradients(op, args, order=2, hint=None):
    """Checks a student's op with ``ad.testing.check_grads``, saying "Correct!" or "Not yet".

    Args:
        op: the op (an ``ad.Primitive`` or a function of tensors), or ``...``.
        args: its inputs, as for ``check_grads``.
        order: the highest derivative order to compare with finite differences.
        hint: printed after "Not yet:" when the derivatives disagree.

    Returns:
        None. Prints "Correct! <name> passes check_grads to order <order>", or
        "Not yet: ..." with what went wrong (never the expected rule).

    Raises:
        AssertionError: only under nbgrader, when the op does not pass.

    Example:
        >>> check_gradients(SOFTSIGN, [np.array([-1.5, 0.7])], order=2)
        Correct! SoftsignLesson passes check_grads to order 2
    """
    from autodiff.testing import check_grads

    if op is Ellipsis:
        return _not_yet("write your op in place of `...` in the cell above, run it, "
                        "then run this check")
    try:
        check_grads(op, args, order=order)
    except AssertionError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "they differ"
        return _not_yet(hint or f"check_grads disagrees with finite differences ({first})")
    except Exception as error:  # the student's code raised: say what, and carry on
        return _not_yet(f"calling your op raised {type(error).__name__}: {error}")
    name = getattr(op, "name", getattr(op, "__name__", "your op"))
    print(f"Correct! {name} passes check_grads to order {order}")
    return None


def not_yet_line(hint):
    """``"Not yet: <hint>."``, the line a wrong prediction prints."""
    return "Not yet: " + hint + ("" if hint.endswith((".", "?", "!")) else ".")


def _not_yet(hint):
    message = not_yet_line(hint)
    if os.environ.get("NBGRADER_EXECUTION"):
        raise AssertionError(message)
    print(message)
    return None


def _has_blank(prediction):
    if prediction is Ellipsis:
        return True
    if isinstance(prediction, dict):
        return any(_has_blank(value) for value in prediction.values())
    if isinstance(prediction, (list, tuple)):
        return any(_has_blank(value) for value in prediction)
    return False


def _matches(prediction, answer, rtol, atol):
    """``(correct, shape_note)``: the note says the shapes differ, and nothing more."""
    if prediction is None or answer is None:
        return prediction is None and answer is None, None
    if (isinstance(answer, list) and isinstance(prediction, (list, tuple))
            and any(x is None for x in list(answer) + list(prediction))):
        # a list of gradients with some None (unconnected): compare entry by entry
        if len(prediction) != len(answer):
            return False, (f"your prediction has {len(prediction)} entries, and that is not "
                           "the number of answers")
        return all(_matches(p, a, rtol, atol)[0] for p, a in zip(prediction, answer)), None
    if isinstance(answer, (bool, np.bool_)) or isinstance(prediction, (bool, np.bool_)):
        # True is not 1 here: a yes/no question wants a yes/no answer
        both = isinstance(answer, (bool, np.bool_)) and isinstance(prediction, (bool, np.bool_))
        return both and bool(prediction) == bool(answer), None
    if isinstance(answer, str) and isinstance(prediction, str):
        # op and dtype names: "log" is "Log", " float32" is "float32"
        return prediction.strip().lower() == answer.strip().lower(), None
    if isinstance(prediction, str) and not isinstance(answer, tuple):
        return False, None      # a word for a number: comparing them would give an array
    if isinstance(answer, (str, tuple)) or isinstance(prediction, str):
        if isinstance(answer, tuple):
            prediction = tuple(prediction)
        return prediction == answer, None
    value = answer.numpy() if hasattr(answer, "numpy") else np.asarray(answer)
    if np.shape(prediction) != np.shape(value) and not (np.size(value) == 1
                                                        and np.size(prediction) == 1):
        return False, (f"your prediction has shape {np.shape(prediction)}, and that is not "
                       "the shape of the answer")
    return bool(np.allclose(prediction, value, rtol=rtol, atol=atol, equal_nan=True)), None
