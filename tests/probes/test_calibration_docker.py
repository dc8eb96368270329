"""Calibration on Docker (issue 24): a build step that fails on any base image is the task's finding even after
the image map swapped its base; the static rules run and are reported when the run is inconclusive."""

from __future__ import annotations

import json

from .conftest import run_qa, write_env

PPA_STEP = "RUN add-apt-repository -y ppa:deadsnakes/ppa\n"


def test_a_copy_from_outside_the_context_after_a_swap_is_a_finding(tmp_path, qa_env, base_image):
    """ubuntu:22.04 is mapped to the local base, but the failing step copies ../data: no base could build it."""
    env = write_env(
        tmp_path / "task",
        {
            "environment/Dockerfile": "FROM ubuntu:22.04\nWORKDIR /app\nCOPY ../data/input.csv /app/input.csv\n",
            "data/input.csv": "a,b\n1,2\n",
        },
    )
    res = run_qa(["run", str(env), "--json", "--oracle-runs", "1"], qa_env)
    report = json.loads(res.stdout)
    assert res.returncode == 1 and report["inconclusive"] == [], res.stderr[-2000:]
    [f] = [f for f in report["findings"] if f["rule"] == "image-build-failed"]
    assert "outside the build context" in f["evidence"][0]


def test_static_findings_are_reported_when_the_run_is_inconclusive(tmp_path, qa_env, base_image):
    """The swapped base cannot run add-apt-repository (inconclusive, exit 3), and test.sh's unpinned pip install
    is still reported: the static rules read only the task's files."""
    env = write_env(
        tmp_path / "task",
        {
            "environment/Dockerfile": "FROM ubuntu:22.04\nWORKDIR /app\n" + PPA_STEP,
            "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
            "pip install pytest\npytest -q /tests && echo 1 > /logs/verifier/reward.txt\nexit 0\n",
        },
    )
    res = run_qa(["run", str(env), "--json", "--oracle-runs", "1"], qa_env)
    report = json.loads(res.stdout)
    assert res.returncode == 3 and report["verdict"] == "incomplete", res.stderr[-2000:]
    assert [o["outcome"] for o in report["inconclusive"]] == ["image-map-build-failed"]
    rules = {f["rule"]: f["severity"] for f in report["findings"]}
    assert rules.get("unpinned-python-dependency") == "warning", rules
    assert "oracle-fails" not in rules and "image-build-failed" not in rules  # inconclusive is never a finding
    cov = {c["probe"]: c for c in report["coverage"]}
    assert cov["static"]["status"] == "ran" and "file rules only" in cov["static"]["reason"]
