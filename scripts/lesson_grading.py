"""How nbgrader grades a lesson: predictions score nothing, exercises score, homework more.

A lesson asks two kinds of questions, each an answer cell (tagged ``solution``)
followed by its check cell (tagged ``check``):

- a **Predict** moment, in the lesson's sections: the student guesses, then runs
  the cell and sees. Guessing wrong is the point, so it is worth nothing: the
  answer cell is an nbgrader "autograded answer" (the student's blank, released
  without the solution) and its check a locked "read-only" cell, not a test;
- an **exercise**, after the heading ``## Exercises...``: every check cell of it
  is a locked "autograder test". An exercise is worth ``POINTS["exercise"]``, or
  ``POINTS["homework"]`` when the lesson's plan sets it as homework, split evenly
  over its check cells (two checks of a class exercise: half a point each).

The plan is the first markdown cell that holds ``Plan for one class hour``; it
names the class exercises ("all 5 exercises", "exercises 1 to 5") and the
homework ("Exercise 6 is homework", "exercises 5 to 7 are homework"). An
exercise is a markdown cell that starts ``**Exercise N`` and the code cells
after it. Every exercise must be in exactly one of the two lists, and an
exercise whose text says "(homework)" must be homework in the plan::

    >>> plan_split("... then exercises 1 to 5 (about 20 minutes). Exercise 6 is homework.")
    ({1, 2, 3, 4, 5}, {6})

Grade ids say what a cell is, so the formgrader and the gradebook read plainly:
``lesson02-predict-1`` (with ``lesson02-predict-1-answer``), ``lesson02-exercise-3``,
``lesson02-homework-6``, and ``lesson02-exercise-1-2`` for the second check of
exercise 1.

What it must not do: read or run a notebook (it sees the source's cells only),
or decide how a copy is released (notebooks/nbgrader_config.py does).
"""

import re

# Points of one exercise, by where the plan puts it. A homework exercise is done alone,
# after the class has discussed the lesson, so it counts double. Change these and run
# `python scripts/build_notebooks.py --refresh` to give every lesson the new points.
POINTS = {"exercise": 1, "homework": 2}

PLAN_MARK = "Plan for one class hour"
EXERCISES_HEADING = re.compile(r"^##\s+Exercises\b", re.MULTILINE)
EXERCISE_LABEL = re.compile(r"^\*\*Exercise (\d+)\b")
NUMBERS = r"(\d+)(?:\s+(to|and)\s+(\d+))?"
HOMEWORK = re.compile(rf"[Ee]xercises?\s+{NUMBERS}\s+(?:is|are)\s+homework")
IN_CLASS = re.compile(rf"\ball (\d+) exercises\b|\b[Ee]xercises?\s+{NUMBERS}")


def _numbers(first, word, last):
    first = int(first)
    if not word:
        return {first}
    return set(range(first, int(last) + 1)) if word == "to" else {first, int(last)}


def plan_split(plan):
    """The class and homework exercises a lesson's plan names.

    Args:
        plan: the plan's text.

    Returns:
        ``(class exercise numbers, homework exercise numbers)``, two sets.
    """
    homework = set()
    for match in HOMEWORK.finditer(plan):
        homework |= _numbers(*match.groups())
    in_class = set()
    for match in IN_CLASS.finditer(HOMEWORK.sub("", plan)):
        count, first, word, last = match.groups()
        in_class |= set(range(1, int(count) + 1)) if count else _numbers(first, word, last)
    return in_class - homework, homework


def lesson_plan(cells, stem="lesson"):
    """The text of the lesson's plan: the first markdown cell that holds ``PLAN_MARK``.

    Args:
        cells: the source's cells, ``(cell_type, source, tags)`` (build_notebooks.parse).
    """
    for kind, source, _ in cells:
        if kind == "markdown" and PLAN_MARK in source:
            return source
    raise ValueError(f"{stem}: no markdown cell holds its plan ({PLAN_MARK!r})")


