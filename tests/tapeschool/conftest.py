"""Shared setup for the grading tests: nbgrader, and a machine that can make sandboxes.

Grading runs each submission under bubblewrap as an unprivileged uid, which needs
root and Debian's ``bubblewrap`` (``.ci/run`` installs it). A missing one skips
these tests on a laptop and FAILS them under ``CI=true`` (the ``prerequisite``
fixture of tests/conftest.py).
"""

import importlib.util

import pytest


@pytest.fixture(scope="session")
def sandbox_machine(prerequisite):
    from tapeschool.course.sandbox import bwrap_available

    prerequisite(importlib.util.find_spec("nbgrader") is not None,
                 'nbgrader is not installed (pip install -e ".[teacher]")')
    why = bwrap_available()
    prerequisite(why is None, f"no grading sandbox here: {why}")
