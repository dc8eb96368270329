"""Statuses are enums in code and the same strings in the store: a member goes in, the old string comes out."""

from __future__ import annotations

import json

import pytest

from envqa.core.statuses import (
    FINAL_CALL,
    FINAL_RUN,
    FINAL_TASK,
    RUN_WITH_REPORT,
    CallStatus,
    DatasetStatus,
    DatasetTaskStatus,
    RunStatus,
    TrialStatus,
)
from envqa.store.db import Store
from envqa.store.db import TrialStatus as StoreTrialStatus

BACKENDS = [pytest.param("sqlite", marks=pytest.mark.fast), "postgres"]
# The strings every store written so far holds: changing one is a migration, not a refactor.
STORED = {
    RunStatus: {"queued", "running", "awaiting_approval", "finished", "failed"},
    TrialStatus: {"queued", "running", "done"},
    CallStatus: {"queued", "done", "failed"},
    DatasetStatus: {"running", "interrupted", "finished"},
    DatasetTaskStatus: {"pending", "running", "done", "invalid", "failed"},
}


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path, monkeypatch) -> Store:
    monkeypatch.delenv("QA_STORE_URL", raising=False)
    return Store(tmp_path / "envqa.db" if request.param == "sqlite" else request.getfixturevalue("pg_url"))


@pytest.mark.fast
def test_each_status_is_the_string_the_store_has_always_held():
    for enum, values in STORED.items():
        assert {m.value for m in enum} == values, enum.__name__
        for member in enum:
            assert member == member.value and str(member) == member.value
            assert json.dumps({"status": member}) == json.dumps({"status": member.value})
    assert StoreTrialStatus is TrialStatus  # one enum, re-exported where the store's callers knew it
    assert set(RUN_WITH_REPORT) < set(FINAL_RUN) and RunStatus.FAILED in FINAL_RUN
    assert CallStatus.QUEUED not in FINAL_CALL and DatasetTaskStatus.FAILED not in FINAL_TASK


def test_a_status_member_is_stored_as_its_string(store):
    store.create_run("r1", "/envs/x")
    assert store.get_run("r1")["status"] == "running"
    assert store.set_run_status("r1", RunStatus.AWAITING_APPROVAL)
    row = store.get_run("r1")
    assert row["status"] == "awaiting_approval" and type(row["status"]) is str
    # a claim from a status named by its member: only the first wins
    assert store.set_run_status("r1", RunStatus.RUNNING, only_from=(RunStatus.AWAITING_APPROVAL,))
    assert not store.set_run_status("r1", RunStatus.RUNNING, only_from=(RunStatus.AWAITING_APPROVAL,))
    assert store.get_run("r1")["status"] == RunStatus.RUNNING
    store.mark_call_queued("c1", "sandbox")
    assert store.get_call("c1")["status"] == "queued"
    store.finish_call("c1", {"ok": 1})
    assert store.get_call("c1")["status"] == "done" == CallStatus.DONE
    store.create_dataset("ds-1", ["/a"], {}, "{}")
    store.add_dataset_tasks("ds-1", [("/a", "a")])
    assert [t["status"] for t in store.dataset_tasks("ds-1")] == ["pending"]
    store.set_dataset_task("ds-1", "/a", DatasetTaskStatus.DONE, {"row": 1})
    store.set_dataset_status("ds-1", DatasetStatus.INTERRUPTED)
    assert [t["status"] for t in store.dataset_tasks("ds-1")] == ["done"]
    assert store.get_dataset("ds-1")["status"] == "interrupted"
