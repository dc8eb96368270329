"""The fake backend on its own: scripting, fake builds, the registry, and whole trials with no Docker engine."""

from __future__ import annotations

import json
import uuid

import pytest

from envqa.agents.trial import cut_verifier_network, run_trial, verifier_offline
from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from envqa.core.sandbox import ImageBuildError, SandboxError, SandboxSpec, create_backend
from envqa.probes.base import ProbeContext
from envqa.sandbox.backends import backend_names
from envqa.sandbox.docker_backend import DockerBackend
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.fake_commands import FakeOutput
from tests.probes.conftest import write_env

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def _config(qa_config, **sandbox):
    return qa_config.model_copy(update={"sandbox": qa_config.sandbox.model_copy(update=sandbox)})


def test_backends_register_by_name(qa_config):
    assert {"docker", "fake"} <= set(backend_names())
    assert isinstance(create_backend(_config(qa_config, backend="fake")), FakeBackend)
    docker = create_backend(qa_config)
    assert isinstance(docker, DockerBackend) and not docker.connected  # made, not yet connected
    with pytest.raises(InputError) as info:
        create_backend(_config(qa_config, backend="podman"))
    assert "podman" in str(info.value) and "fake" in str(info.value)


def test_optional_backend_capabilities_are_declared_or_refused(tmp_path):
    fake = FakeBackend()
    assert not fake.supports("fake_internet") and not fake.supports("with_egress_allowlist")
    assert DockerBackend().supports("fake_internet") and DockerBackend().supports("with_egress_allowlist")
    with pytest.raises(NotImplementedError):
        fake.with_egress_allowlist(["example.com"], image="x")
    with pytest.raises(NotImplementedError):
        fake.fake_internet(None, ["example.com"], image="x")
    fake.check()  # nothing to reach


def test_scripted_handlers_run_before_the_builtins():
    backend = FakeBackend()
    backend.on(r"^echo secret$")(lambda call: "scripted\n")
    backend.on(lambda argv: argv[:1] == ["compile"])(lambda call: FakeOutput(exit_code=2, stderr="bad\n"))
    backend.on(r"^exit-code$")(lambda call: 5)
    with backend.start(SandboxSpec(image="envqa-base:bookworm")) as sb:
        assert sb.exec(["echo", "secret"]).stdout == "scripted\n"
        assert sb.exec(["echo", "other"]).stdout == "other\n"  # the built-in
        assert (sb.exec(["compile", "x.c"]).exit_code, sb.exec(["compile"]).stderr) == (2, "bad\n")
        assert sb.exec(["exit-code"]).exit_code == 5
        unknown = sb.exec(["gcc", "x.c"])
        assert unknown.exit_code == 127 and "no handler" in unknown.stderr
        assert [c.cmd[0] for c in sb.calls] == ["echo", "echo", "compile", "compile", "exit-code", "gcc"]


def test_a_fake_build_follows_from_workdir_env_and_copy(tmp_path):
    root = write_env(
        tmp_path / "env",
        {
            "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\nENV GREETING=hi\nCOPY data.txt ./data.txt\n"
            "COPY tools/ /opt/tools/\nRUN apt-get install -y gcc\n",
            "environment/data.txt": "payload\n",
            "environment/tools/run.sh": "#!/bin/sh\n",
        },
    )
    env = load_environment(root)
    backend, logs = FakeBackend(), []
    tag, built = backend.ensure_image(env, on_log=logs.append)
    assert built and backend.ensure_image(env) == (tag, False) and backend.builds == 1
    assert logs[0] == "Step 1/6 : FROM debian:bookworm"
    assert backend.images[tag].runs == ["apt-get install -y gcc"]
    with backend.start(SandboxSpec(image=tag, init_dirs=["/logs/agent"])) as sb:
        assert sb.exec(["pwd"]).stdout == "/app\n"
        assert sb.exec(["printenv", "GREETING"]).stdout == "hi\n"
        assert sb.read_file("/app/data.txt") == b"payload\n"
        assert sb.read_file("/opt/tools/run.sh") == b"#!/bin/sh\n"
        assert sb.exec(["ls", "/logs"]).stdout == "agent\n"
        assert {c.path for c in sb.changed_paths()} == {"/logs", "/logs/agent"}  # the image's files are not changes


def test_starting_an_unbuilt_image_and_a_failing_build():
    with pytest.raises(SandboxError) as info:
        FakeBackend().start(SandboxSpec(image="envqa-env:never-built"))
    assert info.value.error_class == "sandbox_start"


