import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REAL = SHARED / "real"


@pytest.fixture
def real_dir():
    """../shared/real/ (real footage, never committed); tests using it skip when absent."""
    if not REAL.is_dir():
        pytest.skip("../shared/real/ is not present")
    return REAL
