"""Grading a class: every submission, one line each, a summary; one bad notebook stops nothing.

``grade_class`` runs nbgrader's autograde once per submission (``SandboxedGrading``
doing the running and the comparing), in this process or in ``jobs`` worker
processes, each worker with a sandbox slot (a uid) of its own. Whatever happens to
one submission (nbgrader cannot read it, its kernel dies, it runs past its time)
becomes "not graded: <reason>" in its status record (grading_status.py), its
progress line, the summary and its feedback page, and the next one is graded::

    autograde [  3/200] cy             not graded: timeout: the notebook ran past ...
    graded 199 of 200; not graded 1: cy (timeout: ...)

A submission that was not graded has its gradebook rows marked for manual
grading (nbgrader's ``needs_manual_grade``), so the formgrader shows it as work
to do rather than a 0. Running ``grade`` again grades what needs it: never
graded, not graded last time, or submitted again since.

What it must not do: give a submission a score it was not graded to (no 0 for
"not graded"), or stop the class at one submission.
"""

import html
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .grading_status import GradingStatus
from .progress import Progress


@dataclass
class Summary:
    graded: dict = field(default_factory=dict)       # student -> (score, max_score)
    not_graded: dict = field(default_factory=dict)   # student -> reason

    def line(self):
        total = len(self.graded) + len(self.not_graded)
        text = f"graded {len(self.graded)} of {total}"
        if self.not_graded:
            text += f"; not graded {len(self.not_graded)}: " + ", ".join(
                f"{s} ({r})" for s, r in sorted(self.not_graded.items()))
        return text


def grade_class(teacher, assignment, students=None, force=False, jobs=1):
    """Grades the submissions of ``assignment``; see the module docstring.

    Returns:
        A ``Summary``.
    """
    from .answer_key import load_or_make_key
    from .sandbox import bwrap_available
    from .teacher import StepFailed

    course = teacher.course
    status = GradingStatus(course.root, assignment)
    collected = sorted(teacher.api.get_submitted_students(assignment))
    if students is None:
        if not collected:
            raise StepFailed(f"nothing to grade: no submission of {assignment} was collected "
                             f"(collect first: tapeschool-course collect {assignment})")
        students = [s for s in collected if force or _needs_grading(course, status, assignment, s)]
    why = bwrap_available()
    if why:
        raise StepFailed(f"cannot grade in a sandbox: {why}")
    progress = teacher.last_progress = Progress("autograde", len(students), out=teacher.out)
    summary = Summary()
    if not students:
        teacher._say(f"autograde {assignment}: every collected submission is graded already "
                     f"(--force grades them again)")
        return summary
    for notebook in _notebooks(course, assignment):
        try:
            load_or_make_key(course.root, assignment, notebook, slot=teacher.slot, say=teacher._say)
        except Exception as error:
            raise StepFailed(f"cannot make the answer key of {assignment}: {error}") from None
    if jobs > 1 and len(students) > 1:
        outcomes = _in_workers(teacher, assignment, students, jobs, progress)
    else:
        outcomes = {}
        for student in students:
            started = time.monotonic()
            outcomes[student] = grade_one(teacher, assignment, student)
            progress.finished(student, _note(outcomes[student]), time.monotonic() - started)
    for student, outcome in outcomes.items():
        if isinstance(outcome, tuple):
            summary.graded[student] = outcome
        else:
            summary.not_graded[student] = outcome
    teacher._say(summary.line())
    return summary


def grade_one(teacher, assignment, student):
    """One submission: ``(score, max_score)``, or the reason it was not graded (a str)."""
    course = teacher.course
    status = GradingStatus(course.root, assignment)
    status.forget(student)
    submitted = _timestamp(course, assignment, student)
    result = teacher.api.autograde(assignment, student, force=True, create=True)
    record = status.read(student)
    if not result.get("success"):
        reason = _nbgrader_reason(result)
        status.write(student, "submission", graded=False, reason=reason, submitted=submitted)
    elif record is None:
        status.write(student, "submission", graded=False, submitted=submitted,
                     reason="the submission holds none of the lesson's notebooks")
    else:
        status.write_submitted(student, submitted)
    record = status.read(student)
    if not record["graded"]:
        _mark_for_manual_grading(teacher, assignment, student)
        return record["reason"]
    with teacher.api.gradebook as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return submission.score, submission.max_score


