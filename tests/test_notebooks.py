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


def _sources():
    return sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.stem)
def test_a_check_cell_prints_nothing_but_its_verdict(path):
    # Issue 36: lesson 1's first check printed "records on the tape: 0" whatever the
    # student had typed, which answers the blank. What shows more of an answer goes into a
    # cell tagged "reveal" after the check, whose outputs the student edition clears too.
    import ast

    builder = _builder()
    cells = builder.parse(path.read_text(encoding="utf-8"))
    checks = [source for _, source, tags in cells if "check" in tags]
    assert checks
    for source in checks:
        shown = [node.func.id for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and node.func.id in ("print", "display")]
        assert not shown, f"a check cell of {path.stem} calls {shown}:\n{source}"
        last = ast.parse(source).body[-1]
        assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
            getattr(last.value.func, "id", "") in ("check", "check_gradients"), (
                f"a check cell of {path.stem} must end with its check (its last value would "
                f"be shown):\n{source}")


def test_a_reveal_cell_keeps_its_output_out_of_the_student_edition(tmp_path):
    builder = _builder()
    source = tmp_path / "99_reveal.py"
    source.write_text('# %% [markdown]\n# **Plan for one class hour.** One prediction.\n\n'
                      '# %% [markdown]\n# **Predict.**\n\n# %% tags=["solution"]\n'
                      'my_prediction = ...\n### BEGIN SOLUTION\nmy_prediction = 2\n'
                      '### END SOLUTION\n\n# %% tags=["check"]\ncheck(my_prediction, 2)\n\n'
                      '# %% tags=["reveal"]\nprint(2)\n', encoding="utf-8")
    teacher = builder.build(source)
    for cell in teacher.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    student = builder.student_edition(source, teacher)
    assert [c.outputs for c in student.cells if c.cell_type == "code"] == [[], [], []]
    misplaced = tmp_path / "98_reveal.py"
    misplaced.write_text('# %% [markdown]\n# **Plan for one class hour.** Text.\n\n'
                         '# %% tags=["reveal"]\nprint(2)\n',
                         encoding="utf-8")
    with pytest.raises(ValueError, match="must follow a check cell"):
        builder.build(misplaced)


def test_check_notices_a_tape_player_older_than_the_widgets():
    # Issue 36: a rebuild once gave 212-line diffs because the committed lessons inlined an
    # older copy of the player's script, and --check did not notice.
    builder = _builder()
    path = ROOT / "notebooks" / "01_gradients_and_tapes.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert builder.stale_widget_cells(nb) == []
    players = [c for c in nb.cells if c.cell_type == "code" and any(
        builder.PLAYER_MARK in o.get("data", {}).get("text/html", "") for o in c.outputs)]
    assert players
    output = next(o for o in players[0].outputs if "text/html" in o.get("data", {}))
    _, script = builder._current_player_code()
    older = script.replace("function", "function ", 1)      # one character of difference
    assert older != script
    fresh = output["data"]["text/html"]
    output["data"]["text/html"] = fresh.replace(script, older)
    assert builder.stale_widget_cells(nb) == [players[0].id]
    # the wrapper that starts the player counts too (24231ff changed only that)
    output["data"]["text/html"] = fresh.replace("host.appendChild(el);", "host.append(el);")
    assert output["data"]["text/html"] != fresh
    assert builder.stale_widget_cells(nb) == [players[0].id]
