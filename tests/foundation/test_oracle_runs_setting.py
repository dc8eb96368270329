"""One `oracle_runs` (issue 21): `--oracle-runs` sets the one value every stage uses; a stage's own key (the
settings of earlier releases) wins only when it is set."""

from __future__ import annotations

import pytest

from envqa.core.config import HUNT_MIN_ORACLE_RUNS, load_config

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

STAGES = ("validate", "hunt", "gate", "generate")


def _runs(cfg) -> dict[str, int]:
    return {stage: cfg.oracle_runs_for(stage) for stage in STAGES}


def test_defaults_are_those_of_the_four_settings_before(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./qa.toml
    assert _runs(load_config()) == {"validate": 3, "hunt": HUNT_MIN_ORACLE_RUNS, "gate": 3, "generate": 3}


def test_the_flag_sets_every_stage_that_has_no_override(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _runs(load_config(None, {"oracle_runs": 1})) == {"validate": 1, "hunt": 5, "gate": 1, "generate": 1}
    assert _runs(load_config(None, {"oracle_runs": 7})) == {"validate": 7, "hunt": 7, "gate": 7, "generate": 7}


def test_old_keys_still_load_and_win_as_overrides(tmp_path):
    cfg_file = tmp_path / "qa.toml"
    cfg_file.write_text(
        "[validate]\noracle_runs = 2\n[probes]\noracle_runs = 4\n[reviser]\ngate_oracle_runs = 1\n"
        "[generator]\noracle_runs = 6\n"
    )
    assert _runs(load_config(cfg_file)) == {"validate": 2, "hunt": 4, "gate": 1, "generate": 6}
    # the one value changes only the stages without a key of their own
    cfg_file.write_text("[reviser]\ngate_oracle_runs = 2\n")
    assert _runs(load_config(cfg_file, {"oracle_runs": 1})) == {"validate": 1, "hunt": 5, "gate": 2, "generate": 1}
