"""A student's side of nbgrader's exchange, and answers to put in a lesson's blanks.

On a hub, students press *Fetch*, *Submit* and *Fetch Feedback* in JupyterLab's
Assignments panel; nbgrader's server extension then runs its exchange classes
in the student's own server. ``Student`` runs the same classes in this process,
for one named student with a home folder of their own, so that a dry run, a
test or a benchmark can be a whole class without a browser per student::

    ada = Student("ada", home=tmp / "ada", course_id="tapeschool", exchange=exchange)
    notebook = ada.fetch("lesson01") / "01_gradients_and_tapes.ipynb"
    fill_in(notebook, answers_for("lesson01", right={1, 2, 3}))   # three right, three wrong
    scoring("lesson01")   # {"lesson01-predict-1-answer": ("lesson01-predict-1", 0.0), ...}
    ada.submit("lesson01")
    # ... the teacher collects, grades and returns feedback ...
    ada.fetch_feedback("lesson01")     # [.../lesson01/feedback/<timestamp>/01_...html]

The student is named by ``CourseDirectory.student_id``, the way the hub
configuration of this package names a student on a hub where every server runs
as the same OS user (nbgrader otherwise takes the OS user's name). A student id
that is not a plain name (``layout.check_plain_name``) is refused at once, and
submitting goes through ``exchange.CheckedSubmit``, as on the course's hub.

What it must not do: read the exchange itself, or another student's files.
"""

from pathlib import Path

import nbformat

from .layout import assignment_name, check_plain_name, lessons

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
WRONG = "-7.25"   # a prediction no exercise of the lessons has as its answer


class Student:
    """One student of a course, using nbgrader's exchange as their server would.

    Args:
        student_id: the student's name (their hub user name); ValueError if it is not a
            plain name.
        home: their home folder: fetched assignments land in it, and nbgrader's cache of
            their submissions (what *Fetch Feedback* looks up) lives under it.
        course_id: nbgrader's course id.
        exchange: nbgrader's exchange folder.
    """

    def __init__(self, student_id, home, course_id, exchange):
        self.student_id, self.home = check_plain_name(student_id, "student id"), Path(home)
        self.course_id, self.exchange = course_id, Path(exchange)
        self.home.mkdir(parents=True, exist_ok=True)

    def fetch(self, lesson):
        """nbgrader's fetch_assignment: the released lesson into ``home/<assignment>``.

        Returns:
            The fetched assignment's folder.
        """
        assignment = assignment_name(lesson)
        self._run("FetchAssignment", assignment)
        return self.home / assignment

    def submit(self, lesson):
        """nbgrader's submit: ``home/<assignment>`` into the exchange's inbound folder,
        under the student's name, a timestamp and a random suffix."""
        self._run("Submit", assignment_name(lesson))

    def fetch_feedback(self, lesson):
        """nbgrader's fetch_feedback: the feedback pages of this student's own submissions.

        Returns:
            The HTML pages now in ``home/<assignment>/feedback/<timestamp>/``.
        """
        assignment = assignment_name(lesson)
        self._run("FetchFeedback", assignment)
        return sorted((self.home / assignment / "feedback").glob("*/*.html"))

    def _config(self, assignment):
        from traitlets.config import Config

        config = Config()
        config.CourseDirectory.course_id = self.course_id
        config.CourseDirectory.assignment_id = assignment
        config.CourseDirectory.student_id = self.student_id
        config.CourseDirectory.root = str(self.home)
        config.Exchange.root = str(self.exchange)
        config.Exchange.assignment_dir = str(self.home)
        config.ExchangeFactory.submit = "tapeschool.course.exchange.CheckedSubmit"
        # where a server with HOME=home keeps it ($JUPYTER_DATA_DIR/nbgrader_cache)
        config.Exchange.cache = str(self.home / ".local" / "share" / "jupyter" / "nbgrader_cache")
        return config

    def _run(self, step, assignment):
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import ExchangeFactory

        config = self._config(assignment)
        exchange_class = getattr(ExchangeFactory(config=config), step)
        exchange_class(coursedir=CourseDirectory(config=config),
                       authenticator=Authenticator(config=config), config=config).start()


def answer_key(lesson):
    """Each exercise's blank and right answer, from the lesson's teacher edition.

    Returns:
        ``{grade_id: (blank, answer)}``: the answer cell's nbgrader id
        (``lesson01-exercise-1-answer``), the student's blank (the line right above the solution
        region, ``"my_prediction = ...  # your prediction"``) and the lines between the
        solution markers (``"my_prediction = 13.0\\n"``), in the lesson's order.
    """
    teacher = nbformat.read(lessons()[assignment_name(lesson)], as_version=4)
    key = {}
    for cell in teacher.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("solution"):
            above, region = cell.source.split(BEGIN_SOLUTION + "\n")
            key[grading["grade_id"]] = (above.rstrip().splitlines()[-1],
                                        region.split(END_SOLUTION)[0])
    return key


def scoring(lesson):
    """What each answer of the lesson is worth, from its teacher edition's nbgrader metadata.

    Returns:
        ``{answer grade_id: (check grade_id, points)}`` in the lesson's order: the check cell
        right after each answer cell, and its points (0 for a check that is not an
        autograder test: a Predict moment, scripts/lesson_grading.py).
    """
    teacher = nbformat.read(lessons()[assignment_name(lesson)], as_version=4)
    found, answer = {}, None
    for cell in teacher.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("solution"):
            answer = grading["grade_id"]
        elif answer is not None and grading.get("grade_id"):
            found[answer] = (grading["grade_id"],
                             float(grading.get("points", 0)) if grading.get("grade") else 0.0)
            answer = None
    return found


def answers_for(lesson, right=()):
    """Answers for the lesson's answer cells (its predictions and exercises, in order): the
    right one for answer ``k`` (counting from 1) when ``k`` is in ``right``; for the others
    the blank with a wrong number in place of each ``...`` (so ``{"w": ..., "b": ...}``
    stays a dict and its check runs).

    >>> answers = answers_for("01", right={2})    # the prediction wrong, exercise 1 right
    >>> answers["lesson01-exercise-1-answer"], answers["lesson01-predict-1-answer"]
    ('my_prediction = 13.0\\n', 'my_prediction = -7.25  # your prediction')
    """
    answers = {}
    for number, (grade_id, (blank, answer)) in enumerate(answer_key(lesson).items(), start=1):
        answers[grade_id] = answer if number in right else blank.replace("...", WRONG)
    return answers


def fill_in(notebook_path, answers):
    """Writes answers in place of the blanks of a fetched (released) lesson notebook.

    Args:
        notebook_path: the notebook, edited in place.
        answers: ``{grade_id: answer}`` (``answers_for``); an answer cell not named keeps
            its blank.

    The blank is an answer cell's last line (``my_prediction = ...  # your prediction``:
    the lessons' build puts it right above the solution region that nbgrader removed).
    """
    notebook = nbformat.read(notebook_path, as_version=4)
    fill_answers(notebook, answers)
    nbformat.write(notebook, notebook_path)


def fill_answers(notebook, answers):
    """``fill_in`` on a notebook in memory (an ``nbformat`` node, changed in place)."""
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers and cell.metadata["nbgrader"].get("solution"):
            lines = cell.source.rstrip().splitlines()
            cell.source = "\n".join(lines[:-1] + [answers[grade_id].rstrip()])
    return notebook
