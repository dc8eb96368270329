"""The fetch model (core/task_model/fetches.py): for each command family, a pinned, an unpinned and an offline
install read as the manager reads it, in the phase and at the line where it runs. Files only, milliseconds each."""

from __future__ import annotations

from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.task_model import model_of
from envqa.core.task_model.fetches import Fetch, Pin, pinned_packages

pytestmark = pytest.mark.fast

TOML = 'version = "1.0"\n[environment]\nallow_internet = false\n'


def task(root: Path, dockerfile: str = "FROM debian:bookworm\n", solve: str = "", test: str = "", **files: str):
    texts = {
        "task.toml": TOML,
        "instruction.md": "Write hello to /app/out.txt.\n",
        "environment/Dockerfile": dockerfile,
        "solution/solve.sh": "#!/bin/bash\n" + solve,
        "tests/test.sh": "#!/bin/bash\n" + test + "echo 1 > /logs/verifier/reward.txt\n",
        **files,
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return model_of(load_environment(root, lint=True))


def fetches_of(tmp_path: Path, line: str) -> list[Fetch]:
    """The verifier's fetches of one test.sh line."""
    return [f for f in task(tmp_path, test=line + "\n").fetches if f.phase == "verifier"]


def short(f: Fetch) -> tuple[str, str, str, str, bool]:
    return f.manager, f.target, f.pin, f.version, f.offline


CASES = [
    # apt
    ("apt-get install -y jq=1.6-2.1", [("apt-get", "jq", "exact", "1.6-2.1", False)]),
    ("apt-get install -y --no-install-recommends -t bookworm-backports golang", [("apt-get", "golang", "none", "", False)]),
    ("apt install -y ./vendor/tool_1.0_amd64.deb", [("apt", "./vendor/tool_1.0_amd64.deb", "none", "", True)]),
    ("sudo apt-get install -y python3=3.11.*", [("apt-get", "python3", "range", "3.11.*", False)]),
    # pip
    ("pip install numpy==1.26.4 'requests>=2'", [("pip", "numpy", "exact", "1.26.4", False), ("pip", "requests", "range", ">=2", False)]),
    ("python3 -m pip install -q pytest", [("pip", "pytest", "none", "", False)]),
    ("pip install --no-index --find-links /opt/wheels pytest", [("pip", "pytest", "none", "", True)]),
    ("pip install --find-links=/opt/wheels pytest", [("pip", "pytest", "none", "", True)]),
    ("pip install /opt/w/pytest-8.0.0.whl", [("pip", "/opt/w/pytest-8.0.0.whl", "none", "", True)]),
    ("pip install file:///opt/pkgs/lib-1.0.tar.gz", [("pip", "file:///opt/pkgs/lib-1.0.tar.gz", "none", "", True)]),
    ("pip install -i http://localhost:3141/simple pytest", [("pip", "pytest", "none", "", True)]),
    ("PIP_NO_INDEX=1 pip install pytest", [("pip", "pytest", "none", "", True)]),
    ("pip install git+https://github.com/e/lib.git@v1.4.2", [("pip", "lib", "tag", "v1.4.2", False)]),
    ("pip install git+https://github.com/e/lib.git", [("pip", "lib", "branch", "", False)]),
    # uv
    ("uv pip install --system boto3 pyyaml==6.0.2", [("uv", "boto3", "none", "", False), ("uv", "pyyaml", "exact", "6.0.2", False)]),
    ("uv pip install --offline pytest", [("uv", "pytest", "none", "", True)]),
    ("uvx -p 3.13 -w pytest==8.4.1 pytest /tests", [("uv", "pytest", "exact", "8.4.1", False)]),
    ("uvx ruff@0.6.9 check .", [("uv", "ruff", "exact", "0.6.9", False)]),
    ("uv sync --frozen", [("uv", "(the project)", "lock", "", False)]),
    ("uv run --offline pytest", [("uv", "(the project)", "lock", "", True)]),
    # pipx
    ("pipx install black==24.4.2", [("pipx", "black", "exact", "24.4.2", False)]),
    ("pipx install black", [("pipx", "black", "none", "", False)]),
    ("pipx install /opt/w/black-24.4.2.whl", [("pipx", "/opt/w/black-24.4.2.whl", "none", "", True)]),
    # npm, yarn, pnpm
    ("npm install -g lp@1.3.0 @scope/x@^2", [("npm", "lp", "exact", "1.3.0", False), ("npm", "@scope/x", "range", "^2", False)]),
    ("npm install express", [("npm", "express", "none", "", False)]),
    ("npm ci --offline", [("npm", "(package.json)", "lock", "", True)]),
    ("yarn add lodash@4.17.21", [("yarn", "lodash", "exact", "4.17.21", False)]),
    ("yarn install --offline --frozen-lockfile", [("yarn", "(package.json)", "lock", "", True)]),
    ("pnpm add zod", [("pnpm", "zod", "none", "", False)]),
    ("pnpm install --offline", [("pnpm", "(package.json)", "range", "", True)]),
    # cargo
    ("cargo install ripgrep --version 14.1.0", [("cargo", "ripgrep", "exact", "14.1.0", False)]),
    ("cargo install ripgrep", [("cargo", "ripgrep", "none", "", False)]),
    ("cargo install --offline --path ./tool", [("cargo", "./tool", "none", "", True)]),
    ("cargo install --git https://github.com/e/t --rev 9b89154", [("cargo", "https://github.com/e/t", "commit", "9b89154", False)]),
    # go
    ("go install golang.org/x/tools/cmd/goimports@v0.24.0", [("go", "golang.org/x/tools/cmd/goimports", "exact", "v0.24.0", False)]),
    ("go install example.com/tool@latest", [("go", "example.com/tool", "none", "latest", False)]),
    ("GOFLAGS=-mod=vendor go install example.com/tool@v1.0.0", [("go", "example.com/tool", "exact", "v1.0.0", True)]),
    # conda
    ("conda install -y -c conda-forge numpy=1.26.4", [("conda", "numpy", "exact", "1.26.4", False)]),
    ("conda install -y scipy", [("conda", "scipy", "none", "", False)]),
    ("conda install --offline -y scipy", [("conda", "scipy", "none", "", True)]),
    # curl, wget, git
    ("curl -fsSLO https://h.io/v1.0.0/t.tgz", [("curl", "https://h.io/v1.0.0/t.tgz", "url", "", False)]),
    ("wget https://h.io/releases/latest/t.tgz", [("wget", "https://h.io/releases/latest/t.tgz", "none", "", False)]),
    ("curl -s http://localhost:8080/health", [("curl", "http://localhost:8080/health", "url", "", True)]),
    ("git clone --branch v2.4.1 https://github.com/e/x.git", [("git", "https://github.com/e/x.git", "tag", "v2.4.1", False)]),
    ("git clone https://github.com/e/x.git", [("git", "https://github.com/e/x.git", "branch", "", False)]),
    ("git clone file:///opt/mirror/x.git", [("git", "file:///opt/mirror/x.git", "url", "", True)]),
]  # fmt: skip


@pytest.mark.parametrize("line,expected", CASES, ids=[c[0][:60] for c in CASES])
def test_each_family_is_read_as_its_manager_reads_it(tmp_path, line, expected):
    got = [short(f) for f in fetches_of(tmp_path, line)]
    assert [g for g in got if g[0] != "apt-get" or g[1] != "(the package lists)"] == expected


@pytest.mark.parametrize(
    "line",
    [
        "echo 'pip install requests' > /app/NOTES",  # text, not a command
        "if false; then pip install never-runs; fi",  # cannot run
        "uv run --no-project /tests/check.py",  # runs what is there
        "git clone /opt/src/x.git /tmp/x",  # a local repository
    ],
)
def test_what_fetches_nothing_from_outside_is_no_fetch(tmp_path, line):
    assert [f for f in fetches_of(tmp_path, line) if not f.offline] == []


def test_phases_files_and_lines(tmp_path):
    model = task(
        tmp_path,
        dockerfile="FROM python:3.12-slim\nRUN apt-get update && \\\n    apt-get install -y curl=7.88.1-10\n",
        solve="pip install pandas\n",
        test="uv pip install pytest==8.4.1\n",
    )
    where = {(f.phase, f.location, f.target) for f in model.fetches if f.kind == "package"}
    assert where == {
        ("build", "environment/Dockerfile:2", "curl"),  # a RUN's commands are at its first line (continuations joined)
        ("solution", "solution/solve.sh:2", "pandas"),
        ("verifier", "tests/test.sh:2", "pytest"),
    }
    assert model.fetches is model.fetches  # read once per version


def test_a_requirement_file_is_read_entry_by_entry(tmp_path):
    model = task(
        tmp_path,
        dockerfile="FROM python:3.12-slim\nCOPY requirements.txt /tmp/\nRUN pip install -r /tmp/requirements.txt\n",
        **{"environment/requirements.txt": "# pinned\nnumpy==1.26.4\nrequests\nlib @ git+https://h/l.git@0123abcd\n"},
    )
    got = [(f.location, f.target, f.pin, f.via) for f in model.fetches]
    assert got == [
        ("environment/requirements.txt:2", "numpy", "exact", "environment/Dockerfile:3"),
        ("environment/requirements.txt:3", "requests", "none", "environment/Dockerfile:3"),
        ("environment/requirements.txt:4", "lib", "commit", "environment/Dockerfile:3"),
    ]


def test_the_image_environment_makes_later_installs_offline(tmp_path):
    model = task(
        tmp_path,
        dockerfile="FROM python:3.12-slim\nCOPY wheels /opt/wheels\nENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/wheels\n",
        test="pip install pytest\n",
        **{"environment/wheels/README": "vendored wheels\n"},
    )
    (f,) = model.fetches
    assert f.offline and f.offline_reason == "--no-index"
    script = task(tmp_path / "b", test="pip config set global.index-url http://127.0.0.1:3141/simple\npip install x\n")
    (g,) = script.fetches
    assert g.offline and "127.0.0.1" in g.offline_reason


def test_a_snapshot_archive_makes_an_exact_apt_pin_durable(tmp_path):
    solve = (
        "echo 'deb http://snapshot.debian.org/archive/debian/20240101T000000Z bookworm main' > /etc/apt/sources.list\n"
    )
    model = task(tmp_path, solve=solve + "apt-get install -y jq=1.6-2.1\n")
    (jq,) = [f for f in model.fetches if f.target == "jq"]
    assert jq.pin == "exact" and jq.durable


def test_pinned_packages_lists_the_exact_apt_and_pip_versions(tmp_path):
    model = task(
        tmp_path,
        dockerfile="FROM debian:bookworm\nRUN apt-get install -y jq=1.6-2.1 curl && pip install numpy==1.26.4 x>=1\n",
        test="npm install left-pad@1.3.0\n",
    )
    assert pinned_packages(model) == [
        Pin("apt", "jq", "1.6-2.1", "environment/Dockerfile", 2),
        Pin("pip", "numpy", "1.26.4", "environment/Dockerfile", 2),
    ]
