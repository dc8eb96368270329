"""Fixers read Dockerfiles and scripts through the kept parsers (core/parsers): the cases the old regex
readings got wrong. Files only, no Docker."""

from __future__ import annotations

import pytest

from envqa.agents.fixers import mechanical_fix
from envqa.core.environment import load_environment
from envqa.probes.static.findings import static_findings
from envqa.probes.static.lint import lint_structure
from tests.reviser.conftest import write_task
from tests.reviser.test_fixers import finding

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

HEREDOC_AND_CHOWN = (
    "FROM debian:bookworm\nWORKDIR /app\nARG SOL=solution\n"
    "RUN apt-get update && \\\n# a comment inside the continuation\n    apt-get install -y curl\n"
    "RUN <<EOF\ncat > /app/NOTES <<'X'\nCOPY solution/ /nowhere/\nX\nEOF\n"
    "COPY --chown=1000:1000 ${SOL}/solve.sh /opt/solve.sh\n"
    'COPY ["tests/test_outputs.py", "/opt/t.py"]\n'
)


def test_the_leak_fixer_removes_the_real_copies_and_leaves_heredocs_and_continuations_whole(tmp_path):
    task = write_task(tmp_path / "t", environment__Dockerfile=HEREDOC_AND_CHOWN)
    env = load_environment(task)
    rules = sorted((f.rule, f.location) for f in lint_structure(env))
    # The lint sees the --chown COPY through ${SOL} and the exec-form COPY, and not the heredoc's text.
    assert rules == [
        ("dockerfile-copies-solution", "environment/Dockerfile:12"),
        ("dockerfile-copies-tests", "environment/Dockerfile:13"),
    ]
    fix = mechanical_fix(task, [finding("dockerfile-copies-solution"), finding("dockerfile-copies-tests")])
    assert sorted(fix.addressed) == ["dockerfile-copies-solution", "dockerfile-copies-tests"], fix.declined
    out = (fix.fixed_dir / "environment" / "Dockerfile").read_text()
    assert "/opt/solve.sh" not in out and "/opt/t.py" not in out
    assert "RUN <<EOF\ncat > /app/NOTES <<'X'\nCOPY solution/ /nowhere/\nX\nEOF\n" in out  # the heredoc is intact
    assert "# a comment inside the continuation\n    apt-get install -y curl\n" in out


def test_the_pin_fixer_pins_a_package_on_a_continuation_line(tmp_path):
    df = "FROM debian:bookworm\nRUN pip install --no-cache-dir \\\n    requests \\\n    flask==3.0.3 2>/dev/null || true\n"
    task = write_task(tmp_path / "t", environment__Dockerfile=df)
    fix = mechanical_fix(
        task,
        [finding("unpinned-python-dependency", "environment/Dockerfile:2")],
        image_packages=lambda: {"requests": "2.32.3", "flask": "3.0.3"},
    )
    assert fix.addressed == ["unpinned-python-dependency"], fix.declined
    assert (fix.fixed_dir / "environment" / "Dockerfile").read_text() == df.replace(
        "    requests", "    requests==2.32.3"
    )


def test_the_pin_fixer_declines_a_package_it_cannot_see_written(tmp_path):
    df = "FROM debian:bookworm\nENV PKG=requests\nRUN pip install $PKG\n"
    fix = mechanical_fix(
        write_task(tmp_path / "t", environment__Dockerfile=df),
        [finding("unpinned-python-dependency", "environment/Dockerfile:3")],
        image_packages=lambda: {"requests": "2.32.3"},
    )
    assert "not written" in fix.declined["unpinned-python-dependency"]


def test_runtime_installs_move_whole_and_heredoc_text_stays(tmp_path):
    sh = (
        "#!/bin/bash\npip install \\\n    pytest==8.3.3\ncat > /tmp/readme <<'EOF'\npip install something-else\nEOF\n"
        "mkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"
    )
    fix = mechanical_fix(write_task(tmp_path / "a", tests__test_sh=sh), [finding("verifier-installs-at-runtime")])
    assert fix.addressed == ["verifier-installs-at-runtime"], fix.declined
    test_sh = (fix.fixed_dir / "tests" / "test.sh").read_text()
    assert "pytest==8.3.3" not in test_sh and "pip install something-else\n" in test_sh
    assert (
        (fix.fixed_dir / "environment" / "Dockerfile").read_text().endswith("RUN pip install \\\n    pytest==8.3.3\n")
    )
    chained = "#!/bin/bash\npip install -q pytest==8.3.3 2>/dev/null || true\n"
    fix = mechanical_fix(write_task(tmp_path / "b", tests__test_sh=chained), [finding("verifier-installs-at-runtime")])
    assert "chains commands" in fix.declined["verifier-installs-at-runtime"]


def test_the_conftest_fixer_pins_the_real_pytest_call_and_leaves_heredoc_text_alone(tmp_path):
    """A `pytest` inside a heredoc (a README the verifier writes) or an echo is not a command: only the
    real invocation is rewritten, and only the real `cp /tests/...` copy goes."""
    script = (
        "#!/bin/bash\ncat > /tmp/HOW <<'EOF'\nrun: pytest /app/test_x.py\ncp /tests/a /app/\nEOF\n"
        "echo 'then pytest runs'\ncp /tests/test_x.py /app/\ncd /app && python3 -m pytest -q test_x.py\n"
        "echo $? > /logs/verifier/reward.txt\n"
    )
    task = write_task(tmp_path / "t", tests__test_sh=script)
    fix = mechanical_fix(task, [finding("exploit-workspace-conftest")])
    assert fix.addressed == ["exploit-workspace-conftest"], fix.declined
    out = (fix.fixed_dir / "tests" / "test.sh").read_text()
    assert "cat > /tmp/HOW <<'EOF'\nrun: pytest /app/test_x.py\ncp /tests/a /app/\nEOF\n" in out
    assert "echo 'then pytest runs'\n" in out
    assert "# envqa: tests run in place from /tests (was: cp /tests/test_x.py /app/)" in out
    assert "cd /tests && python3 -m pytest --rootdir=/tests --confcutdir=/tests -c /dev/null -q /tests/test_x.py" in out


def test_the_pin_fixer_pins_every_line_one_finding_lists(tmp_path):
    sh = "#!/bin/bash\npip install requests\npip install flask\necho 1 > /logs/verifier/reward.txt\n"
    task = write_task(tmp_path / "t", tests__test_sh=sh)
    (grouped,) = [f for f in static_findings(load_environment(task)) if f.rule == "unpinned-python-dependency"]
    fix = mechanical_fix(task, [grouped], image_packages=lambda: {"requests": "2.32.3", "flask": "3.0.3"})
    assert fix.addressed == ["unpinned-python-dependency"], fix.declined
    out = (fix.fixed_dir / "tests" / "test.sh").read_text()
    assert "pip install requests==2.32.3\npip install flask==3.0.3\n" in out


def test_the_runtime_install_fixer_leaves_an_offline_install_alone(tmp_path):
    sh = (
        "#!/bin/bash\npip install --no-index --find-links /opt/wheels pytest\napt-get install -y jq\n"
        "echo 1 > /logs/verifier/reward.txt\n"
    )
    fix = mechanical_fix(write_task(tmp_path / "a", tests__test_sh=sh), [finding("verifier-installs-at-runtime")])
    assert fix.addressed == ["verifier-installs-at-runtime"], fix.declined
    test_sh = (fix.fixed_dir / "tests" / "test.sh").read_text()
    assert "--no-index --find-links /opt/wheels pytest" in test_sh and "apt-get install" not in test_sh
