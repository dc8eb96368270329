"""The conformance suite (tests/sandbox/conformance.py) against every backend: the fake and Docker."""

from __future__ import annotations

import pytest

from tests.sandbox.conformance import CHECKS, run_check


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_conformance(check, make, tmp_path):
    failure = run_check(check, make, tmp_path)
    assert failure is None, failure


@pytest.mark.fast
def test_the_suite_is_the_size_promised():
    assert 25 <= len(CHECKS) <= 35
