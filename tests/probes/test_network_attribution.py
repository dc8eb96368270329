"""Network attribution in every phase (issue 35, item 1): setup, the reference solution and the build each get
their own inconclusive cause when their own output shows a network error, from one signature registry
(core/registry/network_errors.toml); a failure that is the task's own stays a finding.

Each flaw has a shape from public tasks (Terminal-Bench's nginx-request-logging installs nginx in solution.sh;
Dockerfiles that curl a GitHub release) and our own wording, and a look-alike that must not be blamed on the
network (a refused connection to localhost: the oracle's server did not start; a task that declares itself
offline; a host qa's fake internet serves, where the egress probe judges). Pure logic, no Docker: the trial
directories are written as agents/trial.py and agents/steps.py write them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.models import Finding, Label, Outcome, Severity, StepResult, TrialResult
from envqa.core.registry.network_errors import (
    NETWORK_ERROR,
    NETWORK_SIGNATURES,
    RESOLVER_ERROR,
    network_error_lines,
)
from envqa.core.sandbox import ImageBuildError
from envqa.probes.inconclusive import build_failure_update, image_map_build_failed, validation_update
from envqa.probes.network.phase import build_needs_network, phase_needs_network
from tests.probes.conftest import write_env

pytestmark = pytest.mark.fast

OPEN_TASK = {
    "task.toml": 'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n'
    "[environment]\nallow_internet = true\n"
}
# What `apt-get update && apt-get install -y nginx` prints with no network (run in envqa-base:bookworm).
APT_OFFLINE = (
    "Ign:1 http://deb.debian.org/debian bookworm InRelease\n"
    "Err:1 http://deb.debian.org/debian bookworm InRelease\n"
    "  Temporary failure resolving 'deb.debian.org'\n"
    "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure "
    "resolving 'deb.debian.org'\nE: Unable to locate package nginx\n"
    "/solution/solve.sh: line 14: service: command not found\n"
)
PIP_OFFLINE = (
    "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after "
    "connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at "
    "0x7f>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': "
    "/simple/flask/\nERROR: No matching distribution found for flask==3.0.3\n"
)


def _oracle(
    tmp_path: Path,
    output: str,
    *,
    index: int = 0,
    outcome=Outcome.FAIL,
    setup: str | None = None,
    steps: list[StepResult] | None = None,
) -> TrialResult:
    trial_dir = tmp_path / f"trial-{index}"
    (trial_dir / "agent").mkdir(parents=True, exist_ok=True)
    (trial_dir / "agent" / "oracle.txt").write_text(output)
    if setup is not None:
        (trial_dir / "steps" / "fetch").mkdir(parents=True, exist_ok=True)
        (trial_dir / "steps" / "fetch" / "setup.txt").write_text(setup)
    return TrialResult(
        trial_id=f"t-oracle-{index}",
        run_id="r",
        env_version="v",
        agent="oracle",
        outcome=outcome,
        reward=0.0 if outcome == Outcome.FAIL else 1.0,
        artifacts_dir=str(trial_dir),
        step_results=steps or [],
    )


def _env(tmp_path: Path, files: dict | None = None):
    return load_environment(write_env(tmp_path / "env", {**OPEN_TASK, **(files or {})}))


# --- the registry ------------------------------------------------------------------------------------------


def test_every_signature_matches_its_example_and_the_unions_are_derived():
    for sig in NETWORK_SIGNATURES:
        assert sig.regex.search(sig.example), sig.name
        assert NETWORK_ERROR.search(sig.example), sig.name
        assert bool(RESOLVER_ERROR.search(sig.example)) >= (sig.kind == "resolver"), sig.name


@pytest.mark.parametrize(
    "line",
    [
        "curl: (6) Could not resolve host: github.com",
        "  Temporary failure resolving 'deb.debian.org'",
        "Err:1 http://deb.debian.org/debian bookworm InRelease  Could not connect to deb.debian.org:80, connection timed out",
        "pip._vendor.urllib3.exceptions.NewConnectionError: Failed to establish a new connection: [Errno 101] Network is unreachable",
    ],
)
def test_phase_lines_are_found(line):
    assert network_error_lines(f"noise\n{line}\nmore noise\n", cut_by_qa=True) == [line.strip()]


def test_a_refused_loopback_connection_is_not_the_network():
    line = "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused"
    assert network_error_lines(line, cut_by_qa=True) == []


# --- the reference solution --------------------------------------------------------------------------------


@pytest.mark.parametrize("output, host", [(APT_OFFLINE, "deb.debian.org"), (PIP_OFFLINE, "pypi.org")])
def test_a_solution_that_installs_offline_is_oracle_needs_network(tmp_path, qa_config, output, host):
    solve = "#!/bin/bash\napt-get update && apt-get install -y nginx\npip install flask==3.0.3 --index-url https://pypi.org/simple\n"
    env = _env(tmp_path, {"solution/solve.sh": solve})
    results = [_oracle(tmp_path, output, index=i) for i in range(2)]
    outcome = phase_needs_network(env, qa_config, results, "oracle")
    assert outcome is not None and outcome["outcome"] == "oracle-needs-network"
    assert outcome["network_cut_by"] == "qa" and host in outcome["hosts"]
    assert any("agent/oracle.txt" in e and ("resolving" in e or "resolution" in e) for e in outcome["evidence"])
    # validation: the oracle's failure is withdrawn, the run is inconclusive (exit 3), never oracle-fails
    fails = Finding(rule="oracle-fails", label=Label.BRITTLENESS, severity=Severity.CRITICAL, message="m")
    update = validation_update(env, qa_config, results, [fails])
    assert update["findings"] == [] and update["inconclusive"][0]["outcome"] == "oracle-needs-network"
    assert update["incomplete"][0].startswith("oracle-needs-network: ")


def test_look_alike_the_oracle_never_started_its_server_stays_oracle_fails(tmp_path, qa_config):
    env = _env(tmp_path)
    output = 'nginx: [emerg] unknown directive "listen8080"\ncurl: (7) Failed to connect to localhost port 8080: Connection refused\n'
    assert phase_needs_network(env, qa_config, [_oracle(tmp_path, output)], "oracle") is None


def test_look_alike_a_task_that_cuts_its_agent_phase_keeps_oracle_fails(tmp_path, qa_config):
    env = load_environment(write_env(tmp_path / "env"))  # BASE_FILES: allow_internet = false
    assert phase_needs_network(env, qa_config, [_oracle(tmp_path, APT_OFFLINE)], "oracle") is None


def test_look_alike_one_run_failed_without_a_network_error(tmp_path, qa_config):
    env = _env(tmp_path)
    results = [_oracle(tmp_path, APT_OFFLINE, index=0), _oracle(tmp_path, "AssertionError: 41 != 42\n", index=1)]
    assert phase_needs_network(env, qa_config, results, "oracle") is None
    passed = [_oracle(tmp_path, APT_OFFLINE, index=0), _oracle(tmp_path, APT_OFFLINE, index=1, outcome=Outcome.PASS)]
    assert phase_needs_network(env, qa_config, passed, "oracle") is None


def test_a_host_the_fake_internet_serves_is_left_to_the_egress_probe(tmp_path, qa_config):
    """examples/network-fetch's shape: the egress probe reruns the oracle where releases.example.test answers."""
    env = _env(tmp_path, {"solution/solve.sh": "#!/bin/bash\ncurl -fsS http://releases.example.test/x/LATEST\n"})
    output = "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n"
    served = qa_config.model_copy(
        update={
            "probes": qa_config.probes.model_copy(
                update={"fake_internet_dir": str(tmp_path), "fake_internet_hosts": ["releases.example.test"]}
            )
        }
    )
    assert phase_needs_network(env, served, [_oracle(tmp_path, output)], "oracle") is None
    assert phase_needs_network(env, qa_config, [_oracle(tmp_path, output)], "oracle") is not None


