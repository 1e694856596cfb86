"""Answers as plain data and check cells that record: the grader's half of the rules.

``to_plain`` runs in the sandbox on whatever the student left in a variable;
``from_plain`` runs in the teacher's process on whatever came back, and must
build nothing but plain values. ``recording_source`` rewrites a check cell so
that it records instead of judging.
"""

import json

import numpy as np
import pytest

from tapeschool.answer_data import NotAnAnswer, Recorder, from_plain, to_plain
from tapeschool.answers import verdict
from tapeschool.course.check_cells import RECORDER, recording_source


@pytest.mark.parametrize("value", [None, True, False, 3, -2.5, "Log", (2, 3), [1.0, None],
                                   {"w": 2.0, "b": [1, 2]}, (), [], float("inf")])
def test_plain_values_survive_the_round_trip(value):
    assert from_plain(json.loads(json.dumps(to_plain(value)))) == value


def test_arrays_keep_their_dtype_shape_and_nan():
    array = np.array([[1.5, np.nan], [np.inf, -2.0]], dtype=np.float32)
    back = from_plain(json.loads(json.dumps(to_plain(array))))
    assert back.dtype == np.float32 and back.shape == (2, 2)
    np.testing.assert_array_equal(back, array)
    assert from_plain(to_plain(np.int64(7))) == 7 and from_plain(to_plain(np.bool_(True))) is True


def test_a_tensor_becomes_its_array_and_a_dtype_its_name():
    import autodiff as ad

    assert from_plain(to_plain(ad.constant([1.0, 2.0]))).tolist() == [1.0, 2.0]
    assert from_plain(to_plain(ad.float32)) == "float32"
    assert from_plain(to_plain(ad.constant([[1.0]]).shape)) == (1, 1)


def test_the_blank_and_what_is_not_an_answer():
    assert from_plain(to_plain(...)) is Ellipsis
    assert to_plain({1, 2}) == {"unsupported": "set"}
    assert to_plain(lambda: 1) == {"unsupported": "function"}
    with pytest.raises(NotAnAnswer, match="not an answer"):
        from_plain(to_plain(object()))


@pytest.mark.parametrize("data", [
    {"array": [1, 2], "dtype": "float32", "shape": [3]},          # entries do not fit the shape
    {"array": [[1], [2, 3]], "dtype": "int64", "shape": [2, 1]},
    {"array": ["1"], "dtype": "float32", "shape": [1]},           # a string that is no number
    {"array": [1], "dtype": "object", "shape": [1]},              # no object arrays
    {"array": 0, "dtype": "float32", "shape": [10 ** 9]},         # too big
    {"__reduce__": "os.system"}, {"tuple": "abc"}, {"dict": [[1, 2]]},
    {"float": "1e999"}, {"blank": False}, 3 + 0j if False else {"unsupported": "x"}])
def test_from_plain_refuses_anything_else(data):
    with pytest.raises(NotAnAnswer):
        from_plain(data)


def test_from_plain_refuses_deep_nesting():
    deep = 1.0
    for _ in range(100):
        deep = [deep]
    with pytest.raises(NotAnAnswer, match="too deeply"):
        from_plain(deep)


def test_a_lying_object_is_read_as_its_plain_value():
    class Yes(float):
        def __eq__(self, other):
            return True

    plain = to_plain(Yes(-7.25))
    assert plain == -7.25 and type(plain) is float
    assert verdict(from_plain(plain), np.float32(13.0)) == (False, verdict(0.0, 13.0)[1])


def test_the_grader_and_check_agree_on_the_rules():
    # the same rules (verdict) in the notebook and in the grader: strings ignore case,
    # bools are not numbers, None only matches None, shapes must match
    for prediction, answer, correct in [("log", "Log", True), (1, True, False), (None, None, True),
                                        (None, 0.0, False), (5.0, [5.0, 5.0], False),
                                        ([5.0, 5.0], np.array([5, 5], np.float32), True)]:
        plain_p, plain_a = from_plain(to_plain(prediction)), from_plain(to_plain(answer))
        assert verdict(plain_p, plain_a)[0] is correct
        assert verdict(prediction, answer)[0] is correct


def test_a_check_cell_records_instead_of_judging(tmp_path):
    source = 'check(my_prediction, tape.gradient(y, x), hint="the product rule")\nprint("done")'
    text, calls = recording_source(source, "lesson01-exercise-1")
    assert calls == 1 and RECORDER in text and "check(" not in text and 'print("done")' in text.replace("'", '"')
    answers = tmp_path / "answers.jsonl"
    namespace = {RECORDER: Recorder(str(answers), key=True), "my_prediction": 6.0,
                 "tape": type("T", (), {"gradient": lambda self, y, x: 6.0})(), "x": 1, "y": 2,
                 "print": lambda *a: None}
    exec(text, namespace)
    [entry] = [json.loads(line) for line in answers.read_text().splitlines()]
    assert entry == {"grade_id": "lesson01-exercise-1", "index": 0, "kind": "check",
                     "prediction": 6.0, "answer": 6.0, "answer_text": "6.0",
                     "options": {"hint": "the product rule"}}


def test_a_students_recording_never_reads_the_answer_side(tmp_path):
    text, _ = recording_source("check(p, secret_answer())", "g")
    answers = tmp_path / "answers.jsonl"
    called = []
    exec(text, {RECORDER: Recorder(str(answers)), "p": NameError,
                "secret_answer": lambda: called.append(1)})
    assert called == [] and json.loads(answers.read_text())["prediction"] == {"unsupported": "type"}


def test_a_prediction_that_raises_is_recorded_as_not_an_answer(tmp_path):
    text, _ = recording_source("check(undefined_name, 1.0)", "g")
    answers = tmp_path / "answers.jsonl"
    exec(text, {RECORDER: Recorder(str(answers))})
    assert "NameError" in json.loads(answers.read_text())["prediction"]["unsupported"]


def test_check_gradients_records_the_ops_derivatives(tmp_path):
    import autodiff as ad

    text, calls = recording_source("check_gradients(OP, [np.array([0.5, -1.0])], order=2)", "g")
    answers = tmp_path / "answers.jsonl"
    exec(text, {RECORDER: Recorder(str(answers)), "np": np, "OP": lambda x: x * x * x, "ad": ad})
    levels = from_plain(json.loads(answers.read_text())["prediction"])
    np.testing.assert_allclose(levels[1][0], 3 * np.array([0.5, -1.0]) ** 2)
    np.testing.assert_allclose(levels[2][0], 6 * np.array([0.5, -1.0]))


def test_a_check_call_the_grader_cannot_read_is_refused():
    with pytest.raises(ValueError, match="written out"):
        recording_source("check(*pair)", "lesson01-exercise-1")
    with pytest.raises(ValueError, match="not Python"):
        recording_source("check(", "lesson01-exercise-1")
