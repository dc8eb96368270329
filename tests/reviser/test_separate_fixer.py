"""The separate-verifier fixer (agents/fixers/separate.py): a shared-mode task with in-container tampering becomes
a separate-mode one (task.toml keys, tests/Dockerfile, artifacts), test.sh untouched where possible; the reviser
proposes it as an alternative to the in-place fixers. File tests are fast; the end-to-end one needs Docker."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from envqa.agents.fixers.base import FixContext
from envqa.agents.fixers.separate import RULES, artifacts, choose_fix, separate_after_gate, separate_fix
from envqa.core.environment import load_environment
from envqa.core.models import Finding, Proposal
from envqa.core.registry import get_rule
from envqa.core.task_config import VerifierEnvironmentMode
from envqa.probes.static.findings import static_findings
from envqa.probes.static.lint import lint_structure
from qa_testkit import EXAMPLES
from tests.reviser.conftest import write_task

fast = pytest.mark.fast


def finding(rule: str, **kw) -> Finding:
    r = get_rule(rule)
    return Finding(rule=rule, severity=r.severity, label=r.label, message=kw.pop("message", rule), **kw)


def converted(tmp_path: Path, example: str, rules: list[str], **kw):
    fix = separate_fix(EXAMPLES / example, [finding(r, **kw) for r in rules], workdir=tmp_path)
    assert fix is not None and fix.fixed_dir is not None, fix
    return fix, fix.fixed_dir


@fast
def test_conftest_plant_becomes_separate_mode_with_its_output_as_the_only_artifact(tmp_path):
    fix, root = converted(tmp_path, "conftest-plant", ["exploit-workspace-conftest"])
    env = load_environment(root, lint=True)
    raw = tomllib.loads((root / "task.toml").read_text())
    assert raw["verifier"]["environment_mode"] == "separate" and raw["verifier"]["timeout_sec"] == 60.0
    assert env.config.verifier_mode() == VerifierEnvironmentMode.SEPARATE
    assert raw["artifacts"] == ["/app/roman.py"]  # the file, never /app: a planted conftest.py would travel
    assert (root / "tests/test.sh").read_bytes() == (EXAMPLES / "conftest-plant/tests/test.sh").read_bytes()
    docker = (root / "tests/Dockerfile").read_text().splitlines()
    body = [ln for ln in docker if ln and not ln.startswith("#")]
    assert body == ["FROM debian:bookworm", "WORKDIR /app", "COPY . /tests/"], docker
    assert fix.addressed == ["exploit-workspace-conftest"] and "test.sh is unchanged" in fix.rationale[0]
    assert "exploit-workspace-conftest fails" in fix.expected and "oracle still passes" in fix.expected
    assert not {f.rule for f in static_findings(env) + lint_structure(env)}  # the gate's lint check stays silent


@fast
def test_the_in_place_families_fix_what_separation_does_not(tmp_path):
    """reward-tamper: the fresh container closes the tamper; the reward still has to be written on failure."""
    fix, root = converted(
        tmp_path,
        "reward-tamper",
        ["exploit-reward-tamper", "reward-not-written-on-failure"],
        location="tests/test.sh:4",
    )
    assert fix.addressed == ["exploit-reward-tamper", "reward-not-written-on-failure"], fix
    assert tomllib.loads((root / "task.toml").read_text())["artifacts"] == ["/app/fib"]
    assert "__envqa_checks" in (root / "tests/test.sh").read_text()
    assert "test.sh is unchanged" not in fix.rationale[0] and fix.needs_model == []


@fast
def test_build_context_files_the_verifier_uses_come_with_its_image(tmp_path):
    """writable-verifier-helper: the image's input (read, never written, by the solution) is not an artifact;
    tests/Dockerfile copies it from tests/_env/; the report the agent writes is the artifact."""
    fix, root = converted(tmp_path, "writable-verifier-helper", ["exploit-verifier-helper"])
    assert tomllib.loads((root / "task.toml").read_text())["artifacts"] == ["/app/report.json"]
    docker = (root / "tests/Dockerfile").read_text()
    assert 'COPY ["_env/input.txt", "/app/input.txt"]' in docker
    assert 'COPY ["_env/bin/check-report", "/usr/local/bin/check-report"]' in docker
    assert (root / "tests/_env/bin/check-report").read_bytes() == (
        EXAMPLES / "writable-verifier-helper/environment/bin/check-report"
    ).read_bytes()
    assert (root / "tests/test.sh").read_bytes() == (EXAMPLES / "writable-verifier-helper/tests/test.sh").read_bytes()
    load_environment(root, lint=True)


@fast
def test_it_declines_when_the_tests_read_only_the_whole_workspace(tmp_path):
    task = write_task(
        tmp_path / "t",
        instruction_md="Write your files in /app.\n",
        solution__solve_sh="#!/bin/bash\ncd /app && printf hello > out.txt\n",
        tests__test_sh="#!/bin/bash\ncd /app && grep -q hello out.txt && echo 1 > /logs/verifier/reward.txt\n",
    )
    fix = separate_fix(task, [finding("exploit-reward-tamper")], workdir=tmp_path)
    assert fix.fixed_dir is None and "cannot tell" in fix.declined["exploit-reward-tamper"]
    assert separate_fix(task, [finding("nop-passes")], workdir=tmp_path) is None  # not a rule it addresses


@fast
def test_it_declines_a_task_already_in_separate_mode(tmp_path):
    fix, root = converted(tmp_path, "conftest-plant", ["exploit-workspace-conftest"])
    again = separate_fix(root, [finding("exploit-workspace-conftest")], workdir=tmp_path)
    assert again.fixed_dir is None and "already" in again.declined["exploit-workspace-conftest"]


@fast
def test_an_image_file_the_solution_rewrites_is_an_artifact(tmp_path):
    task = write_task(
        tmp_path / "t",
        environment__Dockerfile="FROM debian:bookworm\nWORKDIR /app\nCOPY main.py /app/main.py\n",
        instruction_md="Fix the bug in /app/main.py.\n",
        solution__solve_sh="#!/bin/bash\nsed -i s/-/+/ /app/main.py\n",
        tests__test_sh="#!/bin/bash\npython3 /app/main.py | grep -q 2 && "
        "echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
    )
    (task / "environment/main.py").write_text("print(1 - 1)\n")
    assert artifacts(FixContext(root=task, findings=[])) == ["/app/main.py"]


@fast
def test_the_reviser_proposes_it_as_the_alternative(tmp_path):
    findings = [finding("exploit-workspace-conftest")]
    inplace, author = choose_fix("fallback", EXAMPLES / "conftest-plant", findings, workdir=tmp_path)
    assert author == "fixer:" and inplace.addressed == ["exploit-workspace-conftest"]
    assert "--confcutdir" in (inplace.fixed_dir / "tests/test.sh").read_text()  # the in-place conftest fixer
    alt, author = choose_fix("prefer", EXAMPLES / "conftest-plant", findings, workdir=tmp_path)
    assert author == "fixer:separate-verifier:" and (alt.fixed_dir / "tests/Dockerfile").is_file()
    failed = Proposal(proposal_id="p-1", run_id="r", parent_version="v", diff="", addresses=[], author="fixer:x")
    after = separate_after_gate("fallback", failed, EXAMPLES / "conftest-plant", findings, workdir=tmp_path)
    assert after is not None and (after.fixed_dir / "tests/Dockerfile").is_file()
    assert separate_after_gate("off", failed, EXAMPLES / "conftest-plant", findings, workdir=tmp_path) is None
    failed.author = "fixer:separate-verifier:exploit-workspace-conftest"
    assert separate_after_gate("fallback", failed, EXAMPLES / "conftest-plant", findings, workdir=tmp_path) is None
    for fix in (inplace, alt, after):
        shutil.rmtree(fix.fixed_dir.parent)
    assert set(RULES) >= {"exploit-reward-tamper", "exploit-workspace-conftest", "exploit-verifier-helper"}


def test_reward_tamper_converted_to_separate_mode_passes_the_gate_and_comes_out_clean(
    tmp_path, monkeypatch, docker_backend
):
    """Must-show (issue 23): a shared-mode flawed example's separate-mode conversion passes the gate, and `qa run`
    on the exported version is clean. (The reward is still not written on failure in a fresh container: the
    in-place reward family fixes that on top, in the same proposal.)"""
    from envqa.app.runner import execute_run
    from envqa.store.db import Store
    from envqa.store.versions import VersionStore
    from tests.reviser.kit import fast_config, loop_state, revise_and_gate, run_deps

    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    config = fast_config(tmp_path / "home", **{"reviser.separate_verifier": "prefer"})
    state = loop_state(config, EXAMPLES / "reward-tamper", "separate-reward")
    assert "exploit-reward-tamper" in {f["rule"] for f in state["findings"]}
    with run_deps(config) as deps:
        revised, gated = revise_and_gate(deps, state)
    print("SEPARATE-ROW", json.dumps({"note": revised["revise_note"], "gate": gated}))
    assert revised["revise_note"].startswith("fixer:separate-verifier:exploit-reward-tamper"), revised
    assert gated["gate_passed"], gated
    proposal = Store(config.db_path).get_proposal(revised["proposal_id"])
    out = tmp_path / "revised"
    VersionStore(config, Store(config.db_path)).export(proposal.candidate_version, out)
    raw = tomllib.loads((out / "task.toml").read_text())
    assert raw["verifier"]["environment_mode"] == "separate" and raw["artifacts"] == ["/app/fib"]
    assert (out / "tests/Dockerfile").is_file()
    report = execute_run(out, fast_config(tmp_path / "after"), "separate-after", quiet=True)
    assert report["verdict"] == "clean", [f["rule"] for f in report["findings"]]


@fast
def test_copies_with_flags_directories_and_heredocs_are_repointed_or_kept(tmp_path):
    task = write_task(
        tmp_path / "t",
        environment__Dockerfile=(
            "FROM debian:bookworm\nWORKDIR /app\nCOPY --chown=1000:1000 data/ /srv/data/\n"
            "COPY <<EOF /etc/motd\nhello\nEOF\nRUN echo done\n"
        ),
    )
    (task / "environment/data").mkdir()
    (task / "environment/data/a.csv").write_text("1,2\n")
    fix = separate_fix(task, [finding("exploit-reward-tamper")], workdir=tmp_path)
    docker = (fix.fixed_dir / "tests/Dockerfile").read_text()
    assert 'COPY --chown=1000:1000 ["_env/data/", "/srv/data/"]' in docker, docker
    assert "COPY <<EOF /etc/motd\nhello\nEOF\nRUN echo done\n" in docker, docker
    assert (fix.fixed_dir / "tests/_env/data/a.csv").read_text() == "1,2\n"
    assert tomllib.loads((fix.fixed_dir / "task.toml").read_text())["artifacts"] == ["/app/out.txt"]
