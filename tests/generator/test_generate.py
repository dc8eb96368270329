"""The generator through the local fake provider (real Anthropic SDK over HTTP), real Docker builds and trials."""

from __future__ import annotations

import json
import tomllib

import pytest

from envqa.agents.generator import GeneratedFile, GeneratedTask, write_file_set
from envqa.core.errors import PatchError
from envqa.store.db import Store
from envqa.store.versions import VersionStore
from qa_testkit import run_qa, store_rows
from tests.generator.conftest import (
    BAD_BUILD,
    BAD_ORACLE,
    FAST,
    GOOD,
    GOOD_KEY,
    MODEL,
    QA_TOML,
    SPEC,
    answer,
    write_spec,
)


def fast_config(home, **extra):
    from envqa.core.config import load_config

    return load_config(None, {"home": str(home), **FAST, "generator.model": MODEL, **extra})


def cli_env(qa_env, srv) -> dict:
    return dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)


def test_build_then_oracle_failure_are_repaired_and_the_task_enters_the_loop_as_version_1(
    fake_provider, provider_env, tmp_path, docker_backend
):
    from envqa.app.runner import execute_run

    srv = fake_provider(
        {"models": {"claude-generator-test": {"turns": [answer(BAD_BUILD), answer(BAD_ORACLE), answer(GOOD)]}}}
    )
    provider_env(srv)
    config = fast_config(tmp_path / "home")
    spec_dir = write_spec(tmp_path / "hello-spec")
    report = execute_run(spec_dir, config, "gen-loop-1", quiet=True, approval_mode="wait")
    attempts = report["generation"]["attempts"]
    assert [a["stage"] for a in attempts] == ["build", "oracle", "passed"], attempts
    assert "libfoo9" in attempts[0]["detail"]  # the build log's tail went back to the model
    assert "did not earn reward 1" in attempts[1]["detail"]
    # Each repair continued the conversation with every failure so far.
    asks = [r for r in srv.requests if r.get("model") == "claude-generator-test"]
    assert [r["messages"] for r in asks] == [1, 3, 5]
    assert "oracle" in asks[2]["last"] and "Attempt 2 failed" in asks[2]["last"]
    # Into the loop: version 1 is the generated task, by the model, with the spec in its metadata.
    assert report["verdict"] == "clean", report["findings"]
    first = report["versions"][0]
    assert first["parent"] is None and first["author"] == f"model:{MODEL}", first
    vdir = VersionStore(config, Store(config.db_path)).path(first["version"])
    assert tomllib.loads((vdir / "task.toml").read_text())["metadata"]["spec"] == SPEC
    assert report["environment"]["name"] == "hello-spec"
    outcomes = {t["agent"]: t["outcome"] for t in report["trials"] if t["agent"] in ("oracle", "nop")}
    assert outcomes == {"oracle": "pass", "nop": "fail"}
    assert not any((config.home / "generate").glob("*/*")), "staging directories left behind"


