"""Every lesson's answer key is made in the sandbox, and every solution passes its own check.

The key of a lesson is its teacher edition run once in the sandbox with its check
cells recording (``answer_key.py``). Making it proves three things per lesson:
the teacher edition runs to its end in the sandbox (its imports, plots and
players work there), each graded check's answer can be kept as plain data, and
each solution passes its check by the rules students are graded with. A lesson
whose key cannot be made cannot be graded: this test finds it before a class does.
"""

import nbformat
import pytest

from tapeschool.course.check_cells import grade_id_of, is_test_cell, recording_source
from tapeschool.course.layout import lessons

LESSONS = list(lessons())


@pytest.fixture(scope="module")
def course(tmp_path_factory, sandbox_machine):
    from tapeschool.course.layout import init_course

    tmp = tmp_path_factory.mktemp("keys")
    return init_course(tmp / "course", exchange=tmp / "exchange", assignments=LESSONS,
                       one_os_user=True)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", LESSONS)
def test_a_lessons_key_holds_every_graded_check_and_its_solutions_pass(course, assignment):
    from tapeschool.course.answer_key import key_path, load_or_make_key

    notebook = lessons()[assignment].stem
    key = load_or_make_key(course.root, assignment, notebook)   # raises if a solution fails
    source = nbformat.read(lessons()[assignment], as_version=4)
    expected = {}
    for cell in source.cells:
        if is_test_cell(cell):
            expected[grade_id_of(cell)] = recording_source(cell.source, grade_id_of(cell))[1]
    assert key["calls"] == expected
    assert len(key["checks"]) == sum(expected.values()) > 0
    assert oct(key_path(course.root, assignment, notebook).stat().st_mode & 0o777) == "0o600"
    again = load_or_make_key(course.root, assignment, notebook)   # kept: not made again
    assert again == key


# One answer typed into every blank: the values a student who guesses, or who copies the
# commonest answer of a lesson, would try. None only matches None, numbers match numbers
# (0 is 0.0), True is not 1 (tapeschool/answers.py).
REPEATED_ANSWERS = [None, 0.0, 1.0, -1.0, 2.0, True, False, float("inf"), float("nan"), "",
                    [], ()]


def _score(key, points, answer):
    """The points one answer in every blank earns, cell by cell as the grader gives them: a
    graded check cell scores its points only when every check in it is right."""
    from tapeschool.answer_data import from_plain
    from tapeschool.answers import verdict

    earned = {}
    for name, check in key["checks"].items():
        grade_id = name.split("#")[0]
        options = check["options"]
        right, _ = verdict(answer, from_plain(check["answer"]), options.get("hint"),
                           options.get("rtol", 1e-5), options.get("atol", 1e-6))
        earned[grade_id] = earned.get(grade_id, True) and right
    return [grade_id for grade_id, right in earned.items() if right and points[grade_id]]


@pytest.mark.slow
@pytest.mark.parametrize("assignment", LESSONS)
def test_no_lesson_is_passed_by_one_answer_in_every_blank(course, assignment):
    # Issue 36: lesson 1 once had None as three of its six answers, and None in every
    # blank scored 2 of 5. Now one repeated answer earns at most one exercise, and less
    # than 40% of a lesson's points.
    from tapeschool.course.answer_key import load_or_make_key

    notebook = lessons()[assignment].stem
    key = load_or_make_key(course.root, assignment, notebook)
    source = nbformat.read(lessons()[assignment], as_version=4)
    points = {grade_id_of(c): c.metadata["nbgrader"].get("points", 0)
              for c in source.cells if is_test_cell(c)}
    total = sum(points.values())
    assert total > 0
    for answer in REPEATED_ANSWERS:
        passed = _score(key, points, answer)
        exercises = {grade_id.rsplit("-", 1)[0] if grade_id.count("-") > 2 else grade_id
                     for grade_id in passed}
        earned = sum(points[grade_id] for grade_id in passed)
        assert len(exercises) <= 1 and earned < 0.4 * total, (
            f"{assignment}: {answer!r} in every blank passes {sorted(passed)}, "
            f"{earned} of {total} points")
