"""Oracle x k: the hunt tops validation's oracle runs up to k and reports a reference that fails any of them."""

from __future__ import annotations

from envqa.core.models import Outcome, TrialResult

from .conftest import EXAMPLES, write_env


def test_validation_runs_are_reused_and_a_passing_oracle_stays_clean(probe_ctx):
    from envqa.probes.flakiness import oracle_runs_probe

    ctx = probe_ctx(EXAMPLES / "clean-wordfreq", run_id="oracle-k-clean", oracle_runs=2)
    first = ctx.trial("oracle", purpose="validate").result  # a real validation run, counted towards k
    assert first.outcome == Outcome.PASS
    ctx.validation, ctx.new_trials = [first], []
    assert oracle_runs_probe(ctx) == []
    [extra] = ctx.new_trials  # only the one missing run, with the next index
    assert (extra.agent, extra.purpose, extra.outcome) == ("oracle", "hunt-oracle-runs", Outcome.PASS)
    assert extra.trial_id != first.trial_id


def test_an_oracle_that_fails_a_later_run_is_flaky(probe_ctx, tmp_path):
    """Validation saw passes (recorded results); the hunt's own run of the reference fails: oracle-flaky."""
    from envqa.probes.flakiness import oracle_runs_probe

    env = write_env(tmp_path, solution__solve_sh="#!/bin/bash\necho goodbye > /app/out.txt\n")
    ctx = probe_ctx(env, run_id="oracle-k-flaky", oracle_runs=3)
    ctx.validation = [
        TrialResult(
            trial_id=f"validated-{i}",
            run_id="oracle-k-flaky",
            env_version=ctx.env.version,
            agent="oracle",
            outcome=Outcome.PASS,
            reward=1.0,
        )
        for i in range(2)
    ]
    [f] = oracle_runs_probe(ctx)
    [extra] = ctx.new_trials
    assert extra.outcome == Outcome.FAIL and extra.purpose == "hunt-oracle-runs"
    assert f.rule == "oracle-flaky" and f.label == "brittleness" and f.trial_ids == [extra.trial_id]
    assert "failed 1 of 3 runs" in f.message
    assert "passing runs: validated-0, validated-1" in f.evidence


def test_no_extra_runs_when_validation_already_failed(probe_ctx, tmp_path):
    from envqa.probes.flakiness import oracle_runs_probe

    env = write_env(tmp_path)
    ctx = probe_ctx(env, run_id="oracle-k-failed", oracle_runs=5)
    ctx.validation = [
        TrialResult(
            trial_id="v-0",
            run_id="oracle-k-failed",
            env_version=ctx.env.version,
            agent="oracle",
            outcome=Outcome.FAIL,
            reward=0.0,
        )
    ]
    assert oracle_runs_probe(ctx) == [] and ctx.new_trials == []
