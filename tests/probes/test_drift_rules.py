"""Drift and infrastructure rules (issue 42): exact apt pins, downloads of moving targets, parallel builds over
the task's CPU limit. Each rule on shapes of different wording (Dockerfile, solve.sh, test.sh, the instruction)
and the look-alikes that must stay quiet. Files only."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.drift_rules import drift_findings
from envqa.probes.static.fetch_rules import fetch_findings
from envqa.probes.static.findings import static_findings

from .conftest import write_env

pytestmark = pytest.mark.fast

TOML_1CPU = 'version = "1.0"\n[environment]\ncpus = 1\nmemory_mb = 2048\n'
TOML_4CPU = 'version = "1.0"\n[environment]\ncpus = 4\nmemory_mb = 8192\n'
PREBUILT = 'version = "1.0"\n[environment]\ndocker_image = "someone/task:20250101"\n'


def found(tmp_path, **files: str | None) -> list[tuple[str, str, str]]:
    env = load_environment(write_env(tmp_path / "t", **files), lint=True)
    return [(f.rule, f.severity.value, f.location or "") for f in drift_findings(env) + fetch_findings(env)]


def rules(tmp_path, **files: str | None) -> set[str]:
    return {r for r, _s, _l in found(tmp_path, **files)}


# apt-version-pinned


@pytest.mark.parametrize(
    "where,text",
    [
        ("solution__solve_sh", "#!/bin/bash\napt-get update && apt-get install -y tesseract-ocr=5.3.4-1build5\n"),
        (
            "solution__solve_sh",
            "#!/bin/bash\nif ! command -v Rscript; then\n  apt-get install -y --no-install-recommends "
            "r-base-core=4.3.3-2build2\nfi\n",
        ),
        (
            "environment__Dockerfile",
            "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y \\\n    curl \\\n"
            "    build-essential=12.10ubuntu1 \\\n    wget\n",
        ),
        (
            "tests__test_sh",
            "#!/bin/bash\napt install -y -o Dpkg::Use-Pty=0 jq=1.7.1-3build1\necho 1 > /logs/verifier/reward.txt\n",
        ),
    ],
)
def test_an_exact_apt_version_is_named_with_its_line(tmp_path, where, text):
    hits = [h for h in found(tmp_path, **{where: text}) if h[0] == "apt-version-pinned"]
    # warning where it fetches at every run (solve.sh, test.sh); info in the Dockerfile, frozen once built
    assert len(hits) == 1 and hits[0][1] == ("info" if "Dockerfile" in where else "warning"), hits
    assert hits[0][2].split(":")[-1].isdigit()


def test_the_pins_of_one_file_are_one_finding(tmp_path):
    solve = (
        "#!/bin/bash\napt-get install -y \\\n  build-essential=12.10ubuntu1 \\\n  wget=1.21.4-1ubuntu4.1\n"
        "apt-get install -y ncompress=5.0-1\n"
    )
    env = load_environment(write_env(tmp_path / "t", solution__solve_sh=solve), lint=True)
    (finding,) = [f for f in fetch_findings(env) if f.rule == "apt-version-pinned"]
    for pin in ("build-essential=12.10ubuntu1", "ncompress=5.0-1", "wget=1.21.4-1ubuntu4.1"):
        assert pin in finding.message
    assert [e.split(":")[1] for e in finding.evidence] == ["2", "5"] and finding.location == "solution/solve.sh:2"


@pytest.mark.parametrize(
    "text",
    [
        "#!/bin/bash\napt-get install -y tesseract-ocr\n",  # no version
        "#!/bin/bash\napt-get install -y python3=3.11.*\n",  # a wildcard survives point releases
        "#!/bin/bash\necho 'deb http://snapshot.debian.org/archive/debian/20240101T000000Z bookworm main' "
        "> /etc/apt/sources.list\napt-get install -y jq=1.6-2.1\n",  # a snapshot archive keeps every version
        "#!/bin/bash\npip install numpy==1.26.4 pandas==2.2.2\n",  # PyPI keeps every release: a pin is the cure
        "#!/bin/bash\napt-get install -y -t bookworm-backports golang\n",  # an option's value, not a package pin
        "#!/bin/bash\necho 'apt-get install -y jq=1.6' > /app/NOTES\n",  # text, not a command
    ],
)
def test_apt_look_alikes_stay_quiet(tmp_path, text):
    assert "apt-version-pinned" not in rules(tmp_path, solution__solve_sh=text)


# download-of-moving-target


@pytest.mark.parametrize(
    "files,where",
    [
        ({"tests__test_sh": "#!/bin/bash\ngit clone https://github.com/example/tool.git /opt/tool\n"}, "tests/test.sh"),
        ({"solution__solve_sh": "#!/bin/bash\ngit clone --depth 1 -b main https://github.com/e/x.git\n"}, "solution/"),
        (
            {
                "solution__solve_sh": "#!/bin/bash\ncurl -fsSL -o d.csv https://raw.githubusercontent.com/e/data/master/d.csv\n"
            },
            "solution/",
        ),
        (
            {"solution__solve_sh": "#!/bin/bash\nyt-dlp -o /app/v.mp4 https://www.youtube.com/watch?v=abc123\n"},
            "solution/",
        ),
        (
            {
                "environment__Dockerfile": "FROM debian:bookworm\nRUN wget https://github.com/e/t/releases/latest/download/t.tgz\n"
            },
            "environment/Dockerfile",
        ),
        (
            {
                "environment__Dockerfile": "FROM debian:bookworm\nADD https://github.com/e/t/archive/refs/heads/main.zip /tmp/\n"
            },
            "environment/Dockerfile",
        ),
        ({"solution__solve_sh": "#!/bin/bash\npip install git+https://github.com/e/lib.git\n"}, "solution/"),
        (
            {"instruction_md": "Download this talk: https://youtu.be/abc123. Write its transcript to /app/out.txt.\n"},
            "instruction.md",
        ),
    ],
)
def test_a_moving_target_is_named_where_it_is_fetched(tmp_path, files, where):
    files = {k.replace("instruction_md", "instruction.md"): v for k, v in files.items()}
    hits = [h for h in found(tmp_path, **files) if h[0] == "download-of-moving-target"]
    assert len(hits) == 1 and hits[0][1] == "warning" and hits[0][2].startswith(where), hits


@pytest.mark.parametrize(
    "files",
    [
        # a versioned release, a tag, a clone pinned by a later checkout or by a version held in a variable
        {
            "environment__Dockerfile": "FROM debian:bookworm\nRUN curl -fsSLO https://github.com/e/t/releases/download/v1.0.0/t-1.0.0.tar.gz\n"
        },
        {"solution__solve_sh": "#!/bin/bash\ngit clone --branch v2.4.1 https://github.com/e/x.git\n"},
        {
            "solution__solve_sh": "#!/bin/bash\ngit clone https://github.com/BVLC/caffe.git\ncd caffe\ngit checkout 9b89154\n"
        },
        {
            "solution__solve_sh": "#!/bin/bash\nV=4.13.0\ngit clone --depth 1 --branch ${V} https://github.com/e/h.git /tmp/h\n"
        },
        {"solution__solve_sh": "#!/bin/bash\npip install git+https://github.com/e/lib.git@v1.4.2\n"},
        # a file of a tag, an immutable archive item, a local service
        {"tests__test_sh": "#!/bin/bash\ncurl -fsSL https://raw.githubusercontent.com/e/d/v1.2/d.csv -o /tmp/d.csv\n"},
        {"solution__solve_sh": "#!/bin/bash\ncurl -s http://localhost:8080/latest\n"},
        # the instruction names a versioned page, a documentation link
        {"instruction.md": "Build the tool as https://example.org/docs/v3/build.html describes; write /app/out.txt.\n"},
    ],
)
def test_fixed_targets_stay_quiet(tmp_path, files):
    assert "download-of-moving-target" not in rules(tmp_path, **files)


def test_a_build_time_moving_target_is_info_when_the_task_names_a_prebuilt_image(tmp_path):
    dockerfile = "FROM debian:bookworm\nRUN curl -fsSL https://raw.githubusercontent.com/e/d/main/d.csv -o /d.csv\n"
    assert found(tmp_path / "a", environment__Dockerfile=dockerfile, task_toml=PREBUILT) == [
        ("download-of-moving-target", "info", "environment/Dockerfile:2")
    ]
    assert found(tmp_path / "b", environment__Dockerfile=dockerfile)[0][1] == "warning"


# parallel-build-over-cpu-limit


@pytest.mark.parametrize(
    "where,text",
    [
        ("solution__solve_sh", "#!/bin/bash\nmake -j$(nproc)\n"),
        ("solution__solve_sh", '#!/bin/bash\nmake -C /tmp/h -j"$(nproc)"\n'),
        ("solution__solve_sh", "#!/bin/bash\ncd caffe && make all -j4\n"),
        ("tests__test_sh", "#!/bin/bash\n./configure && make -j\n"),
        ("solution__solve_sh", "#!/bin/bash\ncmake --build build --parallel 8\n"),
        ("solution__solve_sh", "#!/bin/bash\nninja -C build -j `nproc`\n"),
    ],
)
def test_more_build_jobs_than_cpus_is_named(tmp_path, where, text):
    hits = [h for h in found(tmp_path, task_toml=TOML_1CPU, **{where: text}) if h[0] == "parallel-build-over-cpu-limit"]
    assert len(hits) == 1 and hits[0][1] == "warning", hits


@pytest.mark.parametrize(
    "files",
    [
        {"solution__solve_sh": "#!/bin/bash\nmake all -j4\n", "task_toml": TOML_4CPU},  # within cpus
        {"solution__solve_sh": "#!/bin/bash\nmake -j1\n", "task_toml": TOML_1CPU},
        {"solution__solve_sh": "#!/bin/bash\nmake\n", "task_toml": TOML_1CPU},
        # image builds are not under the task's limits
        {"environment__Dockerfile": "FROM debian:bookworm\nRUN make -j$(nproc)\n", "task_toml": TOML_1CPU},
        # the image replaces nproc with the task's count
        {
            "environment__Dockerfile": "FROM debian:bookworm\nRUN printf '#!/bin/bash\\necho 4\\n' > /usr/local/bin/nproc"
            " && chmod +x /usr/local/bin/nproc\n",
            "solution__solve_sh": "#!/bin/bash\nmake -j$(nproc)\n",
            "task_toml": TOML_4CPU,
        },
        {"solution__solve_sh": "#!/bin/bash\necho 'make -j$(nproc)' >> /app/BUILD.md\n", "task_toml": TOML_1CPU},
    ],
)
def test_builds_within_the_limit_stay_quiet(tmp_path, files):
    assert "parallel-build-over-cpu-limit" not in rules(tmp_path, **files)


def test_the_finding_cites_the_limit_and_says_what_to_change(tmp_path):
    env = load_environment(write_env(tmp_path / "t", task_toml=TOML_1CPU, solution__solve_sh="#!/bin/bash\nmake -j4\n"))
    (f,) = [f for f in static_findings(env) if f.rule == "parallel-build-over-cpu-limit"]
    assert f.evidence == ["solution/solve.sh:2: make -j4", "task.toml: cpus = 1, memory_mb = 2048"]
    assert "-j1" in f.fix


def test_no_drift_finding_on_the_harbor_template_or_the_clean_examples():
    from .conftest import EXAMPLES, REPO

    quiet = [REPO / "tests" / "fixtures" / "harbor-template-task" / "task"]
    quiet += [p for p in sorted(EXAMPLES.iterdir()) if p.name.startswith("clean-") and (p / "task.toml").is_file()]
    quiet += [EXAMPLES / "build-downloads-release"]
    noisy = {p.name: [f.rule for f in drift_findings(load_environment(p, lint=True))] for p in quiet}
    assert {k: v for k, v in noisy.items() if v} == {}
