"""A teacher's count of a lesson's minutes, part by part, from its source's cells.

A lesson's plan (the markdown cell holding ``Plan for one class hour``) gives its
parts' minutes in a table, ``| part | minutes |``, one row per section (``1.
...``, ``2 and 3. ...``), the introduction, the summary, and the class exercises
(``exercises 1 to 3``), then ``| in all | N |``. This module reads that table and
counts what each part asks of a class, so a test can hold the plan to the count:

* reading: ``WORDS_PER_MINUTE`` words of text a minute, the code and output shown in
  the text (PyTorch and JAX blocks) and the tables included;
* a code cell to run: ``RUN_MINUTES`` to run it and look at its output, plus its code
  read at ``CODE_WORDS_PER_MINUTE`` (code that runs is skimmed, then its output read);
* a prediction (an answer cell in a section, with its check and reveal cells):
  ``PREDICT_MINUTES`` to think, type, check and hear why;
* a class exercise: ``EXERCISE_MINUTES`` per answer cell.

The count is a floor, not a forecast: it leaves out the discussion a teacher adds. A
part whose planned minutes are below it does not fit.

What it must not do: run a lesson (it reads the source's cells only).
"""

import re

WORDS_PER_MINUTE = 100
CODE_WORDS_PER_MINUTE = 200
RUN_MINUTES = 0.5
PREDICT_MINUTES = 2.0
EXERCISE_MINUTES = 3.0

PLAN_MARK = "Plan for one class hour"
WORD = re.compile(r"[A-Za-z0-9_']+")
SECTION = re.compile(r"^#{2,3}\s+(?:(\d+)\.|(Summary)|(Exercises)|(Appendix)|(Words of)|(Part ([A-Z])))",
                     re.MULTILINE)
ROW = re.compile(r"^\|\s*(.+?)\s*\|\s*(\d+)\s*\|\s*$", re.MULTILINE)


def words(text):
    """The words (and numbers, and names in code) of ``text``."""
    return len(WORD.findall(text))


def _part_name(match):
    number, summary, exercises, appendix, glossary, _part, letter = match.groups()
    line = match.string[match.start():match.string.find("\n", match.start()) % (len(match.string) + 1)]
    if "after class" in line.lower():
        return "appendix"
    if number:
        return number
    if letter:
        return letter
    return ("summary" if summary else "exercises" if exercises else "appendix" if appendix
            else "summary")


def parts(cells):
    """``{part: {"words", "cells", "predictions", "exercises"}}`` in lesson order.

    Parts are ``"introduction"``, the section numbers (``"1"``, ``"2"``...) or letters
    (``"A"``), ``"summary"`` (the summary and the words of the lesson), ``"exercises"`` and
    ``"appendix"`` (an appendix, or a section whose heading says "after class": reading
    for after the hour). Teacher-only cells and the plan itself are not counted.

    Args:
        cells: the source's cells, ``(cell_type, source, tags)`` (build_notebooks.parse).
    """
    found, current = {}, "introduction"

    def part(name):
        return found.setdefault(name, {"words": 0, "code": 0, "cells": 0, "predictions": 0,
                                        "exercises": 0})

    for kind, source, tags in cells:
        if "teacher" in tags or PLAN_MARK in source:
            continue
        if kind == "markdown":
            start = 0
            for match in SECTION.finditer(source):
                part(current)["words"] += words(source[start:match.start()])
                current, start = _part_name(match), match.start()
            part(current)["words"] += words(source[start:])
        elif "solution" in tags:
            part(current)["exercises" if current == "exercises" else "predictions"] += 1
            part(current)["code"] += words(_without_solution(source))
        elif "check" in tags or "reveal" in tags:
            continue
        elif current != "exercises":
            part(current)["cells"] += 1
            part(current)["code"] += words(source)
    return found


def _without_solution(source):
    return re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "", source, flags=re.DOTALL)


def minutes(counts):
    """The least number of minutes a part takes, by the count above (a float)."""
    return (counts["words"] / WORDS_PER_MINUTE + counts["code"] / CODE_WORDS_PER_MINUTE
            + RUN_MINUTES * counts["cells"]
            + PREDICT_MINUTES * counts["predictions"] + EXERCISE_MINUTES * counts["exercises"])


def planned(plan):
    """The plan's table: ``[(part label, minutes)]`` in order, without the ``in all`` row,
    and the ``in all`` figure (None when the table has none)."""
    rows = [(label, int(value)) for label, value in ROW.findall(plan)
            if not set(label) <= set("-| ")]
    total = next((value for label, value in rows if label.lower() == "in all"), None)
    return [(label, value) for label, value in rows if label.lower() != "in all"], total


def parts_of_row(label, known):
    """The parts a plan row stands for: ``"1. ..."`` -> ``["1"]``, ``"2 and 3. ..."`` ->
    ``["2", "3"]``, ``"4 to 6. ..."`` -> ``["4", "5", "6"]``, ``"A. ..."`` -> ``["A"]``,
    ``"introduction"``, ``"summary ..."``, ``"exercises 1 to 3"`` -> ``["exercises"]``.

    Args:
        label: the row's first column.
        known: the parts the lesson has (``parts``'s keys), to expand letter ranges.
    """
    lowered = label.lower()
    for name in ("introduction", "summary", "exercises", "appendix"):
        if lowered.startswith(name) or lowered.startswith("the " + name):
            return [name]
    part = re.match(r"Part ([A-Z])\b", label)
    if part:
        return [part.group(1)]
    match = re.match(r"(\w+)(?:\s+(to|and)\s+(\w+))?\.", label)
    if not match:
        return []
    first, word, last = match.groups()
    if not word:
        return [first]
    order = list(known)
    if first not in order or last not in order:
        return []
    if word == "and":
        return [first, last]
    return order[order.index(first):order.index(last) + 1]


def class_answers(cells, in_class):
    """How many answer cells the class exercises (numbers in ``in_class``) have."""
    count, current, in_exercises = 0, None, False
    for kind, source, tags in cells:
        if kind == "markdown":
            in_exercises = in_exercises or bool(re.search(r"^##\s+Exercises\b", source,
                                                          re.MULTILINE))
            label = re.match(r"\*\*Exercise (\d+)", source.strip())
            current = int(label.group(1)) if label else current
        elif in_exercises and "solution" in tags and current in in_class:
            count += 1
    return count


def table_row(number, cells, plan, in_class):
    """notebooks/README.md's row for one lesson: words read, code read, cells run,
    predictions, class exercise answers (and their planned minutes), counted minutes,
    planned minutes; all of the hour's parts, none of the exercises' or the appendix's
    text but the class exercises' answers."""
    counted = parts(cells)
    hour = [name for name in counted if name not in ("exercises", "appendix")]
    answers = class_answers(cells, in_class)
    rows, total = planned(plan)
    exercise_minutes = next(m for label, m in rows if label.lower().startswith("exercise"))
    floor = sum(minutes(counted[name]) for name in hour) + EXERCISE_MINUTES * answers
    return (f"| {number} | {sum(counted[n]['words'] for n in hour):,} "
            f"| {sum(counted[n]['code'] for n in hour):,} "
            f"| {sum(counted[n]['cells'] for n in hour)} "
            f"| {sum(counted[n]['predictions'] for n in hour)} "
            f"| {answers} ({exercise_minutes} min) | {floor:.0f} | {total} |")
