"""One notebook run in the sandbox with its check cells recording: what came back, read safely.

Both the key (the teacher edition, ``key=True``) and each submission go through
``recording_run``: the check cells rewritten (check_cells.py), a first cell that
makes the recorder, the sandbox (sandbox.py) running it to its end or its limit,
then the answers file, the run's status and the executed cells read back as
data, with sizes capped. Nothing the sandbox wrote is trusted beyond that: a
missing or malformed file reads as "nothing recorded".

What it must not do: decide points (grading.py does), or read anything the
sandbox wrote before every process of it is gone.
"""

import copy
import json
import time
from dataclasses import dataclass, field

from .check_cells import SETUP_TAG, grade_id_of, is_test_cell, recording_source, setup_cell_source
from .sandbox import SANDBOX_HOME, Limits, Sandbox

ANSWERS_BYTES = 8 << 20
RUNNER = "tapeschool.course.run_notebook"


@dataclass
class RunOutcome:
    """What a recording run gave back."""
    finished: bool                  # the notebook ran to its last cell
    reason: str                     # why not, for a person ("" when finished)
    seconds: float
    entries: list = field(default_factory=list)   # the recorder's lines, as parsed JSON
    cells: list = None              # the executed cells, aligned with the notebook's (or None)
    calls: dict = field(default_factory=dict)     # grade id -> check calls in its cell


def recording_run(nb, slot=0, limits=None, key=False, scratch=None):
    """Runs ``nb`` (an nbformat notebook, not changed) in a sandbox, its checks recording.

    Returns:
        A ``RunOutcome``.
    """
    limits = limits or Limits()
    run_nb, calls = _recording_notebook(nb, key)
    started = time.monotonic()
    with Sandbox(slot, limits, scratch) as box:
        text = json.dumps(run_nb)                        # nbgrader has read and checked it
        (box.folder / "notebook.ipynb").write_text(text, encoding="utf-8")
        result = box.run(["-m", RUNNER, f"{SANDBOX_HOME}/notebook.ipynb", f"{SANDBOX_HOME}/out",
                          str(int(limits.wall_seconds)), str(limits.cell_output_bytes),
                          str(limits.output_bytes)])
        seconds = time.monotonic() - started
        answers = box.read_output("answers.jsonl", ANSWERS_BYTES)
        status = _json(box.read_output("run.json", 10_000))
        executed = box.read_output("executed.ipynb", 2 * limits.output_bytes + 2 * len(text))
    entries = _entries(answers)
    cells = _executed_cells(executed, len(run_nb.cells))
    if result.timed_out:
        return RunOutcome(False, f"timeout: the notebook ran past its limit of "
                                 f"{limits.wall_seconds:g} s", seconds, entries, cells, calls)
    if not isinstance(status, dict) or not isinstance(status.get("finished"), bool):
        why = _last_line(result.stderr)
        return RunOutcome(False, "the run stopped before its end (over a limit of CPU time, "
                                 f"memory or processes?){': ' + why if why else ''}",
                          seconds, entries, cells, calls)
    reason = str(status.get("reason", ""))[:300]
    return RunOutcome(status["finished"], "" if status["finished"] else reason or "stopped",
                      seconds, entries, cells, calls)


def _recording_notebook(nb, key):
    run_nb = copy.deepcopy(nb)
    calls = {}
    for cell in run_nb.cells:
        if is_test_cell(cell):
            grade_id = grade_id_of(cell)
            cell.source, calls[grade_id] = recording_source(cell.source, grade_id)
    import nbformat

    setup = nbformat.v4.new_code_cell(setup_cell_source(f"{SANDBOX_HOME}/out/answers.jsonl", key))
    setup.metadata["tags"] = [SETUP_TAG]
    run_nb.cells.insert(0, setup)
    return run_nb, calls


def _entries(raw):
    if not raw:
        return []
    entries = []
    for line in raw.decode("utf-8", "replace").splitlines():
        entry = _json(line.encode())
        if (isinstance(entry, dict) and isinstance(entry.get("grade_id"), str)
                and isinstance(entry.get("index"), int) and "prediction" in entry):
            entries.append(entry)
    return entries


def _executed_cells(raw, expected):
    """The executed cells without the setup cell, or None when they do not line up."""
    if not raw:
        return None
    import nbformat

    try:
        executed = nbformat.from_dict(json.loads(raw.decode("utf-8", "replace")))
        cells = executed["cells"]
        if not isinstance(cells, list) or len(cells) != expected or not all(
                isinstance(c, dict) and isinstance(c.get("outputs", []), list) for c in cells):
            return None
    except Exception:
        return None
    return cells[1:]


def _json(raw):
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
