"""Harbor task schema 1.4 (issue 23, the schema layer): every construct parses, unknown keys warn (never exit 2),
bad values still exit 2 naming the field, and what qa cannot run yet is refused by `qa run`, linted by `qa lint`."""

from __future__ import annotations

import json
import tomllib

import pytest

from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.core.rewards import parse_reward_json
from envqa.core.task_config import MultiStepRewardStrategy, NetworkMode, TaskConfig, TaskOS
from envqa.core.task_config import VerifierEnvironmentMode as Mode
from envqa.core.task_config_keys import unknown_keys
from qa_testkit import EXAMPLES, copy_example, run_qa, write_files

pytestmark = pytest.mark.fast  # no Docker, Redis or Postgres: files, the loader and the real CLI

BASE = {
    "instruction.md": "Write /app/out.txt.\n",
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n",
    "solution/solve.sh": "#!/bin/bash\necho hi > /app/out.txt\n",
    "tests/test.sh": "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n"
    "[ -f /app/out.txt ] && echo 1 > /logs/verifier/reward.txt\n",
}


def parse(text: str) -> TaskConfig:
    return TaskConfig.model_validate(tomllib.loads(text))


def task(tmp_path, toml: str, **files: str):
    return write_files(tmp_path / "task", {**BASE, "task.toml": toml, **files})


# Each construct of schema 1.4, two wordings where Harbor accepts two.
CONSTRUCTS = [
    (
        "mode-separate",
        '[verifier]\nenvironment_mode = "separate"\n',
        lambda c: c.verifier_mode() == Mode.SEPARATE and c.verifier_environment() == c.environment,
    ),
    (
        "mode-implied-by-environment",
        '[verifier.environment]\ncpus = 2\ndocker_image = "img:1"\n',
        lambda c: c.verifier_mode() == Mode.SEPARATE and c.verifier_environment().cpus == 2,
    ),
    (
        "mode-shared",
        '[verifier]\nenvironment_mode = "shared"\n',
        lambda c: c.verifier_mode() == Mode.SHARED and c.verifier_environment() is None,
    ),
    ("mode-default", "", lambda c: c.verifier_mode() == Mode.SHARED and not c.has_separate_verifier()),
    (
        "collect",
        '[[verifier.collect]]\ncommand = "pg_dump > /out/db.sql"\nservice = "db"\ntimeout_sec = 30\n'
        '[[verifier.collect]]\ncommand = "sync"\n',
        lambda c: [(h.service, h.timeout_sec) for h in c.verifier.collect] == [("db", 30.0), ("main", 60.0)],
    ),
    (
        "artifacts-strings-and-tables",
        'artifacts = ["/app/out", {source = "/var/lib/db.sql", destination = "db/dump.sql", exclude = ["*.tmp"], '
        'service = "db"}]\n',
        lambda c: (
            c.artifacts[0] == "/app/out"
            and c.artifacts[1].service == "db"
            and c.artifacts[1].destination == "db/dump.sql"
            and c.artifacts[1].exclude == ["*.tmp"]
        ),
    ),
    (
        "steps",
        'multi_step_reward_strategy = "final"\n[[steps]]\nname = "setup-db"\nmin_reward = 0.5\n'
        '[steps.agent]\ntimeout_sec = 60\n[steps.verifier]\ntimeout_sec = 30\nenvironment_mode = "separate"\n'
        '[steps.healthcheck]\ncommand = "pg_isready"\n'
        '[[steps]]\nname = "query"\nmin_reward = {reward = 1.0, style = 0.5}\nartifacts = ["/app/q.sql"]\n',
        lambda c: (
            [s.name for s in c.steps] == ["setup-db", "query"]
            and c.steps[0].min_reward == 0.5
            and c.steps[1].min_reward == {"reward": 1.0, "style": 0.5}
            and c.steps[0].agent.timeout_sec == 60
            and c.verifier_mode(c.steps[0]) == Mode.SEPARATE
            and c.verifier_mode(c.steps[1]) == Mode.SHARED
            and c.steps[0].healthcheck.retries == 3
            and c.reward_strategy() == MultiStepRewardStrategy.FINAL
        ),
    ),
    (
        "steps-strategy-default",
        '[[steps]]\nname = "one"\n',
        lambda c: c.reward_strategy() == MultiStepRewardStrategy.MEAN,
    ),
    (
        "environment-1.4",
        '[environment]\nos = "Linux"\nworkdir = "/srv"\nnetwork_mode = "allowlist"\n'
        'allowed_hosts = ["PyPI.org.", "*.example.com", "10.0.0.0/8"]\n',
        lambda c: (
            c.environment.os == TaskOS.LINUX
            and c.environment.workdir == "/srv"
            and c.environment.allowed_hosts == ["pypi.org", "*.example.com", "10.0.0.0/8"]
        ),
    ),
    (
        "network-legacy-allow-internet",
        "[environment]\nallow_internet = false\n",
        lambda c: c.environment.baseline_network() == NetworkMode.NO_NETWORK,
    ),
    (
        "network-alias",
        '[environment]\nnetwork_mode = "none"\n',
        lambda c: c.environment.baseline_network() == NetworkMode.NO_NETWORK,
    ),
    (
        "per-phase-network",
        '[agent]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n',
        lambda c: c.agent.network_mode == NetworkMode.NO_NETWORK and c.verifier.allowed_hosts == ["pypi.org"],
    ),
    (
        "legacy-memory-string",
        '[environment]\nmemory = "1G"\nstorage = "512M"\n',
        lambda c: (c.environment.memory_mb, c.environment.storage_mb) == (1024, 512),
    ),
    ("schema-version-either-spelling", 'version = "1.4"\n', lambda c: c.schema_version == "1.4"),
    (
        "package",
        '[task]\nname = "org/db-task"\nversion = "1.0.0"\nauthors = [{name = "A", email = "a@x.org"}]\n',
        lambda c: c.task.name == "org/db-task" and c.task.authors[0].email == "a@x.org",
    ),
]


