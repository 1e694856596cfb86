"""How nbgrader grades the lessons: predict-then-run costs nothing, exercises score, homework more.

scripts/lesson_grading.py decides each answer and check cell's nbgrader metadata
from the lesson's source; scripts/build_notebooks.py writes it into the teacher
editions (``--refresh`` does so without running a lesson). These tests pin:

- the plan's words are read as the teacher reads them ("all 5 exercises",
  "exercises 1 to 5", "Exercise 6 is homework", "exercises 5 to 7 are homework");
- in every committed teacher edition, a Predict moment is worth nothing (its
  answer an "autograded answer", its check a locked read-only cell, no points),
  each exercise's checks are locked autograder tests adding up to the exercise's
  points, and the lesson's total is its plan's split: one point per class
  exercise, two per homework exercise;
- a lesson that breaks the rules (an exercise the plan does not place, a
  "(homework)" exercise kept in class, an answer without its check) is refused,
  and so is a refresh of a lesson whose code changed since its teacher edition ran.
"""

import re
import shutil
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
REFRESH = "python scripts/build_notebooks.py --refresh"


@pytest.fixture(scope="module")
def builder():
    """scripts/build_notebooks.py (and through it scripts/lesson_grading.py)."""
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    import build_notebooks

    return build_notebooks


def test_the_plan_is_read_as_a_teacher_reads_it(builder):
    split = builder.lesson_grading.plan_split
    assert split("then all 5 exercises (about 20 minutes).") == ({1, 2, 3, 4, 5}, set())
    assert split("then exercises 1 to 5 (about 20 minutes). Exercise 6 is homework.") == (
        {1, 2, 3, 4, 5}, {6})
    assert split("exercises 1 and 2 (about 8 minutes); exercises 3 to 6 are homework.") == (
        {1, 2}, {3, 4, 5, 6})
    assert split("exercises 1 to 5 (about 20 minutes); exercises 6 and 7 are homework.") == (
        {1, 2, 3, 4, 5}, {6, 7})
    assert split("| exercises 1 to 3 | 12 |\n| **total** | **60** |") == ({1, 2, 3}, set())


def _cells(plan, *labels):
    """A tiny lesson source: the plan, the exercises heading, then per label an exercise
    text, an answer cell and a check cell."""
    cells = [("markdown", f"**Plan for one class hour.** {plan}", []),
             ("markdown", "## Exercises: predict the gradient", [])]
    for label in labels:
        cells += [("markdown", f"**Exercise {label}.** What is it?", []),
                  ("code", "my_prediction = ...\n### BEGIN SOLUTION\n1\n### END SOLUTION",
                   ["solution"]),
                  ("code", "check(my_prediction, 1)", ["check"])]
    return cells


def test_a_lesson_that_breaks_the_rules_is_refused(builder):
    grading = builder.lesson_grading
    metadata = grading.nbgrader_cells("99", _cells("Exercises 1 and 2; exercise 3 is homework.",
                                                   "1", "2", "3 (homework)"))
    assert [(m["grade_id"], m.get("points")) for m in metadata.values() if m["grade"]] == [
        ("lesson99-exercise-1", 1.0), ("lesson99-exercise-2", 1.0), ("lesson99-homework-3", 2.0)]
    with pytest.raises(ValueError, match="the plan places exercises"):
        grading.nbgrader_cells("99", _cells("Exercises 1 and 2.", "1", "2", "3"))
    with pytest.raises(ValueError, match=r"say '\(homework\)' but the plan keeps them in class"):
        grading.nbgrader_cells("99", _cells("Exercises 1 to 3.", "1", "2", "3 (homework)"))
    broken = _cells("All 1 exercises.", "1")[:-1]                # the check cell is gone
    with pytest.raises(ValueError, match="has no check cell after it"):
        grading.nbgrader_cells("99", broken)
    with pytest.raises(ValueError, match="no markdown cell holds its plan"):
        grading.nbgrader_cells("99", _cells("", "1")[1:])


def _graded(nb):
    """The teacher edition's questions: ``[(answer metadata, check metadata, in exercises)]``."""
    heading = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                   and re.search(r"^## Exercises", c.source, re.MULTILINE))
    found, answer = [], None
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader")
        if meta and meta["solution"]:
            answer = meta
        elif meta:
            found.append((answer, meta, i > heading))
    return found


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem[:2])
def test_predictions_are_worth_nothing_and_the_points_follow_the_plan(path, builder):
    grading = builder.lesson_grading
    nb = nbformat.read(path, as_version=4)
    questions = _graded(nb)
    predictions = [(a, c) for a, c, exercise in questions if not exercise]
    assert predictions, "every lesson asks for a prediction before its exercises"
    stale = f"{path.name} has stale grading; run: {REFRESH}"
    for answer, check in predictions:
        assert answer["solution"] and not answer["grade"], stale
        assert check["locked"] and not check["grade"] and "points" not in check, stale
        assert "-predict-" in check["grade_id"], stale
    plan = next(c.source for c in nb.cells if c.cell_type == "markdown"
                and grading.PLAN_MARK in c.source)
    in_class, homework = grading.plan_split(plan)
    points = {}
    for answer, check, exercise in questions:
        if exercise:
            assert check["grade"] and check["locked"] and answer["grade_id"] == (
                check["grade_id"] + "-answer"), stale
            part, number = re.match(rf"lesson{path.name[:2]}-(exercise|homework)-(\d+)",
                                    check["grade_id"]).groups()
            assert (int(number) in homework) == (part == "homework"), check["grade_id"]
            points[int(number)] = points.get(int(number), 0) + check["points"]
    assert set(points) == in_class | homework
    for number, total in points.items():
        assert total == pytest.approx(grading.POINTS["homework" if number in homework
                                                     else "exercise"]), number
    assert sum(points.values()) == pytest.approx(len(in_class) * 1.0 + len(homework) * 2.0)


def test_refresh_keeps_the_run_and_refuses_a_lesson_whose_code_changed(builder, tmp_path):
    source = ROOT / "notebooks" / "src" / "01_gradients_and_tapes.py"
    refreshed = builder.refreshed_teacher_edition(source)
    committed = nbformat.read(NOTEBOOKS / "01_gradients_and_tapes.ipynb", as_version=4)
    ran = [(c.source, c.outputs, c.execution_count) for c in committed.cells
           if c.cell_type == "code"]
    assert [(c.source, c.outputs, c.execution_count) for c in refreshed.cells
            if c.cell_type == "code"] == ran
    assert [c.cell_type for c in refreshed.cells if "student" in c.metadata.get("tags", [])] == [
        "markdown"]                               # the students' instructions, for the release

    changed = tmp_path / source.name
    shutil.copy(source, changed)
    text = changed.read_text(encoding="utf-8")
    assert "\nimport autodiff as ad\n" in text
    changed.write_text(text.replace("\nimport autodiff as ad\n",
                                    "\nimport autodiff as ad  # edited\n", 1), encoding="utf-8")
    with pytest.raises(ValueError, match="differs from the committed run"):
        builder.refreshed_teacher_edition(changed)
