"""The chaos benchmark's load (benchmarks/chaos_load.py): what a spec starts, and that stopping it leaves no
process behind (the loops are started and stopped by pid, never by name)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from qa_testkit import REPO, wait_for

pytestmark = pytest.mark.fast


def _module():
    spec = importlib.util.spec_from_file_location("chaos_load", REPO / "benchmarks" / "chaos_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_spec_names_its_parts_and_a_bad_one_is_refused():
    chaos_load = _module()
    assert chaos_load.Load("docker, cpu:2,io:1").parts() == [("docker", 1), ("cpu", 2), ("io", 1)]
    for bad in ("gpu:1", "cpu:two"):
        with pytest.raises(SystemExit, match="--load"):
            chaos_load.Load(bad).parts()


def test_burners_run_and_are_gone_after_stop():
    chaos_load = _module()
    load = chaos_load.Load("cpu:1,io:1").start()
    try:
        pids = [p.pid for _, p in load.procs]
        assert len(pids) == 2
        wait_for(lambda: all(path.exists() for path in load.counts.values()), 60, "each loop to finish a unit")
    finally:
        load.stop()
    summary = load.summary()
    load.cleanup()
    assert not load.tmp.exists()  # the loops' scratch files (an io loop killed mid-write) went with it
    assert summary["load"] == "cpu:1,io:1" and all(n >= 1 for n in summary["units_done"].values())
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
