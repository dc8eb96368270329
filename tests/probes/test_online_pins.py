"""`qa lint --online` (issue 52 item 2): each pinned version asked of the index the build uses, against a real
index server on 127.0.0.1 (tests/probes/index_server.py) and, once, the host's own apt lists. Nothing here reaches
another host: the outside archives appear only as the host's apt lists, read by `apt-cache`."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from envqa.core.config import OnlineSettings
from envqa.core.environment import load_environment
from envqa.core.package_index import Distribution, apt_has, distribution_of, pip_has
from envqa.core.task_model import model_of
from envqa.core.task_model.fetches import Pin, pinned_packages
from envqa.probes.static.fetch_rules import apt_pin_findings
from envqa.probes.static.online_pins import gone_over_pinned, online_pin_findings
from envqa.sandbox.indexes import OnlineIndexes
from envqa.sandbox.indexes.apt import LISTS, AptArchive, HostApt, parse_packages
from envqa.sandbox.indexes.pypi import version_of

from .conftest import EXAMPLES, run_qa, write_env
from .index_server import PACKAGES_MAIN, start_index_server

pytestmark = pytest.mark.fast
BUDGET = 2.0


@pytest.fixture(scope="module")
def index():
    server, httpd = start_index_server()
    yield server
    server.release.set()
    httpd.shutdown()
    httpd.server_close()


def settings(url: str, **extra) -> OnlineSettings:
    values = {
        "debian_url": f"{url}/debian",
        "debian_security_url": f"{url}/debian-security",
        "pip_index_url": f"{url}/simple",
        "host_apt": False,
        "connect_timeout_sec": 0.5,
        "read_timeout_sec": 0.5,
        "task_budget_sec": BUDGET,
    }
    return OnlineSettings(**{**values, **extra})


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def task(tmp_path: Path, dockerfile: str, **files: str) -> Path:
    return write_env(tmp_path / "task", {"environment/Dockerfile": dockerfile, **files})


def online(root: Path, cfg: OnlineSettings, home: Path):
    env = load_environment(root)
    return online_pin_findings(env, OnlineIndexes(cfg, home), cfg.task_budget_sec)


APT_GONE = (
    "FROM debian:bookworm\nWORKDIR /app\n"
    "RUN apt-get update && apt-get install -y bash=5.2.15-2+b13 python3-minimal=3.11.2-1\n"
    "RUN apt-get install -y --no-install-recommends libc6=2.35-0ubuntu3 tzdata=2025b-0+deb12u2 openssl=3.0.17-1~deb12u3\n"
)


def test_a_pin_the_archive_has_is_quiet(index, tmp_path):
    root = task(tmp_path, "FROM debian:12-slim\nRUN apt-get install -y bash=5.2.15-2+b13 tzdata=2025b-0+deb12u2\n")
    assert online(root, settings(index.url), tmp_path / "home") == []


def test_a_gone_pin_is_one_error_per_file_citing_each_line(index, tmp_path):
    root = task(tmp_path, APT_GONE)
    found = online(root, settings(index.url), tmp_path / "home")
    assert [f.rule for f in found] == ["pinned-version-gone"], found
    f = found[0]
    assert f.severity == "error" and f.label == "brittleness" and f.location == "environment/Dockerfile:3"
    assert "python3-minimal=3.11.2-1 (environment/Dockerfile:3)" in f.message
    assert "libc6=2.35-0ubuntu3 (environment/Dockerfile:4)" in f.message and "this build fails today" in f.message
    assert "bash" not in f.message and "tzdata" not in f.message  # present (main, -updates)
    assert "openssl" not in f.message  # present in -security, written without its epoch 1:
    assert any("has 3.11.2-1+b1" in e for e in f.evidence), f.evidence
    assert "python3-minimal=3.11.2-1" in (f.fix or "")
    # the warning "fails once updated" gives way at the gone pins' lines only
    env = load_environment(root)
    merged = gone_over_pinned(env, apt_pin_findings(env), found)
    pinned = sorted(x.message.split("version ")[1].split(":")[0] for x in merged if x.rule == "apt-version-pinned")
    assert pinned == [], pinned  # both lines hold a gone pin
    one_line = task(
        tmp_path / "b",
        "FROM debian:bookworm\nRUN apt-get install -y bash=5.2.15-2+b13\n"
        "RUN apt-get install -y python3-minimal=3.11.2-1\n",
    )
    one_env = load_environment(one_line)
    merged = gone_over_pinned(
        one_env, apt_pin_findings(one_env), online(one_line, settings(index.url), tmp_path / "home")
    )
    assert [x.location for x in merged if x.rule == "apt-version-pinned"] == ["environment/Dockerfile:2"]


def test_pip_pins_are_asked_of_the_index_the_build_names(index, tmp_path):
    root = task(
        tmp_path,
        "FROM python:3.11-slim-bookworm\n"
        "RUN pip install simplejson==3.19.2 requests==2.31.0 python-dateutil==2.8.2 'requests[socks]==2.32.3'\n"
        "RUN pip install simplejson==3.18.0 requests==2.0 nosuchproject==1.0\n"
        f"RUN pip install --index-url {index.url}/torch torch==2.1.0+cpu\n",
    )
    found = online(root, settings(index.url), tmp_path / "home")
    assert [f.rule for f in found] == ["pinned-version-gone"], found
    msg = found[0].message
    assert "simplejson==3.18.0 (environment/Dockerfile:3)" in msg and "requests==2.0 (" in msg
    assert "nosuchproject==1.0" in msg and "torch" not in msg and "3.19.2" not in msg and "2.8.2" not in msg
    assert any("nosuchproject==1.0: " in e and "no such package" in e for e in found[0].evidence)


def test_an_unreachable_index_is_one_note_and_no_error(tmp_path):
    root = task(tmp_path, APT_GONE + "RUN pip install simplejson==3.18.0\n")
    start = time.monotonic()
    found = online(root, settings(f"http://127.0.0.1:{closed_port()}"), tmp_path / "home")
    assert time.monotonic() - start < BUDGET + 1
    assert [(f.rule, f.severity) for f in found] == [("pinned-versions-unchecked", "info")], found
    assert "unreachable" in found[0].message and len(found[0].evidence) == 6


@pytest.mark.parametrize("read_timeout", [0.5, 30.0], ids=["read-timeout-ends-it", "task-budget-ends-it"])
def test_a_slow_index_is_one_note_within_the_deadline(index, tmp_path, read_timeout):
    root = task(tmp_path, "FROM debian:bookworm\nRUN apt-get install -y bash=0.1\nRUN pip install requests==2.0\n")
    cfg = settings(
        f"{index.url}/slow", task_budget_sec=1.0, read_timeout_sec=read_timeout, connect_timeout_sec=read_timeout
    )
    start = time.monotonic()
    found = online(root, cfg, tmp_path / "home")
    took = time.monotonic() - start
    assert took < cfg.task_budget_sec + 0.5, took
    assert [(f.rule, f.severity) for f in found] == [("pinned-versions-unchecked", "info")], found
    assert any(p.startswith("/slow/") for p in index.requests)  # it was asked, and did not answer in time


def test_a_warm_cache_asks_nothing(index, tmp_path):
    root = task(tmp_path, APT_GONE + "RUN pip install simplejson==3.18.0 requests==2.31.0\n")
    home = tmp_path / "home"
    cold = online(root, settings(index.url), home)
    asked = len(index.requests)
    start = time.monotonic()
    warm = online(root, settings(index.url), home)  # a new process's view: new clients, the same QA_HOME
    assert time.monotonic() - start < 2.0
    assert len(index.requests) == asked, index.requests[asked:]
    assert [f.message for f in warm] == [f.message for f in cold] and cold[0].rule == "pinned-version-gone"
    online(root, settings(index.url, cache_ttl_sec=0), home)  # no cache: asked again
    assert len(index.requests) > asked


def test_what_cannot_be_asked_is_not_checked_never_gone(index, tmp_path):
    latest = task(tmp_path / "a", "FROM debian:latest\nRUN apt-get install -y bash=0.1\n")
    [f] = online(latest, settings(index.url), tmp_path / "home")
    assert f.rule == "pinned-versions-unchecked" and "debian:latest" in f.message
    own = task(
        tmp_path / "b",
        "FROM debian:bookworm\nRUN echo 'deb http://apt.example.org/x bookworm main' > /etc/apt/sources.list.d/x.list\n"
        "RUN apt-get update && apt-get install -y bash=0.1 python3-minimal=3.11.2-1+b1\n"
        "RUN pip install --find-links /wheels simplejson==0.1\n",
    )
    [f] = online(own, settings(index.url), tmp_path / "home")
    assert f.rule == "pinned-versions-unchecked" and "own apt sources" in f.message and "own sources" in f.message
    assert len(f.evidence) == 2  # python3-minimal=3.11.2-1+b1 is in the archive: found, whatever else is added


def test_without_online_nothing_is_asked(index, tmp_path, qa_env):
    root = shutil.copytree(EXAMPLES / "build-pins-gone-apt-version", tmp_path / "t")
    qa_toml = tmp_path / "qa.toml"
    lines = [f"{k} = {json.dumps(v)}" for k, v in settings(index.url).model_dump().items()]
    qa_toml.write_text("[online]\n" + "\n".join(lines) + "\n")
    env = {**qa_env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    asked = len(index.requests)
    off = run_qa(["lint", str(root), "--json", "-c", str(qa_toml)], env, timeout=120)
    assert len(index.requests) == asked, index.requests[asked:]
    rules = {f["rule"]: f["severity"] for f in json.loads(off.stdout)["findings"]}
    assert rules == {"apt-version-pinned": "info"}, off.stdout + off.stderr  # a Dockerfile pin, from the files alone
    on = run_qa(["lint", str(root), "--json", "--online", "-c", str(qa_toml)], env, timeout=120)
    report = json.loads(on.stdout)
    assert on.returncode == 1 and len(index.requests) > asked
    assert {f["rule"]: f["severity"] for f in report["findings"]} == {"pinned-version-gone": "error"}, on.stdout
    assert "pinned-version-gone" not in report["coverage"]["unchecked"]
    clean = shutil.copytree(EXAMPLES / "clean-build-pins-kept-version", tmp_path / "c")
    quiet = run_qa(["lint", str(clean), "--json", "--online", "-c", str(qa_toml)], env, timeout=120)
    assert quiet.returncode == 0 and json.loads(quiet.stdout)["findings"] == [], quiet.stdout + quiet.stderr


def test_the_host_apt_lists_answer_for_their_release(tmp_path):
    """The one check against the real Debian archive: as this host's `apt-get update` last saw it."""
    if shutil.which("apt-cache") is None or not any(LISTS.glob("*_Packages*")):
        pytest.skip(f"apt has no lists here ({LISTS} is empty): nothing of a real archive to ask")
    policy = subprocess.run(["apt-cache", "policy"], capture_output=True, text=True, timeout=30).stdout
    release = next((d for d in ("bookworm", "trixie", "bullseye") if f"n={d}," in policy), None)
    if release is None or "o=Debian" not in policy:
        pytest.skip("the host's apt lists are not of a Debian release qa maps")
    bash = subprocess.run(["apt-cache", "policy", "bash"], capture_output=True, text=True, timeout=30).stdout
    candidate = next(line.split()[-1] for line in bash.splitlines() if "Candidate:" in line)
    cfg = settings(
        f"http://127.0.0.1:{closed_port()}",
        host_apt=True,
        cache_ttl_sec=10 * 365 * 86400.0,
        debian_url="http://deb.debian.org/debian",
        debian_security_url="http://deb.debian.org/debian-security",
    )
    indexes = OnlineIndexes(cfg, tmp_path / "home")
    chain = indexes.apt(Distribution("debian", release))
    assert [type(i) for i in chain] == [HostApt, AptArchive], "the host's lists should be asked before the archive"
    # apt-cache reads every list again on each call where the host keeps no pkgcache.bin (Docker's apt config):
    # seconds on a loaded machine, so this direct question has a wide deadline of its own
    host = HostApt(sorted(chain[0].suites), sorted(chain[0].components), "amd64", timeout_sec=120)
    answer = host.versions("bash", time.monotonic() + 120)
    assert candidate in answer.versions and not answer.unanswered


