"""Opening player pages in the test Chromium: one context per test, page errors kept.

    >>> with player_page(chromium, 1280, 720) as (page, errors):
    ...     open_player(page, path)
    ...     assert errors == []

``lab_context``: a context for a test JupyterLab that reaches nothing but that
server (and data: and blob: URLs): the offline classroom; ``lab_page``: a page
of it at JupyterLab's start, the app ready (``LAB_READY``) to open documents.
``stored_player_notebook``: a signed notebook whose one cell holds a stored
player, as ``scripts/build_notebooks.py`` saves a lesson's.
"""

import contextlib
import itertools
import time


@contextlib.contextmanager
def player_page(chromium, width=1280, height=720, timeout=30_000):
    """A fresh offline page at ``width`` x ``height`` and the list its script errors go to."""
    context = chromium.new_context(offline=True, viewport={"width": width, "height": height})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(timeout)
    try:
        yield page, errors
    finally:
        context.close()


def open_player(page, path):
    """Goes to the exported player at ``path`` and waits for its first frame."""
    page.goto(path.as_uri())
    page.locator(".tp-root[data-frame]").wait_for()


def lab_context(chromium, base, width, height):
    """A browser context of ``width`` x ``height`` whose requests go only to ``base``."""
    context = chromium.new_context(viewport={"width": width, "height": height})
    context.route("**/*", lambda route: route.continue_()
                  if route.request.url.startswith((base + "/", "data:", "blob:")) else route.abort())
    return context


LAB_READY = "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('docmanager:open')"


# JupyterLab saves its workspace (the open tabs, the sidebar) a moment after a change;
# a reload before that restores an older layout. True once the saved workspace names
# every notebook of ``paths`` and the left sidebar's current widget, if ``sidebar``.
WORKSPACE_SAVED = """async ([paths, sidebar]) => {
  const app = window.jupyterapp;
  const id = document.body.dataset.jpWorkspace || 'default';
  let saved;
  try { saved = JSON.stringify(await app.serviceManager.workspaces.fetch(id)); }
  catch (err) { return false; }
  return paths.every((p) => saved.includes('notebook:' + p)) && (!sidebar || saved.includes(sidebar));
}"""


def reload_restoring(page, paths, sidebar=None, timeout_s=60):
    """Reloads the JupyterLab ``page`` once its workspace holds the tabs of ``paths``
    (and the ``sidebar`` widget's id), so that JupyterLab restores them; waits until ready.

    Polled here, not with ``page.wait_for_function``: that takes the Promise an
    async function returns as a true value and so would not wait at all.
    """
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(WORKSPACE_SAVED, [list(paths), sidebar]):
        if time.monotonic() > deadline:
            raise AssertionError(f"JupyterLab did not save a workspace holding {list(paths)} "
                                 f"and {sidebar!r} within {timeout_s} s")
        page.wait_for_timeout(250)
    page.reload()
    page.wait_for_function(LAB_READY)


@contextlib.contextmanager
def lab_page(chromium, base, width=1280, height=720):
    """A page of the JupyterLab at ``base`` (``lab_context``), started and ready; closed after."""
    context = lab_context(chromium, base, width, height)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{base}/lab", timeout=60_000)
        page.wait_for_function(LAB_READY)
        yield page
    finally:
        context.close()


def stored_player_notebook(path, player, notary, source="player"):
    """Writes ``path``: one code cell ``source`` whose output is ``player``'s stored page, signed.

    ``player`` is a TapePlayer; its mime bundle is stored without the widget
    view, as the lessons store it, with ids counted from 0 (each lesson is
    built by a kernel of its own), and the notebook is signed by ``notary`` (a
    stored player's script runs only in a trusted notebook).
    """
    import nbformat
    from widgets.player.page import html_export

    html_export._ids = itertools.count()
    data, metadata = player._repr_mimebundle_()
    data.pop("application/vnd.jupyter.widget-view+json", None)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"), cell]
    notary.sign(nb)
    nbformat.write(nb, str(path))