@pytest.mark.parametrize("text,check", [(t, c) for _i, t, c in CONSTRUCTS], ids=[i for i, _t, _c in CONSTRUCTS])
def test_schema_14_construct_parses(text, check):
    config = parse('schema_version = "1.4"\n' + text if "version" not in text.split("\n")[0] else text)
    assert check(config)
    assert unknown_keys(config) == []  # every key above is known: none is reported as unknown


def test_step_files_are_resolved(tmp_path):
    root = task(
        tmp_path,
        '[[steps]]\nname = "a"\n[[steps]]\nname = "b"\n',
        **{
            "steps/a/instruction.md": "First.\n",
            "steps/a/solution/solve.sh": "#!/bin/bash\n",
            "steps/a/tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
            "steps/a/workdir/setup.sh": "#!/bin/bash\n",
            "steps/b/instruction.md": "Second.\n",
        },
    )
    env = load_environment(root, lint=True)
    a, b = env.steps
    assert (a.instruction, a.solution, a.tests, a.setup) == (
        root / "steps/a/instruction.md",
        root / "steps/a/solution/solve.sh",
        root / "steps/a/tests",
        root / "steps/a/workdir/setup.sh",
    )
    assert b.solution is None and b.setup is None and b.tests == root / "tests"  # Harbor's fallback to tests/
    assert env.for_step(b).instruction == "Second.\n"


def test_a_step_without_its_instruction_names_the_file(tmp_path):
    root = task(tmp_path, '[[steps]]\nname = "a"\n', **{"steps/a/tests/test.sh": "#!/bin/bash\n"})
    with pytest.raises(InputError) as e:
        load_environment(root, lint=True)
    assert e.value.path == str(root / "steps/a/instruction.md") and "missing" in e.value.problem


@pytest.mark.parametrize(
    "toml,key,table,suggestion",
    [
        (
            'multi_step_reward_stratgy = "mean"\n',
            "multi_step_reward_stratgy",
            "top level",
            "multi_step_reward_strategy",
        ),
        ("[agnet]\ntimeout_sec = 5\n", "agnet", "top level", "agent"),
        ("[verifier]\ntimeout_secs = 5\n", "timeout_secs", "[verifier]", "timeout_sec"),
        ('[verifier]\nenviroment_mode = "separate"\n', "enviroment_mode", "[verifier]", "environment_mode"),
        ('[[steps]]\nname = "a"\nmin_rewards = 1\n', "min_rewards", '[[steps]] "a"', "min_reward"),
        (
            '[[steps]]\nname = "a"\n[steps.verifier]\ntimout_sec = 1\n',
            "timout_sec",
            '[steps.verifier] of step "a"',
            "timeout_sec",
        ),
        ("[environment]\nmemory_mbs = 1\n", "memory_mbs", "[environment]", "memory_mb"),
        ('[[verifier.collect]]\ncommand = "x"\nservise = "db"\n', "servise", "[[verifier.collect]] #1", "service"),
        ("future_feature = true\n", "future_feature", "top level", None),
    ],
)
def test_unknown_key_is_a_warning_with_its_table_and_suggestion(toml, key, table, suggestion):
    [w] = unknown_keys(parse(toml))
    assert (w.key, w.table, w.suggestion) == (key, table, suggestion)
    assert key in w.message and (suggestion is None or f"did you mean {suggestion!r}" in w.message)


