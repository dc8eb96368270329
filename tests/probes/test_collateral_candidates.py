"""The collateral-damage probe's choice: only state the task never asked to touch, deterministic and bounded."""

from __future__ import annotations

import pytest

from envqa.core.package_scripts import read_script
from envqa.probes.collateral_candidates import SCRIPTS, Damage, choose_damages, dockerfile_candidates

DOCKERFILE = """FROM envqa-base:bookworm
WORKDIR /app
COPY settings.conf /etc/app/settings.conf
COPY data.csv input.txt ./
RUN echo started > /var/log/app.log && touch /app/seed.db
RUN service redis-server start
"""


def write(tmp_path, text=DOCKERFILE):
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    return path


@pytest.mark.fast
def test_candidates_come_from_copy_run_and_services_in_order(tmp_path):
    assert dockerfile_candidates(write(tmp_path)) == [
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
    chosen, why = choose_damages(write(tmp_path), instruction, tests, limit=10)
    targets = [d.target for d in chosen]
    assert why == ""
    assert "/app/input.txt" not in targets and "/app/data.csv" not in targets
    assert "/etc/app/settings.conf" not in targets  # named by its file name
    assert targets == ["/var/log/app.log", "/app/seed.db", "redis-server"]


@pytest.mark.fast
def test_budget_bounds_the_damages_and_keeps_dockerfile_order(tmp_path):
    chosen, _ = choose_damages(write(tmp_path), "Write /app/out.txt.", [], limit=2)
    assert [d.target for d in chosen] == ["/etc/app/settings.conf", "/app/data.csv"]


@pytest.mark.fast
def test_a_file_name_inside_a_longer_word_is_not_a_mention(tmp_path):
    chosen, _ = choose_damages(write(tmp_path), "Write /app/seed.db.bak and read my_data.csv.old", [], limit=10)
    assert "/app/seed.db" in [d.target for d in chosen]


@pytest.mark.fast
def test_no_candidates_says_why(tmp_path):
    bare = write(tmp_path, "FROM envqa-base:bookworm\nWORKDIR /app\n")
    assert choose_damages(bare, "x", []) == (
        [],
        "no candidates: the Dockerfile puts no file, log or service in the image",
    )
    named = write(tmp_path, "FROM envqa-base:bookworm\nCOPY in.txt /app/in.txt\n")
    chosen, why = choose_damages(named, "Sort /app/in.txt in place.", [])
    assert chosen == [] and why.startswith("no candidates: every file")


@pytest.mark.fast
def test_every_damage_kind_has_a_shipped_script():
    for name in SCRIPTS.values():
        assert read_script("envqa.probes", name).startswith("#!/bin/sh")
