"""The collateral-damage probe (probes/collateral/): its choice (only state the task never asked to touch,
deterministic and bounded) and its damages on the fake sandbox (each seen by the verifier alone, then undone;
stops last; the budget), through the oracle-state probe's end state. tests/probes/test_detection.py runs it on
Docker (examples/verifier-blind-to-collateral and its look-alike clean-verifier-notices-collateral)."""

from __future__ import annotations

import pytest

from envqa.core.config import DEFAULT_BASE_IMAGE
from envqa.core.environment import load_environment
from envqa.core.package_scripts import read_script
from envqa.core.parsers.dockerfile import instruction_spans
from envqa.core.sandbox import SandboxSpec
from envqa.probes.collateral.candidates import SCRIPTS, SCRIPTS_PACKAGE, Damage, choose_damages, dockerfile_candidates
from envqa.probes.collateral.probe import PROBE, RULE, judge_damages
from envqa.probes.oracle_state import oracle_state_probe
from envqa.sandbox.fake import FakeBackend
from tests.fake_tasks import script_probe_commands
from tests.probes.conftest import write_env
from tests.probes.test_probes_on_fake import _backend, _ctx, _out, _reward, _solve_writing

DOCKERFILE = """FROM envqa-base:bookworm
WORKDIR /app
COPY settings.conf /etc/app/settings.conf
COPY data.csv input.txt ./
RUN echo started > /var/log/app.log && touch /app/seed.db
RUN service redis-server start
"""


def spans(text=DOCKERFILE):
    """The Dockerfile's spans, as the task model holds them (what the probe chooses from)."""
    return instruction_spans(text)


@pytest.mark.fast
def test_candidates_come_from_copy_run_and_services_in_order(tmp_path):
    assert dockerfile_candidates(spans()) == [
        Damage("delete", "/etc/app/settings.conf", 3),
        Damage("delete", "/app/data.csv", 4),
        Damage("delete", "/app/input.txt", 4),
        Damage("truncate", "/var/log/app.log", 5),
        Damage("delete", "/app/seed.db", 5),
        Damage("stop", "redis-server", 6),
    ]


@pytest.mark.fast
def test_paths_the_instruction_or_tests_name_are_never_damaged(tmp_path):
    instruction = "Read /app/input.txt and write the sum to /app/out.txt. Do not change settings.conf."
    tests = ["def test_sum():\n    assert open('/app/data.csv').read()\n"]
    chosen, why = choose_damages(spans(), instruction, tests, limit=10)
    targets = [d.target for d in chosen]
    assert why == ""
    assert "/app/input.txt" not in targets and "/app/data.csv" not in targets
    assert "/etc/app/settings.conf" not in targets  # named by its file name
    assert targets == ["/var/log/app.log", "/app/seed.db", "redis-server"]


@pytest.mark.fast
def test_budget_bounds_the_damages_and_keeps_dockerfile_order(tmp_path):
    chosen, _ = choose_damages(spans(), "Write /app/out.txt.", [], limit=2)
    assert [d.target for d in chosen] == ["/etc/app/settings.conf", "/app/data.csv"]


@pytest.mark.fast
def test_what_the_oracle_changed_is_its_work_not_collateral_and_the_budget_counts_after(tmp_path):
    chosen, _ = choose_damages(spans(), "Write /app/out.txt.", [], limit=2, exclude=frozenset({"/app/data.csv"}))
    assert [d.target for d in chosen] == ["/etc/app/settings.conf", "/app/input.txt"]
    named = spans("FROM envqa-base:bookworm\nCOPY in.txt /app/in.txt\n")
    assert choose_damages(named, "x", [], exclude=frozenset({"/app/in.txt"})) == (
        [],
        "no candidates: the oracle's own run changed every file the probe would damage (its outputs)",
    )


@pytest.mark.fast
def test_a_file_name_inside_a_longer_word_is_not_a_mention(tmp_path):
    chosen, _ = choose_damages(spans(), "Write /app/seed.db.bak and read my_data.csv.old", [], limit=10)
    assert "/app/seed.db" in [d.target for d in chosen]


@pytest.mark.fast
def test_no_candidates_says_why(tmp_path):
    bare = spans("FROM envqa-base:bookworm\nWORKDIR /app\n")
    assert choose_damages(bare, "x", []) == (
        [],
        "no candidates: the Dockerfile puts no file, log or service in the image",
    )
    named = spans("FROM envqa-base:bookworm\nCOPY in.txt /app/in.txt\n")
    chosen, why = choose_damages(named, "Sort /app/in.txt in place.", [])
    assert chosen == [] and why.startswith("no candidates: every file")


@pytest.mark.fast
def test_every_damage_kind_has_a_shipped_script():
    for name in SCRIPTS.values():
        assert read_script(SCRIPTS_PACKAGE, name).startswith("#!/bin/sh")


