"""Shared fixtures: the public cookbook data set (when present) and a private RAGKIT_HOME."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COOKBOOK = ROOT.parent / "shared" / "data" / "cookbook"


@pytest.fixture
def cookbook_dir() -> Path:
    if not (COOKBOOK / "codebase_chunks.json").is_file():
        pytest.skip(f"cookbook data set not present at {COOKBOOK}")
    return COOKBOOK