# --- a step's setup.sh ---------------------------------------------------------------------------------------


def test_a_setup_that_downloads_offline_is_setup_needs_network(tmp_path, qa_config):
    env = _env(tmp_path)
    step = StepResult(
        name="fetch", outcome=Outcome.FAIL, stopped="setup.sh failed", error_message="step 'fetch': setup.sh exited 6"
    )
    result = _oracle(tmp_path, "", setup="curl: (6) Could not resolve host: data.example.org\n", steps=[step])
    outcome = phase_needs_network(env, qa_config, [result], "setup")
    assert outcome is not None and outcome["outcome"] == "setup-needs-network"
    assert "data.example.org" in outcome["hosts"] and "steps/fetch/setup.txt" in outcome["evidence"][0]
    # look-alike: the same output from a setup.sh that succeeded says nothing about the failure
    ok = _oracle(
        tmp_path,
        "",
        index=1,
        setup="curl: (6) Could not resolve host: data.example.org\n",
        steps=[StepResult(name="fetch", outcome=Outcome.FAIL)],
    )
    assert phase_needs_network(env, qa_config, [ok], "setup") is None


# --- the build ---------------------------------------------------------------------------------------------


def _build(tmp_path, dockerfile: str, step: str, log: str):
    env = load_environment(write_env(tmp_path / "env", {"environment/Dockerfile": dockerfile}))
    error = ImageBuildError("image build failed: The command returned a non-zero code: 6", f"Step 3/3 : {step}\n{log}")
    finding = Finding(
        rule="image-build-failed",
        label=Label.BRITTLENESS,
        severity=Severity.CRITICAL,
        message=f"the environment's image does not build: {error}",
        location="environment/Dockerfile",
    )
    return env, error, finding


