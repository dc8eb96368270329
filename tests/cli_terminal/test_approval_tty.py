"""The approval question in a real terminal: `qa run examples/always-pass` in a 160x50 tmux session.

On a terminal `qa run` asks (approval mode `prompt` by default there). The question used to be drawn over by
the live progress display, and its "[a/r/e]" eaten as rich markup: the run waited for a key nobody was asked
for. Here the screen tmux shows (capture-pane) must hold the question as its last line and keep it there,
`a` approves (the run goes on to a clean revision) and `r` asks for a reason. The end of such a run, piped
at 80 columns, keeps every id whole. Real Docker, the real `qa` entry point.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from qa_testkit import EXAMPLES, QA, run_qa, wait_for

from .helpers import broken_ids

QUESTION = "approve / reject / edit? [a/r/e]"
FAST = "[probes]\noracle_runs = 1\n[reviser]\ngate_oracle_runs = 1\n"  # as tests/loop: short validations


@pytest.fixture
def task(tmp_path, base_image):
    """(env dir, cwd with a qa.toml that keeps the run short)."""
    env_dir = shutil.copytree(EXAMPLES / "always-pass", tmp_path / "always-pass")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "qa.toml").write_text(FAST)
    return env_dir, cwd


class Screen:
    """One tmux server of our own (its own socket), one 160x50 session running `qa run` in a real pty."""

    def __init__(self, tmp_path, env: dict, argv: list[str], cwd):
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed; run `make setup`", pytrace=False)
        self.socket, self.env = f"envqa-{uuid.uuid4().hex[:10]}", env
        script = tmp_path / "qa-in-tmux.sh"
        exports = "".join(
            f"export {k}={shlex.quote(env[k])}\n" for k in ("QA_HOME", "QA_STORE_URL", "QA_SESSION") if env.get(k)
        )
        # after qa ends, the pane waits on `read` (never answered) so the screen can still be read
        script.write_text(
            f"unset REDIS_URL\n{exports}cd {shlex.quote(str(cwd))}\n{shlex.join([QA, *argv])}\n"
            'echo "qa exited $?"\nread _\n'
        )
        self.tmux("new-session", "-d", "-s", "qa", "-x", "160", "-y", "50", f"sh {shlex.quote(str(script))}")

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True, timeout=30, env=self.env
        ).stdout

    def visible(self) -> list[str]:
        """The 50 lines on the screen now (not the scrollback)."""
        return self.tmux("capture-pane", "-p", "-t", "qa").splitlines()

    def everything(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", "qa")

    def last_line(self) -> str:
        return next((line.rstrip() for line in reversed(self.visible()) if line.strip()), "")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "qa", *keys)

    def close(self) -> None:
        """Stop our tmux server (`qa` in it gets SIGHUP) and remove its socket file, which tmux leaves."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
        sockets = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        (sockets / self.socket).unlink(missing_ok=True)


@pytest.fixture
def screen(tmp_path, qa_env, task):
    env_dir, cwd = task
    s = Screen(tmp_path, qa_env, ["run", str(env_dir), "--run-id", "tty-run"], cwd)
    yield s
    s.close()


def _asked(screen: Screen) -> None:
    """The question is on the screen, as its last line, and stays there (the live display redraws ten
    times a second: two seconds of its redraws would have covered it)."""
    wait_for(
        lambda: screen.last_line().endswith(QUESTION),
        300,
        f"{QUESTION!r} as the screen's last line: " + "\n".join(screen.visible()),
    )
    assert "gate: passed" in screen.everything() and "tests/test.sh" in screen.everything()
    end = time.monotonic() + 2
    while time.monotonic() < end:
        assert screen.last_line().endswith(QUESTION), "\n".join(screen.visible())


def _exited(screen: Screen) -> str:
    wait_for(lambda: "qa exited " in screen.everything(), 300, "qa to end: " + "\n".join(screen.visible()))
    return screen.everything()


def _show(qa_env: dict, cwd) -> dict:
    res = run_qa(["show", "tty-run", "--json"], qa_env, cwd=cwd, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_the_question_is_visible_and_a_approves(screen, qa_env, task):
    _asked(screen)
    screen.keys("a", "Enter")
    text = _exited(screen)
    assert "qa exited 0" in text and "verdict clean" in text, text[-4000:]
    versions = _show(qa_env, task[1])["versions"]
    assert len(versions) == 2 and versions[1]["approval"].startswith("cli:"), versions


def test_r_asks_for_a_reason_and_rejects(screen, qa_env, task):
    _asked(screen)
    screen.keys("r", "Enter")
    wait_for(
        lambda: screen.last_line().endswith("reason:"), 60, "'reason:' on the screen: " + "\n".join(screen.visible())
    )
    screen.keys("not in this release", "Enter")
    text = _exited(screen)
    assert "qa exited 1" in text and "not in this release" in text, text[-4000:]
    show = _show(qa_env, task[1])
    assert len(show["versions"]) == 1 and "not in this release" in (show["stop_reason"] or ""), show


@pytest.mark.parametrize("columns", [80])  # 50 columns: the same printing in tests/cli_terminal/test_tables.py
def test_the_end_of_qa_run_piped_keeps_ids_whole(qa_env, task, columns):
    env_dir, cwd = task
    res = run_qa(
        ["run", str(env_dir), "--approval", "auto", "--run-id", f"piped-{columns}"],
        {**qa_env, "COLUMNS": str(columns)},
        cwd=cwd,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(run_qa(["show", f"piped-{columns}", "--json"], qa_env, cwd=cwd, timeout=60).stdout)
    ids = {
        f"piped-{columns}",
        *(v["version"][:12] for v in report["versions"]),
        "nop-passes",
        "reward-written-unconditionally",
    }
    assert not broken_ids(res.stdout, ids), (broken_ids(res.stdout, ids), res.stdout)
    assert "verdict clean" in res.stdout and "approval: approved by auto" in " ".join(res.stdout.split())
