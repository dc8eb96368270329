"""Static rules (no image): each fires on the flaw it names and stays quiet on the clean variant."""

from __future__ import annotations

import json

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.findings import static_findings

from .conftest import EXAMPLES, run_qa, write_env


def rules(env_dir, **kw) -> list[str]:
    return sorted(f.rule for f in static_findings(load_environment(env_dir), **kw))


@pytest.mark.fast
def test_base_environment_is_clean(tmp_path):
    assert rules(write_env(tmp_path)) == []


@pytest.mark.fast
@pytest.mark.parametrize(
    "script,rule",
    [
        (
            "#!/bin/bash\nmkdir -p /logs/verifier\n[ -f /app/out.txt ] && echo 1 > /logs/verifier/reward.txt\n",
            "reward-not-written-on-failure",
        ),
        (
            "#!/bin/bash\nmkdir -p /logs/verifier\npython3 -m pytest /tests || true\necho 1 > /logs/verifier/reward.txt\n",
            "reward-written-unconditionally",
        ),
        (
            "#!/bin/bash\npip install pytest==8.0.0\necho 0 > /logs/verifier/reward.txt\n"
            "pytest /tests && echo 1 > /logs/verifier/reward.txt\n",
            "verifier-installs-at-runtime",
        ),
        (
            "#!/bin/bash\ncurl -sSf http://example.invalid/check.sh | bash\necho 0 > /logs/verifier/reward.txt\n",
            "verifier-installs-at-runtime",
        ),
    ],
)
def test_reward_and_runtime_rules(tmp_path, script, rule):
    assert rule in rules(write_env(tmp_path, tests__test_sh=script))


@pytest.mark.fast
@pytest.mark.parametrize(
    "script",
    [
        # 0 first, 1 only on success: the usual correct shape.
        "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\npytest /tests && echo 1 > /logs/verifier/reward.txt\n",
        # if/else on one line writes 0 on the failure path.
        "#!/bin/bash\nif pytest /tests; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
        # a computed reward.
        '#!/bin/bash\nr=$(python3 /tests/score.py)\necho "$r" > /logs/verifier/reward.txt\n',
        # set -e makes the unconditional-looking write conditional.
        "#!/bin/bash\nset -euo pipefail\necho 0 > /logs/verifier/reward.txt\npytest /tests\necho 1 > /logs/verifier/reward.txt\n",
    ],
)
def test_correct_reward_shapes_are_quiet(tmp_path, script):
    # the score helper a computed reward runs ships with the tests (else verifier-runs-missing-file, rightly)
    assert rules(write_env(tmp_path, {"tests/score.py": "print(1)\n"}, tests__test_sh=script)) == []


@pytest.mark.fast
def test_unpinned_pip_in_dockerfile_and_requirements(tmp_path):
    env = write_env(
        tmp_path,
        environment__Dockerfile="FROM debian:bookworm\nRUN pip install requests numpy==1.26.4\n",
        environment__requirements_txt="flask\nclick==8.1.7\n# a comment\n",
    )
    found = [f for f in static_findings(load_environment(env)) if f.rule == "unpinned-python-dependency"]
    assert sorted(f.location for f in found) == ["environment/Dockerfile:2", "environment/requirements.txt:1"]
    assert "requests" in found[0].message and "numpy" not in found[0].message


@pytest.mark.fast
def test_compose_privileged_and_bind_mounts(tmp_path):
    compose = (
        "services:\n  main:\n    build: .\n    privileged: true\n    volumes:\n"
        "      - ./data:/data\n      - ./ro:/ro:ro\n      - /var/run/docker.sock:/var/run/docker.sock\n"
        "      - cache:/cache\n"
    )
    env = write_env(tmp_path, **{"environment__docker-compose_yaml": compose})
    found = static_findings(load_environment(env))
    assert [f.rule for f in found].count("compose-privileged") == 1
    mounts = sorted(f.evidence[0].split("volumes: ")[1] for f in found if f.rule == "compose-writable-bind-mount")
    assert mounts == ["./data:/data", "/var/run/docker.sock:/var/run/docker.sock"]


@pytest.mark.fast
def test_opt_in_rules_only_when_asked(tmp_path):
    env = write_env(tmp_path, environment__Dockerfile="FROM ubuntu\nWORKDIR /app\n")
    assert rules(env) == []
    assert rules(env, root_agent=True, unpinned_base=True) == ["root-agent", "unpinned-base-image"]
    pinned = write_env(tmp_path / "pinned", environment__Dockerfile="FROM ubuntu:24.04\nUSER agent\n")
    assert rules(pinned, root_agent=True, unpinned_base=True) == []


@pytest.mark.fast
def test_qa_lint_json_reports_file_and_line(qa_env):
    res = run_qa(["lint", str(EXAMPLES / "reward-tamper"), "--json"], qa_env)
    assert res.returncode == 1, res.stderr
    out = json.loads(res.stdout)
    assert out["ok"] is False
    f = next(f for f in out["findings"] if f["rule"] == "reward-not-written-on-failure")
    assert f["location"] == "tests/test.sh:4" and f["fix"]
    clean = run_qa(["lint", str(EXAMPLES / "clean-wordfreq"), "--json"], qa_env)
    clean_out = json.loads(clean.stdout)  # and what "nothing found" covers (tests/probes/test_lint_coverage.py)
    assert clean.returncode == 0 and clean_out.pop("coverage")["summary"].startswith("nothing found by ")
    assert clean_out == {"ok": True, "findings": []}


@pytest.mark.fast
def test_qa_lint_bad_task_toml_is_exit_2(tmp_path, qa_env):
    env = write_env(tmp_path, task_toml='version = "1.0"\n[agent]\ntimeout_sec = "soon"\n')
    res = run_qa(["lint", str(env), "--json"], qa_env)
    assert res.returncode == 2
    assert "task.toml" in json.loads(res.stdout)["error"]


def test_image_rules_via_qa_lint_image(tmp_path, qa_env, base_image):
    """--image builds the image and finds what only it shows: test literals in it, verifier code in it."""
    secret = "7f3a9c0e5b1d2468ace0"
    env = write_env(
        tmp_path,
        {
            "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n"
            f"RUN mkdir -p /opt/app && echo 'digest {secret}' > /opt/app/notes.txt\n"
            "RUN printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/grade && chmod +x /usr/local/bin/grade\n",
            "tests/test_out.py": f'def test_out():\n    assert open("/app/out.txt").read().strip() == "digest {secret}"\n',
            "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
            "grade /app/out.txt && python3 -m pytest -q /tests && echo 1 > /logs/verifier/reward.txt\n",
        },
    )
    res = run_qa(["lint", str(env), "--image", "--json"], qa_env)
    assert res.returncode == 1, res.stderr[-2000:]
    by_rule = {f["rule"]: f for f in json.loads(res.stdout)["findings"]}
    assert set(by_rule) == {"test-literals-in-image", "verifier-runs-image-file"}
    assert "/opt/app/notes.txt" in by_rule["test-literals-in-image"]["evidence"][0]
    assert by_rule["verifier-runs-image-file"]["location"] == "tests/test.sh:4"
    assert by_rule["verifier-runs-image-file"]["severity"] == "error"  # the image shows the file there
    # Without --image nothing is built: the files show only the grader the Dockerfile writes, as a warning at the
    # same line (issue 45: a suspicion from the files; the literals need the image).
    [suspected] = json.loads(run_qa(["lint", str(env), "--json"], qa_env).stdout)["findings"]
    assert (suspected["rule"], suspected["severity"]) == ("verifier-runs-image-file", "warning")
    assert suspected["location"] == "tests/test.sh:4"
