"""Whether each submission was graded, and if not, why: the record ``scores`` reads.

nbgrader's gradebook holds points; it has no way to say "this submission was not
graded", so a notebook that timed out would look like a real 0. Beside the
gradebook, ``<course>/grading/status/lessonNN/<student>.json`` says, per notebook
of the submission: graded or not, the reason, the run's seconds, and each check
cell's verdict lines. The grader writes it (grading.py, and teacher.py when
nbgrader itself could not open a submission); ``scores``, the progress line and
the summary read it.

What it must not do: hold anything a student may not see about their own
submission (it holds their verdicts, never the key), or write outside its folder.
"""

import json
import os
import re
import time
from pathlib import Path

PLAIN_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}$")


class GradingStatus:
    """The status records of one assignment of a course.

    Example:
        >>> status = GradingStatus(course_root, "lesson01")
        >>> status.write("ada", "01_gradients_and_tapes", graded=False, reason="timeout")
        >>> status.read("ada")["graded"]
        False
    """

    def __init__(self, course_root, assignment):
        self.folder = Path(course_root) / "grading" / "status" / _plain(assignment)

    def write(self, student, notebook, graded, reason="", seconds=0.0, checks=None,
              submitted=None):
        """Records one notebook's grading (replacing an earlier record of it)."""
        record = self._read_file(student) or {"notebooks": {}}
        record["notebooks"][_plain(notebook)] = {
            "graded": bool(graded), "reason": str(reason)[:500], "seconds": round(seconds, 2),
            "checks": checks or {}, "at": time.time()}
        if submitted is not None:
            record["submitted"] = submitted
        self._write_file(student, record)

    def _write_file(self, student, record):
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{_plain(student)}.json"
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record, indent=1), encoding="utf-8")
        os.replace(temporary, path)

    def read(self, student):
        """``{"graded": bool, "reason": str, "seconds": float}`` over the student's notebooks
        (not graded if any notebook was not), or None when never graded."""
        record = self._read_file(student)
        if not record or not record.get("notebooks"):
            return None
        notebooks = record["notebooks"].values()
        reasons = [n["reason"] for n in notebooks if not n["graded"]]
        return {"graded": not reasons, "reason": "; ".join(reasons),
                "seconds": sum(n.get("seconds", 0) for n in notebooks),
                "submitted": record.get("submitted")}

    def write_submitted(self, student, submitted):
        """Notes which submission (nbgrader's timestamp) the record is about."""
        record = self._read_file(student)
        if record is not None:
            record["submitted"] = submitted
            self._write_file(student, record)

    def students(self):
        """Every student with a record."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json") if PLAIN_NAME.match(p.stem))

    def forget(self, student):
        """Drops a student's record (before grading them again)."""
        path = self.folder / f"{_plain(student)}.json"
        if path.exists():
            path.unlink()

    def _read_file(self, student):
        path = self.folder / f"{_plain(student)}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None


def _plain(name):
    if not PLAIN_NAME.match(str(name)) or ".." in str(name):
        raise ValueError(f"{name!r} is not a plain name (letters, digits, '_', '.', '@', '-')")
    return str(name)
