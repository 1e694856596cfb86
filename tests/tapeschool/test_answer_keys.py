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
