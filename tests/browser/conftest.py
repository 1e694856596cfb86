"""Shared setup for the real-browser tests: Debian's Chromium driven by Playwright.

- Chromium is the system package (``apt-get install chromium``, which
  ``.ci/run`` does); Playwright's own browser download is never used, so no
  ``playwright install``. ``TAPESCHOOL_CHROMIUM`` points at another binary.
- A missing browser, ``playwright`` or ``jupyterlab`` skips these tests on a
  laptop, but under ``CI=true`` it FAILS them: a CI run that silently skipped
  its only real-browser check would look green while proving nothing (the
  ``prerequisite`` fixture of tests/conftest.py).
- Screenshots go to the ``artifacts_dir`` fixture's folder (tests/conftest.py):
  ``$ARTIFACTS_DIR``, default ``artifacts/`` at the repo root, which CI keeps.
- ``player_demo.ipynb`` is the notebook the JupyterLab test opens; nbval
  (``--nbval`` in pyproject.toml) must not run it as a lesson: its widget
  output holds fresh model ids on every run.
"""

import importlib.util
import os

import pytest

collect_ignore = ["player_demo.ipynb"]

CHROMIUM = os.environ.get("TAPESCHOOL_CHROMIUM", "/usr/bin/chromium")
# Headless in a container as root: no sandbox, no GPU, and nothing that phones home.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def chromium(prerequisite):
    """A headless Debian Chromium under Playwright (one per test session)."""
    prerequisite(os.access(CHROMIUM, os.X_OK),
                 f"{CHROMIUM} is missing (Debian: apt-get install -y chromium)")
    prerequisite(importlib.util.find_spec("playwright") is not None,
                 'the Python package \'playwright\' is not installed (pip install -e ".[test]")')
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