def test_metadata_is_free_form():
    assert unknown_keys(parse("[metadata]\nanything = 1\n[metadata.nested]\nx = 2\n")) == []


def test_unknown_keys_through_the_cli(tmp_path, qa_env):
    root = copy_example("clean-wordfreq", tmp_path)
    text = (root / "task.toml").read_text().replace("[verifier]\n", "[verifier]\ntimeout_secs = 5\n")
    (root / "task.toml").write_text('multi_step_reward_stratgy = "mean"\n' + text)
    lint = run_qa(["lint", str(root), "--json"], qa_env, timeout=120)
    assert lint.returncode == 0, lint.stderr  # info findings only: the task is still clean
    found = [(f["rule"], f["severity"]) for f in json.loads(lint.stdout)["findings"]]
    assert found == [("task-config-unknown-key", "info")]  # two keys of one file: one finding, both in it
    assert json.loads(lint.stdout)["findings"][0]["locations"] == ["task.toml"] * 2
    assert "'timeout_secs' in [verifier] (did you mean 'timeout_sec'?)" in lint.stdout
    # qa run names them on stderr before it starts (here it then stops: no Docker engine at that socket).
    run = run_qa(["run", str(root)], {**qa_env, "DOCKER_HOST": "unix:///nonexistent/envqa.sock"}, timeout=120)
    assert run.returncode == 3, run.stderr
    flat = " ".join(run.stderr.split())
    assert f"{root / 'task.toml'}: unknown key 'timeout_secs' in [verifier]; did you mean 'timeout_sec'?" in flat
    assert flat.index("multi_step_reward_stratgy") < flat.index("error")


@pytest.mark.parametrize(
    "toml,field,words",
    [
        ('[verifier]\nenvironment_mode = "sideways"\n', "verifier.environment_mode", ("sideways",)),
        ('[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 2\n', "verifier", ("incompatible",)),
        ('artifacts = [{source = "../etc/passwd"}]\n', "artifacts.0.source", ("'..'",)),
        ('artifacts = [{source = "/x", destination = "/abs"}]\n', "artifacts.0.destination", ("relative",)),
        ('artifacts = [{source = "relative/db.sql", service = "db"}]\n', "artifacts.0", ("absolute",)),
        ('[[steps]]\nname = "a/b"\n', "steps.0.name", ("step name",)),
        ('[[steps]]\nname = "Step"\n[[steps]]\nname = "step"\n', "steps", ("unique",)),
        ('[[steps]]\nname = "a"\nmin_reward = "high"\n', "steps.0.min_reward", ("high",)),
        ('multi_step_reward_strategy = "median"\n', "multi_step_reward_strategy", ("median",)),
        ('[environment]\nos = "plan9"\n', "environment.os", ("plan9",)),
        (
            '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["https://pypi.org/simple"]\n',
            "environment.allowed_hosts",
            ("not URLs",),
        ),
        ('[agent]\nallowed_hosts = ["pypi.org"]\n', "agent", ("allowlist",)),
        (
            '[[verifier.collect]]\ncommand = "x"\nservice = "bad name"\n',
            "verifier.collect.0.service",
            ("service name",),
        ),
        ('[task]\nname = "no-org"\n', "task.name", ("org/name",)),
    ],
)
def test_bad_value_of_a_known_key_is_exit_2_naming_the_field(tmp_path, toml, field, words):
    root = task(tmp_path, toml)
    with pytest.raises(InputError) as e:
        load_environment(root, lint=True)
    assert e.value.path == str(root / "task.toml") and e.value.field == field, str(e.value)
    assert all(w in e.value.problem for w in words), e.value.problem


