"""tapeschool: the lessons' answer rules and the teacher's course tools.

``autodiff`` is the engine and ``widgets`` its views; this package is the
classroom around them. A reader's map, in reading order::

    answers.py     what counts as a right answer: the lessons' ``check`` (feedback
                   while a student works) and ``verdict``, the same rules as a value
    answer_data.py answers as plain data: what a grading sandbox hands back
                   (``to_plain``, its ``Recorder``) and how the grader reads it
                   (``from_plain``, strict)
    course/        the teacher's tools on nbgrader: a course directory made from the
                   lessons, release, collect, grading in a sandbox, feedback, scores,
                   and a JupyterHub's configuration (``tapeschool-course --help``)

May import: NumPy (``answers.py``); nbgrader, jupyter_client and the standard
library (``course/``). Never ``autodiff`` or ``widgets`` at import time: the
lessons' kernels import those, the teacher's process does not need them.
"""
