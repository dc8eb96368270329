"""The instruction held against the tests (issue 34): extraction, each rule on a flaw and its look-alike, the
guards, the instruction fixer, and no new finding on any clean example or Harbor's template task."""

from __future__ import annotations

import pytest

from envqa.agents.fixers import mechanical_fix
from envqa.core.consistency.claims import read_instruction
from envqa.core.consistency.requirements import python_requirements
from envqa.core.consistency.shell_requirements import shell_requirements
from envqa.core.environment import load_environment
from envqa.probes.static.findings import explained_at_line
from envqa.probes.static.instruction_rules import instruction_findings
from envqa.probes.static.provenance_rules import provenance_findings
from envqa.probes.static.task_schema import lint_findings

from .conftest import EXAMPLES, REPO, expected, write_env

pytestmark = pytest.mark.fast

RULES = {
    "instruction-contradicts-tests",
    "instruction-omits-tested-requirement",
    "instruction-spelling-differs-from-tests",
}
FLAWED = {
    "instruction-names-other-path": "instruction-contradicts-tests",
    "instruction-names-other-scheme": "instruction-contradicts-tests",
    "instruction-names-other-branch": "instruction-contradicts-tests",
    "tests-expect-other-spelling": "instruction-spelling-differs-from-tests",
    "tests-require-unmodified-file": "instruction-omits-tested-requirement",
    "tests-pin-unnamed-database": "instruction-omits-tested-requirement",
}
LOOK_ALIKES = [
    "clean-instruction-names-output-path",
    "clean-instruction-names-config-scheme",
    "clean-instruction-names-both-branches",
    "clean-instruction-spells-digest-format",
    "clean-instruction-protects-library",
    "clean-tests-read-database-for-expected",
]


def rules_of(env_dir) -> list[str]:
    """The instruction rules' findings as `qa lint` reports them: after a finding that explains one at the same
    line (`explains_at_line`) has withdrawn it."""
    env = load_environment(env_dir, lint=True)
    views = [env.for_step(s) for s in env.steps] or [env]
    found = []
    for v in views:
        own = instruction_findings(v)
        found += [f.rule for f in explained_at_line(own + provenance_findings(v)) if any(f is o for o in own)]
    return sorted(found)


def test_claims_of_an_instruction():
    ins = read_instruction(
        "instruction.md",
        (
            "Write the report to `/app/out/report.txt` and serve it on port 8080 at https://localhost:8443/r.\n"
            "Push to the `release` branch as the user named deploy; round to two decimal places (10 MB max).\n"
        ),
    )
    by = {(c.kind, c.role, c.value) for c in ins.claims}
    assert ("path", "", "/app/out/report.txt") in by
    assert ("url", "", "https://localhost:8443/r") in by and ("port", "", "8080") in by
    assert ("name", "branch", "release") in by and ("name", "user", "deploy") in by
    assert ("decimals", "", "2") in by and ("number-unit", "", "10 MB") in by
    assert not any(c.kind == "path" and c.value == "/localhost:8443/r" for c in ins.claims)  # a URL is no path
    assert ins.mentions_file("/app/out/report.txt") and ins.mentions_file("/srv/x/report.txt")
    assert not ins.mentions("rep") and not ins.mentions("elease")  # inside a longer word only


def test_python_requirements_resolve_paths_and_roles():
    src = (
        'import hashlib, os, pwd, subprocess\nfrom pathlib import Path\nAPP = Path("/app")\n'
        'OUT = APP / "output" / "r.txt"\n'
        "def test_a():\n    assert OUT.exists()\n"
        '    assert hashlib.sha256(Path("/app/db.sqlite").read_bytes()).hexdigest() == "x"\n'
        '    assert os.path.getmtime(os.path.join("/app", "keep.cfg")) > 0\n'
        '    out = subprocess.run(["/app/tool", "--x"], capture_output=True, text=True)\n'
        '    assert out.stdout.lower().startswith("ok")\n'
        '    Path("/tmp/fixture.txt").write_text("a")\n'
        '    pwd.getpwnam("deploy")\n'
        '    assert f"sha256:{1}" == out.stdout\n'
    )
    got = {(r.kind, r.value, r.role) for r in python_requirements("tests/test_x.py", src)}
    assert ("path", "/app/output/r.txt", "read") in got
    assert ("path", "/app/db.sqlite", "preserve") in got and ("path", "/app/keep.cfg", "preserve") in got
    assert ("path", "/app/tool", "exec") in got and ("path", "/tmp/fixture.txt", "write") in got
    assert ("name", "deploy", "user") in got
    assert ("compared", "ok", "ci") in got and ("compared", "sha256:", "cs") in got


