"""benchmarks/rule_base_rates.py: per dataset and rule, the tasks it fires on (issue 52 item 5).

On the project's own clean look-alikes no rule fires at warning or above (exit 0); on a small dataset written here
a warning on 2 of 4 tasks is `over` (exit 1), a task nested in a task is not walked into, a malformed task is
refused with its reason, and a folder that is not there is a skip (exit 0, stderr), as CI has no corpus.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest

from qa_testkit import REPO

from .conftest import OPEN_NETWORK_TOML, write_env

pytestmark = pytest.mark.fast

PIN = "#!/bin/bash\npip install requests\npip install flask\npytest /tests\n"  # at verify time: a warning


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rule_base_rates", REPO / "benchmarks" / "rule_base_rates.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_clean_examples_have_no_warning(bench, capsys):
    assert bench.main([f"clean={REPO}/examples/clean-*", "--json-only"]) == 0
    result = last_json(capsys.readouterr().out)
    clean = result["datasets"]["clean"]
    assert clean["linted"] >= 30 and clean["refused"] == clean["crashed"] == 0
    raised = {r: s for r, s in clean["rules"].items() if set(s) & {"warning", "error", "critical"}}
    assert raised == {} and result["over"] == []


def test_a_small_dataset_counts_tasks_families_and_refusals(bench, capsys, tmp_path):
    root = tmp_path / "ds"
    for name in ("fam-a/t1", "fam-a/t2", "fam-b/deeper/t3", "fam-b/t4"):
        write_env(
            root / name,
            **({"tests__test_sh": PIN, "task_toml": OPEN_NETWORK_TOML} if name.endswith(("t1", "t2")) else {}),
        )
    write_env(
        root / "fam-a/t1/inner", tests__test_sh=PIN, task_toml=OPEN_NETWORK_TOML
    )  # a folder inside a task is not another task
    write_env(root / "fam-b/broken", task_toml='version = "1.0"\n[agent]\ntimeout_sec = "soon"\n')
    assert bench.main([str(root), "--by-family"]) == 1
    out = capsys.readouterr().out
    result = last_json(out)
    ds = result["datasets"][str(root)]
    assert (ds["tasks"], ds["linted"], ds["refused"]) == (5, 4, 1)
    assert ds["rules"]["unpinned-python-dependency"] == {"warning": 2}  # two tasks, whatever the lines per task
    assert "task.toml" in ds["refused_errors"]["fam-b/broken"] and str(root) not in ds["refused_errors"]["fam-b/broken"]
    assert result["over"] == [{"dataset": str(root), "rule": "unpinned-python-dependency", "tasks": 2, "of": 4}]
    families = result["families"][str(root)]
    assert families["fam-a"]["rules"]["unpinned-python-dependency"] == {"warning": 2}
    assert families["fam-b"]["linted"] == 2 and "unpinned-python-dependency" not in families["fam-b"]["rules"]
    assert "unpinned-python-dependency" in out.split("\n{")[0]  # the table came before the JSON line


def test_an_absent_folder_is_a_skip(bench, capsys, tmp_path):
    assert bench.main([str(tmp_path / "no-corpus"), "names=/nonexistent/*/2.1"]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and last_json(captured.out)["skipped"] is True
