"""From the opening view to each planted bug's cause, counting actions (issue 35, item 7).

Held-out style: a stack of transformer blocks (``benchmarks/transformer_tapes``,
real tensor sizes) at about 1,000 and 10,000 records, recorded inside
``record_history()`` as a practitioner would when a gradient goes missing,
with the bugs of the issue planted: a temperature typo (``/ 0.0``: NaN), an
MLP output through ``.numpy()`` (None), a kernel 100x too large (exploding)
and a bias of -100 before a ReLU (dead). Two pages: NaN + None, exploding +
dead. Exported and opened in Chromium at 1280x720.

For each bug the walk is what someone does at 2 a.m.: look at the health
panel; if the row naming the cause is not in view, click the summary's jump
for the bug's word ("NaN made", "None", "exploding", "dead") until it is.
The count of clicks is asserted (at most 2; the panel is cause-first, so it is
0 or 1) and the row must say the cause in words: the division by 0, the
``.numpy()`` line, the exploding weights with their numbers, the dead ReLU.
The closed box holding each cause wears its badge in the opening overview.
"""

import json
import warnings

import pytest

from benchmarks.transformer_tapes import transformer_tape
from widgets import export_html

from player_pages import open_player, player_page

pytestmark = pytest.mark.browser

WORDS = {"nan": "NaN made", "none": "None", "exploding": "exploding", "dead": "dead"}
CAUSE = {"nan": "divides by 0", "none": ".numpy() at transformer_tapes.py:",
         "exploding": "exploding weights: RMS ", "dead": "dead ReLU: 100% of its outputs are 0"}

# The row of `scope` whose reason names the cause, if it is drawn and its reason is in
# view in the panel (below the sticky summary, above the panel's bottom edge).
SEEN = """([scope, words]) => {
  const panel = document.querySelector('.tp-norms');
  const top = panel.querySelector('.tp-health-top').getBoundingClientRect().bottom;
  const bottom = panel.getBoundingClientRect().bottom;
  for (const row of panel.querySelectorAll('.tp-health-row')) {
    if (!row.querySelector('.tp-health-name').textContent.startsWith(scope)) continue;
    const why = [...row.querySelectorAll('.tp-health-why')].find((e) => e.textContent.includes(words));
    if (!why) continue;
    const r = why.getBoundingClientRect();
    if (r.top >= top - 1 && r.bottom <= bottom + 1 && r.height > 0) return why.textContent;
  }
  return null;
}"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The four pages: ``{(n, bugs): (path, where)}``."""
    folder = tmp_path_factory.mktemp("walk")
    made = {}
    for n in (1000, 10_000):
        for bugs in (("nan", "none"), ("exploding", "dead")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)        # the planted 1/0
                tape, loss, model, where, history = transformer_tape(n, bugs=bugs, history=True)
                path = folder / f"{'_'.join(bugs)}_{n}.html"
                export_html(tape, path, target=loss, sources=model.trainable_variables,
                            names={"loss": loss})
            made[n, bugs] = (path, where)
    return made


@pytest.mark.parametrize("n", [1000, 10_000])
@pytest.mark.parametrize("bugs", [("nan", "none"), ("exploding", "dead")], ids="+".join)
def test_each_planted_bug_is_named_within_two_actions_of_the_opening_view(
        chromium, pages, n, bugs, artifacts_dir):
    path, where = pages[n, bugs]
    walked = {}
    with player_page(chromium, 1280, 720, timeout=120_000) as (page, errors):
        for bug in bugs:
            open_player(page, path)                       # every walk starts from the opening view
            if bug == bugs[0]:
                badges = page.evaluate("""() => [...document.querySelectorAll('.tp-group-cover')]
                    .map((g) => [g.querySelector('title').textContent.split(':')[0],
                                 (g.querySelector('.tp-box-badge') || {}).textContent || ''])""")
            scope = where[bug].rsplit("/", 1)[0] + "/" if bug == "none" else where[bug]
            actions, seen = 0, page.evaluate(SEEN, [scope, CAUSE[bug]])
            while seen is None and actions < 5:
                page.locator(f'.tp-health-jump[data-kind="{WORDS[bug]}"]').click()
                actions += 1
                seen = page.evaluate(SEEN, [scope, CAUSE[bug]])
            walked[bug] = (actions, seen)
        page.screenshot(path=str(artifacts_dir / f"debug_walk_{'_'.join(bugs)}_{n}.png"))
        assert errors == []
    print(json.dumps({f"{n} {bug}": actions for bug, (actions, _) in walked.items()}))
    for bug, (actions, seen) in walked.items():
        assert seen is not None and actions <= 2, (bug, actions)
        assert CAUSE[bug] in seen
    # the opening overview: the closed box holding each cause wears its word (its
    # block at 1,000 records; at 10,000 the range of blocks it is in)
    for bug in bugs:
        block = int(where[bug].split("block_")[1].split("/")[0])
        holder = [badge for title, badge in badges if title == f"lm/block_{block}" or (
            "block_" in title and " … " in title and _within(title, block))]
        assert holder == [f"⚠ {WORDS[bug]}"], (bug, block, badges)


def _within(title, block):
    """Whether a range box's title (``lm · block_45 … block_90``) holds block ``block``."""
    ends = [int(part.split("block_")[1]) if "block_" in part else -1
            for part in title.split(" · ")[-1].split(" … ")]
    return ends[0] <= block <= (ends[1] if ends[1] >= 0 else 1 << 30)
