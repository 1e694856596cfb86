"""The student editions (notebooks/student/) and the nbgrader markers of the teacher's.

``pytest`` also runs every student edition top to bottom under nbval, lax
(notebooks/student/conftest.py): no cell may raise, with every blank left
blank. These tests cover the rest:

- each student edition is the one its source and teacher edition make;
- no answer leaks into it: no solution region, no nbgrader metadata, no
  "Correct!" output, no stored output in an exercise cell;
- a wrong prediction prints "Not yet" and a hint, not the answer, and the
  cells after it still run;
- ``nbgrader generate_assignment`` takes a teacher edition (with the settings
  in notebooks/nbgrader_config.py): the released copy is the student edition,
  cell for cell (its blanks, its instructions cell, every output it shows and no
  teacher note), with locked checks, and runs to the end; ``nbgrader autograde``
  scores a right exercise its point and a wrong one 0, and never grades the
  prediction (tests/test_lesson_grading.py pins the points of every lesson);
- README command 1 trusts both editions of every lesson before opening them.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
STUDENT = sorted((NOTEBOOKS / "student").glob("[0-9][0-9]_*.ipynb"))
LESSON_1 = "01_gradients_and_tapes"


def _builder():
    spec = importlib.util.spec_from_file_location("build_notebooks",
                                                  ROOT / "scripts" / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tags(cell):
    return cell.metadata.get("tags", [])


def _run(nb):
    """Runs ``nb`` top to bottom in a fresh kernel started in notebooks/, as nbval does."""
    from nbclient import NotebookClient

    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def _printed(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_every_lesson_has_a_student_edition():
    teacher = {p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert teacher and {p.stem for p in STUDENT} == teacher


def test_student_editions_match_their_sources_and_teacher_editions():
    builder = _builder()
    stale = [name for name in builder.check(builder.sources()) if name.startswith("student/")]
    assert not stale, f"rebuild with: python scripts/build_notebooks.py --student  ({stale})"


@pytest.mark.parametrize("path", STUDENT, ids=lambda p: p.stem)
def test_no_answer_leaks_into_the_student_edition(path):
    text = path.read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert '"nbgrader"' not in text
    student = nbformat.read(path, as_version=4)
    assert not [c for c in student.cells if c.cell_type == "code" and "Correct!" in _printed(c)]
    teacher = {c.id: c for c in nbformat.read(NOTEBOOKS / path.name, as_version=4).cells}
    assert not [c for c in student.cells if "teacher" in _tags(c)]
    assert [c for c in student.cells if "student" in _tags(c)]

    solutions = [c for c in student.cells if "solution" in _tags(c)]
    checks = [c for c in student.cells if "check" in _tags(c)]
    assert len(solutions) == len(checks) >= 3
    for cell in solutions + checks:
        assert cell.outputs == [] and cell.execution_count is None, cell.id
    for cell in solutions:
        assert "..." in cell.source, cell.source  # the blank
        answer = teacher[cell.id].source.split("### BEGIN SOLUTION\n")[1]
        answer = answer.split("### END SOLUTION")[0]
        hidden = [line.strip() for line in answer.splitlines() if line.strip()]
        assert hidden and not [line for line in hidden if line in cell.source], cell.id


def test_a_wrong_prediction_prints_a_hint_and_the_next_cells_still_run():
    nb = nbformat.read(NOTEBOOKS / "student" / f"{LESSON_1}.ipynb", as_version=4)
    solutions = [c for c in nb.cells if "solution" in _tags(c)]
    first, second = solutions[0], solutions[1]   # section 3's unwatched constant, exercise 1
    assert "my_prediction = ...  # your prediction" in first.source
    first.source = first.source.replace("my_prediction = ...", "my_prediction = 12.5")  # is None
    second.source = second.source.replace("my_prediction = ...", "my_prediction = 13.0")  # right

    _run(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "Run All stopped"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    checks = [c for c in nb.cells if "check" in _tags(c)]
    wrong, right, blanks = _printed(checks[0]), _printed(checks[1]), checks[2:]
    assert wrong.startswith("Not yet: ") and "13" not in wrong
    assert right.startswith("Correct!")
    for cell in blanks:
        assert _printed(cell).startswith("Not yet: type your prediction in place of `...`")


def test_check_never_raises_outside_nbgrader_and_raises_under_it(monkeypatch, capsys):
    from widgets.exercises import check

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check([1.0, 2.0], [[1.0, 2.0]])           # a shape that differs
    check({1, 2}, 3.0)                          # a kind of value that cannot be compared
    check(2.0, None, hint="which values does this tape watch?")
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["Not yet: your prediction has shape (2,), and that is not the shape of "
                       "the answer.",
                       "Not yet: give a number, a list, a tuple, a string, True/False or None.",
                       "Not yet: which values does this tape watch?"]
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError, match=r"^Not yet: that is not what the tape says"):
        check(5.0, 6.0)


def test_check_compares_gradient_lists_with_none_entry_by_entry_and_nan_with_nan(capsys):
    import numpy as np

    import autodiff as ad
    from widgets.exercises import check

    check([0.0, None], [ad.constant(0.0), None])     # relu's 0 beside an unconnected None
    check([1.0, None], [ad.constant(0.0), None])
    check([0.0], [ad.constant(0.0), None])
    check(float("nan"), ad.constant(np.nan))
    check(float("nan"), ad.constant(1.0))
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("Correct!")
    assert printed[1].startswith("Not yet: ") and printed[2].startswith("Not yet: ")
    assert printed[3].startswith("Correct!") and printed[4].startswith("Not yet: ")


@pytest.mark.slow
def test_nbgrader_generates_and_autogrades_an_assignment_from_a_teacher_edition(tmp_path,
                                                                               prerequisite):
    prerequisite(importlib.util.find_spec("nbgrader") is not None,
                 "nbgrader is missing (pip install -e '.[teacher]')")
    course = tmp_path / "course"
    (course / "source" / "lesson01").mkdir(parents=True)
    shutil.copy(NOTEBOOKS / f"{LESSON_1}.ipynb", course / "source" / "lesson01")
    shutil.copy(NOTEBOOKS / "nbgrader_config.py", course)

    def nbgrader(*args):
        done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr

    nbgrader("generate_assignment", "lesson01")
    released = nbformat.read(course / "release" / "lesson01" / f"{LESSON_1}.ipynb", as_version=4)
    student = nbformat.read(NOTEBOOKS / "student" / f"{LESSON_1}.ipynb", as_version=4)
    text = nbformat.writes(released)
    assert "BEGIN SOLUTION" not in text
    assert not [c for c in released.cells if c.cell_type == "code" and "Correct!" in _printed(c)]
    assert not [c for c in released.cells if "teacher" in _tags(c)]
    # the student edition, cell for cell: text, blanks, outputs, the instructions cell
    assert [c.id for c in released.cells] == [c.id for c in student.cells]
    for mine, theirs in zip(released.cells, student.cells):
        assert mine.source.rstrip() == theirs.source, mine.id
        assert mine.get("outputs") == theirs.get("outputs"), mine.id
    outputs = sum(len(c.outputs) for c in released.cells if c.cell_type == "code")
    assert outputs == sum(len(c.outputs) for c in student.cells if c.cell_type == "code") >= 10
    [instructions] = [c for c in released.cells if "student" in _tags(c)]
    assert "Type your prediction in place of `...`" in instructions.source
    answers = [c for c in released.cells if c.metadata.get("nbgrader", {}).get("solution")]
    tests = [c for c in released.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(answers) == 6 and len(tests) == 5       # section 3's prediction is no test
    assert all(c.metadata["nbgrader"]["locked"] and c.metadata["nbgrader"]["points"] == 1
               for c in tests)

    # A student answers the prediction (section 3: None) and exercise 1 (13.0) right,
    # exercise 2 (None) wrong, and leaves the rest blank.
    answers[0].source = answers[0].source.replace("my_prediction = ...", "my_prediction = None")
    answers[1].source = answers[1].source.replace("my_prediction = ...", "my_prediction = 13.0")
    answers[2].source = answers[2].source.replace("my_prediction = ...", "my_prediction = 0.0")
    ran = _run(nbformat.reads(nbformat.writes(released), as_version=4))
    assert not [o for c in ran.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type == "error"]
    submitted = course / "submitted" / "ada" / "lesson01"
    submitted.mkdir(parents=True)
    nbformat.write(released, submitted / f"{LESSON_1}.ipynb")
    nbgrader("autograde", "lesson01", "--create")

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        grades = {g.name: g.score for g in
                  gradebook.find_submission("lesson01", "ada").notebooks[0].grades}
    assert grades == {f"lesson01-exercise-{i}": (1.0 if i == 1 else 0.0) for i in range(1, 6)}


def test_readme_command_1_leaves_every_lesson_trusted(tmp_path):
    """Command 1 signs both editions of every lesson with the user's own key (kept in the
    Jupyter data folder, here a temporary one) before JupyterLab opens them."""
    from nbformat.sign import NotebookNotary

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if '-e ".[lessons]"' in line)
    steps = [step.split() for step in command.split("&&")]
    trust = next(step for step in steps if step[:4] == ["python", "-m", "jupyter", "trust"])
    assert steps[-1][:4] == ["python", "-m", "jupyter", "lab"] and steps.index(trust) > 0
    files = [path for pattern in trust[4:] for path in sorted(ROOT.glob(pattern))]
    lessons = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) + STUDENT
    assert sorted(files) == sorted(lessons)

    env = {**os.environ, "JUPYTER_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "jupyter", "trust", *map(str, files)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    notary = NotebookNotary(data_dir=str(tmp_path))
    assert all(notary.check_signature(nbformat.read(path, as_version=4)) for path in lessons)