def results(teacher, assignment):
    """``{student: (score, max_score) or "not graded: <reason>"}`` for every graded or
    not-graded submission (a submission graded before status records existed counts by
    the gradebook alone)."""
    status = GradingStatus(teacher.course.root, assignment)
    found = {}
    with teacher.api.gradebook as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            found[submission.student.id] = (submission.score, submission.max_score)
    for student in sorted(set(found) | set(status.students())):
        record = status.read(student)
        if record is not None and not record["graded"]:
            found[student] = f"not graded: {record['reason']}"
    return found


def write_not_graded_feedback(course, assignment, student, reason):
    """A feedback page for a submission nbgrader could not open (so made no page of),
    saying why, where nbgrader's release_feedback finds it."""
    for notebook in _notebooks(course, assignment):
        folder = Path(course.root) / "feedback" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{notebook}.html").write_text(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Not graded</title></head>"
            f"<body><h1>{html.escape(assignment)}: not graded</h1><p>{html.escape(reason)}.</p>"
            "<p>Your answers were not compared with the key, so this is not a score of 0: "
            "your teacher will look at this submission.</p></body></html>", encoding="utf-8")


def _needs_grading(course, status, assignment, student):
    record = status.read(student)
    return (record is None or not record["graded"]
            or record.get("submitted") != _timestamp(course, assignment, student))


def _timestamp(course, assignment, student):
    path = Path(course.root) / "submitted" / student / assignment / "timestamp.txt"
    try:
        return path.read_text(encoding="utf-8").strip()[:64]
    except OSError:
        return None


def _notebooks(course, assignment):
    return sorted(p.stem for p in (Path(course.root) / "source" / assignment).glob("*.ipynb"))


def _nbgrader_reason(result):
    log, error = result.get("log", "") or "", result.get("error", "") or ""
    lines = [line for line in log.splitlines() if line.startswith(("[ERROR]", "[CRITICAL]"))]
    text = " ".join(lines) or (error.strip().splitlines() or ["nbgrader failed"])[-1]
    everything = f"{log}\n{error}"
    if any(sign in everything for sign in ("NotJSONError", "JSONDecodeError", "does not appear "
                                           "to be JSON", "Unreadable Notebook", "ValidationError")):
        return "the notebook could not be read (malformed: not a notebook's JSON)"
    raised = re.findall(r"^(\w+(?:Error|Exception)\b.*)$", everything, re.MULTILINE)
    why = raised[-1] if raised else "see the teacher's log"
    return "nbgrader could not grade it: " + re.sub(r"(/[^\s:'\"]+)+", "<path>", why)[:200]


def _mark_for_manual_grading(teacher, assignment, student):
    from nbgrader.api import MissingEntry

    try:
        with teacher.api.gradebook as gradebook:
            submission = gradebook.find_submission(assignment, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = None
                    grade.needs_manual_grade = True
            gradebook.db.commit()
    except MissingEntry:
        pass


def _note(outcome):
    return f"{outcome[0]:g}/{outcome[1]:g} points" if isinstance(outcome, tuple) else (
        f"not graded: {outcome}")


_worker = None


def _start_worker(course, slots, time_limit):
    from .teacher import Teacher

    global _worker
    _worker = Teacher(course, slot=slots.get(), time_limit=time_limit)


def _grade_in_worker(assignment, student):
    started = time.monotonic()
    return grade_one(_worker, assignment, student), time.monotonic() - started


def _in_workers(teacher, assignment, students, jobs, progress):
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")   # a fresh gradebook connection each
    slots = context.Queue()
    for slot in range(1, jobs + 1):
        slots.put(slot)
    outcomes = {}
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=_start_worker,
            initargs=(teacher.course, slots, teacher.time_limit)) as pool:
        futures = {pool.submit(_grade_in_worker, assignment, s): s for s in students}
        for future in concurrent.futures.as_completed(futures):
            student = futures[future]
            try:
                outcomes[student], seconds = future.result()
            except Exception as error:   # the worker itself failed: still not a 0
                outcomes[student], seconds = f"the grader failed: {type(error).__name__}", 0.0
            progress.finished(student, _note(outcomes[student]), seconds)
    return outcomes
