"""Shared pytest setup: markers, warning policy, hypothesis profiles, fixtures.

- ``slow`` marks long tests (deselect with ``-m "not slow"``).
- NumPy's RuntimeWarnings (overflow, 0/0 in a forward at NaN or inf inputs)
  are expected when ops meet special values; they never fail a test, even
  when the project's pytest configuration turns other warnings into errors.
- Hypothesis runs the profile ``ci`` (derandomized, no example database):
  every run tries the same examples, so CI is reproducible.
- Tapes replace every value a VJP did not ask for with a placeholder, even
  tiny ones, so an op's ``saves`` declaration is really tested.
"""

import warnings

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
