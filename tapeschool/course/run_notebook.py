"""Inside the sandbox: run one notebook with nbclient, within a deadline, outputs capped.

``python -m tapeschool.course.run_notebook NOTEBOOK OUT SECONDS CELL_BYTES TOTAL_BYTES``
writes ``OUT/executed.ipynb`` (the notebook with its outputs) and ``OUT/run.json``
(``{"finished": bool, "reason": str, "cells_run": int}``). The grader reads both as
hints only: this process runs beside the student's kernel, which may have changed
either file; points come from the answers compared outside (grading.py).

A cell that raises does not stop the notebook (as nbgrader's autograde); a cell
that runs past what is left of the deadline does, and so does a kernel that
dies. One cell's outputs beyond ``CELL_BYTES`` and all cells' beyond
``TOTAL_BYTES`` are cut, with a line saying so.

What it must not do: decide anything about points, or run outside the sandbox.
"""

import json
import os
import sys
import time

CUT_NOTE = "[output cut here: over the grader's limit of {} bytes {}]\n"


def main(notebook_path, out, seconds, cell_bytes, total_bytes):
    # jsonschema compiles rfc3987_syntax's grammar on import (3 s); nbformat validates no
    # URI formats, so the runner goes without it
    sys.modules.setdefault("rfc3987_syntax", None)
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    began = time.monotonic()
    deadline = began + float(seconds)
    nb = nbformat.read(notebook_path, as_version=4)
    budget = {"total": int(total_bytes)}
    client = NotebookClient(nb, timeout=None, kernel_name="python3", allow_errors=True,
                            record_timing=False, iopub_timeout=5,
                            extra_arguments=["--HistoryManager.hist_file=:memory:"])
    status = {"finished": False, "reason": "", "cells_run": 0, "seconds": {}}
    try:
        # No graceful shutdown at the end: this process exits, and the sandbox's process
        # namespace takes the kernel (and anything it started) with it.
        client.create_kernel_manager()
        client.start_new_kernel()
        client.start_new_kernel_client()
        status["seconds"]["kernel_ready"] = round(time.monotonic() - began, 2)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            left = deadline - time.monotonic()
            if left <= 1:
                status["reason"] = f"timeout: the notebook ran past {seconds} s"
                break
            client.timeout = int(left)
            try:
                client.execute_cell(cell, index)
            finally:
                _cap(cell, int(cell_bytes), budget)
            status["cells_run"] += 1
        else:
            status["finished"] = True
        status["seconds"]["cells_done"] = round(time.monotonic() - began, 2)
    except CellTimeoutError:
        status["reason"] = f"timeout: the notebook ran past {seconds} s"
    except DeadKernelError:
        status["reason"] = "the kernel died (a crash, or over the memory or process limit)"
    except Exception as error:   # the kernel would not start, a message it could not parse
        status["reason"] = f"the notebook could not run: {type(error).__name__}: {error}"[:300]
    with open(f"{out}/executed.ipynb", "w", encoding="utf-8") as handle:
        json.dump(nb, handle)          # the grader checks what it reads back; no validation
    status["seconds"]["written"] = round(time.monotonic() - began, 2)
    with open(f"{out}/run.json", "w", encoding="utf-8") as handle:
        json.dump(status, handle)
    sys.stdout.flush()
    os._exit(0)


def _cap(cell, cell_bytes, budget):
    """Cuts a cell's outputs to what one cell and what is left of the notebook may show."""
    import nbformat

    allowed = min(cell_bytes, budget["total"])
    kept, used = [], 0
    for output in cell.get("outputs", []):
        size = len(json.dumps(output))
        if used + size > allowed:
            room = max(0, allowed - used)
            which = "for one cell" if allowed == cell_bytes else "for the whole notebook"
            text = _text_of(output)[: room // 2]
            kept.append(nbformat.v4.new_output(
                "stream", name="stdout",
                text=text + ("\n" if text else "") + CUT_NOTE.format(allowed, which)))
            used = allowed
            break
        kept.append(output)
        used += size
    cell["outputs"] = kept
    budget["total"] -= used


def _text_of(output):
    text = output.get("text") or output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


if __name__ == "__main__":
    main(*sys.argv[1:6])
