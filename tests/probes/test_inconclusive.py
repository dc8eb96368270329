"""Could-not-judge outcomes: exit 3 with a message that says what would make the run conclusive, never a
finding against the task; and `--json` on bad input: one JSON object with `error` on stdout, exit 2."""

from __future__ import annotations

import json

import pytest

from .conftest import EXAMPLES, run_qa, write_env


@pytest.fixture
def offline_qa_toml(tmp_path):
    """Tests cut the verifier's network explicitly (`[sandbox] verifier_network = "none"`)."""
    path = tmp_path / "qa.toml"
    path.write_text('[sandbox]\nverifier_network = "none"\n')
    return path


def test_verifier_that_downloads_with_the_network_cut_is_inconclusive(qa_env, offline_qa_toml, base_image):
    res = run_qa(
        ["run", str(EXAMPLES / "offline-verifier"), "--json", "-c", str(offline_qa_toml), "--oracle-runs", "1"], qa_env
    )
    assert res.returncode == 3, res.stderr[-3000:]
    report = json.loads(res.stdout)
    assert report["verdict"] == "incomplete"
    [outcome] = report["inconclusive"]
    assert outcome["outcome"] == "verifier-needs-network"
    assert "https://astral.sh/uv/0.7.13/install.sh" in outcome["urls"]
    assert "verifier_network" in outcome["remedy"]
    assert any(
        line.startswith("verifier-needs-network: ") and "verifier_network" in line for line in report["incomplete"]
    )
    # Never a finding against the task: the oracle's failure and the missing reward are withdrawn.
    assert [f["rule"] for f in report["findings"] if f["severity"] != "info"] == []
    cov = {c["probe"]: c for c in report["coverage"]}
    assert cov["validate"]["status"] == "inconclusive" and cov["exploits"]["status"] == "skipped"
    # The verifier failed fast: no network retries (pip/uv fail at once with the network cut).
    oracle = next(t for t in report["trials"] if t["agent"] == "oracle")
    assert oracle["seconds"] < 30


def test_a_task_that_is_offline_itself_keeps_its_finding(tmp_path, qa_env, offline_qa_toml, base_image):
    """allow_internet = false: Harbor cuts the verifier too, so a downloading verifier IS the task's defect."""
    env = write_env(
        tmp_path / "task",
        {
            "tests/test.sh": (
                "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
                "curl -fsS -o /tmp/check.sh https://example.invalid/check.sh && sh /tmp/check.sh "
                "&& echo 1 > /logs/verifier/reward.txt\nexit 0\n"
            )
        },
    )
    res = run_qa(["run", str(env), "--json", "-c", str(offline_qa_toml), "--oracle-runs", "1"], qa_env)
    report = json.loads(res.stdout)
    assert res.returncode == 1, report.get("incomplete")
    assert report["inconclusive"] == []
    rules = {f["rule"]: f["severity"] for f in report["findings"]}
    assert rules["oracle-fails"] == "critical" and rules["verifier-installs-at-runtime"] == "warning"


def test_build_failure_after_an_image_map_swap_is_inconclusive(example_reports):
    # the build fails before any trial, so the detection table's run of this example (oracle runs, no revision, the
    # fake internet) is the same run this test would make: read it instead of building again
    run = example_reports("image-map-build-failed")
    assert run["code"] == 3, run["stderr"]
    report = run["report"]
    [outcome] = report["inconclusive"]
    assert outcome["outcome"] == "image-map-build-failed"
    assert outcome["images"] == [{"original": "ubuntu:22.04", "substitute": "envqa-base:bookworm"}]
    assert outcome["step"] == "RUN add-apt-repository -y ppa:deadsnakes/ppa"
    assert "image_map_enabled" in outcome["remedy"]
    assert report["findings"] == [] and report["verdict"] == "incomplete"


def test_build_failure_without_a_swap_stays_a_finding(tmp_path, qa_env, base_image):
    env = write_env(tmp_path / "task", {"environment/Dockerfile": "FROM envqa-base:bookworm\nRUN exit 7\n"})
    res = run_qa(["run", str(env), "--json", "--oracle-runs", "1"], qa_env)
    report = json.loads(res.stdout)
    assert res.returncode == 1 and report["inconclusive"] == []
    assert [f["rule"] for f in report["findings"]] == ["image-build-failed"]


@pytest.mark.fast
@pytest.mark.parametrize("command", ["run", "lint"])
def test_json_on_a_malformed_task_is_one_object_with_error(tmp_path, qa_env, command):
    env = write_env(tmp_path / "task", task_toml='version = "1.0"\n[agent]\ntimeout_sec = "soon"\n')
    res = run_qa([command, str(env), "--json"], qa_env)
    assert res.returncode == 2
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1, res.stdout
    out = json.loads(lines[0])
    assert "task.toml" in out["error"] and "agent.timeout_sec" in out["error"] and out["exit_code"] == 2
    assert "task.toml" in res.stderr  # the message for a person stays on stderr


@pytest.mark.fast
def test_json_on_a_missing_directory_is_one_object_with_error(tmp_path, qa_env):
    res = run_qa(["run", str(tmp_path / "nope"), "--json"], qa_env)
    assert res.returncode == 2
    assert str(tmp_path / "nope") in json.loads(res.stdout)["error"]
