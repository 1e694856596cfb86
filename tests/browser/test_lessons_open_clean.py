"""Every lesson, both editions, opens unmodified in JupyterLab (issue 23).

On opening a notebook JupyterLab starts its kernel and writes the kernel's
``kernelspec`` and ``language_info`` into the document; if they differ from
the file's in any field (ipykernel's ``language_info.version`` was missing
from every lesson), the document is marked modified: the dot on its tab,
"Save changes?" when a student closes it, and a rewritten lesson when a
teacher saves it. scripts/build_notebooks.py stores exactly what the kernel
reports, so the lessons open clean wherever the ``python3`` kernel runs the
Python that built them (``python scripts/build_notebooks.py --metadata``
restamps them for another Python).

One JupyterLab (same quiet settings and flags as test_jupyterlab_player.py)
serves copies of every lesson in both editions; the teacher editions are signed, as
``jupyter trust`` does (trusted: a stored player's scripts run), the student
editions are not (a fresh clone). One Chromium page opens each in turn,
waits until its kernel is idle, JupyterLab has written that kernel's
metadata into the document and every stored output has rendered (among them
the tape players' saved pictures and HTML), then asserts that the tab has
no ``jp-mod-dirty`` and that saving writes back the committed bytes. Each
lesson costs a kernel start, a few seconds on two cores; lessons 1 and 11
(widget outputs) come first, so ``-k "01 or 11"`` is the quick run.
``TAPESCHOOL_LESSONS=DIR`` tests a build written with ``--out DIR`` instead of
the committed lessons.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from player_pages import lab_context
from test_jupyterlab_player import (KERNEL_TIMEOUT, QUIET_SETTINGS, STARTUP_TIMEOUT, _answers,
                                    _free_port)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
# The lessons under test: the committed ones, or a build elsewhere before it is committed
# (python scripts/build_notebooks.py --out DIR; TAPESCHOOL_LESSONS=DIR pytest ...).
NOTEBOOKS = Path(os.environ.get("TAPESCHOOL_LESSONS") or ROOT / "notebooks")
FIRST = ("01", "11")      # widget outputs; both editions of these run first
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"),
                 key=lambda p: (p.name[:2] not in FIRST, p.name))
CASES = [(edition, path.name) for path in LESSONS for edition in ("teacher", "student")]

# Opens one notebook, keeps its panel as window.__lesson.
OPEN = """async (path) => {
  const panel = await window.jupyterapp.commands.execute("docmanager:open",
                                                         {path, factory: "Notebook"});
  window.__lesson = panel;
  await panel.context.ready;
  await panel.sessionContext.ready;
}"""
KERNEL_IDLE = """() => {
  const kernel = window.__lesson.sessionContext.session?.kernel;
  return !!kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
}"""
# What the kernel reports (JupyterLab's own handlers for these promises were attached
# first, so they have run when this resolves) and what the document now holds.
STATE = """async () => {
  const panel = window.__lesson;
  const kernel = panel.sessionContext.session.kernel;
  const [info, spec] = [await kernel.info, await kernel.spec];
  const tabs = [...document.querySelectorAll("#jp-main-dock-panel .lm-TabBar-tab")]
    .filter((tab) => tab.querySelector(".lm-TabBar-tabLabel")?.textContent
                     === panel.title.label);
  const saved = panel.model.toJSON();
  return {
    kernel: {language_info: info.language_info,
             kernelspec: {name: kernel.name, display_name: spec.display_name,
                          language: spec.language}},
    metadata: saved.metadata,
    outputs: panel.node.querySelectorAll(".jp-OutputArea-output").length,
    model_dirty: panel.model.dirty,
    tabs: tabs.map((tab) => tab.className),
    trusted: [...panel.model.cells].filter((c) => c.type === "code").map((c) => c.trusted),
    code_cells: saved.cells.filter((cell) => cell.cell_type === "code").length,
  };
}"""
SAVE = "async () => { await window.__lesson.context.save(); }"
CLOSE = """async () => {
  const panel = window.__lesson;
  window.__lesson = null;
  if (!panel || panel.isDisposed) return;
  await panel.sessionContext.shutdown();
  panel.dispose();
}"""


@pytest.fixture(scope="module")
def lessons_lab(tmp_path_factory, prerequisite):
    """JupyterLab serving copies of every lesson (teacher editions signed); yields
    ``(base_url, root_dir, log_path)``."""
    for module in ("jupyterlab", "nbformat"):
        prerequisite(importlib.util.find_spec(module) is not None,
                     f"the Python package {module!r} is not installed "
                     f'(pip install -e ".[test]")')
    from nbformat import read
    from nbformat.sign import NotebookNotary

    home = tmp_path_factory.mktemp("lessons_lab")
    root_dir, data_dir = home / "root", home / "data"
    (root_dir / "student").mkdir(parents=True)
    data_dir.mkdir()
    notary = NotebookNotary(data_dir=str(data_dir))      # `jupyter trust`, into this folder
    for path in LESSONS:
        shutil.copy(path, root_dir / path.name)
        shutil.copy(NOTEBOOKS / "student" / path.name, root_dir / "student" / path.name)
        notary.sign(read(root_dir / path.name, as_version=4))
    settings_dir = home / "settings"
    for name, values in QUIET_SETTINGS.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    port = _free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--ServerApp.root_dir={root_dir}", "--IdentityProvider.token=", "--ServerApp.password=",
               "--ServerApp.disable_check_xsrf=True", "--ServerApp.allow_root=True",
               f"--NotebookNotary.data_dir={data_dir}",
               f"--LabApp.user_settings_dir={settings_dir}",
               f"--LabApp.workspaces_dir={home / 'workspaces'}",
               "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
               "--LabApp.expose_app_in_browser=True",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
    log_path = home / "jupyterlab.log"
    base = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, cwd=root_dir, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not _answers(f"{base}/lab"):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start on {base} "
                                f"(exit code {server.poll()}):\n{log_path.read_text()[-3000:]}")
                time.sleep(0.5)
            yield base, root_dir, log_path
        finally:
            server.terminate()                      # SIGTERM: the server stops its kernels
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@pytest.fixture(scope="module")
def lab_page(chromium, lessons_lab):
    """One JupyterLab page for every lesson (loading the app once, not once a notebook)."""
    base, _, _ = lessons_lab
    context = lab_context(chromium, base, 1400, 1000)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{base}/lab", timeout=60_000)
    page.wait_for_function("() => !!window.jupyterapp && !!window.jupyterapp.shell", timeout=60_000)
    page.locator("#jp-main-dock-panel").wait_for(timeout=60_000)
    yield page
    context.close()


def _stored_outputs(nb):
    return sum(len(cell.outputs) for cell in nb.cells if cell.cell_type == "code")


def _differences(stored, shown, where="metadata"):
    """``["metadata.language_info.version: None -> '3.11.7'", ...]``."""
    if isinstance(stored, dict) and isinstance(shown, dict):
        return [line for key in sorted(set(stored) | set(shown))
                for line in _differences(stored.get(key), shown.get(key), f"{where}.{key}")]
    return [] if stored == shown else [f"{where}: {stored!r} -> {shown!r}"]


def _state_once_settled(page, nb):
    """The page's STATE once JupyterLab has written the kernel's metadata into the
    document and rendered every stored output."""
    deadline = time.monotonic() + 20
    while True:
        state = page.evaluate(STATE)
        written = all(state["metadata"].get(key) == value for key, value in state["kernel"].items())
        if (written and state["outputs"] >= _stored_outputs(nb)) or time.monotonic() > deadline:
            return state
        page.wait_for_timeout(250)


@pytest.mark.parametrize("edition, name", CASES, ids=[f"{e}-{n[:2]}" for e, n in CASES])
def test_lesson_opens_unmodified_and_saves_unchanged(lab_page, lessons_lab, artifacts_dir,
                                                       edition, name):
    import nbformat

    _, root_dir, log_path = lessons_lab
    relative = name if edition == "teacher" else f"student/{name}"
    committed = NOTEBOOKS / relative
    nb = nbformat.read(committed, as_version=4)
    page = lab_page
    try:
        page.evaluate(OPEN, relative)
        page.wait_for_function(KERNEL_IDLE, timeout=KERNEL_TIMEOUT)
        state = _state_once_settled(page, nb)
        assert state["metadata"]["language_info"] == state["kernel"]["language_info"], \
            f"JupyterLab did not take the kernel's language_info; log:\n" \
            f"{log_path.read_text()[-2000:]}"
        assert state["outputs"] >= _stored_outputs(nb) > 0, "the stored outputs did not render"
        assert state["code_cells"] == len(state["trusted"]) > 0
        # teacher editions are signed (trusted), student editions are not
        assert set(state["trusted"]) == {edition == "teacher"}, state["trusted"]
        changed = _differences(nb.metadata, state["metadata"])
        assert len(state["tabs"]) == 1, state["tabs"]
        dirty = "jp-mod-dirty" in state["tabs"][0].split() or state["model_dirty"]
        if dirty:
            shot = artifacts_dir / f"lesson_opened_modified_{edition}_{name[:2]}.png"
            page.screenshot(path=str(shot))
        assert not dirty, (f"{relative} opened modified in JupyterLab; metadata it changed "
                           f"(file -> JupyterLab): {changed}; "
                           "rebuild with: python scripts/build_notebooks.py --metadata")
        assert not changed

        page.evaluate(SAVE)                # what a teacher's Ctrl+S writes
        saved = (root_dir / relative).read_bytes()
        assert saved == committed.read_bytes(), \
            f"saving {relative} in JupyterLab rewrote it (compare {root_dir / relative})"
    finally:
        page.evaluate(CLOSE)
