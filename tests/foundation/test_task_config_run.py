"""`qa run --json` on a task with an unknown task.toml key (issue 23): the run goes on, and the report carries
the key in `warnings` (real CLI, Docker)."""

from __future__ import annotations

import json

from qa_testkit import copy_example, run_qa


def test_run_json_lists_unknown_keys_as_warnings_and_runs(qa_env, docker_client, tmp_path):
    root = copy_example("clean-wordfreq", tmp_path)
    text = (root / "task.toml").read_text().replace("[verifier]\n", "[verifier]\ntimeout_secs = 5\n")
    (root / "task.toml").write_text(text)
    (tmp_path / "qa.toml").write_text("[loop]\nmax_iterations = 0\n")  # detection only
    res = run_qa(["run", str(root), "--json", "--oracle-runs", "1"], qa_env, timeout=600, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(res.stdout)
    assert report["verdict"] == "clean"
    [w] = report["warnings"]
    assert (w["key"], w["table"], w["suggestion"]) == ("timeout_secs", "[verifier]", "timeout_sec")
    assert "unknown key 'timeout_secs'" in " ".join(res.stderr.split())
