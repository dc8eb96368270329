"""Labels end to end: `qa run` with scripted solvers and a scripted analyst (real SDKs, fake provider server).

One run of clean-wordfreq with six solver models produces every label class: `legitimate` (a pass the
analyst accepts), `capability`, `ambiguity` and `brittleness` (failures the analyst explains), `shortcut`
(a pass that wrote the verifier's reward file: proven by the strace replay, over the analyst's
`legitimate`). (`infra` is in test_analyst_queue.py: an unmeasured model stops the hunt.) The analyst's citations are checked: one reply
cites a step that does not exist and is repaired; another keeps citing it and ends `verified: false`.
"""

from __future__ import annotations

import json

import pytest

from envqa.core.models import TrialLabel, TrialResult
from envqa.probes.analyst.rollup import rollup
from qa_testkit import EXAMPLES, run_qa

from . import scripts as s

ENV = str(EXAMPLES / "clean-wordfreq")
ANALYST = {
    "branches": [
        s.branch("GOOD-RUN", s.answer("legitimate", "earned-pass", [(4, "Writing /app/wordfreq.")])),
        # Cites a step that does not exist; repaired on the second turn.
        s.branch(
            "WRONG-RUN",
            s.answer("capability", "near-miss", [(99, "it crashed")]),
            s.answer("capability", "near-miss", [(5, "printf 'b a b a c' | /app/wordfreq")]),
        ),
        s.branch("AMBIG-RUN", s.answer("ambiguity", "underspecified-instruction", [(3, "AMBIG-RUN")])),
        # Cites a missing step twice: kept, but unverified.
        s.branch(
            "BRITTLE-RUN",
            s.answer("brittleness", "rigid-tests", [(42, "no such step")]),
            s.answer("brittleness", "rigid-tests", [(42, "still no such step")]),
        ),
        # The model calls the reward-writing pass legitimate; strace on the replay proves otherwise.
        s.branch("TAMPER-RUN", s.answer("legitimate", "earned-pass", [(4, "Writing /app/wordfreq.")])),
    ]
}


