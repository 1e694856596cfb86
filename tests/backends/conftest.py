"""Fixtures for the backend tests: each test states the backend it needs."""

import pytest

import autodiff as ad


@pytest.fixture
def strict():
    """The strict backend for the test's duration (the previous one comes back after)."""
    with ad.use_backend("strict") as xp:
        yield xp


@pytest.fixture
def cupy():
    """CuPy on a GPU: the only backend tests may skip, and only where no GPU is lent."""
    if "cupy" not in ad.backend.available_backends():
        pytest.skip("CuPy with a GPU is not available here (the strict backend stands in for it)")
    with ad.use_backend("cupy") as xp:
        yield xp