def test_a_database_compared_with_fixed_values_is_pinned_and_one_that_gives_the_expectation_is_not():
    src = (
        "import sqlite3\nfrom contextlib import closing\nDB = '/app/shop.db'\nSEEDED = [(1, 'a')]\n"
        "def test_rows_kept():\n    conn = sqlite3.connect(DB)\n    cur = conn.cursor()\n"
        "    rows = cur.execute('SELECT * FROM t').fetchall()\n    assert rows == SEEDED\n"
        "def test_count_kept():\n    with closing(sqlite3.connect('/app/other.db')) as c:\n"
        "        n = c.execute('SELECT COUNT(*) FROM t').fetchone()[0]\n    assert n == 3\n"
        "def test_expected_from_db(tmp_path):\n    conn = sqlite3.connect('/app/input.db')\n"
        "    want = conn.execute('SELECT SUM(x) FROM t').fetchone()[0]\n"
        "    assert open('/app/out.txt').read().strip() == str(want)\n"
    )
    got = {(r.value, r.role, r.line) for r in python_requirements("tests/test_x.py", src) if r.kind == "path"}
    assert ("/app/shop.db", "state", 9) in got  # cited at the comparison, not at the connect
    assert ("/app/other.db", "state", 13) in got  # a with-bound connection, a count
    assert not any(v == "/app/input.db" and role == "state" for v, role, _ in got)  # nothing fixed on either side


def test_shell_requirements_read_commands_not_lines():
    script = (
        "#!/bin/bash\nmkdir -p /logs/verifier\n[ -f /app/out.txt ] || exit 1\n"
        "sha256sum /app/data.db\nsha256sum -c /opt/sums.txt\nid -u deploy\n"
        "git -C /srv/repo show main:VERSION\ncurl -fsS http://localhost:8080/health -o /tmp/h\n"
        '[ "$(cat /app/out.txt)" = "done" ] && echo 1 > /logs/verifier/reward.txt\n'
    )
    got = {(r.kind, r.value, r.role) for r in shell_requirements("tests/test.sh", script)}
    assert ("path", "/logs/verifier", "write") in got and ("path", "/app/out.txt", "read") in got
    assert ("path", "/app/data.db", "preserve") in got and ("path", "/opt/sums.txt", "read") in got
    assert ("name", "deploy", "user") in got and ("name", "main", "branch") in got
    assert ("url", "http://localhost:8080/health", "fetch") in got and ("path", "/tmp/h", "write") in got
    assert ("compared", "done", "cs") in got


@pytest.mark.parametrize("name", sorted(FLAWED))
def test_each_flawed_example_names_its_rule_with_both_lines(name):
    env = load_environment(EXAMPLES / name)
    found = [f for f in instruction_findings(env) if f.rule == FLAWED[name]]
    assert found and set(expected(name)["rules"]) == {FLAWED[name]}
    ev = found[0].evidence
    assert ev[0].startswith("test: tests/") and ev[1].startswith("instruction: instruction.md")
    assert found[0].label == "ambiguity"


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_each_look_alike_stays_quiet(name):
    assert rules_of(EXAMPLES / name) == []


def test_no_new_finding_on_any_clean_example_or_the_harbor_template():
    quiet = [
        p
        for p in sorted(EXAMPLES.iterdir())
        if (p / "qa-expected.json").is_file() and not RULES & set(expected(p.name)["rules"])
    ]
    noisy = {p.name: rules_of(p) for p in quiet if rules_of(p)}
    assert noisy == {}
    assert rules_of(REPO / "tests" / "fixtures" / "harbor-template-task" / "task") == []


def _task(
    tmp_path,
    instruction: str,
    test_py: str,
    solve: str = "#!/bin/bash\necho hi > /app/out.txt\n",
    dockerfile: str = "FROM debian:bookworm\nWORKDIR /app\n",
):
    return write_env(
        tmp_path / "t",
        {
            "instruction.md": instruction,
            "tests/test_x.py": test_py,
            "solution/solve.sh": solve,
            "environment/Dockerfile": dockerfile,
            "tests/test.sh": "#!/bin/bash\npython3 -m pytest /tests/test_x.py\n",
        },
    )


