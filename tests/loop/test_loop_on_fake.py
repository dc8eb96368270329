"""The whole `qa run` loop on the fake sandbox backend: the app's runner, the in-process executor, the
checkpointed graph and the SQLite store, with no Docker engine (the fast tier).

The examples are scripted on the fake (tests/fake_tasks.py plays their solve.sh and test.sh), so the run
must reach what the real run on Docker reaches for them: examples/<name>/qa-expected.json, exactly, as
tests/foundation/test_examples.py asks of the real run; and always-pass goes round the loop (revise, gate,
approve, adopt) to a clean version, as tests/reviser/test_fixer_table.py shows on Docker. A run killed
halfway resumes from its checkpoint without running a recorded trial again. What the fake cannot do
(strace, an egress proxy, a fake internet, a python3 image scan) must leave the probe's question skipped
or unanswered, not crash the run.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from envqa.app.runner import execute_run
from envqa.core.config import load_config
from envqa.core.layout import RunLayout
from envqa.store.db import Store
from qa_testkit import EXAMPLES
from tests.fake_tasks import always_pass_backend, trial_of, use_backend, wordfreq_backend, wordfreq_verifier

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

VALIDATION = ["nop-0", "oracle-0", "oracle-1", "oracle-2"]  # oracle x 3 (the default oracle_runs) and nop


class Interrupted(BaseException):
    """A kill in the middle of a trial: not an Exception, so no layer records it as the trial's outcome."""


def _config(tmp_path, backend, **extra):
    return load_config(
        None,
        {
            "home": str(tmp_path / "qa-home"),
            "sandbox.backend": use_backend(backend),
            "scheduler.mode": "local",
            "loop.max_iterations": 0,
            **extra,
        },
    )


def _copy(name: str, tmp_path):
    return shutil.copytree(EXAMPLES / name, tmp_path / name)


def _expected(name: str) -> dict:
    return json.loads((EXAMPLES / name / "qa-expected.json").read_text())


def _starts(backend) -> Counter:
    """How many sandboxes each trial started (a trial runs in one; a rerun would start a second)."""
    return Counter(trial_of(sb) for sb in backend.started if trial_of(sb))  # not the probes' image scans


def _validation_ids(trial_ids) -> list[str]:
    return sorted(
        t.rsplit("-", 1)[0]
        for t in trial_ids
        if t.startswith(("oracle-", "nop-")) and t.rsplit("-", 1)[0] in VALIDATION
    )