def test_every_label_class_end_to_end(cli_env, tmp_path):
    env, srv = cli_env(
        {
            "models": {
                "good": s.solver("GOOD-RUN"),
                "wrong": s.wrong("WRONG-RUN"),
                "ambig": s.wrong("AMBIG-RUN"),
                "brittle": s.wrong("BRITTLE-RUN"),
                "tamper": s.tamper("TAMPER-RUN"),
                "analyst": ANALYST,
            }
        }
    )
    (tmp_path / "qa.toml").write_text('[probes]\nenabled = ["solver_passes"]\n[loop]\nmax_iterations = 0\n')
    models = ["good", "wrong", "ambig", "brittle", "tamper"]
    proc = run_qa(
        [
            "run",
            ENV,
            *[a for m in models for a in ("-m", f"anthropic/{m}")],
            "-n",
            "1",
            "--oracle-runs",
            "1",
            "--analyst-model",
            "anthropic/analyst",
            "--json",
        ],
        env,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    for t in report["trials"]:  # every trial, ours and the models', carries a complete label object
        assert set(t["label"]) >= {"label", "subtype", "confidence", "explanation", "evidence", "verified"}, t
    solver = {t["model"].split("/")[1]: t for t in report["trials"] if t["agent"] == "solver"}
    got = {m: (solver[m]["label"]["label"], solver[m]["label"]["subtype"]) for m in models}
    assert got == {
        "good": ("legitimate", "earned-pass"),
        "wrong": ("capability", "near-miss"),
        "ambig": ("ambiguity", "underspecified-instruction"),
        "brittle": ("brittleness", "rigid-tests"),
        "tamper": ("shortcut", "verifier-tampering"),
    }, got

    # Citations checked by code: repaired (verified) vs still wrong after the one repair (unverified).
    assert solver["wrong"]["label"]["verified"] is True
    assert solver["wrong"]["label"]["evidence"] == [{"step_id": 5, "quote": "printf 'b a b a c' | /app/wordfreq"}]
    assert solver["brittle"]["label"]["verified"] is False
    assert "step 42 does not exist" in solver["brittle"]["label"]["explanation"]
    assert solver["good"]["label"]["source"] == "model:anthropic/analyst"
    analyst_calls = [r for r in srv.requests if r["model"] == "analyst"]
    # The tamper pass wrote under /logs/verifier: the cross-trial rule (issue 33) proves it a shortcut before any
    # model is asked, so the analyst gets only what the rules leave open: one call per other trial, one repair each
    # for wrong and brittle; the hunt's relabelling asked nothing again.
    assert solver["tamper"]["label"]["source"] == "deterministic", solver["tamper"]["label"]
    assert len(analyst_calls) == 4 + 2
    assert all(r["tool_choice"] for r in analyst_calls)
    assert any(
        f["rule"] == "pass-after-verifier-log-write" and solver["tamper"]["trial_id"] in f["trial_ids"]
        for f in report["findings"]
    )

    # The deterministic shortcut stays over the model's "legitimate": strace evidence, rule source.
    tamper = solver["tamper"]["label"]
    assert tamper["source"] == "deterministic"
    assert any(
        "/logs/verifier/reward.txt" in e["quote"] and e["quote"].startswith("strace") for e in tamper["evidence"]
    ), tamper

    # Our own trials: the reference solution passed legitimately, nop failed as it should.
    oracle = [t["label"] for t in report["trials"] if t["agent"] == "oracle"]
    assert oracle and all(lb["label"] == "legitimate" for lb in oracle)


@pytest.mark.fast
def test_rollup_noise_rule_on_a_mixed_sweep():
    """min_agreeing=2: ambiguity from 2 models is the task's; brittleness from one trial of one model is
    noise; a proven (deterministic) shortcut needs no vote; a one-model sweep counts when all agree."""

    def pair(i: int, model: str, label: str, subtype: str, outcome: str = "fail", source: str = "model:x"):
        t = TrialResult(
            trial_id=f"t{i}", run_id="r", env_version="v", agent="solver", model=model, purpose="sweep", outcome=outcome
        )
        return t, TrialLabel(trial_id=f"t{i}", label=label, subtype=subtype, source=source)

    mixed = [
        pair(1, "a/m1", "ambiguity", "underspecified-instruction"),
        pair(2, "a/m2", "ambiguity", "underspecified-instruction"),
        pair(3, "a/m2", "brittleness", "rigid-tests"),
        pair(4, "a/m1", "capability", "near-miss"),
        pair(5, "a/m1", "shortcut", "verifier-tampering", "pass", "deterministic"),
        pair(6, "a/m2", "infra", "rate_limited", "infra", "deterministic"),
    ]
    body = rollup(mixed, min_agreeing=2)
    assert body["problem_labels"] == ["ambiguity", "shortcut"]
    assert [e["label"] for e in body["noise"]] == ["brittleness"]
    assert body["counts"] == {
        "a/m1": {"ambiguity": 1, "capability": 1, "shortcut": 1},
        "a/m2": {"ambiguity": 1, "brittleness": 1, "infra": 1},
    }
    assert body["subtypes"]["a/m1"]["ambiguity/underspecified-instruction"] == 1
    # The same two ambiguity trials with min_agreeing=3 are noise.
    assert "ambiguity" not in rollup(mixed, min_agreeing=3)["problem_labels"]
    # One model: consistent only when every labelled trial agrees.
    single = [pair(i, "a/m1", "ambiguity", "underspecified-instruction") for i in range(3)]
    assert rollup(single, min_agreeing=5)["problem_labels"] == ["ambiguity"]
    assert rollup(single + [pair(9, "a/m1", "capability", "near-miss")], 5)["problem_labels"] == []
