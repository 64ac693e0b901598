"""Fixtures for the descriptor tests."""

import pytest

from golden import DATA, GOLDEN_FILES, load


@pytest.fixture(scope="session")
def golden():
    """All captures: list of (header, records)."""
    if not GOLDEN_FILES:
        pytest.fail(f"no golden captures in {DATA}")
    return [load(path) for path in GOLDEN_FILES]