@pytest.mark.parametrize(
    "instruction,test_py,solve,rule",
    [
        (
            "Serve the page on port 8080.\n",
            'import urllib.request\ndef test():\n    urllib.request.urlopen("http://localhost:8000/")\n',
            "#!/bin/bash\npython3 -m http.server 8000 &\n",
            "instruction-contradicts-tests",
        ),
        (
            "Create a user account called `deploy`.\n",
            'import pwd\ndef test():\n    pwd.getpwnam("admin")\n',
            "#!/bin/bash\nuseradd admin\n",
            "instruction-contradicts-tests",
        ),
        (
            "Compute the mean of /app/in.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/mean.txt").read_text() == "2"\n',
            "#!/bin/bash\nawk '{s+=$1} END {print s/NR}' /app/in.txt > /app/mean.txt\n",
            "instruction-omits-tested-requirement",
        ),
        (
            "Print the mean rounded to 2 decimal places to /app/mean.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/mean.txt").read_text().strip() == "2.500"\n',
            "#!/bin/bash\necho 2.500 > /app/mean.txt\n",
            "instruction-spelling-differs-from-tests",
        ),
        (
            "Write the size of /app/blob as `<n> MB` to /app/size.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/size.txt").read_text().strip() == "12MB"\n',
            "#!/bin/bash\necho 12MB > /app/size.txt\n",
            "instruction-omits-tested-requirement",
        ),  # `<n> MB` has no number: not a unit variant, and size.txt is named
    ],
)
def test_more_shapes(tmp_path, instruction, test_py, solve, rule):
    found = rules_of(_task(tmp_path, instruction, test_py, solve))
    if rule == "instruction-omits-tested-requirement" and "size.txt" in instruction:
        assert found == []
    else:
        assert rule in found, found


@pytest.mark.parametrize(
    "instruction,test_py,solve,dockerfile",
    [
        # the test's own fixture and temporary files
        (
            "Write hello to /app/out.txt.\n",
            'from pathlib import Path\ndef test():\n    Path("/tmp/in").write_text("x")\n'
            '    assert Path("/tmp/in").exists() and Path("/app/out.txt").read_text() == "hello"\n',
            None,
            None,
        ),
        # a file already in the image, not written by the oracle (an input the tests read)
        (
            "Write hello to /app/out.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/seed.txt").'
            'exists()\n    assert Path("/app/out.txt").exists()\n',
            None,
            "FROM debian:bookworm\nWORKDIR /app\nRUN echo 1 > /app/seed.txt\n",
        ),
        # library and system paths
        (
            "Write hello to /app/out.txt.\n",
            'import subprocess\ndef test():\n    subprocess.run(["/usr/bin/python3", '
            '"/usr/lib/python3/dist-packages/x.py"])\n    assert open("/app/out.txt").read() == "hello"\n',
            None,
            None,
        ),
        # an instruction literal the oracle uses too is a real, different file (an input), never a misnaming
        (
            "Read /app/data/in.csv and write the sum to /app/data/sum.csv.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/data/sum.csv").read_text() == "3"\n',
            "#!/bin/bash\npaste -sd+ /app/data/in.csv | bc > /app/data/sum.csv\n",
            None,
        ),
        # an output inside a directory the instruction names for the outputs
        (
            "Write one JSON file per record into `/app/out/`.\n",
            'import json\ndef test():\n    assert json.load(open("/app/out/1.json"))["id"] == 1\n',
            "#!/bin/bash\nmkdir -p /app/out; echo '{\"id\": 1}' > /app/out/1.json\n",
            None,
        ),
        # a path built from a name no reader resolves (a file listing, a random id): not one file to name
        (
            "Write hello to /app/out.txt; leave the inputs in /app as they are.\n",
            'import os, uuid\nfrom pathlib import Path\ndef test():\n    for fname in os.listdir("/app"):\n'
            '        assert Path(f"/app/{fname}").exists()\n    tmp = Path(f"/app/run_{uuid.uuid4()}")\n'
            '    assert not tmp.exists()\n    assert Path("/app/out.txt").read_text() == "hello"\n',
            None,
            None,
        ),
        # a case-only difference in prose, and a compare that folds case
        (
            "Print the word Hello to /app/out.txt.\n",
            'def test():\n    assert open("/app/out.txt").read().lower() == "hello"\n',
            None,
            None,
        ),
    ],
)
def test_guards_keep_look_alikes_quiet(tmp_path, instruction, test_py, solve, dockerfile):
    task = _task(
        tmp_path,
        instruction,
        test_py,
        solve or "#!/bin/bash\necho hello > /app/out.txt\n",
        dockerfile or "FROM debian:bookworm\nWORKDIR /app\n",
    )
    assert rules_of(task) == []


