from __future__ import annotations

import shutil

import pytest

from tests.conftest import TESTSETS


@pytest.fixture
def testset(tmp_path):
    """A copy of the shop-es test set and its chunks (8 cases) in a private folder."""
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"
