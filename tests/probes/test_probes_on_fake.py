"""The probes' decisions on scripted sandboxes (the fake backend, no Docker): flakiness of the reference,
a verifier that changes its mind on one end state, mutation testing's survivors, and a scripted exploit
against a verifier that does or does not reset the reward.

Each test scripts solve.sh and test.sh on the fake (tests/fake_tasks.py) so that exactly one behaviour
differs from a sound task, and asserts the probe's finding (or its absence) and the trials it ran. The
same probes on real containers are covered by tests/probes/test_detection.py (Docker).
"""

from __future__ import annotations

import uuid

import pytest

from envqa.agents.trial import run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from envqa.probes.base import ProbeContext
from envqa.probes.exploits.probe import exploits_probe
from envqa.probes.flakiness import oracle_runs_probe
from envqa.probes.oracle_state import oracle_state_probe
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.fake_commands import FakeOutput
from tests.fake_tasks import script_probe_commands, trial_of
from tests.probes.conftest import write_env

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def _backend(solve, verify) -> FakeBackend:
    backend = FakeBackend()
    backend.on(r"bash /solution/solve\.sh")(solve)
    backend.on(r"bash /tests/test\.sh")(verify)
    script_probe_commands(backend)
    return backend


def _reward(call, ok: bool) -> FakeOutput:
    call.sandbox.fs.write("/logs/verifier/reward.txt", b"1\n" if ok else b"0\n", 0o644)
    return FakeOutput(stdout="passed\n" if ok else "failed\n")


def _out(call) -> bytes | None:
    node = call.sandbox.fs.node("/app/out.txt")
    return node.data if node is not None else None


def _ctx(tmp_path, qa_config, backend, validation=(), **probes) -> ProbeContext:
    env = load_environment(write_env(tmp_path / "env"))
    config = qa_config.model_copy(update={"probes": qa_config.probes.model_copy(update=probes)})
    run_id = f"fake-{uuid.uuid4().hex[:8]}"
    return ProbeContext(
        env=env,
        config=config,
        backend=backend,
        run_id=run_id,
        layout=RunLayout(config.runs_dir, run_id),
        validation=list(validation),
    )


def _validate(ctx: ProbeContext, agent: str, runs: int):
    """Validation's trials, run as the validate node runs them (not through the probe)."""
    return [
        run_trial(
            TrialSpec(run_id=ctx.run_id, env_version=ctx.env.version, agent=agent, index=i),
            ctx.env,
            ctx.backend,
            ctx.config,
            ctx.layout,
        )
        for i in range(runs)
    ]


# --- flakiness: the oracle k times out of k ---------------------------------------------------------------


def _solve_failing_on(*bad_runs: int):
    runs = []

    def solve(call):
        runs.append(trial_of(call.sandbox))
        call.sandbox.fs.write("/app/out.txt", b"oops\n" if len(runs) in bad_runs else b"hello\n", 0o644)
        return FakeOutput()

    return solve


def _strict(call):
    return _reward(call, _out(call) == b"hello\n")


def test_a_reference_failing_one_run_in_five_is_flaky_and_validation_runs_are_reused(tmp_path, qa_config):
    backend = _backend(_solve_failing_on(5), _strict)  # the fifth oracle run writes the wrong answer
    ctx = _ctx(tmp_path, qa_config, backend)
    ctx.validation = _validate(ctx, "oracle", 3)
    assert all(t.outcome == Outcome.PASS for t in ctx.validation)
    started = len(backend.started)

    findings = oracle_runs_probe(ctx)
    assert [t.trial_id.rsplit("-", 1)[0] for t in ctx.new_trials] == ["oracle-3", "oracle-4"]  # topped up to 5
    assert len(backend.started) - started == 2  # validation's three runs are not repeated
    assert [f.rule for f in findings] == ["oracle-flaky"]
    assert findings[0].severity.value == "critical" and "1 of 5" in findings[0].message
    assert findings[0].trial_ids == [ctx.new_trials[-1].trial_id]


