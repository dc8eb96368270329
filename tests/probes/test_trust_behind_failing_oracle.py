"""Trust tracing regardless of the oracle (issue 35, item 3): the oracle_state probe traces the verifier on the
oracle's end state when the oracle fails, and on the nop's when the oracle leaves none the verifier judged.

On the fake backend (no host strace: the tracing itself is recorded in the coverage as "cannot trace"), so what
is checked here is the decision: which end state is traced, and that a failing oracle no longer skips it. The
traced findings on Docker are the detection table's (examples/trusts-image-expected-broken-oracle and its
look-alike broken-oracle-own-expected).
"""

from __future__ import annotations

import uuid

import pytest

from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialResult
from envqa.probes.base import ProbeContext
from envqa.probes.oracle_state import oracle_state_probe
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.fake_commands import FakeOutput
from tests.fake_tasks import script_probe_commands
from tests.probes.conftest import write_env

pytestmark = pytest.mark.fast


def _ctx(tmp_path, qa_config, solve, *, strace: bool = True) -> ProbeContext:
    backend = FakeBackend()
    backend.on(r"bash /solution/solve\.sh")(solve)

    @backend.on(r"bash /tests/test\.sh")
    def verify(call):  # the answer is never right: the oracle fails
        call.sandbox.fs.write("/logs/verifier/reward.txt", b"0\n", 0o644)
        return FakeOutput(stdout="failed\n")

    script_probe_commands(backend)
    env = load_environment(write_env(tmp_path / "env"))
    config = qa_config.model_copy(update={"probes": qa_config.probes.model_copy(update={"strace": strace})})
    run_id = f"fake-{uuid.uuid4().hex[:8]}"
    failed = TrialResult(
        trial_id=f"{run_id}-oracle-0",
        run_id=run_id,
        env_version=env.version,
        agent="oracle",
        outcome=Outcome.FAIL,
        reward=0.0,
    )
    return ProbeContext(
        env=env,
        config=config,
        backend=backend,
        run_id=run_id,
        layout=RunLayout(config.runs_dir, run_id),
        validation=[failed],
    )


def _wrong(call):
    call.sandbox.fs.write("/app/out.txt", b"goodbye\n", 0o644)
    return FakeOutput()


def test_a_failing_oracles_end_state_is_traced(tmp_path, qa_config):
    ctx = _ctx(tmp_path, qa_config, _wrong)
    assert oracle_state_probe(ctx) == []  # nothing traced on the fake: no anchors, no finding
    trust = [c for c in ctx.coverage if c["probe"] == "oracle_state/trust"]
    assert trust and "cannot trace" in trust[0]["reason"]  # tried on the failing oracle's end state
    skipped = next(c for c in ctx.coverage if c["probe"] == "oracle_state")
    assert skipped["status"] == "skipped" and "trust tracing ran on its end state" in skipped["reason"]
    assert [(t.agent, t.purpose) for t in ctx.new_trials] == [("oracle", "hunt-oracle-state")]


def test_an_oracle_that_leaves_no_judged_end_state_falls_back_to_the_nop(tmp_path, qa_config):
    def crash(call):
        raise RuntimeError("solve.sh could not run")

    ctx = _ctx(tmp_path, qa_config, crash)
    oracle_state_probe(ctx)
    assert [(t.agent, t.purpose) for t in ctx.new_trials] == [
        ("oracle", "hunt-oracle-state"),
        ("nop", "hunt-nop-state"),
    ]
    assert ctx.new_trials[0].outcome == Outcome.INFRA and ctx.new_trials[1].outcome == Outcome.FAIL
    assert any(c["probe"] == "oracle_state/trust" for c in ctx.coverage)


def test_look_alike_without_tracing_a_failing_oracle_is_not_rerun(tmp_path, qa_config):
    ctx = _ctx(tmp_path, qa_config, _wrong, strace=False)
    assert oracle_state_probe(ctx) == [] and ctx.new_trials == []
    assert "strace = false" in next(c for c in ctx.coverage if c["probe"] == "oracle_state")["reason"]
