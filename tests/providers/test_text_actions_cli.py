"""`qa run ENV -m openai-compatible/NAME@URL --actions text`: the command line end to end (issue 26).

The first test runs the real CLI in this process on the fake sandbox backend (the fast tier); the second
runs the `qa` entry point as a subprocess on Docker, as a user would.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from envqa.app.cli import app
from qa_testkit import EXAMPLES, run_qa
from tests.fake_tasks import use_backend

from .test_text_actions import SUBMIT, WRITE, block, local, text_backend

ENV = str(EXAMPLES / "clean-wordfreq")
NO_PROBES = "[probes]\nenabled = []\n"


def solving_text() -> dict:
    return {
        "turns": [
            {"text": block(WRITE, "Writing it.")},
            {"text": block("printf 'b a b a c' | /app/wordfreq")},
            {"text": SUBMIT},
        ]
    }


def sweep_of(report: dict, model: str) -> list[tuple[str, float | None]]:
    return sorted(
        (t["outcome"], t["reward"]) for t in report["trials"] if t["agent"] == "solver" and t["model"] == model
    )


@pytest.mark.fast
def test_cli_actions_text_in_process_on_the_fake(tmp_path, fake_provider, monkeypatch, keep_logging):
    srv = fake_provider({"models": {"policy": solving_text()}})
    qa_toml = tmp_path / "qa.toml"
    backend = use_backend(text_backend())
    qa_toml.write_text(
        f'home = "{tmp_path / "home"}"\n{NO_PROBES}[sandbox]\nbackend = "{backend}"\n'
        '[scheduler]\nmode = "local"\n[loop]\nmax_iterations = 0\n'
    )
    monkeypatch.delenv("REDIS_URL", raising=False)
    model = local(srv)
    res = CliRunner().invoke(
        app,
        ["run", ENV, "-c", str(qa_toml), "-m", model, "--actions", "text", "-n", "2", "--oracle-runs", "1", "--json"],
    )
    assert res.exit_code in (0, 1), res.output[-3000:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert sweep_of(report, model) == [("pass", 1.0)] * 2
    assert all(r["tools"] == [] for r in srv.requests) and len(srv.requests) == 6
    assert report["sweep"]["models"][model]["pass_at_1"] == 1.0

    bad = CliRunner().invoke(app, ["run", ENV, "-c", str(qa_toml), "-m", model, "--actions", "json", "--json"])
    assert bad.exit_code == 2 and "solver.actions" in bad.stdout


def test_cli_actions_text_on_docker(tmp_path, qa_env, fake_provider):
    srv = fake_provider({"models": {"policy": solving_text()}})
    (tmp_path / "qa.toml").write_text(NO_PROBES)
    model = local(srv)
    proc = run_qa(
        ["run", ENV, "-m", model, "--actions", "text", "-n", "2", "--oracle-runs", "1", "--json"], qa_env, cwd=tmp_path
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert sweep_of(report, model) == [("pass", 1.0)] * 2
    assert all(r["tools"] == [] for r in srv.requests)
    assert report["sweep"]["models"][model]["pass_at_1"] == 1.0
