"""`qa run ENV -m MODEL -n N` end to end: real CLI, real Docker, real SDKs, fake provider server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qa_testkit import EXAMPLES, run_qa

from . import scripts
from .conftest import GOOD_KEY, OPENAI_KEY

ENV = str(EXAMPLES / "clean-wordfreq")
NO_PROBES = "[probes]\nenabled = []\n"  # the shortcut hunt is another stage's business; keep these runs short


@pytest.fixture
def cli_env(qa_env, fake_provider):
    """qa_env plus both providers pointed at a fresh fake server; returns (env, server)."""

    def make(script: dict, anthropic_key: str | None = GOOD_KEY):
        srv = fake_provider({"keys": [GOOD_KEY, OPENAI_KEY], **script})
        env = dict(qa_env, OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_BASE_URL=srv.url, OPENAI_BASE_URL=srv.url + "/v1")
        env.pop("ANTHROPIC_API_KEY", None)
        if anthropic_key is not None:
            env["ANTHROPIC_API_KEY"] = anthropic_key
        return env, srv

    return make


def assert_no_secret_anywhere(env: dict, *outputs: str) -> None:
    """Grep every file under QA_HOME and the captured output for both keys."""
    for key in (GOOD_KEY, OPENAI_KEY):
        for text in outputs:
            assert key not in text
        for path in Path(env["QA_HOME"]).rglob("*"):
            if path.is_file():
                assert key.encode() not in path.read_bytes(), f"key leaked into {path}"


def test_sweep_solves_fails_and_parks_only_the_rate_limited_model(cli_env, tmp_path):
    """good solves (1), wrong fails (0); `parked` gets one 429 (Retry-After 3 s) on its first request of
    round 2 and must wait while the others keep going, then solve; `dead` is rate limited forever and
    ends as infra, never as a fail."""
    env, srv = cli_env(
        {
            "models": {
                "good": scripts.solving(),
                "wrong": scripts.wrong(),
                # Round 1 is one probe trial per model (4 requests each); the 429 hits round 2, while the
                # other models' round-2 trials are queued too.
                "parked": {**scripts.solving(), "faults": [{"status": 429, "retry_after": 3, "times": 1, "after": 4}]},
                "dead": {"faults": [{"status": 429, "retry_after": 1, "times": -1}]},
            }
        }
    )
    (tmp_path / "qa.toml").write_text(
        NO_PROBES + '[scheduler.models."anthropic/dead"]\nmax_parks = 1\n'
        # one parked trial in flight at a time: a park then stops all of its requests
        '[scheduler.models."anthropic/parked"]\nconcurrency = 1\n'
    )
    proc = run_qa(
        [
            "run",
            ENV,
            "-m",
            "anthropic/good",
            "-m",
            "openai/wrong",
            "-m",
            "anthropic/parked",
            "-m",
            "anthropic/dead",
            "-n",
            "3",
            "--oracle-runs",
            "1",
            "--json",
        ],
        env,
        cwd=tmp_path,
    )
    assert proc.returncode == 3, proc.stderr[-2000:]  # incomplete: `dead` could not be measured at all
    report = json.loads(proc.stdout)
    solver = [t for t in report["trials"] if t["agent"] == "solver"]
    by_model = {
        m: sorted((t["outcome"], t["reward"]) for t in solver if t["model"] == f"{p}/{m}")
        for p, m in (("anthropic", "good"), ("openai", "wrong"), ("anthropic", "parked"), ("anthropic", "dead"))
    }
    assert by_model["good"] == [("pass", 1.0)] * 3
    assert by_model["wrong"] == [("fail", 0.0)] * 3
    assert by_model["parked"] == [("pass", 1.0)] * 3
    assert [o for o, _ in by_model["dead"]] == ["infra"] * 3  # never a fail

    # Parking: after its 429, `parked` sent nothing for the Retry-After; the other models kept working.
    log = srv.requests
    hit = next(r for r in log if r["model"] == "parked" and r["status"] == 429)
    resumed = min(r["t"] for r in log if r["model"] == "parked" and r["t"] > hit["t"])
    assert resumed - hit["t"] >= 2.9
    # Whether other work was still queued at that moment depends on the scheduler's order; if there was
    # any, it must not have waited for the park to end.
    others_after = sorted(r["t"] for r in log if r["t"] > hit["t"] and r["model"] in ("good", "wrong", "dead"))
    assert not others_after or others_after[0] < resumed, "another model waited for this model's park"

    sweep = report["sweep"]["models"]
    assert sweep["anthropic/good"]["pass_at_1"] == 1.0 and sweep["anthropic/good"]["ci_low"] > 0.3
    assert sweep["openai/wrong"]["pass_at_1"] == 0.0 and sweep["openai/wrong"]["pass_at_k"]["1"] == 0.0
    assert sweep["anthropic/dead"]["n"] == 0 and sweep["anthropic/dead"]["infra_classes"] == ["rate_limited"]
    overall = report["sweep"]["overall"]
    assert (overall["n"], overall["passes"], overall["infra"]) == (9, 6, 3)
    assert overall["spend"]["input_tokens"] == 9 * 6300  # scripted usage, summed over the measured trials
    assert any("anthropic/dead" in line for line in report["incomplete"])
    assert len(list(Path(env["QA_HOME"]).rglob("trajectory.json"))) == 12
    assert_no_secret_anywhere(env, proc.stdout, proc.stderr)


def test_bad_key_is_a_clear_exit_2(cli_env, tmp_path):
    wrong_key = "sk-ant-test-WRONG-kQ3nV8xL2pZ7rT4yM9"
    env, srv = cli_env({"models": {"good": scripts.solving()}}, anthropic_key=wrong_key)
    proc = run_qa(["run", ENV, "-m", "anthropic/good", "-n", "5", "--oracle-runs", "1"], env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "ANTHROPIC_API_KEY" in proc.stderr and "rejected" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert [r["status"] for r in srv.requests] == [401]  # one probe trial, then the run stops
    for text in (proc.stdout, proc.stderr):
        assert wrong_key not in text
    assert_no_secret_anywhere(env, proc.stdout, proc.stderr)


def test_missing_key_fails_before_any_trial(cli_env, tmp_path):
    env, srv = cli_env({"models": {}}, anthropic_key=None)
    proc = run_qa(["run", ENV, "-m", "anthropic/good", "--oracle-runs", "1"], env, cwd=tmp_path)
    assert proc.returncode == 2 and "set the environment variable ANTHROPIC_API_KEY" in proc.stderr
    assert srv.requests == [] and not list(Path(env["QA_HOME"]).rglob("oracle-*"))  # nothing ran at all


def test_usd_budget_stops_new_trials_and_says_so(cli_env, tmp_path):
    env, srv = cli_env({"models": {"good": scripts.solving()}})
    (tmp_path / "qa.toml").write_text(
        NO_PROBES + '[scheduler]\nmode = "local"\n[sweep]\nbatch = 1\n[budget]\nmax_usd = 1.0\n'
        '[prices."anthropic/good"]\ninput_per_mtok = 100.0\noutput_per_mtok = 500.0\n'
    )
    proc = run_qa(["run", ENV, "-m", "anthropic/good", "-n", "5", "--oracle-runs", "1"], env, cwd=tmp_path)
    # every trial passed: above the band, so not clean; the budget ends the loop before any revision
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "budget reached" in proc.stdout and "max_usd" in proc.stdout  # the human report says why
    report = json.loads(next(Path(env["QA_HOME"]).rglob("report.json")).read_text())
    assert report["verdict"] == "out_of_band" and report["stop_reason"].startswith("budget")
    good = report["sweep"]["models"]["anthropic/good"]
    # One trial costs 6300 in x $100/M + 310 out x $500/M = $0.785 < $1: the second runs, the third does not.
    assert good["trials"] == 2 and good["stop_reason"] == "budget"
    assert good["spend"]["cost_usd"] == pytest.approx(2 * (6300 * 100 + 310 * 500) / 1e6)
    assert "max_usd" in report["sweep"]["budget_stop"]


def test_trial_cap_and_adaptive_stop(cli_env, tmp_path):
    env, srv = cli_env({"models": {"good": scripts.solving(), "wrong": scripts.wrong()}})
    (tmp_path / "qa.toml").write_text(
        NO_PROBES + '[scheduler]\nmode = "local"\n'
        "[sweep]\nadaptive = true\nn_min = 3\nbatch = 3\nn_max = 30\n"
        "[budget]\nmax_trials = 5\n"
    )
    proc = run_qa(
        ["run", ENV, "-m", "anthropic/good", "-m", "openai/wrong", "--oracle-runs", "1", "--json"], env, cwd=tmp_path
    )
    report = json.loads(proc.stdout)
    models = report["sweep"]["models"]
    # Round 1 probes each model once (2 started). Round 2 would add 3 + 3 but the cap of 5 leaves 3: good
    # takes them and is then decided (4/4 is wholly above the band); the cap stops wrong at 1.
    assert (models["anthropic/good"]["trials"], models["openai/wrong"]["trials"]) == (4, 1)
    assert models["anthropic/good"]["stop_reason"] == "decided"
    assert models["anthropic/good"]["band_decision"] == "above"
    assert models["openai/wrong"]["stop_reason"] == "budget"
    assert "max_trials=5" in report["sweep"]["budget_stop"]
