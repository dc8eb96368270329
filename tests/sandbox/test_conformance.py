"""The conformance suite (tests/sandbox/conformance.py) against every backend: the fake and Docker."""

from __future__ import annotations

import pytest

from tests.sandbox.conformance import CHECKS


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_conformance(check, make, tmp_path):
    check(make, tmp_path)


@pytest.mark.fast
def test_the_suite_is_the_size_promised():
    assert 25 <= len(CHECKS) <= 35
