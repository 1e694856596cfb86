"""Grading a submission: run it in the sandbox, compare its answers with the key, here.

``SandboxedGrading`` takes the place of nbgrader's ``Execute`` in nbgrader's own
autograde (the course's ``nbgrader_config.py`` says so, and so does ``Teacher``),
so nbgrader still restores the locked cells, writes the gradebook and makes the
feedback, while the points come from here:

1. the submission runs in the sandbox (recording_run.py), its check cells
   handing their predictions over as plain data;
2. each prediction is read back (``answer_data.from_plain``: anything else is
   "not an answer") and compared, in the teacher's process, with the key
   (answer_key.py) by ``answers.verdict``, the rules the lessons' ``check`` uses;
3. each graded check cell gets the lines the check would print ("Correct! The
   answer is ..." or "Not yet: <hint>."), and an error output when any of its
   checks is not correct, which is how nbgrader scores a test cell 0.

A submission that could not be graded (a timeout, a dead kernel, a limit) is not
given zeros: every check cell says "Not graded: <reason>", a cell at the top
says so, and its status (``GradingStatus``) records the reason for ``scores``.

The outputs the student's run printed are kept for the feedback only as text
and pictures (text/plain, PNG, JPEG), already cut to the limits; a markdown cell
the lesson does not have is shown as text when it holds HTML. So a feedback page,
which the teacher may open too, runs no script of the student's.

What it must not do: take anything from the sandbox as a verdict, or let a check
cell's output come from the student's run.
"""

import re

from traitlets import Float, Int, Unicode

from nbgrader.preprocessors import NbGraderPreprocessor

from ..answer_data import NotAnAnswer, from_plain
from ..answers import not_yet_line, verdict
from .answer_key import load_or_make_key, time_limit
from .check_cells import grade_id_of, is_test_cell
from .grading_status import GradingStatus
from .recording_run import recording_run
from .sandbox import Limits

SAFE_OUTPUTS = ("text/plain", "image/png", "image/jpeg")
HTML_LIKE = re.compile(r"<\s*[A-Za-z!/?]|javascript:", re.IGNORECASE)


class SandboxedGrading(NbGraderPreprocessor):
    """nbgrader's autograde step that runs a submission in a sandbox and grades its answers."""

    course_root = Unicode("", help="the course directory (its key and status folders)").tag(config=True)
    slot = Int(0, help="the sandbox slot (a uid of its own) this grader uses").tag(config=True)
    wall_seconds = Float(0, help="wall time for the whole notebook (0: from the key)").tag(config=True)
    memory_bytes = Int(Limits.memory_bytes, help="memory per process and sandbox").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        root = self.course_root or "."
        assignment, student, notebook = info["assignment"], info["student"], info["notebook"]
        key = load_or_make_key(root, assignment, notebook, slot=self.slot)
        seconds = time_limit(key, self.wall_seconds)
        limits = Limits(wall_seconds=seconds, cpu_seconds=int(seconds),
                        memory_bytes=self.memory_bytes)
        outcome = recording_run(nb, self.slot, limits)
        status = GradingStatus(root, assignment)
        if outcome.finished:
            checks = grade_cells(nb, key, outcome.entries)
            status.write(student, notebook, graded=True, reason="", seconds=outcome.seconds,
                         checks=checks)
        else:
            checks = None
            status.write(student, notebook, graded=False, reason=outcome.reason,
                         seconds=outcome.seconds)
            nb.cells.insert(0, _not_graded_banner(outcome.reason))
        shift = 0 if checks is not None else 1
        for index, cell in enumerate(nb.cells[shift:]):
            executed = outcome.cells[index] if outcome.cells is not None else None
            _show(cell, executed, checks, outcome.reason, key)
        return nb, resources


def grade_cells(nb, key, entries):
    """``{grade_id: {"correct": bool, "lines": [...]}}`` for every graded check cell."""
    recorded = {}
    for entry in entries:        # the last line for a check wins (it ran last)
        recorded[f"{entry['grade_id']}#{entry['index']}"] = entry
    results = {}
    for cell in nb.cells:
        if not is_test_cell(cell):
            continue
        grade_id = grade_id_of(cell)
        lines, correct = [], True
        for index in range(key["calls"].get(grade_id, 0)):
            name = f"{grade_id}#{index}"
            ok, line = _judge(key["checks"][name], recorded.get(name))
            correct = correct and ok
            lines.append(line)
        if grade_id not in key["calls"]:
            correct, lines = False, ["Not graded: this check is not in the answer key."]
        results[grade_id] = {"correct": correct, "lines": lines}
    return results


