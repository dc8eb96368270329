"""Other producers' conventions read without noise (issue 52): Terminal-Bench adapter tasks (their own task.yaml
keys, every TB parser, no tests/ folder) and Harbor tasks as others write them (`version = "2.0"`, their own
metadata and tables, milestones). Each "reads now" case has a malformed look-alike that still exits 2 naming
the file. Fixtures: tests/fixtures/producers/ (our own files in the shapes those producers publish)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envqa.core.environment import RewardSource, load_environment
from envqa.core.errors import InputError
from envqa.core.tb1_parsers import TB1_PARSERS
from envqa.probes.static.task_schema import lint_findings

pytestmark = pytest.mark.fast

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "producers"


def task(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def rules(env) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in lint_findings(env):
        out.setdefault(f.rule, []).append(f)
    return out


def refused(root: Path, lint: bool = True) -> InputError:
    with pytest.raises(InputError) as e:
        load_environment(root, lint=lint)
    return e.value


# --- Terminal-Bench adapters -------------------------------------------------------------------------------


def test_adapter_keys_load_with_one_info_naming_all(tmp_path):
    env = load_environment(task("tb1-adapter-keys", tmp_path), lint=True)
    assert [w.key for w in env.warnings] == ["author", "env_name", "language"]
    assert all(w.file.endswith("task.yaml") and w.ignored_by == "Terminal-Bench" for w in env.warnings)
    assert env.reward_source == RewardSource.PYTEST  # no parser_name: Task's default
    (finding,) = rules(env)["task-config-unknown-key"]
    assert finding.severity == "info" and finding.location == "task.yaml"
    assert all(repr(k) in finding.message for k in ("author", "env_name", "language"))
    assert "'author_name'" in finding.message  # the near spelling


def test_known_keys_only_give_no_unknown_key_finding(tmp_path):
    """The clean look-alike: the same task with only the schema's keys."""
    root = task("tb1-adapter-keys", tmp_path)
    text = (root / "task.yaml").read_text()
    drop = ("author:", "env_name:", "language:")
    (root / "task.yaml").write_text("".join(ln for ln in text.splitlines(True) if not ln.startswith(drop)))
    env = load_environment(root, lint=True)
    assert env.warnings == [] and "task-config-unknown-key" not in rules(env)


@pytest.mark.parametrize("parser", sorted(TB1_PARSERS))
def test_every_terminal_bench_parser_loads(parser, tmp_path):
    root = task("tb1-marker-parser", tmp_path)
    path = root / "task.yaml"
    path.write_text(path.read_text().replace("parser_name: swebench", f"parser_name: {parser}"))
    env = load_environment(root)
    assert env.reward_source == RewardSource(parser) and env.warnings == []


def test_a_task_without_tests_folder_loads_with_run_tests_as_its_verifier(tmp_path):
    """As in Terminal-Bench (harness.py copies tests/ only when it exists): run-tests.sh is the whole verifier."""
    env = load_environment(task("tb1-marker-parser", tmp_path), lint=True)
    assert [c.target for c in env.tests] == ["/tests/run-tests.sh"]
    assert "verifier-script-empty" not in rules(env)


@pytest.mark.parametrize(
    ("replacement", "words"),
    [
        ("parser_name: junit", ("junit", "swebench", "pytest")),
        ("parser_name: [swebench]", ("unknown parser", "swebench")),
    ],
)
def test_an_unknown_parser_is_still_exit_2(replacement, words, tmp_path):
    root = task("tb1-marker-parser", tmp_path)
    path = root / "task.yaml"
    path.write_text(path.read_text().replace("parser_name: swebench", replacement))
    err = refused(root)
    assert err.path == str(path) and err.field == "parser_name"
    assert all(w in err.problem for w in words), err.problem


def test_a_task_yaml_that_is_not_a_mapping_is_still_exit_2(tmp_path):
    root = task("tb1-adapter-keys", tmp_path)
    (root / "task.yaml").write_text("- author: envqa\n- env_name: python\n")
    err = refused(root)
    assert err.path == str(root / "task.yaml") and "mapping" in err.problem


def test_moved_copy_names_its_own_task_yaml(tmp_path):
    """The parse cache hands a moved copy the same warnings, naming the new file (core/env_cache.py)."""
    a, b = task("tb1-adapter-keys", tmp_path / "a"), task("tb1-adapter-keys", tmp_path / "b")
    load_environment(a, lint=True)
    env = load_environment(b, lint=True)
    assert {w.file for w in env.warnings} == {str(b.resolve() / "task.yaml")}


