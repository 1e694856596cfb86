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
    unpack += re.search(r"\nfunction framesFromColumns\(.*?\n\}\n", source, re.S).group(0)
    start = source.index("// The title and sentence of each forward record")
    words = source[start:source.index("\nfunction whyNothing")]
    rest = source[source.index("\nfunction whyNothing"):]
    words += rest[:rest.index("\n}\n") + 3]
    return words + unpack + "\nwindow.pageWords = (m) => unpackModel(m).frames.map((f) => [f.title, f.sentence]);" + \
        "\nwindow.pageFrames = (m) => unpackModel(m).frames.map(({ title, sentence, ...f }) => f);"


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
    frames = model["frames"]
    if isinstance(frames, dict):          # packed as columns: forward and backward rows carry no words
        assert frames["forward"] + len(frames["backward"]) == len(python.frames) - 2
        assert "sentence" in frames["seed"] and "sentence" in frames["result"]
    else:
        left_out = sum("sentence" not in f for f in frames)
        assert left_out == len(frames) - 2          # all but the seed and the result
    with player_page(chromium) as (page, errors):
        page.set_content("<!DOCTYPE html><title>words</title>")
        page.add_script_tag(content=_page_code())
        words = page.evaluate("(m) => window.pageWords(m)", model)
        assert errors == []
    expected = [[f["title"], f["sentence"]] for f in python.frames]
    assert len(words) == len(expected)
    wrong = [(k, w, e) for k, (w, e) in enumerate(zip(words, expected)) if w != e]
    assert wrong == [], wrong[:3]


def _as_page(frame, shapes):
    """A Python frame as the page holds it after ``unpackModel``: no words, and each
    value its preview (with its shape where that is not its node's)."""
    def value(v, node):
        if v.__class__ is not dict:
            return v
        if v["preview"] is not None and v["shape"] == shapes[node]:
            return {"preview": v["preview"]}
        return {"preview": v["preview"], "shape": v["shape"]}
    out = {}
    for key, v in frame.items():
        if key in ("title", "sentence"):
            continue
        if key in ("cotangents", "contributions", "totals", "gradients", "outputs"):
            v = [{**c, "value": value(c["value"], c["node"])} for c in v]
        out[key] = v
    return out


def _planted(bugs):
    def make():
        tape, loss, model, _ = transformer_tape(1000, bugs=bugs)
        return tape, loss, model.trainable_variables, {"loss": loss}
    return make


@pytest.mark.parametrize("make", [_rnn, _planted(("nan", "none")), _planted(("exploding", "dead"))],
                         ids=["rnn", "transformer-nan-none", "transformer-exploding-dead"])
def test_the_page_rebuilds_every_frame_from_its_columns_as_python_wrote_it(chromium, make):
    """A long page sends no forward frame and one row per backward step
    (``html_export._frame_columns``); ``unpackModel`` must rebuild each frame as
    ``Frames`` wrote it: op, record, highlighted nodes and edges, every value."""
    tape, target, sources, names = make()
    python = replay(tape, target, sources, names=names, geometry=False, words=False)
    model = read_page_model(export_html(tape, target=target, sources=sources, names=names))
    assert isinstance(model["frames"], dict) and model["frames"]["forward"] > 400
    with player_page(chromium) as (page, errors):
        page.set_content("<!DOCTYPE html><title>frames</title>")
        page.add_script_tag(content=_page_code())
        frames = page.evaluate("(m) => window.pageFrames(m)", model)
        assert errors == []
    shapes = {n["id"]: n.get("shape") for n in python.data["nodes"]}
    expected = [_as_page(f, shapes) for f in python.frames]
    assert len(frames) == len(expected)
    assert sum(f["phase"] == "backward" and f["contributions"] != [] for f in frames) > 400
    wrong = [(k, f, e) for k, (f, e) in enumerate(zip(frames, expected)) if f != e]
    assert wrong == [], wrong[:1]