@pytest.mark.parametrize(
    "bad_runs, why",
    [((), "every run passes"), ((1, 2, 3, 4, 5), "every run fails: validation's oracle-fails says it, not flakiness")],
)
def test_a_reference_that_always_or_never_passes_is_not_flaky(tmp_path, qa_config, bad_runs, why):
    backend = _backend(_solve_failing_on(*bad_runs), _strict)
    ctx = _ctx(tmp_path, qa_config, backend)
    assert oracle_runs_probe(ctx) == [], why
    assert len(ctx.new_trials) == ctx.config.oracle_runs_for("hunt")  # no validation: all k runs are the probe's


def test_a_reference_that_failed_validation_is_not_run_again(tmp_path, qa_config):
    backend = _backend(_solve_failing_on(2), _strict)
    ctx = _ctx(tmp_path, qa_config, backend)
    ctx.validation = _validate(ctx, "oracle", 3)
    started = len(backend.started)
    assert oracle_runs_probe(ctx) == []
    assert len(backend.started) == started and ctx.new_trials == []
    assert ctx.coverage == [{"probe": "oracle_runs", "status": "skipped", "reason": ctx.coverage[0]["reason"]}]
    assert "already failed in validation" in ctx.coverage[0]["reason"]


# --- the verifier on one end state, and mutants of it ----------------------------------------------------


def _solve_writing(data: bytes, *extra: tuple[str, bytes]):
    def solve(call):
        call.sandbox.fs.write("/app/out.txt", data, 0o644)
        for path, content in extra:
            call.sandbox.fs.write(path, content, 0o644)
        return FakeOutput()

    return solve


def _verifier_runs(backend) -> list[str]:
    return [trial_of(sb) for sb in backend.started for c in sb.calls if "bash /tests/test.sh" in " ".join(c.cmd)]


def test_a_verifier_that_changes_its_mind_on_one_end_state_is_nondeterministic(tmp_path, qa_config):
    verdicts = iter([True, False, True] + [False] * 20)  # the trial's run, then the two re-runs, then mutants

    backend = _backend(_solve_writing(b"hello\n"), lambda call: _reward(call, next(verdicts)))
    ctx = _ctx(tmp_path, qa_config, backend, verifier_reruns=2)
    findings = {f.rule: f for f in oracle_state_probe(ctx)}
    assert "verifier-nondeterministic" in findings
    assert "['pass', 'fail', 'pass']" in findings["verifier-nondeterministic"].evidence[0]
    assert len(set(_verifier_runs(backend))) == 1  # all on the one kept end state: one container


def test_a_verifier_checking_only_the_first_line_passes_a_mutant(tmp_path, qa_config):
    """out.txt holds two lines; the verifier reads only the first: deleting, emptying or changing the
    number in it fail, dropping the last line passes: verifier-accepts-mutant, naming that mutant only."""
    backend = _backend(
        _solve_writing(b"total 42\nitems 3\n"),
        lambda call: _reward(call, (_out(call) or b"").split(b"\n")[0] == b"total 42"),
    )
    ctx = _ctx(tmp_path, qa_config, backend, verifier_reruns=0)
    findings = oracle_state_probe(ctx)
    assert [f.rule for f in findings] == ["verifier-accepts-mutant"]
    survivors = findings[0].evidence[1:]
    assert survivors == ["/app/out.txt: last line removed -> verifier still passes"]
    # deleted, empty, every record changed, last line, number; the middle-record mutant is not tried (the number
    # mutant of the checked first line failed, so the file is not tolerant: issue 35)
    assert "5 mutants of 1 output file(s)" in findings[0].evidence[0]
    assert {"probe": "oracle_state/mutation", "status": "ran", "reason": None} in ctx.coverage


