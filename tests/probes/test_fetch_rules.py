"""The network and pin rules over the fetch model (probes/static/fetch_rules.py, issue 52): the shapes of other
producers' sound tasks that used to be false alarms stay quiet or at info, and the flaws stay warnings."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.fetch_rules import fetch_findings

from .conftest import write_env

pytestmark = pytest.mark.fast

REWARD = "echo 1 > /logs/verifier/reward.txt\n"


def found(tmp_path, **files: str) -> list[tuple[str, str, str]]:
    env = load_environment(write_env(tmp_path / "t", **files), lint=True)
    return [(f.rule, f.severity.value, f.location or "") for f in fetch_findings(env)]


@pytest.mark.parametrize(
    "files",
    [
        {"tests__test_sh": "#!/bin/bash\npip install --no-index --find-links /opt/wheels pytest\n" + REWARD},
        {"tests__test_sh": "#!/bin/bash\npip install --break-system-packages file:///opt/pkgs/check-1.0.tar.gz\n"},
        {"tests__test_sh": "#!/bin/bash\nuv pip install --offline --system pytest\n" + REWARD},
        {
            "environment__Dockerfile": "FROM python:3.12-slim\nCOPY wheels /opt/wheels\nENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/wheels\n",
            "tests__test_sh": "#!/bin/bash\npip install pytest\n" + REWARD,
        },
        {
            "environment__Dockerfile": "FROM python:3.12-slim\nCOPY pip.conf /etc/pip.conf\n",
            "environment/pip.conf": "[global]\nindex-url = http://127.0.0.1:3141/simple\n",
            "tests__test_sh": "#!/bin/bash\npip install pytest\n" + REWARD,
        },
    ],
    ids=["no-index-find-links", "file-url", "uv-offline", "image-env-wheel-cache", "pip-conf-local-index"],
)
def test_an_offline_install_in_a_task_without_network_is_no_finding(tmp_path, files):
    assert found(tmp_path, **files) == []


def test_an_online_install_in_a_task_without_network_is_a_warning(tmp_path):
    hits = found(tmp_path, tests__test_sh="#!/bin/bash\npip install pytest-timeout==2.3.1\n" + REWARD)
    assert hits == [("verifier-installs-at-runtime", "warning", "tests/test.sh:2")]


def test_an_unpinned_build_install_is_info_and_a_verify_install_a_warning(tmp_path):
    hits = found(
        tmp_path,
        environment__Dockerfile="FROM python:3.12-slim\nRUN uv pip install --system harbor-rewardkit boto3 pyyaml\n",
        tests__test_sh="#!/bin/bash\npip install --no-index -f /opt/w x\npip install requests\n" + REWARD,
    )
    pins = sorted(h for h in hits if h[0] == "unpinned-python-dependency")
    assert pins == [
        ("unpinned-python-dependency", "info", "environment/Dockerfile:2"),
        ("unpinned-python-dependency", "warning", "tests/test.sh:3"),
    ]


def test_a_template_that_pins_every_apt_package_gives_one_info_finding(tmp_path):
    dockerfile = (
        "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y curl=8.5.0-2ubuntu10.6 git=1:2.43.0-1ubuntu7.3 \\\n"
        "    jq=1.7.1-3build1\nRUN apt-get install -y python3=3.12.3-0ubuntu2 tmux=3.4-1ubuntu0.1 vim=2:9.1.0016-1ubuntu7.8\n"
    )
    hits = [h for h in found(tmp_path, environment__Dockerfile=dockerfile) if h[0] == "apt-version-pinned"]
    assert hits == [("apt-version-pinned", "info", "environment/Dockerfile:2")]


def test_the_repeats_of_one_rule_in_one_file_are_one_finding_with_every_line(tmp_path):
    test_sh = "#!/bin/bash\npip install requests\npip install flask\n" + REWARD
    env = load_environment(write_env(tmp_path / "t", tests__test_sh=test_sh), lint=True)
    (finding,) = [f for f in fetch_findings(env) if f.rule == "unpinned-python-dependency"]
    assert finding.evidence == ["tests/test.sh:2: pip install requests", "tests/test.sh:3: pip install flask"]
    assert "requests, flask" in finding.message and "lines 2, 3" in finding.message


@pytest.mark.parametrize(
    ("link", "severity"),
    [
        ("https://www.youtube.com/watch?v=abc123", "warning"),  # a video the task is about: it depends on it
        ("https://raw.githubusercontent.com/o/r/main/data.csv", "warning"),  # a file to download and process
        ("https://github.com/o/r/archive/refs/heads/main.zip", "warning"),
        ("https://github.com/o/r/blob/main/CONTRIBUTING.md", "info"),  # a page to read, as issue texts cite them
        ("https://github.com/o/r/blob/v1.2.0/CONTRIBUTING.md", None),  # a tag: a fixed target
    ],
)
def test_an_instruction_link_to_a_moving_target_by_what_it_is(tmp_path, link, severity):
    env = write_env(tmp_path, **{"instruction.md": f"Write /app/out.txt containing hello.\nSee {link} for details.\n"})
    found = [f for f in fetch_findings(load_environment(env)) if f.rule == "download-of-moving-target"]
    assert [f.severity for f in found] == ([severity] if severity else []), found
    assert all(f.location == "instruction.md:2" for f in found)
