"""Shared setup for the course tests: nbgrader, a real JupyterHub, Debian's Chromium.

- The course package (``tapeschool/course/``, installed with tapeschool) is imported from this
  checkout.
- What the hub test needs is installed by ``.ci/run`` (the step "install the hub
  components"): ``jupyterhub`` and ``nbgrader`` from PyPI at the versions pinned in
  ``binder/requirements.txt``, configurable-http-proxy from npm into
  ``tests/hub/node_modules`` (``npm ci --prefix tests/hub``), Chromium from Debian.
  A missing one skips these tests on a laptop and FAILS them under ``CI=true``
  (the ``prerequisite`` fixture of tests/conftest.py, which also gives
  ``artifacts_dir``, the screenshots' folder).
- Chromium is the session's one browser (the ``chromium`` fixture of
  tests/conftest.py, ``tapeschool.course.browser``'s: Debian's, driven by Playwright);
  Playwright's own browser download is never used.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def nbgrader_installed(prerequisite):
    prerequisite(importlib.util.find_spec("nbgrader") is not None,
                 'the Python package \'nbgrader\' is not installed (pip install -e ".[hub]")')
