"""Stored players start when JupyterLab restores several notebooks at once (issue 35, item 4).

JupyterLab keeps every open notebook in one page. A stored player's HTML
once found its element by an id made by a counter, "tp-static-0" for the
first player of EVERY notebook: with another lesson's tab restored, each
script started the player in the first notebook's element, and the others
kept their still picture, no Play button (lessons 1, 5 and 14). Now a
script starts the player in its own element (``document.currentScript``),
and ids differ between players.

The test writes two trusted notebooks (signed, as ``jupyter trust`` does:
a stored player's script runs only in a trusted notebook), each with a
stored player as ``scripts/build_notebooks.py`` saves it, opens both in one
JupyterLab page, then reloads the page so that JupyterLab restores both
tabs from its workspace, and checks, each time, that each notebook's player
started in its own output (a Play button, no picture left) within 20 s, with
no kernel asked to run anything. An untrusted notebook keeps the picture
(tests/browser/test_jupyterlab_untrusted.py).
"""

import pytest

import autodiff as ad
from widgets.player.page.tape_player import TapePlayer

from player_pages import LAB_READY, lab_page, reload_restoring, stored_player_notebook
from test_jupyterlab_player import jupyterlab  # noqa: F401

pytestmark = pytest.mark.browser

STARTED = """(name) => {
  const panel = [...window.jupyterapp.shell.widgets('main')].find((w) => w.context && w.context.path === name);
  if (!panel) return null;
  const out = panel.node.querySelector('.jp-OutputArea-output');
  return {players: panel.node.querySelectorAll('.tp-root').length,
          play: panel.node.querySelectorAll('.tp-root .tp-play').length,
          pictures: panel.node.querySelectorAll('.tp-fallback').length,
          title: out ? (out.querySelector('.tp-title') || {}).textContent || '' : ''};
}"""
READY = LAB_READY
OPEN = """async (path) => {
  await window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'});
}"""


def _player_notebook(path, power, notary):
    """A notebook whose one cell holds a stored player of y = x ** power, signed."""
    pytest.importorskip("nbformat")
    x = ad.Variable(1.5, name="x")
    with ad.GradientTape() as tape:
        y = x ** power
    stored_player_notebook(path, TapePlayer(tape, y, x, names={"y": y}), notary, f"player  # y = x ** {power}")


@pytest.fixture
def notarized_lab(tmp_path, monkeypatch, request):
    """The JupyterLab of test_jupyterlab_player, with its own notary (a data folder here).

    Yields the base URL, the log path, the server's root folder and the notary
    that signs notebooks it trusts.
    """
    pytest.importorskip("nbformat")
    from nbformat.sign import NotebookNotary

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data_dir))        # read by the server it starts
    base, log_path = request.getfixturevalue("jupyterlab")
    return base, log_path, tmp_path / "lab" / "root", NotebookNotary(data_dir=str(data_dir))


@pytest.fixture
def trusted_lab(notarized_lab):
    """Two trusted notebooks with a stored player each (y = x ** 2, y = x ** 3)."""
    base, log_path, root, notary = notarized_lab
    names = []
    for power in (2, 3):
        names.append(f"player_{power}.ipynb")
        _player_notebook(root / names[-1], power, notary)
    return base, log_path, names


def _wait_started(page, names, log_path):
    for name in names:
        try:
            page.wait_for_function(f"() => {{ const s = ({STARTED})({name!r}); "
                                   f"return s && s.play === 1 && s.pictures === 0; }}", timeout=20_000)
        except Exception:
            state = {n: page.evaluate(STARTED, n) for n in names}
            pytest.fail(f"the stored player of {name} did not start within 20 s: {state}; "
                        f"JupyterLab log:\n{log_path.read_text()[-2000:]}")
    return {name: page.evaluate(STARTED, name) for name in names}


def test_stored_players_start_in_every_restored_tab(chromium, trusted_lab, artifacts_dir):
    base, log_path, names = trusted_lab
    with lab_page(chromium, base, 1280, 720) as page:
        for name in names:                                  # both open in one page
            page.evaluate(OPEN, name)
        opened = _wait_started(page, names, log_path)
        assert [opened[n]["title"] for n in names] == ["record 1: y = Pow(x, v0)"] * 2
        reload_restoring(page, names)                       # JupyterLab restores both tabs
        restored = _wait_started(page, names, log_path)
        assert all(s["players"] == 1 for s in restored.values()), restored
        page.screenshot(path=str(artifacts_dir / "jupyterlab_restored_tabs.png"))
