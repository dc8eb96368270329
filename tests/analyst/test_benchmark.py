"""benchmarks/analyst.py on the shipped labelled set, against a scripted analyst (fake provider, real SDK).

The scripted analyst answers every case with its human label except two ambiguity cases, which it calls
capability: agreement 25/27, those two in the confusion matrix, the outcome-only baseline measured on the
same cases, exit 0 under a goal it meets and 1 under one it misses. No model at all is a usage error.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from qa_testkit import REPO

from . import scripts as s
from .conftest import GOOD_KEY

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

SET = REPO / "benchmarks" / "analyst_set"
WRONG = {"ambiguity-decimals", "ambiguity-descending"}


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "analyst.py"), str(SET), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_benchmark_agreement_confusion_and_goal(fake_provider, qa_env):
    cases = yaml.safe_load((SET / "cases.yaml").read_text())["cases"]
    branches = []
    for c in cases:
        first = c["steps"][0]["say"]
        label, subtype = (
            ("capability", "near-miss") if c["id"] in WRONG else (c["expected"]["label"], c["expected"]["subtype"])
        )
        branches.append(s.branch(first, s.answer(label, subtype, [(3, first[:40])])))
    srv = fake_provider({"models": {"analyst": {"branches": branches}}})
    env = dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)
    ok = _run(["--model", "anthropic/analyst", "--goal", "0.9"], env)
    assert ok.returncode == 0, ok.stderr[-3000:]
    out = json.loads(ok.stdout.strip().splitlines()[-1])
    assert out["cases"] == len(cases) == 27
    assert out["agreement"] == round(25 / 27, 4)
    assert out["confusion"]["ambiguity"] == {"ambiguity": 3, "capability": 2}
    assert out["confusion"]["shortcut"] == {"shortcut": 5}
    assert out["per_label"]["ambiguity"] == 0.6
    assert sorted(out["misses"]) == sorted(WRONG)
    assert out["verified_rate"] == 1.0 and out["errors"] == 0
    assert out["baseline_agreement"] == round(12 / 27, 4)  # pass->legitimate, fail->capability
    missed = _run(["--model", "anthropic/analyst", "--goal", "0.95"], env)
    assert missed.returncode == 1
    assert json.loads(missed.stdout.strip().splitlines()[-1])["goal_met"] is False
    none = _run([], dict(env, QA_HOME=str(qa_env["QA_HOME"])))
    assert none.returncode == 2 and "no analyst model" in none.stderr
