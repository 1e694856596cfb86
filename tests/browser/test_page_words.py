"""A page made from a tape writes every record's and step's words itself, as Python does.

``export_html(tape, ...)`` leaves out the title and sentence of each forward
record and backward step (``replay(..., words=False)``); the page's
``static/words.js`` writes them when it unpacks the model. Here the model of
each page goes through the page's own code (``unpackModel`` of
``static/player.js`` and ``words.js``) in Chromium, and every frame's title
and sentence must equal, letter for letter, what
``widgets/player/data/sentences.py`` writes for the same tape: a small page
(plain JSON), nested tapes, a repeated input, constants, a stopped gradient,
integers, and long packed pages (values said by their node's shape).
"""

import re

import numpy as np
import pytest

import autodiff as ad
from benchmarks.model_tapes import rnn_tape
from benchmarks.transformer_tapes import transformer_tape
from widgets.player.page.html_export import export_html, player_js, read_page_model
from widgets.player.replay import replay

from player_pages import player_page

pytestmark = pytest.mark.browser


def _page_code():
    """words.js and unpackModel from the player's module, as plain functions."""
    source = player_js()
    unpack = re.search(r"\nfunction unpackModel\(data\) \{.*?\n\}\n", source, re.S).group(0)
    start = source.index("// The title and sentence of each forward record")
    words = source[start:source.index("\nfunction whyNothing")]
    rest = source[source.index("\nfunction whyNothing"):]
    words += rest[:rest.index("\n}\n") + 3]
    return words + unpack + "\nwindow.pageWords = (m) => unpackModel(m).frames.map((f) => [f.title, f.sentence]);"


def _squares():
    x = ad.Variable(3.0, name="x")
    c = ad.constant(5.0)
    d = ad.constant(7.0)
    with ad.GradientTape(persistent=True) as tape:
        s = ad.stop_gradient(x * x)
        y = x * c + s + ad.cast(ad.constant([1, 2]), ad.float32)[0] * 0.0
    return tape, y, [x, d], {"y": y, "c": c}


def _nested():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape(persistent=True) as outer:
        with ad.GradientTape(persistent=True) as inner:
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    return [outer, inner], dy_dx, x, {"y": y, "dy_dx": dy_dx}


def _matrices():
    rng = np.random.default_rng(0)
    w = ad.Variable(rng.normal(size=(3, 4)), name="w")
    b = ad.Variable(np.zeros(4), name="b")
    x = ad.constant(rng.normal(size=(5, 3)))
    with ad.GradientTape(persistent=True) as tape:
        h = ad.matmul(x, w) + b
        loss = ad.reduce_sum(h * h) + ad.reduce_sum(b)
    return tape, loss, [w, b], {"loss": loss}


def _rnn():
    tape, loss, sources = rnn_tape(450)
    return tape, loss, sources, {"loss": loss}


def _transformer():
    tape, loss, model, _ = transformer_tape(1000, bugs=("nan", "none"))
    return tape, loss, model.trainable_variables, {"loss": loss}


@pytest.mark.parametrize("make", [_squares, _nested, _matrices, _rnn, _transformer],
                         ids=["constants", "nested", "matrices", "rnn-packed", "transformer-packed"])
def test_the_page_writes_each_frames_title_and_sentence_as_python_does(chromium, make):
    tape, target, sources, names = make()
    tape_names = {"tape_names": ["outer", "inner"]} if isinstance(tape, list) else {}
    python = replay(tape, target, sources, names=names, **tape_names)
    model = read_page_model(export_html(tape, target=target, sources=sources, names=names,
                                        **tape_names))
    left_out = sum("sentence" not in f for f in model["frames"])
    assert left_out == len(model["frames"]) - 2          # all but the seed and the result
    with player_page(chromium) as (page, errors):
        page.set_content("<!DOCTYPE html><title>words</title>")
        page.add_script_tag(content=_page_code())
        words = page.evaluate("(m) => window.pageWords(m)", model)
        assert errors == []
    expected = [[f["title"], f["sentence"]] for f in python.frames]
    assert len(words) == len(expected)
    wrong = [(k, w, e) for k, (w, e) in enumerate(zip(words, expected)) if w != e]
    assert wrong == [], wrong[:3]
