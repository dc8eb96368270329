"""The trial runtime's decisions as pure functions (agents/phases.py, core/policy.py): the verifier's network and
every container spec of a trial, one function each for every mode; and the one retry rule that a probe's trial and
a queued trial share. Fast: no engine; the Docker tests (test_trials, test_separate_verifier, test_steps,
test_sidecars, probes/test_phase_network) run the same functions on real containers."""

from __future__ import annotations

import pytest

from envqa.agents.phases import AGENT_DIRS, SHARED_DIRS, VERIFIER_DIRS, Role, container_spec, verifier_network
from envqa.core.config import QueueSettings
from envqa.core.environment import load_environment
from envqa.core.models import Outcome, TrialResult
from envqa.core.policy import Action, decide, decide_trial, trial_error
from envqa.core.queues import SANDBOX_QUEUE, queue_settings
from qa_testkit import write_files

pytestmark = pytest.mark.fast

DOCKERFILE = "FROM debian:bookworm\n"


def _env(tmp_path, toml: str):
    files = {
        "task.toml": 'schema_version = "1.4"\n' + toml,
        "instruction.md": "Do it.\n",
        "environment/Dockerfile": DOCKERFILE,
        "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "#!/bin/bash\ntrue\n",
    }
    return load_environment(write_files(tmp_path / "task", files))


def _config(qa_config, **sandbox):
    """`[sandbox] default_network = "public"` (the task decides) unless a case says otherwise."""
    sandbox = {"default_network": "public", **sandbox}
    return qa_config.model_copy(update={"sandbox": qa_config.sandbox.model_copy(update=sandbox)})


SEPARATE = '[verifier]\nenvironment_mode = "separate"\n'


@pytest.mark.parametrize(
    ("toml", "sandbox", "shares", "want"),
    [
        ("", {}, "bridge", "bridge"),  # shared: the verifier keeps the agent's network
        ("", {"verifier_network": "none"}, "bridge", "none"),  # qa.toml cuts it
        ('[verifier]\nnetwork_mode = "no-network"\n', {}, "bridge", "none"),  # the task's verifier phase does
        ('[verifier]\nnetwork_mode = "allowlist"\n', {}, "envqa-proxy-net", "envqa-proxy-net"),  # keeps its proxy
        (SEPARATE, {}, None, "bridge"),  # separate: public baseline, a network of its own
        (SEPARATE, {"default_network": "none"}, None, "none"),  # [sandbox] may only make it stricter
        (SEPARATE, {"verifier_network": "none"}, None, "none"),
        (SEPARATE + 'network_mode = "allowlist"\n', {}, None, "none"),  # no proxy for its container yet
        ("[environment]\nallow_internet = false\n" + SEPARATE, {}, None, "none"),
    ],
)
def test_one_function_decides_the_verifiers_network_in_every_mode(tmp_path, qa_config, toml, sandbox, shares, want):
    env = _env(tmp_path, toml)
    assert verifier_network(env, _config(qa_config, **sandbox), shares=shares) == want


def test_without_a_task_only_the_config_decides(qa_config):
    assert verifier_network(None, _config(qa_config), shares="bridge") == "bridge"
    assert verifier_network(None, _config(qa_config, verifier_network="none"), shares="bridge") == "none"


def test_one_function_builds_the_trials_and_the_separate_verifiers_container(tmp_path, qa_config):
    env = _env(
        tmp_path, "[environment]\ncpus = 2\nmemory_mb = 1024\n" + SEPARATE + "[verifier.environment]\ncpus = 1\n"
    )
    config = _config(qa_config)
    trial = container_spec(env, "img:agent", config, {"envqa.run": "r"})
    verifier = container_spec(env, "img:verifier", config, {"envqa.role": "verifier"}, Role.VERIFIER)
    assert (trial.image, trial.cpus, trial.memory_mb, trial.network) == ("img:agent", 2, 1024, "bridge")
    assert trial.init_dirs == AGENT_DIRS  # separate mode: no /logs/verifier in the agent's container
    assert (verifier.image, verifier.cpus, verifier.network) == ("img:verifier", 1, "bridge")
    assert verifier.init_dirs == VERIFIER_DIRS and verifier.labels == {"envqa.role": "verifier"}
    shared = _env(tmp_path / "s", "")
    assert container_spec(shared, "img", qa_config, {}).network == "none"  # qa's default: no network at all
    spec = container_spec(shared, "img", config, {})
    assert (spec.network, spec.init_dirs) == ("bridge", SHARED_DIRS)


def _result(outcome: Outcome, error_class: str | None = None) -> TrialResult:
    return TrialResult(
        trial_id="t", run_id="r", env_version="v", agent="oracle", outcome=outcome, error_class=error_class
    )


def test_a_probe_trial_retries_by_the_queued_trials_rule(qa_config):
    policy = queue_settings(qa_config.scheduler, SANDBOX_QUEUE)
    assert policy.max_attempts == 3
    hiccup = _result(Outcome.INFRA, "sandbox_start")
    error = trial_error(hiccup)  # what a queued trial raises for its worker's policy
    assert error is not None and error.error_class == "sandbox_start"
    for failures in range(3):
        probe, queued = decide_trial(hiccup, failures, policy), decide(error, failures, 0, policy)
        assert probe is not None and probe.action == queued.action
        assert probe.action == (Action.RETRY if failures < 2 else Action.FAIL)
    assert decide_trial(_result(Outcome.FAIL), 0, policy) is None  # a verdict stands
    assert decide_trial(_result(Outcome.INFRA, "verifier_error"), 0, policy) is None  # permanent infra stands too
    assert trial_error(_result(Outcome.INFRA, "verifier_error")) is None


def test_the_retry_waits_the_queues_backoff(qa_config):
    policy = QueueSettings(
        **{**queue_settings(qa_config.scheduler, SANDBOX_QUEUE).model_dump(), "backoff_base_sec": 0.5, "jitter": 0.0}
    )
    first = decide_trial(_result(Outcome.INFRA, "sandbox_start"), 0, policy)
    second = decide_trial(_result(Outcome.INFRA, "sandbox_start"), 1, policy)
    assert first is not None and second is not None
    assert (first.delay_sec, second.delay_sec) == (0.5, 1.0)
