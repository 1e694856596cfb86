"""A replay made for a page keeps its frames as rows (``data/frame_rows.py``).

``replay(..., words=False)`` returns a ``FrameRows``: each forward and
backward frame's dict is made when it is read. Read as a list, it must be
the frames a replay with words makes, without their titles and sentences,
and what ``grads_at`` knows at each frame must not need the frames made.
"""

import json

import pytest

from benchmarks.model_tapes import gru_tape
from benchmarks.transformer_tapes import transformer_tape
from widgets.player.data.frame_rows import FrameRows
from widgets.player.data.frames import grads_at
from widgets.player.replay import replay


def _without_words(frames):
    return [{k: v for k, v in f.items() if k not in ("title", "sentence")
             or f["phase"] in ("seed", "result")} for f in frames]


@pytest.fixture(scope="module", params=["gru", "transformer-nan-none"])
def replays(request):
    if request.param == "gru":
        tape, loss, sources = gru_tape(100)
    else:
        tape, loss, model, _ = transformer_tape(250, bugs=("nan", "none"))
        sources = model.trainable_variables
    words = replay(tape, loss, sources, names={"loss": loss})
    rows = replay(tape, loss, sources, names={"loss": loss}, geometry=False, words=False)
    return words, rows


def test_rows_read_as_the_frames_a_replay_with_words_makes(replays):
    words, rows = replays
    assert isinstance(rows.frames, FrameRows) and isinstance(words.frames, list)
    assert len(rows.frames) == len(words.frames)
    assert rows.frames == _without_words(words.frames)
    assert rows.frames[-1] is rows.frames[len(rows.frames) - 1]       # made once
    assert rows.frames[2:5] == _without_words(words.frames)[2:5]
    assert [f["index"] for f in rows.frames] == list(range(len(words.frames)))
    with pytest.raises(IndexError):
        rows.frames[len(rows.frames)]
    assert json.loads(rows.to_json())["frames"] == _without_words(words.frames)


def test_known_gradients_need_no_frames(replays):
    words, rows = replays
    n = len(words.frames)
    for k in (0, rows.frames.n_forward, rows.frames.n_forward + 1, n // 2 + n // 4, n - 2, n - 1, -1):
        assert grads_at(rows.data, k) == grads_at(words.data, k), k
    assert any(grads_at(rows.data, -1).values())


def test_known_gradients_of_some_nodes_only(replays):
    # what a long tape's overview picture asks: the gradients of the few nodes it draws
    words, rows = replays
    n = len(words.frames)
    tensors = [nd["id"] for nd in words.nodes if nd["type"] == "tensor"]
    only = set(tensors[::7]) | {"op3", "b2", "t1@op4"}
    for k in (0, rows.frames.n_forward, n // 2 + n // 4, n - 2, -1):
        full = grads_at(words.data, k)
        want = {node: value for node, value in full.items() if node in only}
        assert grads_at(rows.data, k, only) == grads_at(words.data, k, only) == want, k
    assert grads_at(rows.data, -1, only)