def test_the_task_model_lists_the_pins_online_checks(tmp_path):
    root = task(
        tmp_path,
        "FROM debian:bookworm\nRUN apt-get install -y -t bookworm-backports curl=7.88.1-10 libssl3:amd64=3.0.1 \\\n"
        "    git\nRUN <<EOF\nset -e\npip install --no-cache-dir -i https://x.example/simple 'Flask[async]==3.0.0' b>=1\nEOF\n",
    )
    pins = pinned_packages(model_of(load_environment(root)))
    assert pins == [
        Pin("apt", "curl", "7.88.1-10", "environment/Dockerfile", 2),
        Pin("apt", "libssl3", "3.0.1", "environment/Dockerfile", 2),
        Pin("pip", "Flask", "3.0.0", "environment/Dockerfile", 6),
    ]


def test_the_readers_of_names_and_versions():
    assert parse_packages(PACKAGES_MAIN) == {
        "python3-minimal": ["3.11.2-1+b1"],
        "bash": ["5.2.15-2+b13"],
        "libc6": ["2.36-9+deb12u13"],
    }
    assert version_of("python_dateutil-2.9.0.post0-py2.py3-none-any.whl", "python-dateutil") == "2.9.0.post0"
    assert version_of("python-dateutil-2.8.2.tar.gz", "python-dateutil") == "2.8.2"
    assert version_of("zope.interface-6.0-cp311-cp311-manylinux_2_17_x86_64.whl", "zope-interface") == "6.0"
    assert version_of("requests-2.31.0.tar.gz", "requests-oauthlib") is None
    assert distribution_of("debian:12-slim") == Distribution("debian", "bookworm")
    assert distribution_of("ubuntu:22.04") == Distribution("ubuntu", "jammy")
    assert distribution_of("python:3.12-slim-bookworm") == Distribution("debian", "bookworm")
    assert distribution_of("python:3.12") is None and distribution_of("ghcr.io/x/debian:bookworm") is None
    assert apt_has("3.0.17-1~deb12u3", frozenset({"1:3.0.17-1~deb12u3"})) and not apt_has(
        "3.11.2-1", frozenset({"3.11.2-1+b1"})
    )
    assert pip_has("1.0", frozenset({"1.0.0"})) and pip_has("1.2.*", frozenset({"1.2.5"}))
    assert not pip_has("2.1.0+cpu", frozenset({"2.1.0"}))
