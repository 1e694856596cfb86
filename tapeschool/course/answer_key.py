"""The answer key: what each graded check of a lesson expects, made from the teacher edition.

The teacher edition (``source/lessonNN/NN_topic.ipynb``, solutions filled in) runs
once in the sandbox with its check cells recording (recording_run.py, ``key=True``):
each check call writes its answer as plain data, the text ``check`` would print
for it, and its options (hint, tolerances, order). The key is kept beside the
gradebook, in ``<course>/grading/keys/lessonNN/NN_topic.json`` (only the teacher
may read it; no sandbox ever sees that folder), and made again when the teacher
edition changes. Making it also proves the lesson: every solution must pass its
own check, by the rules the students are graded with.

The key also sets the grading time limit: a submission may take ``TIME_FACTOR``
times what the teacher edition took (at least ``MIN_SECONDS``), so a loop that
never ends costs minutes, not an hour.

What it must not do: run a student's notebook, or write the key anywhere a
sandbox is given.
"""

import hashlib
import json
import os
from pathlib import Path

from ..answer_data import NotAnAnswer, from_plain
from ..answers import verdict
from .recording_run import recording_run
from .sandbox import Limits

TIME_FACTOR = 5
MIN_SECONDS = 120


class KeyProblem(RuntimeError):
    """The teacher edition could not be made into a key (it failed, or a solution fails
    its own check)."""


def key_path(course_root, assignment, notebook):
    return Path(course_root) / "grading" / "keys" / assignment / f"{notebook}.json"


def load_or_make_key(course_root, assignment, notebook, slot=0, limits=None, say=None):
    """The key of one notebook of an assignment, made first when missing or out of date.

    Args:
        course_root: the course directory.
        assignment, notebook: ``"lesson01"``, ``"01_gradients_and_tapes"``.
        slot: the sandbox slot to make it in.
        limits: the sandbox's limits for the teacher edition's run.
        say: called with one line when a key is made.

    Returns:
        The key, a dict: ``checks`` (``"grade_id#index"`` -> answer, text, options),
        ``calls`` (grade id -> number of check calls), ``markdown`` (hashes of the
        edition's markdown cells), ``seconds`` (how long the edition ran).
    """
    import nbformat

    source = Path(course_root) / "source" / assignment / f"{notebook}.ipynb"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    path = key_path(course_root, assignment, notebook)
    if path.is_file():
        key = json.loads(path.read_text(encoding="utf-8"))
        if key.get("source_sha256") == digest:
            return key
    nb = nbformat.read(str(source), as_version=4)
    outcome = recording_run(nb, slot, limits or Limits(wall_seconds=1800, cpu_seconds=1800),
                            key=True)
    if not outcome.finished:
        raise KeyProblem(f"{assignment}: the teacher edition did not run to its end in the "
                         f"sandbox ({outcome.reason})")
    key = {"source_sha256": digest, "seconds": round(outcome.seconds, 2),
           "calls": outcome.calls, "checks": _checks(assignment, outcome),
           "markdown": sorted(markdown_hashes(nb))}
    _write_private(path, json.dumps(key, indent=1))
    if say:
        say(f"answer key for {assignment}: {len(key['checks'])} check(s) from the teacher "
            f"edition, run in {outcome.seconds:.0f} s")
    return key


def time_limit(key, override=None):
    """Seconds a submission of this notebook may run: ``override``, or a multiple of the
    teacher edition's time."""
    if override:
        return float(override)
    return max(MIN_SECONDS, TIME_FACTOR * float(key.get("seconds", MIN_SECONDS)))


def markdown_hashes(nb):
    return {hashlib.sha256(c.source.encode()).hexdigest() for c in nb.cells
            if c.cell_type == "markdown"}


def _checks(assignment, outcome):
    checks = {}
    for entry in outcome.entries:
        name = f"{entry['grade_id']}#{entry['index']}"
        if name in checks:
            raise KeyProblem(f"{assignment}: check {name} ran twice in the teacher edition "
                             f"(a check in a loop cannot be graded)")
        try:
            answer = from_plain(entry.get("answer"))
            prediction = from_plain(entry.get("prediction"))
        except NotAnAnswer as error:
            raise KeyProblem(f"{assignment}: the answer of check {name} cannot be kept as "
                             f"plain data ({error})") from None
        options = entry.get("options", {})
        correct, message = verdict(prediction, answer, options.get("hint"),
                                   options.get("rtol", 1e-5), options.get("atol", 1e-6))
        if not correct:
            raise KeyProblem(f"{assignment}: the teacher edition's own answer fails check "
                             f"{name}: {message}")
        checks[name] = {"kind": entry.get("kind"), "answer": entry["answer"],
                        "answer_text": entry.get("answer_text", ""), "options": options}
    expected = {f"{g}#{i}" for g, n in outcome.calls.items() for i in range(n)}
    if expected - set(checks):
        raise KeyProblem(f"{assignment}: check(s) {sorted(expected - set(checks))} did not "
                         f"run in the teacher edition")
    return checks


def _write_private(path, text):
    """Writes ``text`` to ``path`` readable by its owner only, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent.parent.parent, 0o700)      # <course>/grading
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