@pytest.mark.parametrize("base", ["debian:bookworm", "envqa-base:bookworm"])  # swapped by the image map, or not
@pytest.mark.parametrize(
    "step, log, host",
    [
        (
            "RUN curl -fsSL -o /tmp/t.tgz https://github.com/o/r/releases/download/v1/t.tgz",
            "curl: (6) Could not resolve host: github.com",
            "github.com",
        ),
        ("RUN pip install flask==3.0.3", PIP_OFFLINE, None),
        ("RUN apt-get update && apt-get install -y nginx", APT_OFFLINE, "deb.debian.org"),
    ],
)
def test_a_build_step_that_cannot_reach_the_network_is_build_needs_network(tmp_path, qa_config, base, step, log, host):
    env, error, finding = _build(tmp_path, f"FROM {base}\nWORKDIR /app\n{step}\n", step, log)
    update = build_failure_update(env, qa_config, error, finding)
    [outcome] = update["inconclusive"]
    assert outcome["outcome"] == "build-needs-network" and outcome["step"] == step
    assert host is None or host in outcome["hosts"]
    assert "findings" not in update and image_map_build_failed(env, qa_config, error) is None


def test_look_alike_a_step_that_fails_for_the_base_keeps_the_image_map_message(tmp_path, qa_config):
    step = "RUN add-apt-repository -y ppa:deadsnakes/ppa"
    env, error, finding = _build(
        tmp_path, f"FROM ubuntu:22.04\n{step}\n", step, "/bin/sh: 1: add-apt-repository: not found"
    )
    assert build_needs_network(error, step) is None
    assert (
        build_failure_update(env, qa_config, error, finding)["inconclusive"][0]["outcome"] == "image-map-build-failed"
    )
    env, error, finding = _build(tmp_path / "b", "FROM envqa-base:bookworm\nRUN exit 7\n", "RUN exit 7", "")
    assert build_failure_update(env, qa_config, error, finding)["findings"][0]["rule"] == "image-build-failed"


