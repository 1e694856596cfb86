"""Lesson 13 on TensorFlow: its code with ``import autodiff as ad`` changed to
``import tensorflow as ad`` runs cell by cell, and every prediction check passes there too.

The checks run as nbgrader runs them (``NBGRADER_EXECUTION`` set), so a check whose answer
differs on TensorFlow fails loudly instead of printing "Not yet". Lesson 14 is not here: it
is about this toolkit's tape player and debugging widgets, which have no TensorFlow
counterpart (its model and training code are lesson 13's).
"""

import pathlib
import re

import matplotlib
import pytest

LESSONS = pathlib.Path(__file__).parents[2] / "notebooks" / "src"


def _code_cells(path):
    """The code cells of a percent-format lesson, without IPython magics and without the
    widgets except ``check``."""
    parts = re.split(r"^# %%(.*)$", path.read_text(), flags=re.M)
    for header, body in zip(parts[1::2], parts[2::2]):
        if "[markdown]" in header:
            continue
        lines = [line for line in body.splitlines() if not line.startswith("%")
                 and ("widgets" not in line or "import check" in line)]
        yield header.strip(), "\n".join(lines)


@pytest.mark.parametrize("lesson", ["13_training_a_network.py"])
def test_lesson_runs_on_tensorflow_and_its_checks_pass(tf, lesson, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.setenv("NBGRADER_EXECUTION", "1")     # a wrong answer raises
    namespace = {}
    cells = list(_code_cells(LESSONS / lesson))
    assert sum("check(" in body for _, body in cells) >= 5
    for k, (header, body) in enumerate(cells):
        assert "import autodiff as ad" not in body or body.count("import autodiff as ad") == 1
        source = body.replace("import autodiff as ad", "import tensorflow as ad")
        try:
            exec(compile(source, f"{lesson} cell {k} {header}", "exec"), namespace)  # noqa: S102
        except Exception as err:  # noqa: BLE001  (name the cell that failed)
            pytest.fail(f"{lesson} cell {k} ({header or 'code'}) fails on TensorFlow: "
                        f"{type(err).__name__}: {err}")
    assert namespace["ad"].__name__ == "tensorflow"
    assert "Not yet" not in capsys.readouterr().out