def test_a_clean_example_runs_the_whole_loop_on_the_fake(tmp_path):
    backend = wordfreq_backend()
    config = _config(tmp_path, backend)
    report = execute_run(_copy("clean-wordfreq", tmp_path), config, "fake-clean", quiet=True, approval_mode="auto")

    expected = _expected("clean-wordfreq")
    assert sorted({f["rule"] for f in report["findings"]}) == expected["rules"] == []
    assert report["verdict"] == "clean", json.dumps(report["findings"], indent=1)[:2000]
    by_agent = Counter(t["agent"] for t in report["trials"])
    assert by_agent["oracle"] >= 3 and by_agent["nop"] >= 1
    assert {t["agent"]: t["outcome"] for t in report["trials"] if t["agent"] in ("oracle", "nop")} == {
        "oracle": "pass",
        "nop": "fail",
    }
    assert all(t["outcome"] == "fail" for t in report["trials"] if t["agent"].startswith("exploit-"))

    # One truth: every trial in the store, once; the report and report.json are the store's.
    store = Store(config.db_path)
    stored = store.trials_for_run("fake-clean")
    assert sorted(t.trial_id for t in stored) == sorted(t["trial_id"] for t in report["trials"])
    assert len({t.trial_id for t in stored}) == len(stored)
    assert store.get_run("fake-clean")["status"] == "finished"
    assert store.run_report("fake-clean")["verdict"] == "clean"
    report_json = RunLayout(config.runs_dir, "fake-clean").root / "report.json"
    assert json.loads(report_json.read_text())["verdict"] == "clean"
    assert all(n == 1 for n in _starts(backend).values()), _starts(backend)
    assert all(sb._stopped for sb in backend.started)  # every trial's sandbox was stopped

    # Mutation testing ran on the oracle's end state: /app/wordfreq deleted and stubbed, both killed.
    coverage = {c["probe"]: c for c in report["coverage"]}
    assert coverage["oracle_state/mutation"]["status"] == "ran"
    mutants = [
        sb
        for sb in backend.started
        if trial_of(sb).startswith("oracle-") and any("find /logs/verifier" in " ".join(c.cmd) for c in sb.calls)
    ]
    assert len(mutants) == 1  # the hunt's one oracle-state trial: verifier re-runs and mutants, one container
    verifier_runs = [c for c in mutants[0].calls if "bash /tests/test.sh" in " ".join(c.cmd)]
    assert len(verifier_runs) == 1 + config.probes.verifier_reruns + 2  # trial, re-runs, deleted, stub

    # What the fake cannot do is said, not crashed on: no strace output, egress and the network exploit skipped.
    assert coverage["egress"]["status"] == "skipped"
    assert coverage["exploits/exploit-network-fetch"]["status"] == "skipped"
    assert not list(config.runs_dir.rglob("strace*.txt"))
    assert report.get("incomplete") in (None, [])

    # Resuming a finished run runs nothing again and reads the same report.
    started = len(backend.started)
    again = execute_run(tmp_path / "elsewhere", config, "fake-clean", resume=True, quiet=True)
    assert again["verdict"] == "clean" and len(backend.started) == started


@pytest.mark.parametrize("where", ["validation", "hunt"])
def test_a_killed_run_resumes_without_rerunning_a_recorded_trial(tmp_path, where):
    """Killed in validation (nop's verifier) or in the hunt (an exploit's agent phase), the run resumes from
    its checkpoint: a trial the store holds is not run again. The one exception is the granularity of a
    probe: a probe job is answered whole or not at all (its trials carry live strace and end-state
    evidence), so the killed probe's trials that had already finished run again; no other probe's do."""
    backend = wordfreq_backend()
    config = _config(tmp_path, backend)
    killed: list[str] = []
    pattern, then = (
        (r"bash /tests/test\.sh", wordfreq_verifier) if where == "validation" else (r"ENVQA_PLUGIN", lambda call: None)
    )  # the workspace-conftest exploit's agent phase

    def kill_once(call):
        if not killed and (where == "hunt" or trial_of(call.sandbox).startswith("nop-")):
            killed.append(trial_of(call.sandbox))
            raise Interrupted()
        return then(call)

    backend.handlers.insert(0, (pattern, kill_once))
    with pytest.raises(Interrupted):
        execute_run(_copy("clean-wordfreq", tmp_path), config, "fake-resume", quiet=True, approval_mode="auto")
    store = Store(config.db_path)
    before = {t.trial_id for t in store.trials_for_run("fake-resume")}
    assert killed and killed[0] not in before
    assert store.get_run("fake-resume")["status"] == "running"

    report = execute_run(tmp_path / "ignored", config, "fake-resume", resume=True, quiet=True)
    assert report["verdict"] == "clean" and report["findings"] == []
    starts = _starts(backend)
    again = {t for t, n in starts.items() if n > 1}
    assert killed[0] in again  # it had no result: it runs again
    if where == "validation":
        assert _validation_ids(before) == ["oracle-0", "oracle-1", "oracle-2"] and again == {killed[0]}
    else:
        assert _validation_ids(before) == VALIDATION
        assert all(t.startswith("exploit-") for t in again), again  # only the killed probe's own trials
    assert all(n <= 2 for n in starts.values())
    after = [t.trial_id for t in store.trials_for_run("fake-resume")]
    assert len(after) == len(set(after)) and before < set(after)
    assert sorted(after) == sorted(t["trial_id"] for t in report["trials"])


