"""Every lesson fits one class hour by a teacher's count (issue 36).

Each lesson opens with a plan: a table of minutes per part (its introduction, each
section, the summary, the class exercises) and the total. scripts/lesson_minutes.py
counts what each part asks of a class from the source's cells (words read, cells run,
predictions, exercise answers). These tests hold each plan to that count:

- every part the lesson has is in the plan, and no row names a part it lacks;
- no part is planned below its count (a plan cannot promise what the cells cannot give);
- the class exercises' row gives each of their answers its minutes, and names exactly the
  exercises the grading takes as class exercises;
- the parts add up to the plan's total, and the total is at most 55 minutes, so that
  an hour keeps a few minutes for starting, questions and the unexpected.
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import build_notebooks  # noqa: E402
import lesson_grading  # noqa: E402
import lesson_minutes  # noqa: E402

SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
HOUR = 55


def _lesson(path):
    cells = build_notebooks.parse(path.read_text(encoding="utf-8"))
    plan = lesson_grading.lesson_plan(cells, path.stem)
    return cells, plan, lesson_minutes.parts(cells)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_the_plan_fits_the_hour_by_the_count(path):
    cells, plan, parts = _lesson(path)
    rows, total = lesson_minutes.planned(plan)
    assert rows and total is not None, f"{path.stem}: the plan has no '| part | minutes |' table"
    assert sum(minutes for _, minutes in rows) == total
    assert total <= HOUR, f"{path.stem}: the plan adds up to {total} minutes"
    counted = [name for name in parts if name not in ("exercises", "appendix")]
    covered = []
    for label, minutes in rows:
        names = lesson_minutes.parts_of_row(label, parts)
        assert names, f"{path.stem}: the plan's row {label!r} names no part of the lesson"
        covered += names
        if names == ["exercises"]:
            in_class, _ = lesson_grading.plan_split(plan)
            need = lesson_minutes.EXERCISE_MINUTES * lesson_minutes.class_answers(cells, in_class)
        else:
            need = sum(lesson_minutes.minutes(parts[name]) for name in names)
        assert minutes >= need, (f"{path.stem}: {label!r} is planned for {minutes} minutes; "
                                 f"its cells count {need:.1f}")
    assert sorted(covered) == sorted(counted + ["exercises"]), (
        f"{path.stem}: the plan's rows cover {covered}; the lesson has {counted} and exercises")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_the_plans_exercise_row_names_the_class_exercises(path):
    cells, plan, _ = _lesson(path)
    rows, _ = lesson_minutes.planned(plan)
    exercise_rows = [label for label, _ in rows if label.lower().startswith("exercise")]
    assert len(exercise_rows) == 1
    in_class, homework = lesson_grading.plan_split(plan)
    assert lesson_grading.plan_split(f"| {exercise_rows[0]} | 1 |") == (in_class, set())
    assert in_class and not in_class & homework


def test_the_readme_gives_every_lessons_count_and_plan():
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    for path in SOURCES:
        cells, plan, _ = _lesson(path)
        in_class, _ = lesson_grading.plan_split(plan)
        row = lesson_minutes.table_row(int(path.stem[:2]), cells, plan, in_class)
        assert row in readme, f"notebooks/README.md's minutes table lacks {row}"


def test_the_count_reads_a_lessons_parts():
    cells = [("markdown", "# Lesson\nFour words of text.", []),
             ("markdown", "**Plan for one class hour** | 1. x | 9 |", []),
             ("markdown", "## 1. One\n" + "word " * 200, []),
             ("code", "x = 1", []),
             ("markdown", "**Predict.**", []),
             ("code", "my_prediction = ...\n### BEGIN SOLUTION\nmy_prediction = 1\n"
                      "### END SOLUTION", ["solution"]),
             ("code", "check(my_prediction, 1)", ["check"]),
             ("markdown", "## 2. Two (after class)\nlater", []),
             ("markdown", "## Exercises: predict\n**Exercise 1.**", []),
             ("code", "my_prediction = ...\n### BEGIN SOLUTION\nmy_prediction = 1\n"
                      "### END SOLUTION", ["solution"])]
    parts = lesson_minutes.parts(cells)
    assert list(parts) == ["introduction", "1", "appendix", "exercises"]
    assert parts["1"]["predictions"] == 1 and parts["1"]["cells"] == 1
    assert parts["exercises"]["exercises"] == 1
    # 203 words at 100 a minute, 3 words of code at 200, one cell to run, one prediction
    assert lesson_minutes.minutes(parts["1"]) == pytest.approx(
        203 / 100 + (2 + 1) / 200 + 0.5 + 2)
    assert lesson_minutes.parts_of_row("2 and 3. Two", ["1", "2", "3"]) == ["2", "3"]
    assert lesson_minutes.parts_of_row("1 to 3. Three", ["1", "2", "3"]) == ["1", "2", "3"]
    assert lesson_minutes.parts_of_row("Part B: reading", ["A", "B"]) == ["B"]
    assert lesson_minutes.planned("| part | minutes |\n|---|---|\n| 1. x | 4 |\n"
                                  "| in all | 4 |") == ([("1. x", 4)], 4)