def _judge(expected, entry):
    """``(correct, the line a student reads)`` for one check call."""
    options = expected.get("options", {})
    hint = options.get("hint")
    if entry is None:
        return False, not_yet_line("this check did not run (did the cells above it run "
                                   "without stopping the notebook?)")
    try:
        prediction = from_plain(entry["prediction"])
    except NotAnAnswer as error:
        return False, not_yet_line(f"your prediction is not an answer the grader can read "
                                   f"({error}); give a number, a list, a tuple, a string, "
                                   f"True/False or None")
    answer = from_plain(expected["answer"])
    correct, message = verdict(prediction, answer, hint, options.get("rtol", 1e-5),
                               options.get("atol", 1e-6), answer_text=expected.get("answer_text"))
    return correct, (message if correct else not_yet_line(message))


def _show(cell, executed, checks, reason, key):
    """Puts the feedback's outputs on one cell of the graded notebook."""
    import nbformat

    if cell.cell_type == "markdown":
        if _foreign_html(cell, key):
            cell.source = "*(a cell of yours, shown as text)*\n\n```\n" + cell.source.replace(
                "```", "'''") + "\n```"
        return
    if cell.cell_type != "code":
        return
    if is_test_cell(cell):
        if checks is None:
            text = f"Not graded: {reason}."
            cell.outputs = [_error("NotGraded", text)]
            return
        result = checks[grade_id_of(cell)]
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                               text="\n".join(result["lines"]) + "\n")]
        if not result["correct"]:
            cell.outputs.append(_error("NotYet", "this check is not correct yet"))
        return
    outputs = executed.get("outputs", []) if isinstance(executed, dict) else []
    cell.outputs = [o for o in (_safe(o) for o in outputs) if o]
    count = executed.get("execution_count") if isinstance(executed, dict) else None
    cell.execution_count = count if isinstance(count, int) and not isinstance(count, bool) else None


def _safe(output):
    """An output as text and pictures only (no HTML, no script, no widget)."""
    import nbformat

    if not isinstance(output, dict):      # the sandbox wrote it: anything may be there
        return None
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        text = output.get("text", "")
        text = "".join(map(str, text)) if isinstance(text, list) else str(text)
        return nbformat.v4.new_output("stream", name=name, text=text)
    if kind == "error":
        return nbformat.v4.new_output("error", ename=str(output.get("ename", ""))[:200],
                                      evalue=str(output.get("evalue", ""))[:2000],
                                      traceback=[str(t)[:5000] for t in (
                                          output.get("traceback") or [])][:50])
    if kind in ("display_data", "execute_result"):
        given = output.get("data") if isinstance(output.get("data"), dict) else {}
        data = {k: (v if isinstance(v, str) else "".join(map(str, v)) if isinstance(v, list)
                    else str(v)) for k, v in given.items() if k in SAFE_OUTPUTS}
        if set(data) != set(given) and "text/plain" not in data:
            data["text/plain"] = "(an interactive output, left out of the feedback)"
        if not data:
            return None
        return nbformat.v4.new_output("display_data", data=data)
    return None


def _foreign_html(cell, key):
    import hashlib

    if hashlib.sha256(cell.source.encode()).hexdigest() in set(key.get("markdown", ())):
        return False
    return bool(HTML_LIKE.search(cell.source))


def _not_graded_banner(reason):
    import nbformat

    return nbformat.v4.new_markdown_cell(
        f"**Not graded:** {reason}.\n\nYour answers were not compared with the key, so this "
        f"is not a score of 0: your teacher will look at this submission.")


def _error(name, text):
    import nbformat

    return nbformat.v4.new_output("error", ename=name, evalue=text, traceback=[f"{name}: {text}"])




def grading_config(course_root, slot=0, time_limit=0):
    """nbgrader settings that make its autograde grade this way (a traitlets ``Config``):
    ``SandboxedGrading`` in place of ``Execute``, for the course at ``course_root``."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    config = Config()
    config.Autograde.autograde_preprocessors = [
        SandboxedGrading if step is Execute else step
        for step in Autograde.class_traits()["autograde_preprocessors"].default()]
    config.SandboxedGrading.course_root = str(course_root)
    config.SandboxedGrading.slot = int(slot)
    config.SandboxedGrading.wall_seconds = float(time_limit or 0)
    return config
