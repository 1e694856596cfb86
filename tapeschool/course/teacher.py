"""The teacher's steps: release, collect, autograde, generate and return feedback.

Each step is one of nbgrader's own, called through ``nbgrader.apps.NbGraderAPI``
(the API the formgrader's buttons call) with the course's nbgrader settings, so
a step run here and the same step run from the formgrader or as ``nbgrader
<command>`` in the course directory do the same thing and share one gradebook.
What this module adds is the order, the names (``lesson03``), a progress line
per submission for a class of 200, and an error that stops the script when
nbgrader reports a failure (nbgrader's API returns it as data instead)::

    teacher = Teacher(open_course("tapeschool"))
    teacher.release("03")          # generate_assignment + release_assignment
    # ... students fetch, work and submit from JupyterLab's Assignments panel ...
    teacher.collect("03")          # exchange inbound/ -> submitted/<student>/lesson03
    teacher.autograde("03")        # every new submission, one line each
    teacher.generate_feedback("03")
    teacher.return_feedback("03")  # release_feedback: each student fetches their own

Autograding runs every submission in a fresh ``python3`` kernel, which must
import ``autodiff`` and ``widgets``: the kernels nbgrader starts here get this
checkout on their ``PYTHONPATH`` (the lessons in the course came from it, so
they run against its engine), and ``autograde`` first checks that such a
kernel imports them. Without that check, a grader whose kernel could not
import the engine would score every submission 0 and report success.

What it must not do: grade, copy or hash anything itself (nbgrader does), or
read a student's notebook.
"""

import contextlib
import os
import subprocess
import sys
import time
import warnings

from .layout import ROOT, assignment_name, lessons
from .progress import Progress

KERNEL_NAME = "python3"                      # the kernel the lessons name
LESSON_IMPORTS = "import autodiff, widgets"  # what every lesson's first code cell needs


class StepFailed(RuntimeError):
    """nbgrader reported that a step failed; the message carries nbgrader's log."""


