"""Every lesson exports to static HTML, so it reads without a kernel.

nbconvert's HTMLExporter renders the committed notebook (with its stored
outputs, including figures) into one HTML page, as a code host or a course
website would show it. The page must carry the lesson's title and the
outputs the notebook was committed with.
"""

import html
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _title(nb):
    """The first Markdown heading of the notebook ('# Lesson 1: ...')."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError("the notebook has no '# ' title")


def test_there_are_lessons():
    assert len(NOTEBOOKS) >= 4, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_exports_to_static_html(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    body, _resources = nbconvert.HTMLExporter().from_notebook_node(nb)
    out = tmp_path / (path.stem + ".html")
    out.write_text(body, encoding="utf-8")

    title = _title(nb)
    assert title.startswith("Lesson ")
    assert html.escape(title, quote=False) in body
    # The stored outputs are part of the page: the first printed line of the
    # first code cell that printed something appears verbatim.
    printed = next(o.text for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs if o.output_type == "stream" and o.name == "stdout")
    first_line = printed.splitlines()[0].strip()
    assert html.escape(first_line, quote=False) in body
    assert out.stat().st_size > 10_000
