"""The tape player in a real JupyterLab, in a real browser.

Starts JupyterLab headless on localhost (a free port, no token, a temporary
root holding a copy of ``player_demo.ipynb``, its own settings, workspaces
and runtime folders, no news or update checks), opens the notebook in
Debian's headless Chromium, runs all cells from the Run menu, waits for the
anywidget view (not the static HTML fallback) to render, presses Play and
asserts that the highlighted record changes in order and that the gradient
dz/dx = 6.0 appears; then asks the kernel, from a new cell, which frame the
player is on (the browser synced it back). The screenshot
``jupyterlab_player.png`` lands in the artifacts folder (see conftest.py),
also when the test fails. Every request that leaves localhost is aborted
and fails the test: the player needs nothing from the internet.

Needs ``jupyterlab`` (4.x), ``ipywidgets`` 8 and ``anywidget``, whose wheels
ship their JupyterLab extensions prebuilt (no ``jupyter lab build``).
"""

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = Path(__file__).with_name("player_demo.ipynb")
STARTUP_TIMEOUT = 90      # seconds: a cold JupyterLab on 2 cores takes 20-40 s
KERNEL_TIMEOUT = 60_000   # ms: kernel start plus the first `import autodiff`
# Settings that keep a fresh JupyterLab quiet: no news prompt, no update check,
# no "Select Kernel" dialog (the notebook names its kernel, python3).
QUIET_SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings":
                  {"fetchNews": "false", "checkForUpdates": False},
                  "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
                  {"autoStartDefaultKernel": True}}
# The status bar may say "Idle" before the notebook's kernel connection is up, and
# Run All before that opens a "Select Kernel" dialog instead of running. So the
# test waits on the app itself (exposed by --LabApp.expose_app_in_browser).
KERNEL_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const session = panel && panel.sessionContext && panel.sessionContext.session;
  const kernel = session && session.kernel;
  return !!kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
}"""

WATCH_FRAMES = """(root) => {
  const seen = window.__tpSeen = [];
  const note = () => {
    const cur = root.querySelector(".tp-node.tp-current");
    seen.push({frame: Number(root.dataset.frame), phase: root.dataset.phase,
               current: cur ? cur.dataset.id : null,
               gradients: root.querySelector(".tp-gradients").textContent});
  };
  note();
  new MutationObserver(note).observe(root, {attributes: true, attributeFilter: ["data-frame"]});
}"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # never a proxy
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def jupyterlab(tmp_path, prerequisite):
    """A JupyterLab server on localhost; yields its base URL and log path."""
    for module in ("jupyterlab", "anywidget", "ipywidgets"):
        prerequisite(importlib.util.find_spec(module) is not None,
                     f"the Python package {module!r} is not installed "
                     f'(pip install -e ".[test]")')
    home = tmp_path / "lab"
    root_dir = home / "root"
    root_dir.mkdir(parents=True)
    shutil.copy(NOTEBOOK, root_dir / NOTEBOOK.name)
    settings_dir = home / "settings"
    for name, values in QUIET_SETTINGS.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    port = _free_port()
    env = dict(os.environ,
               JUPYTER_CONFIG_DIR=str(home / "config"),      # ignore the user's ~/.jupyter
               JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               IPYTHONDIR=str(home / "ipython"),
               # the kernel imports this checkout's autodiff and widgets
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--ServerApp.root_dir={root_dir}", "--IdentityProvider.token=", "--ServerApp.password=",
               "--ServerApp.disable_check_xsrf=True", "--ServerApp.allow_root=True",
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
            yield base, log_path
        finally:
            server.terminate()                      # SIGTERM: the server stops its kernels
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def test_tape_player_plays_in_jupyterlab(chromium, jupyterlab, artifacts_dir):
    from playwright.sync_api import expect

    base, log_path = jupyterlab
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    outside = []

    def localhost_only(route):
        url = route.request.url
        if url.startswith((base + "/", "data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", localhost_only)
    page = context.new_page()
    page.set_default_timeout(30_000)
    shot, shot_taken = artifacts_dir / "jupyterlab_player.png", False
    try:
        page.goto(f"{base}/lab/tree/{NOTEBOOK.name}", timeout=60_000)
        notebook = page.locator(".jp-NotebookPanel")
        notebook.locator(".jp-Cell").first.wait_for(timeout=60_000)
        page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT)

        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        label = page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
        page.locator(".lm-Menu-item").filter(has=label).click()

        # The anywidget view, not the static HTML fallback shown without a widget manager.
        widget_root = notebook.locator(".jp-OutputArea-output .tp-root:not(.tp-static .tp-root)")
        try:
            widget_root.wait_for(timeout=KERNEL_TIMEOUT)
        except Exception:
            outputs = notebook.locator(".jp-OutputArea-output").all_inner_texts()
            pytest.fail(f"the tape player did not render as a widget; outputs: {outputs}\n"
                        f"JupyterLab log:\n{log_path.read_text()[-3000:]}")
        assert notebook.locator(".tp-static").count() == 0
        assert widget_root.get_attribute("data-frame") == "0"
        assert "record 1" in widget_root.locator(".tp-title").inner_text()
        assert "6.0" not in widget_root.locator(".tp-gradients").inner_text()

        widget_root.evaluate(WATCH_FRAMES)
        widget_root.locator(".tp-play").click()
        expect(widget_root).to_have_attribute("data-phase", "result", timeout=20_000)
        expect(widget_root.locator(".tp-play")).to_have_text(re.compile(r"^\s*Play$"))  # stopped at the end
        seen = page.evaluate("window.__tpSeen")

        frames = [s["frame"] for s in seen]
        assert frames == list(range(6)), f"frames shown while playing: {frames}"
        # The highlighted record moves Pow -> AddV2 forward, then back AddV2 -> Pow.
        assert [s["current"] for s in seen] == ["op0", "op1", None, "op1", "op0", None]
        assert "6.0" not in seen[3]["gradients"] and "grad x = 6.0" in seen[4]["gradients"]
        assert widget_root.locator(".tp-gradients").inner_text() == "grad x = 6.0"
        assert "dz/dx = 6.0" in widget_root.locator(".tp-sentence").inner_text()
        widget_root.scroll_into_view_if_needed()
        page.screenshot(path=str(shot))                   # the CI artifact: the played player
        shot_taken = True

        # The last frame was synced back to the kernel: ask it from a new cell.
        notebook.locator(".jp-Cell").last.locator(".jp-InputPrompt").click()   # command mode
        page.keyboard.press("b")                                              # insert below
        page.keyboard.press("Enter")                                          # edit it
        page.keyboard.type("print('frame in kernel:', player.frame, player.current['title'])")
        page.keyboard.press("Shift+Enter")
        expect(notebook.locator(".jp-Cell").nth(3).locator(".jp-OutputArea-output")).to_have_text(
            "frame in kernel: 5 result: dz/dx = 6.0", timeout=20_000)
        assert outside == [], f"the page tried to leave localhost: {outside}"
    finally:
        if not shot_taken:                                # what the page showed when it failed
            page.screenshot(path=str(shot), full_page=True)
        context.close()
