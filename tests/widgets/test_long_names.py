"""A variable with a huge name (a saved model may carry any) cannot bloat or stall a player page.

Names longer than ``NAME_LIMIT`` are shown as their first characters and
their length; the tape's printout is left out of the page past
``TEXT_CHARS``; and the sentences that put names into rules are built in one
pass over the words (a 100,000-character name used to take 207 s there).
"""

import autodiff as ad
from widgets.player.data.sentences import rule_text
from widgets.player.page.html_export import export_html
from widgets.tape_names import NAME_LIMIT, tape_names


def _page(name):
    x = ad.Variable(3.0, name=name)
    with ad.GradientTape() as tape:
        y = ad.sin(x) * x
    return tape, export_html(tape, target=y, sources=[x])


def test_a_long_name_is_shown_by_its_start_and_its_length():
    tape, _ = _page("w" * 100_000)
    (shown,) = [n for n in tape_names(tape).values() if n.startswith("w")]
    assert len(shown) == NAME_LIMIT
    assert shown.endswith("…(100,000 chars)")


def test_a_megabyte_name_makes_a_page_no_bigger_than_a_short_one():
    _, short = _page("w" * 100)
    _, huge = _page("w" * 1_000_000)
    assert len(huge) < len(short) + 10_000   # the name appears, shortened, a few dozen times
    assert "w" * (NAME_LIMIT + 1) not in huge


def test_rules_with_a_long_name_read_as_with_a_short_one():
    name = "q" * 200_000
    assert rule_text("d(x y) = y dx + x dy", ["v0", name]) == f"d(v0·{name}) = {name}·dv0 + v0·d{name}"
    assert rule_text("d/dx sin x = cos x", [name]) == f"d/d{name} sin {name} = cos {name}"
