"""`qa lint` says what "nothing found" covers: N static rules checked, M that need `qa run` (or --image), both
counted from the rule registry (core/registry/lint_coverage.py), in text and --json (issue 45 item 6)."""

from __future__ import annotations

import json
import re

import pytest

from envqa.core.registry import FINDING_RULES, RULE_INFO
from envqa.core.registry.lint_coverage import LINT_PROBES, lint_coverage

from .conftest import EXAMPLES, run_qa

pytestmark = pytest.mark.fast


def test_coverage_is_counted_from_the_registry():
    plain, image, strict = lint_coverage(), lint_coverage(image=True), lint_coverage(strict=True)
    for cov in (plain, image, strict):
        assert sorted(cov.checked + cov.unchecked) == sorted(FINDING_RULES)  # every rule counted once
    assert all(RULE_INFO[r].probe in LINT_PROBES and not RULE_INFO[r].lint for r in plain.checked)
    assert "exploit-workspace-conftest" in plain.unchecked and "oracle-fails" in plain.unchecked
    assert {"plantable-test-runner", "verifier-reads-image-answer"} <= set(plain.checked)
    needs_image = {r for r in FINDING_RULES if RULE_INFO[r].lint == "image"}
    assert needs_image and needs_image <= set(plain.unchecked) and needs_image <= set(image.checked)
    assert len(image.checked) == len(plain.checked) + len(needs_image)
    assert "root-agent" in strict.checked and "root-agent" not in plain.checked


def test_qa_lint_says_what_nothing_found_covers(qa_env):
    cov = lint_coverage()
    text = run_qa(["lint", str(EXAMPLES / "clean-hash-in-tests")], qa_env)
    assert text.returncode == 0, text.stdout + text.stderr
    want = (
        f"nothing found by {len(cov.checked)} static rules; {len(cov.unchecked)} rules need `qa run` "
        "(or `--image`) and were not checked"
    )
    assert want in re.sub(r"\s+", " ", text.stdout)
    out = json.loads(run_qa(["lint", str(EXAMPLES / "clean-hash-in-tests"), "--json"], qa_env).stdout)
    assert out["ok"] is True and out["coverage"]["summary"] == want
    assert (out["coverage"]["static_rules"], out["coverage"]["unchecked_rules"]) == (
        len(cov.checked),
        len(cov.unchecked),
    )
    flawed = json.loads(run_qa(["lint", str(EXAMPLES / "conftest-plant"), "--json"], qa_env).stdout)
    assert flawed["coverage"]["summary"].startswith(f"checked by {len(cov.checked)} static rules;")