def test_a_build_log_streamed_in_colored_chunks_is_joined_then_read():
    """The legacy builder's stderr arrives in chunks the tail keeps one per line (seen on this machine)."""
    step = "RUN curl -fsSL -o /tmp/t.tgz https://github.com/o/r/releases/download/v1/t.tgz && tar -xzf /tmp/t.tgz"
    chunks = (
        "".join(f"\x1b[91m{c}\x1b[0m\n" for c in "curl: (6) Could not") + "\x1b[91m resolve host: github.com\n\x1b[0m\n"
    )
    error = ImageBuildError("image build failed: The command returned a non-zero code: 6", chunks)
    outcome = build_needs_network(error, step)
    assert outcome is not None and "build log: curl: (6) Could not resolve host: github.com" in outcome["evidence"]


@pytest.mark.parametrize(
    "step, code, blamed",
    [
        ("RUN curl -fsSL -o /tmp/t.tgz https://github.com/o/r/releases/download/v1/t.tgz", 6, True),
        ("RUN wget -q https://example.org/data.csv", 4, True),
        ("RUN make -j6 && curl --version", 2, False),  # not a network exit code of curl
        ("RUN make -j6", 6, False),  # exit 6 from a program that does not document it as the network's
        ("RUN curl -fsS http://localhost:8080/ready", 7, False),  # loopback: nothing to reach in a build
    ],
)
def test_a_network_exit_code_names_the_cause_when_the_message_fell_out_of_the_tail(step, code, blamed):
    error = ImageBuildError(f"image build failed: The command returned a non-zero code: {code}", "(log cut)")
    assert (build_needs_network(error, step) is not None) == blamed


# --- the egress probe's proof explains a failing oracle (examples/network-fetch) --------------------------------


def _finding(rule: str, trial_ids: list[str] | None = None) -> dict:
    return Finding(
        rule=rule, label=Label.SHORTCUT, severity=Severity.ERROR, message="m", trial_ids=trial_ids or []
    ).model_dump(mode="json")


def test_a_pass_with_the_network_withdraws_oracle_fails_whatever_the_order():
    from envqa.core.registry.rules import EXPLAINS, is_registered
    from envqa.graphs.loop_state import per_version_findings

    assert "oracle-fails" in EXPLAINS["network-dependent-pass"]
    assert all(is_registered(rule) for explained in EXPLAINS.values() for rule in explained)
    fails, proof = _finding("oracle-fails"), _finding("network-dependent-pass")
    assert [f["rule"] for f in per_version_findings([fails], [proof])] == ["network-dependent-pass"]
    assert [f["rule"] for f in per_version_findings([proof], [fails])] == ["network-dependent-pass"]
    # look-alike: another network finding (an exploit fetched the answer) explains nothing about the oracle
    kept = per_version_findings([fails], [_finding("exploit-network-fetch")])
    assert [f["rule"] for f in kept] == ["oracle-fails", "exploit-network-fetch"]


def test_a_failing_oracle_the_network_explains_is_labelled_infra_not_a_broken_task(tmp_path):
    from envqa.probes.analyst.rules import LabelContext, deterministic_label

    failed = _oracle(tmp_path, "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>")
    opened = _oracle(tmp_path, "", index=1, outcome=Outcome.PASS).model_copy(update={"purpose": "hunt-egress-open"})
    proof = Finding.model_validate(_finding("network-dependent-pass", [opened.trial_id, failed.trial_id]))
    ctx = LabelContext(instruction="Write the latest version.", agent_timeout_sec=60.0, trials=[failed, opened])
    label = deterministic_label(failed, ctx)
    assert label is not None and (label.label, label.subtype) == ("brittleness", "broken-environment")
    ctx.findings = [proof]
    label = deterministic_label(failed, ctx)
    assert label is not None and (label.label, label.subtype) == ("infra", "network-cut")
    assert opened.trial_id in label.explanation
    opened_label = deterministic_label(opened, ctx)
    assert opened_label is not None and opened_label.label == "legitimate"
