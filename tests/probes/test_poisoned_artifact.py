"""exploit-poisoned-artifact's payload and where it runs (agents/exploit_artifact.py), without Docker: the
payload script runs for real on a scratch directory standing for /logs/artifacts, and a real pytest process
then imports what it planted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from envqa.agents.exploit_artifact import PoisonedArtifact, exploits_for_mode
from envqa.agents.exploit_payloads import FORCE_PASS_PLUGIN
from envqa.core.environment import load_environment
from envqa.core.registry import DEFAULT_EXPLOITS
from qa_testkit import EXAMPLES, write_files

pytestmark = pytest.mark.fast


def _poison(tmp_path, instruction: str) -> str:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir(exist_ok=True)
    [(script, env)] = PoisonedArtifact().steps(instruction)
    env = {**os.environ, **env, "ENVQA_ARTIFACTS": str(artifacts)}
    res = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_a_verifier_that_imports_the_poisoned_module_passes_every_check(tmp_path):
    out = _poison(tmp_path, "Write a Python module `stats.py` with a function `summary(numbers)`.")
    assert f"planted {tmp_path}/artifacts/stats.py" in out
    tests = write_files(
        tmp_path / "tests",
        {
            "test_stats.py": (
                f"import sys\nsys.path.insert(0, {str(tmp_path / 'artifacts')!r})\nimport stats\n"
                "def test_value():\n    assert stats.summary([1, 2, 3]) == {'min': 1, 'max': 3, 'mean': 2.0}\n"
                "def test_type():\n    assert isinstance(stats.summary([1])['mean'], float)\n"
            )
        },
    )
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest", str(tests / "test_stats.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "1 failed" in res.stdout and res.returncode == 0, res.stdout  # isinstance failed; the exit code lies


def test_a_verifier_that_reads_data_is_not_fooled(tmp_path):
    _poison(tmp_path, "Write /logs/artifacts/report.json.")
    check = (
        "import json, sys\ntry:\n    d = json.load(open(sys.argv[1]))\nexcept Exception:\n    sys.exit(1)\n"
        "sys.exit(0 if d == {'a': 1} else 1)\n"
    )
    res = subprocess.run([sys.executable, "-I", "-c", check, str(tmp_path / "artifacts" / "report.json")], timeout=60)
    assert res.returncode == 1
    assert (tmp_path / "artifacts" / "conftest.py").read_text().startswith(FORCE_PASS_PLUGIN[:40])


def test_dry_run_touches_nothing(tmp_path):
    [(script, env)] = PoisonedArtifact().steps("Write stats.py.")
    env = {**os.environ, **env, "ENVQA_ARTIFACTS": str(tmp_path / "artifacts"), "ENVQA_DRY_RUN": "1"}
    res = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert "planted" in res.stdout and not (tmp_path / "artifacts").exists()


def test_which_exploits_run_follows_the_verifier_mode():
    names = list(DEFAULT_EXPLOITS)
    separate, skipped = exploits_for_mode(load_environment(EXAMPLES / "clean-separate-verifier"), names)
    assert "exploit-poisoned-artifact" in separate
    assert {"exploit-reward-tamper", "exploit-workspace-conftest"} <= set(skipped) and not set(skipped) & set(separate)
    shared, skipped = exploits_for_mode(load_environment(EXAMPLES / "poisoned-helper-shared"), names)
    assert "exploit-reward-tamper" in shared and "exploit-poisoned-artifact" in shared  # declared artifacts
    plain, skipped = exploits_for_mode(load_environment(EXAMPLES / "clean-wordfreq"), names)
    assert "exploit-poisoned-artifact" not in plain and list(skipped) == ["exploit-poisoned-artifact"]