def test_a_strict_verifier_kills_every_mutant_and_ignored_files_are_left_alone(tmp_path, qa_config):
    """A log file the verifier rightly ignores survives its deletion: it is not mutated further, and no
    finding is made; every mutant of the checked output fails."""
    backend = _backend(
        _solve_writing(b"total 42\nitems 3\n", ("/app/run.log", b"solved in 3 steps\n")),
        lambda call: _reward(call, _out(call) == b"total 42\nitems 3\n"),
    )
    ctx = _ctx(tmp_path, qa_config, backend, verifier_reruns=0)
    assert oracle_state_probe(ctx) == []
    assert len(_verifier_runs(backend)) == 1 + 5 + 1  # the trial's run, out.txt's five mutants, run.log deleted


def test_mutation_testing_is_skipped_when_nop_already_passes(tmp_path, qa_config):
    backend = _backend(_solve_writing(b"hello\n"), lambda call: _reward(call, True))
    ctx = _ctx(tmp_path, qa_config, backend, verifier_reruns=0)
    ctx.validation = _validate(ctx, "oracle", 1) + _validate(ctx, "nop", 1)
    assert oracle_state_probe(ctx) == []
    assert [c for c in ctx.coverage if c["probe"] == "oracle_state/mutation"][0]["status"] == "skipped"
    assert len(_verifier_runs(backend)) == 2 + 1  # validation's two trials, the probe's one: no mutants


# --- scripted exploits -------------------------------------------------------------------------------------


def _tamper(call):
    """agents/exploit_scripts/reward_tamper.sh: reward 1 written before the verifier runs."""
    call.sandbox.fs.write("/logs/verifier/reward.txt", b"1\n", 0o644)
    call.sandbox.fs.write("/logs/verifier/reward.json", b'{"reward": 1.0}\n', 0o644)
    return FakeOutput(stdout="-rw-r--r-- 1 root root 2 reward.txt\n")


def _sloppy(call):
    """A test.sh that writes reward 1 on success and nothing otherwise: an earlier reward stands."""
    if _out(call) == b"hello\n":
        call.sandbox.fs.write("/logs/verifier/reward.txt", b"1\n", 0o644)
    return FakeOutput(stdout="checked\n")


@pytest.mark.parametrize("verifier, earns", [(_sloppy, True), (_strict, False)])
def test_the_reward_tamper_exploit_against_a_verifier_that_does_or_does_not_reset(tmp_path, qa_config, verifier, earns):
    backend = _backend(_solve_writing(b"hello\n"), verifier)
    backend.on(r"echo 1 > /logs/verifier/reward\.txt && echo")(_tamper)
    ctx = _ctx(tmp_path, qa_config, backend, exploits=["exploit-reward-tamper"], harness_exploits=False)
    findings = exploits_probe(ctx)
    tamper = [t for t in ctx.new_trials if t.agent == "exploit-reward-tamper"]
    assert len(tamper) == 1 and tamper[0].outcome == (Outcome.PASS if earns else Outcome.FAIL)
    assert [f.rule for f in findings] == (["exploit-reward-tamper"] if earns else [])
    if earns:
        assert findings[0].severity.value == "critical" and findings[0].trial_ids == [tamper[0].trial_id]
    assert {
        "probe": "exploits/exploit-reward-tamper",
        "status": "ran",
        "reason": f"trial {tamper[0].trial_id}: {tamper[0].outcome.value}",
    } in ctx.coverage
    assert not list(ctx.layout.root.rglob("strace*.txt"))  # the fake cannot trace: the trial ran untraced


def test_exploits_are_not_tried_when_nop_already_passes(tmp_path, qa_config):
    backend = _backend(_solve_writing(b"hello\n"), lambda call: _reward(call, True))
    ctx = _ctx(tmp_path, qa_config, backend)
    ctx.validation = _validate(ctx, "nop", 1)
    started = len(backend.started)
    assert exploits_probe(ctx) == []
    assert len(backend.started) == started and ctx.new_trials == []
    assert ctx.coverage[0]["probe"] == "exploits" and ctx.coverage[0]["status"] == "skipped"
