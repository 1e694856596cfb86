"""Shared setup for the real-browser tests: Debian's Chromium driven by Playwright.

- Chromium is the system package (``apt-get install chromium``, which
  ``.ci/run`` does); Playwright's own browser download is never used, so no
  ``playwright install``. ``TAPESCHOOL_CHROMIUM`` points at another binary.
- A missing browser, ``playwright`` or ``jupyterlab`` skips these tests on a
  laptop, but under ``CI=true`` it FAILS them: a CI run that silently skipped
  its only real-browser check would look green while proving nothing.
- Screenshots go to ``$ARTIFACTS_DIR`` (default ``artifacts/`` at the repo
  root), which CI keeps as build artifacts.
- ``player_demo.ipynb`` is the notebook the JupyterLab test opens; nbval
  (``--nbval`` in pyproject.toml) must not run it as a lesson: its widget
  output holds fresh model ids on every run.
"""

import importlib.util
import os
from pathlib import Path

import pytest

collect_ignore = ["player_demo.ipynb"]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TAPESCHOOL_CHROMIUM", "/usr/bin/chromium")
# Headless in a container as root: no sandbox, no GPU, and nothing that phones home.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]


def on_ci():
    """True where CI says so (GitHub Actions and ``.ci/run`` set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require(ok, what):
    """Skips (on a laptop) or fails (under CI=true) when ``ok`` is false."""
    if ok:
        return
    if on_ci():
        pytest.fail(f"browser test prerequisite missing under CI=true: {what}", pytrace=False)
    pytest.skip(f"{what} (required under CI=true)")


def require_module(name, install):
    require(importlib.util.find_spec(name) is not None,
            f"the Python package {name!r} is not installed ({install})")


@pytest.fixture(scope="session")
def prerequisite():
    """``prerequisite(ok, what)``: ``require`` for tests (conftest is not importable)."""
    return require


@pytest.fixture(scope="session")
def artifacts_dir():
    path = Path(os.environ.get("ARTIFACTS_DIR") or ROOT / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def chromium():
    """A headless Debian Chromium under Playwright (one per test session)."""
    require(os.access(CHROMIUM, os.X_OK),
            f"{CHROMIUM} is missing (Debian: apt-get install -y chromium)")
    require_module("playwright", 'pip install -e ".[test]"')
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
