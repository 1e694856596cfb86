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

Autograding (autograde.py) is nbgrader's autograde with its ``Execute`` step
replaced by ``grading.SandboxedGrading``: each submission runs in a sandbox
(sandbox.py) and its answers are compared with a key made from the teacher
edition (answer_key.py), in this process. A submission that cannot be graded is
reported as "not graded: <reason>", never as 0, and the class goes on.

What it must not do: copy or hash anything itself (nbgrader does), or run a
student's notebook outside the sandbox.
"""

import sys
import warnings

from .layout import assignment_name, lessons
from .progress import Progress


class StepFailed(RuntimeError):
    """nbgrader reported that a step failed; the message carries nbgrader's log."""


class Teacher:
    """nbgrader's teacher steps on one course.

    Args:
        course: a ``layout.Course`` (``layout.open_course(path)``).
        out: where progress lines go (stdout by default).
        slot: the sandbox slot this teacher's grading uses (a worker process has its own).
        time_limit: seconds a submission may run (0: five times the teacher edition's).
    """

    def __init__(self, course, out=None, slot=0, time_limit=0):
        from nbgrader.apps import NbGraderAPI

        from .grading import grading_config

        self.course = course
        self.out = out or sys.stdout
        self.last_progress = None   # the last step's Progress (its .seconds per submission)
        self.not_graded = {}        # the last autograde's {student: reason}
        self.slot, self.time_limit = slot, time_limit
        config = course.config()
        config.merge(grading_config(course.root, slot, time_limit))
        self.api = NbGraderAPI(config=config)
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
        """Grades every submission in the sandbox, one line each; never stops at one.

        Args:
            students: the ids to grade; by default every collected submission that needs
                it: never graded, not graded last time, or submitted again since.
            force: grade every collected submission again.
            jobs: how many submissions to grade at once, each in a worker process and a
                sandbox (a uid) of its own. More jobs than cores gains nothing.

        Returns:
            ``{student: (score, max_score)}`` for the submissions graded now; those that
            could not be graded are in ``self.not_graded`` (``{student: reason}``).

        Raises:
            StepFailed: nothing was collected, or no sandbox can be made here.
        """
        from .autograde import grade_class

        summary = grade_class(self, assignment_name(lesson), students, force, jobs)
        self.not_graded = summary.not_graded
        return summary.graded

    def results(self, lesson):
        """Every collected submission's result: ``{student: (score, max_score)}`` when
        graded, ``{student: "not graded: <reason>"}`` when not (never a 0 for those)."""
        from .autograde import results

        return results(self, assignment_name(lesson))

    def generate_feedback(self, lesson, students=None):
        """``nbgrader generate_feedback``: an HTML page per autograded submission, a
        progress line for each.

        Returns:
            The students whose feedback was written.
        """
        from .autograde import write_not_graded_feedback

        assignment = assignment_name(lesson)
        results = self.results(assignment)
        if students is None:
            students = sorted(set(self.api.get_autograded_students(assignment)) | set(results))
        progress = self.last_progress = Progress("feedback", len(students), out=self.out)
        for student in students:
            with progress.item(student) as line:
                result = self.api.generate_feedback(assignment, student, force=True)
                if not result.get("success"):      # nbgrader could not open the submission
                    reason = str(results.get(student, "not graded: nbgrader made no page"))
                    write_not_graded_feedback(self.course, assignment, student,
                                              reason.removeprefix("not graded: "))
                line.note = "written" if isinstance(results.get(student), tuple) else (
                    "written (not graded)")
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
        """The scores of the graded submissions: ``{student: (score, max_score)}`` (those
        not graded are in ``results``, with their reason, never here as 0)."""
        return {s: r for s, r in self.results(lesson).items() if isinstance(r, tuple)}

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
