"""PyTorch and JAX for the comparison suite (tests/compare), imported once, on the CPU.

Lesson 16 shows PyTorch and JAX code next to the tape; tests/compare runs that
code against the real libraries. The ``torch`` and ``jax`` fixtures hand the
tests the two modules. Without them the suite is skipped on a developer's
machine, but under ``CI=true`` the fixtures fail instead: CI installs the
``compare`` extra (``python -m pip install -e ".[compare]"``, pinned to the
versions whose printouts the lesson shows) and must never pass by skipping.
JAX is told to use its CPU backend (no search for a GPU plugin, no warning
about one) and PyTorch gets one thread: the snippets are tiny, and one thread
keeps the two cores free for the rest of the suite.
"""

import importlib
import os

import pytest


def _imported(name, prerequisite):
    """The module ``name``; missing, the ``prerequisite`` fixture of tests/conftest.py
    skips the test locally and fails it under CI=true."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        prerequisite(False, f"{name} is not importable ({exc}); install the extra: "
                            "python -m pip install -e '.[compare]'")


@pytest.fixture(scope="session")
def torch(prerequisite):
    """The torch module (skipped locally when missing, a failure under CI=true)."""
    module = _imported("torch", prerequisite)
    module.set_num_threads(1)
    return module


@pytest.fixture(scope="session")
def jax(prerequisite):
    """The jax module on its CPU backend (skipped locally when missing, a failure under CI=true)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    return _imported("jax", prerequisite)
