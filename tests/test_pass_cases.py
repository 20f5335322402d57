"""Runs every IR-text pass case under tests/passes/ (see pass_harness.py)."""
from pathlib import Path

import pytest

from pass_harness import check_case, load_case

CASES = sorted((Path(__file__).parent / "passes").rglob("*.irt"))


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(Path(__file__).parent / "passes")) for p in CASES])
def test_pass_case(path):
    check_case(load_case(path))