def test_a_generator_that_never_passes_stops_after_max_repairs_and_writes_nothing(
    fake_provider, qa_env, tmp_path, docker_backend
):
    srv = fake_provider(
        {"models": {"claude-generator-test": {"turns": [answer(BAD_ORACLE, f"try {i}") for i in range(4)]}}}
    )
    (tmp_path / "qa.toml").write_text(QA_TOML)
    write_spec(tmp_path / "spec")
    proc = run_qa(
        ["generate", "spec", "--out", "out", "--max-repairs", "2", "--json"], cli_env(qa_env, srv), cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    [variant] = json.loads(proc.stdout)["variants"]
    assert variant["passed"] is False and variant["task_dir"] is None
    assert [(a["attempt"], a["stage"], a["notes"]) for a in variant["attempts"]] == [
        (1, "oracle", "try 0"),
        (2, "oracle", "try 1"),
        (3, "oracle", "try 2"),
    ]  # 1 + max_repairs, every one
    assert all(len(a["trial_ids"]) == 2 and "did not earn reward 1" in a["detail"] for a in variant["attempts"])
    assert len([r for r in srv.requests if r.get("model") == "claude-generator-test"]) == 3
    assert not (tmp_path / "out").exists()
    assert not any((tmp_path / qa_env["QA_HOME"] / "generate").glob("*/*"))
    # `qa run` on the spec: the generate node ends the run with the same report of every attempt, exit 1.
    run = run_qa(["run", "spec", "--json"], cli_env(qa_env, srv), cwd=tmp_path)
    assert run.returncode == 1, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert report["stop_reason"].startswith("generation_failed: 3 attempt(s)"), report
    assert [a["stage"] for a in report["generation"]["attempts"]] == ["oracle"] * 3
    assert not any((tmp_path / qa_env["QA_HOME"] / "generated").glob("*/*"))


@pytest.mark.fast
def test_no_generator_model_is_an_input_error_naming_the_setting(qa_env, tmp_path):
    write_spec(tmp_path / "spec")
    for args in (["generate", "spec"], ["run", "spec"]):
        proc = run_qa(args, qa_env, cwd=tmp_path)
        assert proc.returncode == 2 and "[generator] model" in proc.stderr, (args, proc.stderr[-1000:])
    assert not list(tmp_path.glob("spec-task*"))


@pytest.mark.fast
@pytest.mark.parametrize(
    "path",
    ["../escape.txt", "/etc/escape.txt", "environment/../../escape.txt", "notes/escape.txt", ".git/hooks/escape.txt"],
)
def test_a_path_outside_the_task_is_refused_before_anything_is_written(tmp_path, path):
    files = [GeneratedFile(path=p, content=c) for p, c in GOOD.items()] + [GeneratedFile(path=path, content="x")]
    with pytest.raises(PatchError, match="outside the task directory"):
        write_file_set(GeneratedTask(files=files), tmp_path / "task")
    assert not (tmp_path / "task").exists() and not list(tmp_path.rglob("escape.txt"))


def test_a_refused_file_set_is_fed_back_and_repaired(fake_provider, provider_env, tmp_path, docker_backend):
    from envqa.graphs.generate import generate_task
    from tests.reviser.kit import run_deps

    srv = fake_provider({"models": {"*": {"turns": [answer({**GOOD, "../../escape.txt": "owned\n"}), answer(GOOD)]}}})
    provider_env(srv)
    config = fast_config(tmp_path / "home")
    with run_deps(config) as deps:
        gen = generate_task(deps, write_spec(tmp_path / "spec"), tmp_path / "task", key="gen-refuse")
    assert [a.stage for a in gen.attempts] == ["refused", "passed"], gen.attempts
    assert "../../escape.txt" in gen.attempts[0].detail
    assert gen.passed and (tmp_path / "task" / "tests" / "test.sh").exists()
    assert not list(tmp_path.rglob("escape.txt"))


def test_count_3_with_one_failing_variant_gives_the_yield_table(fake_provider, qa_env, tmp_path, docker_backend):
    srv = fake_provider(
        {
            "models": {
                "claude-generator-test": {
                    "turns": [answer(GOOD)],
                    "branches": [{"when": "This is variant 2 of a batch", "turns": [answer(BAD_ORACLE)]}],
                }
            }
        }
    )
    # Embedded mode (Redis + worker processes): the model calls are jobs on the generator model's queue.
    (tmp_path / "qa.toml").write_text(QA_TOML.replace('mode = "local"', 'mode = "embedded"'))
    write_spec(tmp_path / "spec")
    proc = run_qa(
        ["generate", "spec", "--out", "out", "--count", "3", "--max-repairs", "0", "--json"],
        cli_env(qa_env, srv),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    body = json.loads(proc.stdout)
    table = {row["stage"]: row["variants"] for row in body["yield"]}
    print(json.dumps(body["yield"]))
    assert table == {
        "generated": 3,
        "built": 3,
        "oracle passes": 2,
        "nop fails": 2,
        "accepted": 2,
        "clean after hunt": None,
        "in band": None,
    }, table  # no --loop: not measured
    assert [v["reached"] for v in body["variants"]] == ["accepted", "built", "accepted"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["spec-1", "spec-3"]
    calls = store_rows(tmp_path / qa_env["QA_HOME"], "SELECT queue, status FROM calls WHERE call_id LIKE 'generate-%'")
    assert calls == [{"queue": MODEL, "status": "done"}] * 3, calls
    # The same batch again with the QA loop on the accepted variants (in-process trials: quicker), as a table.
    looped = run_qa(
        ["generate", "spec", "--out", "out2", "--count", "3", "--max-repairs", "0", "--loop"],
        dict(cli_env(qa_env, srv), QA_SCHEDULER_MODE="local"),
        cwd=tmp_path,
    )
    assert looped.returncode == 0, looped.stderr[-3000:]
    rows = {
        stage: next(line for line in looped.stdout.splitlines() if f" {stage} " in line)
        for stage in ("generated", "oracle passes", "clean after hunt", "in band")
    }
    print("\n".join(rows.values()))
    assert "3/3" in rows["generated"] and all(
        "2/3" in rows[s] for s in ("oracle passes", "clean after hunt", "in band")
    ), looped.stdout
