"""The committed lessons are built from their sources and were run from a fresh kernel.

``pytest --nbval`` (configured in pyproject.toml) re-runs every lesson and
compares its outputs. These checks cover what nbval does not:

- each ``notebooks/NN_topic.ipynb`` matches ``notebooks/src/NN_topic.py``
  (rebuild with ``python scripts/build_notebooks.py``);
- every code cell has been executed, in order, from execution count 1, and
  no stored output is an error: the outputs come from one top-to-bottom run;
- the kernel is ``python3``, and every lesson is listed in notebooks/README.md;
- every lesson ends with "predict the gradient" exercises whose checks ran.
"""

import importlib.util
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _builder():
    spec = importlib.util.spec_from_file_location("build_notebooks",
                                                  ROOT / "scripts" / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_source_has_a_notebook_and_every_notebook_a_source():
    sources = {p.stem for p in (ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py")}
    assert sources == {p.stem for p in NOTEBOOKS}


def test_notebooks_match_their_sources():
    builder = _builder()
    stale = builder.check(builder.sources())
    assert not stale, f"rebuild with: python scripts/build_notebooks.py  (stale: {stale})"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_was_run_top_to_bottom_in_a_python3_kernel(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_ends_with_checked_exercises(path):
    nb = nbformat.read(path, as_version=4)
    headings = [i for i, c in enumerate(nb.cells)
                if c.cell_type == "markdown" and "Exercises: predict the gradient" in c.source]
    assert headings, "no exercises section"
    after = nb.cells[headings[-1]:]
    checks = [c for c in after if c.cell_type == "code" and "check(my_prediction" in c.source]
    assert len(checks) >= 3
    for cell in checks:
        printed = "".join(o.text for o in cell.outputs if o.output_type == "stream")
        assert printed.count("Correct!") == cell.source.count("check(my_prediction")


def test_readme_lists_every_lesson():
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\((\d\d_[a-z0-9_]+\.ipynb)\)", readme))
    assert listed == {p.name for p in NOTEBOOKS}