@pytest.mark.parametrize("name", sorted(FLAWED))
def test_instruction_fixer_silences_the_rule(name, tmp_path):
    env = load_environment(EXAMPLES / name)
    fix = mechanical_fix(env.root, instruction_findings(env), workdir=tmp_path)
    assert fix.addressed == [FLAWED[name]] and not fix.declined
    assert rules_of(fix.fixed_dir) == []
    after = (fix.fixed_dir / "instruction.md").read_text()
    assert after != (env.root / "instruction.md").read_text()
    assert (fix.fixed_dir / "tests").exists() and not any(  # only instruction.md changes
        (fix.fixed_dir / p.relative_to(env.root)).read_bytes() != p.read_bytes()
        for p in env.root.rglob("*")
        if p.is_file() and p.name != "instruction.md"
    )


def test_instruction_fixer_declines_when_the_oracle_takes_no_side(tmp_path):
    task = _task(
        tmp_path,
        "Write hello to `/app/out/r.txt`.\n",
        'from pathlib import Path\ndef test():\n    assert Path("/app/output/r.txt").read_text() == "hello"\n',
        "#!/bin/bash\nmkdir -p /app/output; cd /app/output && echo hello > r.txt\n",
    )
    env = load_environment(task)
    findings = instruction_findings(env)
    assert [f.rule for f in findings] == ["instruction-contradicts-tests"]
    fix = mechanical_fix(env.root, findings, workdir=tmp_path)
    assert fix.addressed == [] and "neither" in fix.declined["instruction-contradicts-tests"]


def test_the_llm_reviser_sees_both_lines_of_evidence():
    from envqa.agents.reviser import build_prompt

    env = load_environment(EXAMPLES / "instruction-names-other-path")
    findings = instruction_findings(env)
    prompt = build_prompt(env.root, env.name, env.version, findings)
    assert "[instruction-contradicts-tests]" in prompt
    assert all(e in prompt for e in findings[0].evidence)  # the test's line and the instruction's line


@pytest.mark.parametrize(
    "instruction,test_py,solve,after",
    [
        (
            "Round the mean of /app/in.txt to two decimal places and write it to /app/mean.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/mean.txt").read_text().strip() == "2.500"\n',
            "#!/bin/bash\nawk '{s+=$1} END {printf \"%.3f\", s/NR}' /app/in.txt > /app/mean.txt\n",
            "to 3 decimal places",
        ),
        (
            "Set up the service account for the batch jobs.\n",
            'import pwd\ndef test():\n    assert pwd.getpwnam("nightly").pw_uid > 0\n',
            "#!/bin/bash\nuseradd nightly\n",
            "The account must be named `nightly`.",
        ),
    ],
)
def test_instruction_fixer_states_or_corrects(tmp_path, instruction, test_py, solve, after):
    env = load_environment(_task(tmp_path, instruction, test_py, solve))
    findings = instruction_findings(env)
    assert findings
    fix = mechanical_fix(env.root, findings, workdir=tmp_path)
    assert after in (fix.fixed_dir / "instruction.md").read_text() and rules_of(fix.fixed_dir) == []


SOURCES_ACTIVATE = (
    "#!/bin/bash\nsource /opt/tool/bin/activate\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    '[ "$(cat /app/out.txt)" = hello ] && echo 1 > /logs/verifier/reward.txt\nexit 0\n'
)


@pytest.mark.parametrize(
    ("base", "flagged"),
    [
        ("debian:bookworm", True),  # an official image: /opt/tool is in no layer the files show, so an output
        ("acme/prebuilt-env:1.2", False),  # a namespaced image built elsewhere: what it holds is unknown
        ("registry.local:5000/team/env@sha256:" + "a" * 64, False),
        ("docker.io/library/python:3.11-slim", True),  # the official library, spelled in full
    ],
)
def test_over_an_opaque_base_image_only_the_oracle_shows_an_output(tmp_path, base, flagged):
    env = write_env(tmp_path, environment__Dockerfile=f"FROM {base}\nWORKDIR /app\n", tests__test_sh=SOURCES_ACTIVATE)
    found = [
        f
        for f in lint_findings(load_environment(env))
        if f.rule == "instruction-omits-tested-requirement" and "/opt/tool/bin/activate" in f.message
    ]
    assert bool(found) == flagged, found
    # /app/out.txt is written by the oracle and named by the instruction: never flagged, whatever the base
    assert not [f for f in lint_findings(load_environment(env)) if "/app/out.txt" in f.message]