def test_a_verifier_that_passes_nop_is_reported_on_the_fake(tmp_path):
    backend = always_pass_backend()
    config = _config(tmp_path, backend)
    report = execute_run(_copy("always-pass", tmp_path), config, "fake-flawed", quiet=True, approval_mode="auto")

    expected = _expected("always-pass")
    assert sorted({f["rule"] for f in report["findings"]}) == sorted(expected["rules"]), json.dumps(
        report["findings"], indent=1
    )[:3000]
    assert sorted({f["label"] for f in report["findings"]}) == sorted(expected["labels"])
    assert report["verdict"] == "findings"
    nop = next(f for f in report["findings"] if f["rule"] == "nop-passes")
    assert nop["trial_ids"] and all(t.startswith("nop-") for t in nop["trial_ids"])
    coverage = {c["probe"]: c for c in report["coverage"]}
    assert coverage["oracle_state/mutation"]["status"] == "skipped"  # nop passes: every mutant would
    assert Store(config.db_path).run_report("fake-flawed")["verdict"] == "findings"


def test_the_egress_probe_without_a_fake_internet_on_the_fake_is_skipped(tmp_path):
    """An open task and a configured fake internet: Docker could serve it, the fake cannot, so the
    probe says it was skipped (and the run still ends with its verdict)."""
    backend = wordfreq_backend()
    env_dir = _copy("clean-wordfreq", tmp_path)
    toml = env_dir / "task.toml"
    toml.write_text(toml.read_text().replace("allow_internet = false", "allow_internet = true"))
    internet = tmp_path / "internet"
    internet.mkdir()
    config = _config(
        tmp_path, backend, **{"probes.fake_internet_dir": str(internet), "probes.fake_internet_hosts": ["example.test"]}
    )
    report = execute_run(env_dir, config, "fake-egress", quiet=True, approval_mode="auto")
    coverage = {c["probe"]: c for c in report["coverage"]}
    assert coverage["egress"]["status"] == "skipped" and "fake internet" in coverage["egress"]["reason"]
    assert not [t for t in report["trials"] if "egress" in (t.get("purpose") or "")]
    assert report["verdict"] in ("clean", "findings")


@pytest.mark.parametrize("approval", ["auto", "wait"])
def test_the_loop_revises_gates_and_adopts_a_fix_on_the_fake(tmp_path, approval):
    """always-pass through the whole loop (what tests/reviser/test_fixer_table.py runs on Docker): the
    reward fixer's revision is gated (the oracle passes it, nop no longer does), approved (at once, or by
    an answer given to the waiting run) and adopted, and the adopted version comes out clean."""
    backend = always_pass_backend()
    config = _config(tmp_path, backend, **{"loop.max_iterations": 3})
    env_dir = _copy("always-pass", tmp_path)
    report = execute_run(env_dir, config, "fake-loop", quiet=True, approval_mode=approval)
    store = Store(config.db_path)
    if approval == "wait":
        assert store.get_run("fake-loop")["status"] == "awaiting_approval"
        pending = store.get_loop("fake-loop")["pending_proposal"]
        assert pending and len(report["versions"]) == 1
        report = execute_run(
            env_dir,
            config,
            "fake-loop",
            resume=True,
            quiet=True,
            answer={"action": "approve", "approver": "tester", "reason": "the gate passed"},
        )

    assert report["verdict"] == "clean" and report["findings"] == [], json.dumps(report["findings"])[:2000]
    first, adopted = report["versions"]
    assert adopted["author"].startswith("fixer:") and adopted["parent"] == first["version"]
    assert {f["rule"] for f in first["findings"]} >= set(_expected("always-pass")["rules"])
    assert adopted["approval"]["action"] == "approve"
    assert store.get_run("fake-loop")["status"] == "finished"
    assert "+find /logs/verifier -mindepth 1 -delete" in adopted["patch"]  # the fixer's test.sh, adopted
    assert {t: n for t, n in _starts(backend).items() if n != 1} == {}  # no trial ran twice, waiting or not
    stored = [t.trial_id for t in store.trials_for_run("fake-loop")]
    assert len(stored) == len(set(stored))
