"""Shared pytest setup: markers, warning policy, hypothesis profiles, fixtures.

- ``slow`` marks long tests (deselect with ``-m "not slow"``).
- NumPy's RuntimeWarnings (overflow, 0/0 in a forward at NaN or inf inputs)
  are expected when ops meet special values; they never fail a test, even
  when the project's pytest configuration turns other warnings into errors.
- Hypothesis runs the profile ``ci`` (derandomized, no example database):
  every run tries the same examples, so CI is reproducible.
- Tapes replace every value a VJP did not ask for with a placeholder, even
  tiny ones, so an op's ``saves`` declaration is really tested.
- Every test under ``tests/autodiff`` (the engine suite) runs once per
  backend: ``numpy``, ``strict`` and, where ``cupy.is_available()``,
  ``cupy`` (those runs carry the ``gpu`` marker). The strict backend
  (``autodiff/_strict.py``) refuses implicit conversions to NumPy the way
  CuPy does, so a stray ``np.`` call or a hidden copy to the host inside
  the engine fails here, on CI, with no GPU. ``AUTODIFF_TEST_BACKENDS=numpy``
  (comma-separated names) narrows a local run; under ``CI`` the strict
  backend always runs.
- A test that needs something outside the Python package (a browser, a
  JupyterHub, a proxy from npm) asks for it with the ``prerequisite``
  fixture: missing, it skips the test on a laptop and FAILS it under
  ``CI=true``, where ``.ci/run`` installs everything (a CI run that skipped
  its only real browser or hub would look green while proving nothing).
  Screenshots go to the ``artifacts_dir`` fixture's folder, ``$ARTIFACTS_DIR``
  (default ``artifacts/`` at the repository root), which CI keeps.
- ``chromium`` is the one headless Chromium of a test session (Debian's, driven
  by Playwright, ``tapeschool.course.browser.chromium``), shared by tests/browser and
  tests/hub: Playwright's sync API allows one running instance per thread, so a
  second session-long browser would fail every test that asked for it.
"""

import contextlib
import importlib.util
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is only needed by the property tests
    settings = None


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long-running test (deselect with -m 'not slow')")
    # Appended last, so this filter wins over an earlier "error" entry.
    config.addinivalue_line("filterwarnings", "ignore::RuntimeWarning")


if settings is not None:
    settings.register_profile("ci", derandomize=True, database=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("ci")  # the same examples on every run: CI stays reproducible


@pytest.fixture(autouse=True, scope="session")
def _placeholders_for_every_unsaved_value():
    """Tapes normally keep tiny values whole (cheaper than a placeholder). The
    tests turn that off, so a VJP rule that reads a value its op does not
    declare in ``saves`` fails on the small inputs the tests use."""
    from autodiff import tape

    previous, tape.KEEP_VALUES_UP_TO_BYTES = tape.KEEP_VALUES_UP_TO_BYTES, -1
    yield
    tape.KEEP_VALUES_UP_TO_BYTES = previous


# The test directories whose every test runs once per backend.
BACKEND_SUITES = ("autodiff", "widgets")


def _test_backends():
    from autodiff import backend

    names = backend.available_backends()
    wanted = os.environ.get("AUTODIFF_TEST_BACKENDS")
    if wanted:
        names = [n for n in names if n in wanted.split(",")]
    if os.environ.get("CI") and "strict" not in names:
        names.append("strict")   # CI proves the engine on a device-like backend, always
    return [pytest.param(n, marks=pytest.mark.gpu) if n == "cupy" else n for n in names]


def pytest_generate_tests(metafunc):
    if metafunc.definition.path.parent.name in BACKEND_SUITES:
        metafunc.parametrize("engine_backend", _test_backends(), indirect=True)


@pytest.fixture(autouse=True)
def engine_backend(request):
    """The backend the test runs on (None outside BACKEND_SUITES, where each test
    picks its own). A test that leaves another backend active fails."""
    from autodiff import backend

    name = getattr(request, "param", None)
    with contextlib.ExitStack() as stack:
        if name is not None:
            stack.enter_context(backend.use_backend(name))
        expected = backend.get_backend()
        yield name
        leaked = backend.get_backend()
    if leaked != expected:
        backend.set_backend("numpy")
        pytest.fail(f"the test left the backend {leaked!r} active (it ran on {expected!r})")


def on_ci():
    """True where CI says so (GitHub Actions and ``.ci/run`` set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _require(ok, what):
    """Skips (on a laptop) or fails (under CI=true) the test when ``ok`` is false."""
    if ok:
        return
    if on_ci():
        pytest.fail(f"test prerequisite missing under CI=true: {what}", pytrace=False)
    pytest.skip(f"{what} (required under CI=true)")


@pytest.fixture(scope="session")
def prerequisite():
    """``prerequisite(ok, what)``: skips the test when ``ok`` is false, or fails it under
    ``CI=true`` (conftest is not importable, so tests get it as a fixture)::

        prerequisite(shutil.which("npm") is not None, "npm is missing (apt-get install npm)")
    """
    return _require


@pytest.fixture(scope="session")
def chromium(prerequisite):
    """A headless Debian Chromium under Playwright, one for the whole test session."""
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    from tapeschool.course import browser

    prerequisite(os.access(browser.CHROMIUM, os.X_OK),
                 f"{browser.CHROMIUM} is missing (Debian: apt-get install -y chromium)")
    prerequisite(importlib.util.find_spec("playwright") is not None,
                 'the Python package \'playwright\' is not installed (pip install -e ".[test]")')
    with browser.chromium() as launched:
        yield launched


@pytest.fixture(scope="session")
def artifacts_dir():
    """Where screenshots go: ``$ARTIFACTS_DIR``, else ``artifacts/`` (kept by CI)."""
    path = Path(os.environ.get("ARTIFACTS_DIR") or Path(__file__).resolve().parent.parent
                / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def rng():
    """A NumPy generator with a fixed seed: the same inputs on every run."""
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _quiet_runtime_warnings():
    """NumPy RuntimeWarnings (0/0, overflow) are part of testing special values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.fixture(autouse=True)
def _no_tape_left_recording():
    """A test that leaves a tape recording would leak records into the next test."""
    from autodiff import tape

    before = list(tape.active)
    yield
    leaked = [t for t in tape.active if t not in before]
    for t in leaked:
        tape.active.remove(t)
    assert not leaked, f"the test left {len(leaked)} tape(s) recording"