def nbgrader_cells(prefix, cells, stem="lesson"):
    """nbgrader's metadata for every answer and check cell of a lesson source.

    Args:
        prefix: the lesson's number, ``"02"``.
        cells: the source's cells, ``(cell_type, source, tags)``, in order.
        stem: the source's name, for messages.

    Returns:
        ``{cell index: nbgrader metadata}``. Raises ValueError when the lesson does not
        follow the rules of the module docstring (an answer without its check, an exercise
        the plan does not place, a "(homework)" exercise the plan keeps in class).
    """
    in_class, homework = plan_split(lesson_plan(cells, stem))
    questions = _questions(cells, stem)
    labels = {number for _, number, _, _ in questions if number}
    exercises = {number for number, _ in _exercise_texts(cells)}
    if exercises != in_class | homework or in_class & homework:
        raise ValueError(f"{stem}: the plan places exercises {sorted(in_class)} in class and "
                         f"{sorted(homework)} at home, but the lesson has exercises "
                         f"{sorted(exercises)}; say in the plan which is which")
    said_homework = {n for n, text in _exercise_texts(cells) if "(homework)" in text}
    if not said_homework <= homework:
        raise ValueError(f"{stem}: exercises {sorted(said_homework - homework)} say "
                         f"'(homework)' but the plan keeps them in class")
    if labels != exercises:
        raise ValueError(f"{stem}: exercises {sorted(exercises - labels)} have no answer "
                         f"and check cells")
    checks_of = {}
    for _, number, _, _ in questions:
        checks_of[number] = checks_of.get(number, 0) + 1
    metadata, seen, predicts = {}, {}, 0
    for answer, number, check, _ in questions:
        if number is None:
            predicts += 1
            grade_id = f"lesson{prefix}-predict-{predicts}"
            metadata[check] = _cell(grade_id, grade=False, locked=True)
        else:
            part = "homework" if number in homework else "exercise"
            seen[number] = seen.get(number, 0) + 1
            grade_id = f"lesson{prefix}-{part}-{number}"
            if checks_of[number] > 1:
                grade_id += f"-{seen[number]}"
            points = round(POINTS[part] / checks_of[number], 6)
            # a whole number is stored as one: JupyterLab writes 1.0 back as 1 on saving
            points = int(points) if points == int(points) else points
            metadata[check] = _cell(grade_id, grade=True, locked=True, points=points)
        metadata[answer] = _cell(f"{grade_id}-answer", solution=True)
    return metadata


def _cell(grade_id, grade=False, locked=False, solution=False, points=None):
    """nbgrader's cell metadata (schema 3): an autograded answer (``solution``), an
    autograder test (``grade``, with ``points``) or a read-only cell (``locked`` only)."""
    cell = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution}
    if points is not None:
        cell["points"] = points
    return cell


def _questions(cells, stem):
    """``[(answer index, exercise number or None, check index, exercise text)]``: each answer
    cell with the check cell right after it, and the exercise they belong to (None for a
    Predict moment, before the exercises heading)."""
    found, exercise, after_heading = [], None, False
    answer = None
    for i, (kind, source, tags) in enumerate(cells):
        if kind == "markdown":
            after_heading = after_heading or bool(EXERCISES_HEADING.search(source))
            label = EXERCISE_LABEL.match(source.lstrip())
            if label:
                if not after_heading:
                    raise ValueError(f"{stem}: exercise {label.group(1)} comes before the "
                                     f"'## Exercises' heading")
                exercise = int(label.group(1))
        if "solution" in tags:
            if answer is not None:
                raise ValueError(f"{stem}: answer cell {answer} has no check cell after it")
            answer = i
        elif "check" in tags:
            if answer is None:
                raise ValueError(f"{stem}: check cell {i} follows no answer cell")
            if after_heading and exercise is None:
                raise ValueError(f"{stem}: check cell {i} after the exercises heading "
                                 f"belongs to no '**Exercise N' cell")
            found.append((answer, exercise if after_heading else None, i, source))
            answer = None
    if answer is not None:
        raise ValueError(f"{stem}: answer cell {answer} has no check cell after it")
    return found


def _exercise_texts(cells):
    return [(int(m.group(1)), source) for kind, source, _ in cells if kind == "markdown"
            for m in [EXERCISE_LABEL.match(source.lstrip())] if m]
