"""A simulated class: many students fetch a released lesson, answer it and submit.

For a dry run of the whole workflow on one machine (``tapeschool-course dry-run``)
and for the load benchmark (``benchmarks/course_load.py``), without a browser
per student. Each student goes through nbgrader's exchange as their server
would (``student.Student``), with answers chosen so that every score is known
in advance: student ``k`` of a lesson with ``n`` answer cells (its predictions
and its exercises) gets the first ``k mod (n + 1)`` right and the others wrong,
and should score what the lesson's metadata says those answers are worth
(``student.scoring``: a prediction nothing, an exercise its points), so a
grading run can be checked number by number::

    expected = submit_class(course, "lesson01", students=200, homes=tmp / "home")
    teacher.collect("lesson01")
    assert teacher.autograde("lesson01") == expected     # {"student000": (0.0, 5.0), ...}

What it must not do: grade (the teacher's steps do), or write into the exchange
other than through nbgrader's submit.
"""

from pathlib import Path

from .layout import assignment_name, notebook_name
from .progress import Progress
from .student import Student, answers_for, fill_in, scoring


def student_names(count):
    """``["student000", "student001", ...]``: sortable, and the same on every run."""
    return [f"student{k:03d}" for k in range(count)]


def submit_class(course, lesson, students, homes, out=None):
    """Every student fetches the lesson, answers it and submits.

    Args:
        course: the ``layout.Course`` (the lesson must be released).
        lesson: the lesson (any form ``layout.assignment_name`` takes).
        students: how many students, or their names.
        homes: the folder of their home folders (``homes/<student>``).
        out: where progress lines go (stdout by default).

    Returns:
        ``{student: (score, max_score)}``: the score each submission should get.
    """
    assignment = assignment_name(lesson)
    names = student_names(students) if isinstance(students, int) else list(students)
    worth = [points for _, points in scoring(assignment).values()]
    progress = Progress("submit", len(names), out=out)
    expected = {}
    for k, name in enumerate(names):
        with progress.item(name) as line:
            right = set(range(1, k % (len(worth) + 1) + 1))
            student = Student(name, Path(homes) / name, course.course_id, course.exchange)
            fill_in(student.fetch(assignment) / notebook_name(assignment),
                    answers_for(assignment, right))
            student.submit(assignment)
            expected[name] = (sum(worth[n - 1] for n in right), sum(worth))
            line.note = f"{len(right)}/{len(worth)} right"
    return expected
