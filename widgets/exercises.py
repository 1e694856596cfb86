"""The lessons' ``check`` and ``check_gradients``, where the lessons import them from.

The rules live in ``tapeschool/answers.py`` with the grader that uses them; this
module keeps ``from widgets.exercises import check`` working in every lesson.
"""

from tapeschool.answers import check, check_gradients

__all__ = ["check", "check_gradients"]
