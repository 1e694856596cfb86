"""The teacher's side of grading: verdicts from recorded answers, and feedback made safe.

No sandbox here: ``grade_cells`` and the output filter take what a sandbox might
hand back (right, wrong, missing, unreadable, forged) and must give the verdict
its answers deserve, never show the answer of a wrong one, and never crash on
garbage (a crash would make the submission "not graded" for nothing).
"""

import nbformat

from tapeschool.answer_data import to_plain
from tapeschool.course.grading import _safe, _show, grade_cells

KEY = {"calls": {"l01-exercise-1": 2},
       "checks": {"l01-exercise-1#0": {"kind": "check", "answer": to_plain(13.0),
                                       "answer_text": "ad.Tensor(13.0)",
                                       "options": {"hint": "add the two terms"}},
                  "l01-exercise-1#1": {"kind": "check", "answer": None, "answer_text": "None",
                                       "options": {}}},
       "markdown": []}


def _notebook():
    cell = nbformat.v4.new_code_cell("check(a, b)\ncheck(c, d)")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "l01-exercise-1",
                                 "points": 1, "locked": True, "schema_version": 3}
    return nbformat.v4.new_notebook(cells=[cell])


def _entry(index, prediction):
    return {"grade_id": "l01-exercise-1", "index": index, "prediction": prediction}


def test_every_check_of_a_cell_must_be_right():
    right = grade_cells(_notebook(), KEY, [_entry(0, 13.0), _entry(1, None)])
    assert right == {"l01-exercise-1": {"correct": True, "lines": [
        "Correct! The answer is: ad.Tensor(13.0)", "Correct! The answer is: None"]}}
    half = grade_cells(_notebook(), KEY, [_entry(0, 12.0), _entry(1, None)])["l01-exercise-1"]
    assert half["correct"] is False and half["lines"][0] == "Not yet: add the two terms."
    assert "13" not in half["lines"][0]


def test_missing_unreadable_and_forged_answers_score_nothing():
    for entries in ([], [_entry(0, {"unsupported": "set"}), _entry(1, None)],
                    [_entry(0, {"array": [13.0], "dtype": "object", "shape": [1]}), _entry(1, None)],
                    [_entry(0, {"__class__": "Yes"}), _entry(1, None)]):
        result = grade_cells(_notebook(), KEY, entries)["l01-exercise-1"]
        assert result["correct"] is False, entries
        assert all(line.startswith(("Not yet", "Correct")) for line in result["lines"])


def test_the_last_recorded_answer_of_a_check_counts():
    result = grade_cells(_notebook(), KEY, [_entry(0, 13.0), _entry(0, 1.0), _entry(1, None)])
    assert result["l01-exercise-1"]["correct"] is False


def test_feedback_keeps_text_and_pictures_and_survives_garbage():
    assert _safe("not an output") is None and _safe({"output_type": "nonsense"}) is None
    shown = _safe({"output_type": "execute_result",
                   "data": {"text/html": "<script>steal()</script>", "application/javascript": "x"}})
    assert shown["data"] == {"text/plain": "(an interactive output, left out of the feedback)"}
    cell = nbformat.v4.new_code_cell("print(1)")
    _show(cell, {"outputs": ["junk", {"output_type": "stream", "text": ["a", 1]}],
                 "execution_count": "seven"}, {}, "", KEY)
    assert [o["text"] for o in cell.outputs] == ["a1"] and cell.execution_count is None


def test_a_markdown_cell_with_html_the_lesson_lacks_is_shown_as_text():
    cell = nbformat.v4.new_markdown_cell("<img src=x onerror=alert(1)>")
    _show(cell, None, {}, "", KEY)
    assert cell.source.startswith("*(a cell of yours, shown as text)*") and "```" in cell.source
    plain = nbformat.v4.new_markdown_cell("x < 2 and *emphasis*")
    _show(plain, None, {}, "", KEY)
    assert plain.source == "x < 2 and *emphasis*"


def test_a_check_cell_not_graded_says_why():
    nb = _notebook()
    _show(nb.cells[0], None, None, "timeout: the notebook ran past its limit of 120 s", KEY)
    assert nb.cells[0].outputs[0]["ename"] == "NotGraded"
    assert "timeout" in nb.cells[0].outputs[0]["evalue"]
