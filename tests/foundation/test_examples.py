"""Each of the foundation's examples through `qa run --json`: the rules and labels it must report, exactly.

The examples' `qa-expected.json` says what `qa run` must find ({"rules": [...], "labels": [...]}, both
empty for a clean one). Other areas add examples with their own test; this one covers these five. One of them
goes through `qa run`'s defaults end to end (three validation oracles); the others read the session's shared run
of the example (the detection table's, tests/qa_testkit.example_report), which the table only checks for a
superset: here the rules and labels must match exactly.
"""

from __future__ import annotations

import json

import pytest

from qa_testkit import EXAMPLES, containers, run_qa

MINE = ["clean-wordfreq", "broken-oracle", "always-pass", "leaky-solution", "tb1-clean"]
OWN_RUN = "clean-wordfreq"  # the demo's example: its run here is on the defaults


def _run(name: str, qa_env, tmp_path, example_reports) -> tuple[int, dict, str, int]:
    """(exit code, report, stderr, how many oracle trials the run must hold at least)."""
    if name != OWN_RUN:  # `--oracle-runs 1`: validation's oracle, then the hunt's on its end state
        run = example_reports(name)
        return run["code"], run["report"], run["stderr"], 2
    (tmp_path / "qa.toml").write_text("[loop]\nmax_iterations = 0\n")  # detection only: the loop has its own tests
    res = run_qa(["run", str(EXAMPLES / name), "--json"], qa_env, timeout=300, cwd=tmp_path)
    return res.returncode, json.loads(res.stdout) if res.returncode in (0, 1) else None, res.stderr, 3


@pytest.mark.parametrize("name", MINE)
def test_example_reports_exactly_what_it_expects(name, qa_env, docker_client, tmp_path, example_reports):
    expected = json.loads((EXAMPLES / name / "qa-expected.json").read_text())
    code, report, stderr, min_oracles = _run(name, qa_env, tmp_path, example_reports)
    assert code in (0, 1), stderr
    rules = sorted({f["rule"] for f in report["findings"]})
    labels = sorted({f["label"] for f in report["findings"]})
    assert rules == sorted(expected["rules"]), json.dumps(report["findings"], indent=1)[:3000]
    assert labels == sorted(expected["labels"])
    assert code == (1 if expected["rules"] else 0)
    assert report["verdict"] == ("findings" if expected["rules"] else "clean")
    validate = [t for t in report["trials"] if t["agent"] in ("oracle", "nop")]
    agents = [t["agent"] for t in validate]  # the hunt stage may add oracle re-runs of its own
    assert agents.count("oracle") >= min_oracles and agents.count("nop") >= 1
    assert all(t["outcome"] in ("pass", "fail") for t in validate)
    assert containers(docker_client, f"envqa.run={report['run_id']}") == []