@pytest.mark.fast
def test_a_folder_named_on_its_own_protects_its_files_but_a_path_below_it_does_not(tmp_path):
    dockerfile = spans()
    chosen, _ = choose_damages(dockerfile, "Fix the settings under /etc/app so the port is 80.", [], limit=10)
    assert "/etc/app/settings.conf" not in [d.target for d in chosen]
    chosen, _ = choose_damages(dockerfile, "Write /app/out.txt.", [], limit=10)
    assert "/app/seed.db" in [d.target for d in chosen]  # /app of /app/out.txt is not the folder named


# --- the damages applied (the fake sandbox: files in memory, no Docker) --------------------------------------

SETTINGS, LOG = "/etc/app/settings.conf", "/var/log/app.log"
DAMAGES = [Damage("stop", "redis-server", 6), Damage("delete", SETTINGS, 3), Damage("truncate", LOG, 5)]


def _sandbox(running: bool = True):
    backend = FakeBackend()
    script_probe_commands(backend)
    backend.on(lambda argv: argv[:2] == ["sh", "-c"] and argv[3:4] == ["running"])(lambda call: 0 if running else 1)
    sandbox = backend.start(SandboxSpec(image=DEFAULT_BASE_IMAGE))
    sandbox.write_file(SETTINGS, b"port=1\n", 0o600)
    sandbox.write_file(LOG, b"started\n", 0o644)
    return sandbox


def _state(sandbox) -> dict[str, bytes | None]:
    return {p: (n.data if (n := sandbox.fs.node(p)) is not None else None) for p in (SETTINGS, LOG)}


@pytest.mark.fast
def test_each_damage_is_judged_alone_then_undone_and_stops_come_last():
    sandbox = _sandbox()
    seen = []

    def verdict(label, damage):
        seen.append((label, damage.target, _state(sandbox)))
        return "pass" if damage.kind != "delete" else "fail"

    judged, notes = judge_damages(sandbox, DAMAGES, verdict)
    assert notes == []
    assert seen == [
        ("collateral-1", SETTINGS, {SETTINGS: None, LOG: b"started\n"}),
        ("collateral-2", LOG, {SETTINGS: b"port=1\n", LOG: b""}),  # the deleted file is back, mode and all
        ("collateral-3", "redis-server", {SETTINGS: b"port=1\n", LOG: b"started\n"}),
    ]
    assert [(j.damage.target, j.unnoticed) for j in judged] == [(SETTINGS, False), (LOG, True), ("redis-server", True)]
    assert _state(sandbox) == {SETTINGS: b"port=1\n", LOG: b"started\n"} and sandbox.fs.node(SETTINGS).mode == 0o600


@pytest.mark.fast
def test_what_is_not_there_to_damage_is_skipped_with_its_reason():
    sandbox = _sandbox(running=False)
    sandbox.fs.remove(LOG)
    judged, notes = judge_damages(sandbox, DAMAGES, lambda label, damage: "pass")
    assert [j.damage.target for j in judged] == [SETTINGS]
    assert notes == [
        f"{LOG}: absent on the end state, a folder, or too large to restore",
        "service redis-server: not running on the end state",
    ]


@pytest.mark.fast
def test_no_damage_starts_once_the_budget_is_spent():
    now = [0.0]
    sandbox = _sandbox()

    def slow_verdict(label, damage):
        now[0] += 2.0  # each verifier run "takes" two seconds on this clock
        return "pass"

    judged, notes = judge_damages(sandbox, DAMAGES, slow_verdict, time_limit=3.0, clock=lambda: now[0])
    assert [j.damage.target for j in judged] == [SETTINGS, LOG]
    assert notes == ["service redis-server stopped: not tried, the 3 s budget was spent"]
    assert _state(sandbox) == {SETTINGS: b"port=1\n", LOG: b"started\n"}


# --- through the oracle-state probe ----------------------------------------------------------------------------

ENV_FILES = {
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\nCOPY settings.conf /etc/app/settings.conf\n",
    "environment/settings.conf": "port=1\n",
}


def _settings_intact(call) -> bool:
    node = call.sandbox.fs.node(SETTINGS)
    return node is not None and node.data == b"port=1\n"


@pytest.mark.fast
@pytest.mark.parametrize("checks_settings", [False, True])
def test_the_oracle_state_probe_notes_a_verifier_blind_to_a_deleted_file(tmp_path, qa_config, checks_settings):
    def verify(call):
        ok = _out(call) == b"hello\n" and (_settings_intact(call) or not checks_settings)
        return _reward(call, ok)

    backend = _backend(_solve_writing(b"hello\n"), verify)
    ctx = _ctx(tmp_path, qa_config, backend, verifier_reruns=0)
    ctx.env = load_environment(write_env(tmp_path / "env", ENV_FILES))  # the image also holds settings.conf
    findings = [f for f in oracle_state_probe(ctx) if f.rule == RULE]
    ran = [c for c in ctx.coverage if c["probe"] == PROBE]
    assert ran and ran[0]["status"] == "ran" and ran[0]["reason"].startswith("1 damage(s) judged")
    if checks_settings:
        assert findings == []
        return
    [note] = findings
    assert note.severity.value == "info" and note.label.value == "brittleness"
    assert f"{SETTINGS} deleted" in note.message and "line 3" in note.evidence[0]
    assert note.fix and SETTINGS in note.fix