def test_bad_value_through_the_cli(tmp_path, qa_env):
    root = task(tmp_path, '[verifier]\nenvironment_mode = "sideways"\n')
    for cmd in (["lint", str(root)], ["run", str(root)]):
        res = run_qa(cmd, qa_env, timeout=120)
        flat = " ".join(res.stderr.split())
        assert res.returncode == 2 and f"{root / 'task.toml'}: verifier.environment_mode:" in flat, res.stderr


COMPOSE_SIDECAR = "services:\n  main:\n    build: .\n  db:\n    image: postgres:16\n"
NOT_YET = [  # (id, task.toml, extra files, the file and field the refusal names, a word of the feature)
    (
        "separate-steps",
        '[[steps]]\nname = "a"\n[steps.verifier]\nenvironment_mode = "separate"\n',
        {"steps/a/instruction.md": "Do a.\n", "steps/a/tests/test.sh": "#!/bin/bash\n"},
        "task.toml",
        "steps",
        "separate verifier",
    ),  # a single-step separate verifier runs (agents/verify_separate.py)
    ("windows", '[environment]\nos = "windows"\n', {}, "task.toml", "environment.os", "Windows"),
]


@pytest.mark.parametrize("toml,files,file,field,word", [n[1:] for n in NOT_YET], ids=[n[0] for n in NOT_YET])
def test_what_qa_cannot_run_yet_is_refused_by_run_and_linted_by_lint(tmp_path, qa_env, toml, files, file, field, word):
    root = task(tmp_path, toml, **files)
    with pytest.raises(InputError) as e:
        load_environment(root)
    assert (e.value.path, e.value.field) == (str(root / file), field)
    assert word in e.value.problem and "does not run this yet" in e.value.problem
    env = load_environment(root, lint=True)  # qa lint loads it whole
    assert env.not_yet_run() and env.warnings == []
    run = run_qa(["run", str(root), "--json"], qa_env, timeout=120)
    assert run.returncode == 2 and "does not run this yet" in json.loads(run.stdout)["error"], run.stdout
    lint = run_qa(["lint", str(root), "--json"], qa_env, timeout=120)
    assert lint.returncode in (0, 1), lint.stderr


def test_compose_with_main_only_still_runs(tmp_path):
    root = task(tmp_path, "", **{"environment/docker-compose.yaml": "services:\n  main:\n    build: .\n"})
    assert load_environment(root).compose_services == ["main"]


def test_a_multi_step_task_is_linted_step_by_step(tmp_path):
    from envqa.probes.static.task_schema import lint_findings

    root = task(
        tmp_path,
        '[[steps]]\nname = "a"\n[[steps]]\nname = "b"\n',
        **{
            "steps/a/instruction.md": "First.\n",
            "steps/b/instruction.md": "\n",
            "steps/a/tests/test.sh": "#!/bin/bash\npytest && echo 1 > /logs/verifier/reward.txt\n",
        },
    )
    found = {(f.rule, f.location) for f in lint_findings(load_environment(root, lint=True))}
    assert ("reward-not-written-on-failure", "steps/a/tests/test.sh:2") in found  # step a's own verifier
    assert ("instruction-empty", "steps/b/instruction.md") in found


def test_every_example_loads_as_before():
    """No example is refused, none has an unknown key; `qa lint examples/*` output was compared before and
    after this change (issue 23's report) and is byte-identical."""
    for d in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        env = load_environment(d)
        assert env.not_yet_run() == [], d.name
        assert (env.warnings != []) == (d.name == "unknown-key"), d.name  # issue 23's example of the warning
        assert (env.steps != []) == (d.name == "clean-two-step"), d.name  # issue 23's multi-step example


def test_reward_json_with_several_keys():
    """Harbor's reward.json is a flat object of named rewards; the `reward` key decides, else their mean."""
    assert parse_reward_json('{"reward": 0.0, "style": 1.0}') == (0.0, {"reward": 0.0, "style": 1.0})
    assert parse_reward_json('{"correct": 1, "fast": 0.5}') == (0.75, {"correct": 1.0, "fast": 0.5})


def test_qa_new_scaffolds_schema_14(tmp_path, qa_env):
    made = run_qa(["new", "demo", "--json"], qa_env, cwd=tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    env = load_environment(tmp_path / "demo")
    assert env.config.schema_version == "1.4" and env.config.verifier.environment_mode == Mode.SHARED
    assert env.config.environment.network_mode == NetworkMode.NO_NETWORK and env.warnings == []
