"""The shell and Dockerfile parsers the static rules stand on (bashlex, dockerfile-parse), and the rules
that used to split on whitespace: no false alarm from our own parsing, the real flaw still found."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.core.parsers.dockerfile import parse_dockerfile
from envqa.core.parsers.shell import parse_script
from envqa.probes.static.findings import static_findings
from envqa.probes.static.image_checks import verifier_commands

from .conftest import write_env


def words(script: str, reachable_only: bool = True) -> list[list[str]]:
    return [c.words for c in parse_script(script) if c.reachable or not reachable_only]


@pytest.mark.fast
def test_operators_pipes_and_redirections_split_commands():
    got = words("pip install -q pytest==9.0.3 2>/dev/null || true\na && b; c | d >> /tmp/out 2>&1\n")
    assert got == [["pip", "install", "-q", "pytest==9.0.3"], ["true"], ["a"], ["b"], ["c"], ["d"]]
    cmd = parse_script("pip install x 2>/dev/null\n")[0]
    assert cmd.redirects == [(">", "/dev/null")] and cmd.line == 1


@pytest.mark.fast
def test_line_continuations_heredocs_and_sh_c():
    script = (
        "#!/bin/bash\n"
        "pip install \\\n    requests \\\n    numpy==1.26.4\n"
        "cat > /tmp/x.py <<'EOF'\n"
        "import os; os.system('/app/not-a-command')\n"
        "EOF\n"
        'bash -c "uvx pytest /tests && /usr/bin/grep -q ok /app/out"\n'
    )
    cmds = parse_script(script)
    by_name = {c.words[0]: c for c in cmds}
    assert by_name["pip"].words == ["pip", "install", "requests", "numpy==1.26.4"] and by_name["pip"].line == 2
    assert "import" not in by_name and "/app/not-a-command" not in " ".join(w for c in cmds for w in c.words)
    assert by_name["cat"].line == 5
    assert by_name["uvx"].line == 8 and by_name["/usr/bin/grep"].line == 8  # inner commands of `bash -c "…"`


@pytest.mark.fast
def test_statically_unreachable_commands():
    script = (
        "if false; then /app/never1.sh; fi\n"
        "false && /app/never2.sh\n"
        "unused() { /app/never3.sh; }\n"
        "if [ 1 = 0 ]; then\n  /app/never4.sh\nfi\n"
        "used() { /app/yes1.sh; }\nused\n"
        "if [ -f /x ]; then\n  exit 1\nfi\n"
        "/app/yes2.sh\n"
        "exit 0\n"
        "/app/never5.sh\n"
    )
    reach = {c.words[0]: c.reachable for c in parse_script(script) if c.words[0].startswith("/app/")}
    assert reach == {
        "/app/never1.sh": False,
        "/app/never2.sh": False,
        "/app/never3.sh": False,
        "/app/never4.sh": False,
        "/app/yes1.sh": True,
        "/app/yes2.sh": True,
        "/app/never5.sh": False,
    }


@pytest.mark.fast
def test_fallback_when_bashlex_refuses_case_and_arithmetic():
    script = (
        "#!/bin/bash\n"
        'case "$1" in\n  fast) /app/fast.sh ;;\n  *) /app/slow.sh ;;\nesac\n'
        "n=$(( 1 + 2 ))\n"
        "if [ -f /x ]; then\n  exit 1\nfi\n"
        "/app/after.sh\n"
        "exit 0\n"
        "/app/never.sh\n"
    )
    cmds = {c.words[0]: c for c in parse_script(script) if c.words and c.words[0].startswith("/app/")}
    assert set(cmds) == {"/app/fast.sh", "/app/slow.sh", "/app/after.sh", "/app/never.sh"}
    assert not cmds["/app/fast.sh"].parsed  # the case arms came from the documented fallback
    assert cmds["/app/after.sh"].reachable and not cmds["/app/never.sh"].reachable
    assert cmds["/app/slow.sh"].line == 4


@pytest.mark.fast
def test_dockerfile_stages_args_env_mounts_exec_form_and_heredoc(tmp_path):
    df = tmp_path / "Dockerfile"
    df.write_text(
        "ARG PY=3.11\n"
        "FROM python:${PY}-slim AS build\n"
        "ENV REQ=requests \\\n    PIN=2.31.0\n"
        "RUN --mount=type=cache,target=/root/.cache/pip pip install -q ${REQ}==${PIN} \\\n"
        "    && pip install flask 2>/dev/null || true\n"
        'RUN ["pip", "install", "rich"]\n'
        "RUN <<EOF\nset -e\npip install httpx==0.27.0\nEOF\n"
        "FROM debian:bookworm\n"
        "COPY --from=build /x /x\n"
        "USER agent\n"
    )
    model = parse_dockerfile(df)
    assert [(s.base, s.name) for s in model.stages] == [("python:3.11-slim", "build"), ("debian:bookworm", None)]
    runs = [(st.index, c.line, c.words) for st, c in model.run_commands()]
    assert runs == [
        (0, 5, ["pip", "install", "-q", "requests==2.31.0"]),
        (0, 5, ["pip", "install", "flask"]),
        (0, 5, ["true"]),
        (0, 7, ["pip", "install", "rich"]),
        (0, 9, ["set", "-e"]),
        (0, 10, ["pip", "install", "httpx==0.27.0"]),
    ]
    assert [i.value for i in model.final.instructions if i.instruction == "USER"] == ["agent"]


def pin_messages(tmp_path, dockerfile: str = "FROM debian:bookworm\n", test_sh: str | None = None) -> list[str]:
    files = {"environment/Dockerfile": dockerfile}
    if test_sh:
        files["tests/test.sh"] = test_sh
    env = load_environment(write_env(tmp_path, files))
    return [f"{f.location} {f.message}" for f in static_findings(env) if f.rule == "unpinned-python-dependency"]


@pytest.mark.fast
@pytest.mark.parametrize(
    "line",
    [
        "RUN pip install -q pytest==9.0.3 2>/dev/null || true",
        "RUN pip install -r /tmp/requirements.txt -c constraints.txt && pip install ./local-pkg /wheels/x.whl",
        "RUN --mount=type=cache,target=/root/.cache pip install --index-url https://x.invalid/simple pytest==8.3.3",
        "RUN python3 -m pip install --no-cache-dir \\\n    numpy==1.26.4 \\\n    pandas==2.2.2 ; echo done",
        "RUN uv pip install --system 'httpx==0.27.0' | tee /tmp/log",
    ],
)
def test_pinned_idioms_are_not_flagged(tmp_path, line):
    assert pin_messages(tmp_path, f"FROM debian:bookworm\n{line}\n") == []


@pytest.mark.fast
def test_unpinned_package_behind_or_true_is_still_found(tmp_path):
    got = pin_messages(
        tmp_path,
        "FROM debian:bookworm\nRUN pip install -q requests 2>/dev/null || true\n",
        test_sh="#!/bin/bash\nif false; then pip install never-runs; fi\nuv add flask==3.0.0 click\n",
    )
    assert [m.split(" without")[0] for m in got] == [
        "environment/Dockerfile:2 environment/Dockerfile installs requests",
        "tests/test.sh:3 tests/test.sh installs click",
    ]


@pytest.mark.fast
def test_runtime_fetch_severity_follows_the_task_network(tmp_path):
    script = "#!/bin/bash\ncurl -LsSf https://astral.sh/uv/install.sh | sh\necho 1 > /logs/verifier/reward.txt\n"
    closed = load_environment(write_env(tmp_path / "closed", {"tests/test.sh": script}))
    opened = load_environment(
        write_env(
            tmp_path / "open",
            {
                "tests/test.sh": script,
                "task.toml": (
                    'version = "1.0"\n[metadata]\ndifficulty = "easy"\ncategory = "t"\ntags = ["t"]\n[agent]\ntimeout_sec = 60.0\n'
                    "[verifier]\ntimeout_sec = 60.0\n[environment]\nallow_internet = true\n"
                ),
            },
        )
    )
    sev = {
        name: [f.severity for f in static_findings(e) if f.rule == "verifier-installs-at-runtime"]
        for name, e in (("closed", closed), ("open", opened))
    }
    assert sev == {"closed": ["warning"], "open": ["info"]}


@pytest.mark.fast
def test_verifier_commands_skip_unreachable_lines_and_look_into_sh_c(tmp_path):
    env = load_environment(
        write_env(
            tmp_path,
            {
                "tests/test.sh": (
                    "#!/bin/bash\n"
                    "/usr/bin/chmod 0644 /app/out.txt 2>/dev/null || true\n"
                    "if false; then\n  /app/legacy.sh\nfi\n"
                    'sh -c "/opt/tools/grade /app/out.txt" && echo 1 > /logs/verifier/reward.txt\n'
                    "timeout 30 bash /app/run-me.sh\n"
                    "exit 0\n"
                    "/app/after-exit.sh\n"
                )
            },
        )
    )
    assert sorted(verifier_commands(env)) == ["/app/run-me.sh", "/opt/tools/grade", "/usr/bin/chmod"]


def test_merged_usr_paths_are_packaged_and_unreachable_lines_ignored(tmp_path, qa_env, base_image):
    """dpkg records /bin/grep, /bin/chmod; test.sh runs /usr/bin/grep, /usr/bin/chmod (merged /usr): packaged.
    The image's own helper is flagged only where test.sh can actually reach it."""
    import json

    from .conftest import EXAMPLES, run_qa

    res = run_qa(["lint", str(EXAMPLES / "clean-merged-usr-tools"), "--image", "--json"], qa_env)
    assert res.returncode == 0, res.stdout + res.stderr[-2000:]
    assert json.loads(res.stdout)["findings"] == []
    reachable = write_env(
        tmp_path / "reachable",
        {
            "environment/Dockerfile": (EXAMPLES / "clean-merged-usr-tools" / "environment" / "Dockerfile").read_text(),
            "tests/test.sh": "#!/bin/bash\n/usr/bin/grep -q hello /app/out.txt && /app/legacy-check.sh "
            "&& echo 1 > /logs/verifier/reward.txt\n",
        },
    )
    res = run_qa(["lint", str(reachable), "--image", "--json"], qa_env)
    found = [f for f in json.loads(res.stdout)["findings"] if f["rule"] == "verifier-runs-image-file"]
    assert [f["message"].split(",")[0] for f in found] == ["test.sh runs /app/legacy-check.sh"]