class Teacher:
    """nbgrader's teacher steps on one course.

    Args:
        course: a ``layout.Course`` (``layout.open_course(path)``).
        out: where progress lines go (stdout by default).
    """

    def __init__(self, course, out=None):
        from nbgrader.apps import NbGraderAPI

        self.course = course
        self.out = out or sys.stdout
        self.last_progress = None   # the last step's Progress (its .seconds per submission)
        self.api = NbGraderAPI(config=course.config())
        # nbgrader 0.9's gradebook code predates SQLAlchemy 2's session warnings; they say
        # nothing about the grades (tests/hub checks the grades themselves)
        from sqlalchemy.exc import SAWarning

        warnings.filterwarnings("ignore", category=SAWarning, module="nbgrader")

    def release(self, lesson):
        """``nbgrader generate_assignment`` then ``release_assignment``: the students'
        copy (blanks, locked checks, no teacher notes) goes to the exchange.

        Returns:
            The assignment name (``"lesson03"``).
        """
        assignment = assignment_name(lesson)
        source = self.course.root / "source" / assignment
        if not (source / lessons()[assignment].name).is_file():
            raise StepFailed(f"{assignment} is not in the course in {self.course.root} (no "
                             f"{source.relative_to(self.course.root)}/"
                             f"{lessons()[assignment].name}); add it with: tapeschool-course "
                             f"init {self.course.root} --lessons {assignment}")
        self._ok("generate_assignment", self.api.generate_assignment(assignment))
        self._ok("release_assignment", self.api.release_assignment(assignment))
        self._say(f"released {assignment} to {self.course.exchange / self.course.course_id}: "
                  "students fetch it from JupyterLab's Assignments panel")
        return assignment

    def collect(self, lesson):
        """``nbgrader collect``: each student's latest submission, from the exchange into
        ``submitted/<student>/<assignment>`` (a newer one replaces an older one).

        Returns:
            The sorted ids of every student with a collected submission.
        """
        assignment = assignment_name(lesson)
        inbound = self.course.exchange / self.course.course_id / "inbound"
        if not inbound.is_dir():
            raise StepFailed(f"nothing to collect: no lesson of {self.course.course_id!r} was "
                             f"released to {self.course.exchange} ({inbound} is missing); "
                             f"release it first: tapeschool-course release {assignment}")
        self._ok("collect", self.api.collect(assignment, update=True))
        students = sorted(self.api.get_submitted_students(assignment))
        self._say(f"collected {assignment}: {len(students)} submission(s)")
        return students

    def autograde(self, lesson, students=None, force=False, jobs=1):
        """``nbgrader autograde``, one submission at a time, a progress line for each.

        Args:
            students: the ids to grade; by default every collected submission not yet
                autograded (all of them with ``force``).
            force: grade again what was already graded.
            jobs: how many submissions to grade at once, each in a worker process of its
                own (they share the gradebook; nbgrader writes each submission's rows in
                short transactions). A kernel runs each lesson, so more jobs than cores
                gains nothing.

        Returns:
            ``{student: (score, max_score)}`` for the submissions graded now.
        """
        assignment = assignment_name(lesson)
        if students is None:
            students = sorted(self.api.get_submitted_students(assignment))
            if not force:
                done = self.api.get_autograded_students(assignment)
                students = [s for s in students if s not in done]
        progress = self.last_progress = Progress("autograde", len(students), out=self.out)
        if not students:
            return {}
        with kernels_import_this_checkout():
            check_grading_kernel()
            if jobs > 1 and len(students) > 1:
                return self._autograde_in_workers(assignment, students, jobs, progress)
            scores = {}
            for student in students:
                with progress.item(student) as line:
                    scores[student] = self._autograde_one(assignment, student)
                    line.note = _points(scores[student])
            return scores

    def _autograde_one(self, assignment, student):
        self._ok(f"autograde {student}",
                 self.api.autograde(assignment, student, force=True, create=True))
        return self._score(assignment, student)

    def _autograde_in_workers(self, assignment, students, jobs, progress):
        import concurrent.futures
        import multiprocessing

        scores = {}
        context = multiprocessing.get_context("spawn")   # a fresh gradebook connection each
        with concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs, mp_context=context, initializer=_start_worker,
                initargs=(self.course,)) as pool:
            futures = {pool.submit(_autograde_in_worker, assignment, s): s for s in students}
            for future in concurrent.futures.as_completed(futures):
                student = futures[future]
                scores[student], seconds = future.result()
                progress.finished(student, _points(scores[student]), seconds)
        return scores

    def generate_feedback(self, lesson, students=None):
        """``nbgrader generate_feedback``: an HTML page per autograded submission, a
        progress line for each.

        Returns:
            The students whose feedback was written.
        """
        assignment = assignment_name(lesson)
        if students is None:
            students = sorted(self.api.get_autograded_students(assignment))
        progress = self.last_progress = Progress("feedback", len(students), out=self.out)
        for student in students:
            with progress.item(student) as line:
                self._ok(f"generate_feedback {student}",
                         self.api.generate_feedback(assignment, student, force=True))
                line.note = "written"
        return list(students)

    def return_feedback(self, lesson):
        """``nbgrader release_feedback``: every generated page goes to the exchange, under
        a name only its student's own submission can compute; students then fetch it
        (JupyterLab's Assignments panel, *Fetch Feedback*).

        Returns:
            How many feedback pages were released.
        """
        assignment = assignment_name(lesson)
        with warnings.catch_warnings():   # nbgrader 0.9 passes "authentictor" (sic) on
            warnings.filterwarnings("ignore", ".*authentictor", DeprecationWarning)
            result = self._ok("release_feedback", self.api.release_feedback(assignment))
        released = result.get("log", "").count("Releasing feedback for student")
        self._say(f"returned feedback on {assignment}: {released} page(s)")
        return released

    def scores(self, lesson):
        """The gradebook's scores: ``{student: (score, max_score)}`` for every autograded
        submission of the lesson."""
        assignment = assignment_name(lesson)
        with self.api.gradebook as gradebook:
            return {s.student.id: (s.score, s.max_score)
                    for s in gradebook.assignment_submissions(assignment)}

    def _score(self, assignment, student):
        # the gradebook's rows, which autograde has just written
        with self.api.gradebook as gradebook:
            submission = gradebook.find_submission(assignment, student)
            return submission.score, submission.max_score

    def _ok(self, step, result):
        """nbgrader's API returns failures as data: raise them, saying why first (nbgrader's
        ERROR and CRITICAL lines, else its exception), then the end of its log; the whole
        traceback is in the exception's ``details``."""
        if result.get("success"):
            return result
        log, error = result.get("log", "") or "", result.get("error", "") or ""
        why = [line for line in log.splitlines() if line.startswith(("[ERROR]", "[CRITICAL]"))]
        why = why or error.strip().splitlines()[-1:] or ["(nbgrader said nothing)"]
        tail = log.strip().splitlines()[-20:]
        failed = StepFailed(f"nbgrader {step} failed: " + "\n".join(why)
                            + ("\nthe end of nbgrader's log:\n  " + "\n  ".join(tail)
                               if tail and tail != why else ""))
        failed.details = f"{error}\n{log}".strip()
        raise failed

    def _say(self, line):
        print(line, file=self.out, flush=True)


@contextlib.contextmanager
def kernels_import_this_checkout():
    """Puts this checkout first on ``PYTHONPATH`` while inside, so that the kernels nbgrader
    starts (and worker processes, which inherit the environment) import its ``autodiff``
    and ``widgets``, the engine the course's lessons were written against."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([before] if before else []))
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def check_grading_kernel(kernel_name=KERNEL_NAME):
    """Raises ``StepFailed`` unless the Python of the kernel that grades imports the
    lessons' packages (with the environment it would get now). A lesson whose first cell
    fails to import them scores 0 on every check, which nbgrader reports as a success."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    python = spec.argv[0]
    if python in ("python", f"python{sys.version_info[0]}",
                  f"python{sys.version_info[0]}.{sys.version_info[1]}"):
        python = sys.executable   # what jupyter_client runs for these names
    done = subprocess.run([python, "-c", LESSON_IMPORTS], capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise StepFailed(f"the {kernel_name!r} kernel ({python}) cannot run the lessons "
                         f"({LESSON_IMPORTS!r}: {why}); every submission would score 0. "
                         f"Install tapeschool's dependencies in that kernel's environment "
                         f"(python -m pip install -r binder/requirements.txt)")


def _points(score):
    return f"{score[0]:g}/{score[1]:g} points"


_worker = None


def _start_worker(course):
    global _worker
    _worker = Teacher(course)


def _autograde_in_worker(assignment, student):
    started = time.monotonic()
    score = _worker._autograde_one(assignment, student)
    return score, time.monotonic() - started