def test_cutting_the_network_for_the_verifier(qa_config):
    with FakeBackend().start(SandboxSpec(image="envqa-base:bookworm", network="bridge")) as sb:
        assert sb.offline() is False  # (verifier_offline also asks whether this machine resolves names)
        cut_verifier_network(sb, _config(qa_config, verifier_network="none"))
        assert verifier_offline(sb) is True
        sb.restore_network()
        assert sb.offline() is False
        with pytest.raises(NotImplementedError):
            sb.start_trace(qa_config.home / "strace.txt")


def _scripted_verifier(backend: FakeBackend, seen: dict) -> None:
    """solve.sh writes hello to /app/out.txt; test.sh rewards exactly that (what tests/probes' BASE_FILES do)."""

    @backend.on(r"/solution/solve\.sh")
    def solve(call):
        seen["solution_uploaded"] = call.sandbox.fs.node("/solution/solve.sh") is not None
        call.sandbox.write_file("/app/out.txt", b"hello\n")
        return "solved\n"

    @backend.on(r"/tests/test\.sh")
    def verify(call):
        seen["tests_uploaded"] = call.sandbox.fs.node("/tests/test.sh") is not None
        out = call.sandbox.fs.node("/app/out.txt")
        ok = out is not None and out.data.strip() == b"hello"
        call.sandbox.write_file("/logs/verifier/reward.txt", b"1\n" if ok else b"0\n")
        return FakeOutput(stdout="1 passed\n" if ok else "1 failed\n", duration=0.5)


def _trial(tmp_path, qa_config, backend, agent: str):
    env = load_environment(write_env(tmp_path / "env"))
    run_id = f"fake-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent=agent)
    layout = RunLayout(qa_config.runs_dir, run_id)
    return run_trial(spec, env, backend, qa_config, layout), layout.trial_dir(spec.trial_id)


def test_oracle_and_nop_trials_run_on_the_fake(tmp_path, qa_config):
    backend, seen = FakeBackend(), {}
    _scripted_verifier(backend, seen)
    oracle, oracle_dir = _trial(tmp_path, qa_config, backend, "oracle")
    assert oracle.outcome == Outcome.PASS and oracle.reward == 1.0, oracle.error_message
    assert seen == {"solution_uploaded": True, "tests_uploaded": True}
    assert (oracle_dir / "verifier" / "reward.txt").read_text() == "1\n"
    assert (oracle_dir / "agent" / "oracle.txt").read_text() == "solved\n"
    assert json.loads((oracle_dir / "result.json").read_text())["outcome"] == "pass"
    nop, _ = _trial(tmp_path, qa_config, backend, "nop")
    assert nop.outcome == Outcome.FAIL and nop.reward == 0.0
    assert all(sb._stopped for sb in backend.started)  # every path out stops the sandbox
    assert backend.builds == 1  # the second trial reused the image


def test_a_verifier_without_a_reward_is_an_infra_outcome(tmp_path, qa_config):
    backend = FakeBackend()
    backend.on(r"/tests/test\.sh")(lambda call: 0)  # runs, writes nothing
    result, _ = _trial(tmp_path, qa_config, backend, "nop")
    assert result.outcome == Outcome.INFRA and result.error_class == "verifier_error"


def test_a_failing_fake_build_is_recorded_as_the_environments_fault(tmp_path, qa_config):
    backend = FakeBackend(build_error="no such package: gcc-99")
    with pytest.raises(ImageBuildError):
        backend.ensure_image(load_environment(write_env(tmp_path / "env0")))
    result, _ = _trial(tmp_path, qa_config, backend, "oracle")
    assert result.outcome == Outcome.INFRA and result.error_class == "image_build_failed"
    assert "gcc-99" in result.error_message


def test_a_probe_trial_on_the_fake_runs_untraced(tmp_path, qa_config):
    """A probe asks for strace; the fake cannot trace, so the trial runs and says it was not traced."""
    backend, seen = FakeBackend(), {}
    _scripted_verifier(backend, seen)
    env = load_environment(write_env(tmp_path / "env"))
    ctx = ProbeContext(
        env=env,
        config=qa_config,
        backend=backend,
        run_id="fake-probe",
        layout=RunLayout(qa_config.runs_dir, "fake-probe"),
    )
    trial = ctx.trial("oracle", purpose="hunt-oracle-runs", trace=True)
    assert trial.passed and not trial.traced and trial.events == []
    assert "egress_denied" not in trial.notes
    assert [r.trial_id for r in ctx.new_trials] == [trial.result.trial_id]
