"""The debugging examples' exported pages in a real browser (issue 12's "done when").

examples/rnn_vanishing_gradients.py plants a NaN (step 150's input) and a None
(the initial state h0, cut off by a ``.numpy()`` round trip at step 99) in a
1,001-record RNN tape; examples/broken_model.py has a NaN from ``log(0)`` and a
None from a NumPy line. Offline, each page opens fitted within seconds, reads as
scope groups, and each button leads to its bug in one click.
"""

import importlib.util
import time
from pathlib import Path

import pytest

from autodiff import tape as tape_module

from player_pages import player_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _example(name):
    path = ROOT / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def page(chromium):
    with player_page(chromium, 1100, 800, timeout=15_000) as opened:
        yield opened


def test_planted_nan_and_none_in_the_1001_record_rnn_page(page, tmp_path, artifacts_dir):
    page, errors = page
    found = _example("rnn_vanishing_gradients").find_planted_bugs(tmp_path / "planted.html")
    assert 100_000 < found["bytes"] < 1_001 * 1_000                # under 1 kB a record
    start = time.perf_counter()
    page.goto(Path(found["path"]).as_uri())
    root = page.locator(".tp-root[data-frame]")
    root.wait_for()
    assert time.perf_counter() - start < 10.0                      # within seconds
    # rnn holding 200 step scopes (in 5 ranges of 40), and loss: 207 boxes, rnn open
    assert root.get_attribute("data-groups") == "207"
    assert root.get_attribute("data-collapsed") == "206"
    fitted = page.evaluate("""() => {
      const [x, y, w, h] = document.querySelector('.tp-stage > .tp-svg')
        .getAttribute('viewBox').split(' ').map(Number);
      return {x, w, lay: document.querySelector('.tp-root').tp.tree.size()[0]};
    }""")
    assert fitted["w"] >= fitted["lay"] - 1 and fitted["x"] <= 0.5  # the whole tape in view

    page.click(".tp-nan")                                          # one click to the NaN
    assert int(root.get_attribute("data-frame")) == found["nan_frame"]
    assert "MatMul" in page.locator(".tp-title").inner_text()
    assert "first NaN/Inf" in page.locator(".tp-debug").inner_text()
    assert root.get_attribute("data-collapsed") == "204"           # step 150's boxes opened
    page.screenshot(path=str(artifacts_dir / "example_rnn_planted_nan.png"))

    page.click(".tp-lost")                                         # one click to the None
    # the step ran inside record_history(): the page names the line that left the library
    assert "v599 was turned into a NumPy or Python value (.numpy() at rnn_vanishing_gradients.py:" \
        in page.locator(".tp-debug").inner_text()
    assert root.get_attribute("data-found") == found["lost_node_id"]
    assert "tp-found" in page.locator(
        f'.tp-node[data-id="{found["lost_node_id"]}"]').get_attribute("class")
    page.screenshot(path=str(artifacts_dir / "example_rnn_planted_none.png"))
    assert errors == []


def test_broken_model_page_leads_to_the_log_and_the_numpy_line(page, tmp_path, monkeypatch):
    page, errors = page
    # as outside the tests: tapes keep small values (here log(p), 64x2 float32) whole
    monkeypatch.setattr(tape_module, "KEEP_VALUES_UP_TO_BYTES", 512)
    result = _example("broken_model").main(tmp_path / "broken.html")
    page.goto(Path(result["path"]).as_uri())
    root = page.locator(".tp-root[data-frame]")
    root.wait_for()
    # mlp holding hidden1, hidden2 and logits, then loss: 5 boxes, mlp open at first
    assert root.get_attribute("data-groups") == "5"
    assert page.evaluate("""() => document.querySelector('.tp-root').tp.tree.boxes.slice(1)
        .map((b) => b.path).sort().join(' ')""") == "loss mlp mlp/hidden1 mlp/hidden2 mlp/logits"
    assert root.get_attribute("data-collapsed") == "4"
    page.click(".tp-nan")
    assert int(root.get_attribute("data-frame")) == result["nan_forward"]["frame"]
    assert "Log(" in page.locator(".tp-title").inner_text()
    page.click(".tp-lost")
    assert "v3 was turned into a NumPy or Python value (.numpy() at broken_model.py:" \
        in page.locator(".tp-debug").inner_text()                      # hidden1's relu
    assert root.get_attribute("data-found")
    assert errors == []
