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
- A hub whose servers run as other OS accounts (``LocalHub(deployment="pods")`` or
  ``"os-users"``) also needs root and Debian's bubblewrap and setpriv; one whose
  exchange is ngshare, ``ngshare`` and ``ngshare-exchange`` from PyPI (the ``[hub]``
  extra): the ``hub_prerequisites`` fixture checks them, a failure under ``CI=true``.
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


@pytest.fixture(scope="session")
def hub_prerequisites(prerequisite, nbgrader_installed):
    """``hub_prerequisites(deployment, ngshare=False)``: what a ``LocalHub`` of that deployment
    needs, each missing one a skip on a laptop and a failure under ``CI=true``."""
    import os

    from tapeschool.course.hubspawners import BWRAP, SETPRIV
    from tapeschool.course.localhub import find_proxy

    def check(deployment, ngshare=False):
        for package in ["jupyterhub"] + (["ngshare", "ngshare_exchange"] if ngshare else []):
            prerequisite(importlib.util.find_spec(package) is not None,
                         f"the Python package {package!r} is not installed "
                         f'(pip install -e ".[hub]")')
        prerequisite(find_proxy() is not None,
                     "configurable-http-proxy is not installed (npm ci --prefix tests/hub)")
        if deployment != "shared":
            prerequisite(os.geteuid() == 0, f"a {deployment!r} hub starts servers as other OS "
                                            f"accounts: run as root (CI does)")
            prerequisite(os.access(BWRAP, os.X_OK) and os.access(SETPRIV, os.X_OK),
                         "bubblewrap or setpriv is missing (apt-get install bubblewrap util-linux)")
    return check
