"""TapePlayer driven through its traitlets (no browser), and its static forms."""

import json
import re

import pytest

import autodiff as ad
import widgets

pytest.importorskip("anywidget")
from widgets.player.page.tape_player import TapePlayer  # noqa: E402


def _x_squared(persistent=False):
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape(persistent=persistent) as tape:
        y = x ** 2
    return tape, x, y


def _player(**kwargs):
    tape, x, y = _x_squared()
    return TapePlayer(tape, y, x, names={"y": y}, **kwargs)


# ---- traitlets and methods --------------------------------------------------
def test_synced_state_is_declared_as_traitlets():
    player = _player()
    synced = set(player.keys)
    assert {"model", "frame", "playing", "speed", "classroom"} <= synced
    assert player.model["frames"] == player.replay.frames
    assert (player.frame, player.playing, player.speed, player.classroom) == (0, False, 1.0, False)
    assert player.n_frames == 4
    assert player.current["title"] == "record 1: y = Pow(x, v0)"


def test_step_and_seek_move_the_frame_and_stop_at_the_ends():
    player = _player()
    assert player.step() == 1
    assert player.current["phase"] == "seed"
    assert player.step(10) == 3                       # clamped at the last frame
    assert player.current["phase"] == "result"
    assert player.step(-2) == 1
    assert player.seek(-1) == 3
    assert player.seek(0) == 0
    assert player.seek(99) == 3


def test_step_pauses_playback():
    player = _player()
    player.play()
    assert player.playing
    player.step()
    assert not player.playing and player.frame == 1


def test_play_at_the_last_frame_starts_again_and_pause_stops():
    player = _player(frame=-1)
    assert player.frame == 3
    player.play()
    assert player.playing and player.frame == 0
    player.pause()
    assert not player.playing and player.frame == 0


def test_setting_frame_directly_is_clamped():
    player = _player()
    player.frame = 42
    assert player.frame == 3
    player.frame = -5
    assert player.frame == 0


def test_state_sent_by_the_browser_is_accepted_and_validated():
    # The view syncs `frame` and `playing` back; set_state is how those messages land.
    player = _player()
    seen = []
    player.observe(lambda change: seen.append(change["new"]), names="frame")
    player.set_state({"frame": 2, "playing": True})
    assert player.frame == 2 and player.playing and seen == [2]
    player.set_state({"frame": 100})
    assert player.frame == 3
    player.set_state({"classroom": True, "speed": 4.0})
    assert player.classroom and player.speed == 4.0


def test_classroom_and_speed_options():
    player = _player(classroom=True, speed=2.0)
    assert player.classroom and player.speed == 2.0
    player.classroom = False
    assert not player.classroom
    with pytest.raises(Exception, match="speed must be positive"):
        player.speed = 0.0


def test_a_new_model_keeps_the_frame_in_range():
    player = _player(frame=-1)
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as tape:
        y = ad.sin(x)
    small = widgets.replay(tape, y, x)
    player.model = small.data
    assert player.frame <= player.n_frames - 1 and player.current == small.frames[player.frame]


def test_player_accepts_a_replay_and_nested_tapes():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as outer:
        with ad.GradientTape(persistent=True) as inner:
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    player = TapePlayer([outer, inner], dy_dx, x, tape_names=["outer", "inner"])
    assert player.model["tape_groups"] == ["0+1", "0"]
    player.seek(-1)
    assert player.current["gradients"][0]["value"]["data"] == 6.0
    same = TapePlayer(player.replay)
    assert same.model == player.model


def test_a_tape_without_target_and_sources_is_refused():
    tape, x, y = _x_squared()
    with pytest.raises(ValueError, match="target"):
        TapePlayer(tape)


def test_the_view_module_is_the_player_script():
    player = _player()
    assert "function render(" in player._esm
    assert player._esm.rstrip().endswith("export default { render };")
    assert ".tp-root" in player._css


def test_widgets_package_exposes_the_player_lazily():
    assert widgets.TapePlayer is TapePlayer
    assert callable(widgets.replay) and callable(widgets.export_html)
    assert "TapePlayer" in dir(widgets)


# ---- static forms ----------------------------------------------------------
def test_mimebundle_has_the_widget_view_and_a_static_html_form():
    player = _player()
    data, _ = player._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert html.startswith('<div class="tp-static"') and "<html" not in html
    inline = re.search(r'<script type="application/json" class="tp-data">(.*?)</script>', html, re.S)
    assert json.loads(inline.group(1)) == player.model


def test_to_html_and_save_html(tmp_path):
    player = _player(classroom=True)
    html = player.to_html()
    assert html.startswith("<!DOCTYPE html>") and not re.search(r"https?://", html)
    path = player.save_html(tmp_path / "p.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert '"classroom":true' in html