# --- Harbor tasks as other producers write them ------------------------------------------------------------


def test_producer_tables_give_one_info_for_task_toml(tmp_path):
    env = load_environment(task("harbor-producer-keys", tmp_path))
    assert sorted(w.key for w in env.warnings) == ["concurrency", "pre_invoke", "scenario"]
    (finding,) = rules(env)["task-config-unknown-key"]
    assert finding.location == "task.toml" and "3 keys" in finding.message and "Harbor" in finding.message
    assert len(finding.evidence) == 3


def test_version_2_metadata_and_resources_read_without_noise(tmp_path):
    """`version = "2.0"`, metadata keys of the producer's own (free-form in Harbor), workdir/memory_mb/storage_mb
    (Harbor's EnvironmentConfig): no error and no unknown-key warning."""
    env = load_environment(task("harbor-milestones", tmp_path), lint=True)
    assert env.config.schema_version == "2.0" and env.warnings == []
    assert env.config.metadata["number_of_milestones"] == 2 and env.config.metadata["languages"] == ["python"]
    c = env.config.environment
    assert (c.workdir, c.memory_mb, c.storage_mb) == ("/app", 2048, 10240)


def test_schema_version_spelling_reads_too(tmp_path):
    root = task("harbor-milestones", tmp_path)
    path = root / "task.toml"
    path.write_text(path.read_text().replace('version = "2.0"', 'schema_version = "2.0"'))
    env = load_environment(root, lint=True)
    assert env.config.schema_version == "2.0" and env.warnings == []


def test_a_bad_resource_value_is_still_exit_2(tmp_path):
    root = task("harbor-milestones", tmp_path)
    path = root / "task.toml"
    path.write_text(path.read_text().replace("memory_mb = 2048", 'memory_mb = "lots"'))
    err = refused(root)
    assert err.path == str(path) and err.field == "environment.memory_mb"


# --- milestones ----------------------------------------------------------------------------------------------


def test_milestones_load_each_with_its_own_scripts(tmp_path):
    root = task("harbor-milestones", tmp_path).resolve()
    env = load_environment(root, lint=True)
    assert [m.name for m in env.milestones] == ["milestone_1", "milestone_2"]
    assert [m.script for m in env.milestones] == [root / "tests/test_1.sh", root / "tests/test_2.sh"]
    assert [m.solution for m in env.milestones] == [root / "solution/solve_1.sh", root / "solution/solve_2.sh"]
    assert rules(env) == {}  # each milestone's verifier reads the output its own instruction names


def test_lint_reads_each_milestones_test_script(tmp_path):
    """A flaw in milestone 2's verifier alone is found, and named at its script."""
    root = task("harbor-milestones", tmp_path)
    (root / "tests/test_2.sh").write_text("#!/bin/bash\n# TODO: check /app/names.txt\n")
    found = rules(load_environment(root, lint=True))
    assert [f.location for f in found["verifier-script-empty"]] == ["tests/test_2.sh"]


def test_step_folder_milestones_without_a_steps_table(tmp_path):
    """The other layout: steps/milestone_<n>/{instruction.md, solution/, tests/} with no [[steps]] in task.toml."""
    root = task("harbor-milestones", tmp_path).resolve()
    for n in (1, 2):
        d = root / "steps" / f"milestone_{n}"
        (d / "solution").mkdir(parents=True)
        (d / "tests").mkdir()
        (root / f"milestone_{n}.md").rename(d / "instruction.md")
        (root / f"solution/solve_{n}.sh").rename(d / f"solution/solve{n}.sh")
        (root / f"tests/test_{n}.sh").rename(d / "tests/test.sh")
    env = load_environment(root, lint=True)
    assert [m.script for m in env.milestones] == [root / f"steps/milestone_{n}/tests/test.sh" for n in (1, 2)]
    assert [m.solution for m in env.milestones] == [root / f"steps/milestone_{n}/solution/solve{n}.sh" for n in (1, 2)]


def test_qa_run_refuses_a_milestone_task_lint_reads_it(tmp_path):
    root = task("harbor-milestones", tmp_path)
    err = refused(root, lint=False)
    assert "milestone" in err.problem and err.path.endswith("milestone_1.md")


def test_a_milestone_without_any_test_script_is_exit_2(tmp_path):
    root = task("harbor-milestones", tmp_path)
    (root / "tests/test_2.sh").unlink()
    err = refused(root)
    assert err.path == str(root.resolve() / "tests/test_2.sh") and "milestone 2" in err.problem
