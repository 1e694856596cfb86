"""``check``: what counts as a correct prediction (none of these reveal the answer)."""

import numpy as np
import pytest

import autodiff as ad
from tapeschool.answers import check


@pytest.mark.parametrize("prediction, answer", [
    ("log", "Log"), (" float32", "float32"), (2.0, ad.constant(2.0)), (2.0, [[2.0]]),
    ([1.0, 2.0], ad.constant([1.0, 2.0])), (True, np.bool_(True)), (None, None),
    ((2, 3), (2, 3)), ([None, 1.0], [None, ad.constant(1.0)])])
def test_these_predictions_are_correct(prediction, answer, capsys):
    check(prediction, answer)
    assert capsys.readouterr().out.startswith("Correct!")


@pytest.mark.parametrize("prediction, answer", [
    (5.0, [5, 5, 5]), (1, True), (0, False), (True, 1), ("log", "Log1p"), (0.0, None),
    (None, 0.0), ([1.0], [1.0, 2.0]), (2.1, ad.constant(2.0)),
    # a word where the answer is numbers: once an array of comparisons, and check raised
    # ValueError instead of saying "Not yet" (issue 36, typing one answer everywhere)
    ("", np.array([1.0, 2.0])), ("none", ad.constant([0.0, 1.0])), ("2", 2.0)])
def test_these_predictions_are_not_yet(prediction, answer, capsys):
    check(prediction, answer)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and str(answer) not in out.replace("Not yet", "")


def test_under_nbgrader_a_wrong_prediction_fails_the_cell(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "1")
    with pytest.raises(AssertionError, match="Not yet"):
        check(1, True)
