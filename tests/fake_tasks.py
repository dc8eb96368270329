"""Example tasks scripted on the fake sandbox backend, for the fast tier's loop and probe tests.

The fake runs no shell (sandbox/fake.py): each handler here plays one of the example's scripts over the
fake's in-memory files, as the script itself would on Docker. The oracle's solve.sh writes the program its
heredoc holds; clean-wordfreq's test.sh runs that program on the cases of the example's own
tests/test_wordfreq.py (read from the sandbox, executed in this process) and writes reward 1 only when
all match; always-pass's test.sh writes reward 1 whatever happened, like the real one (and its revision
by the reward fixer only when /app/sum adds up). Three generic probe
commands are played as well, so the probes see what they would see on Docker: clearing the verifier's
logs before a re-run, listing which changed paths are regular files (mutation testing's candidates), and the
collateral probe's damage scripts (a file deleted or emptied). A probe command nobody scripted exits 127 like a
missing binary, and the probe has to cope.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import sys

from envqa.core.sandbox import register_backend
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.fake_commands import ExecCall, FakeOutput

SCRIPTED = "fake-scripted"  # `[sandbox] backend` naming the backend the last `use_backend` call registered
HEREDOC = re.compile(r"cat > (\S+) <<'(\w+)'\n(.*?)\n\2\n", re.S)


def use_backend(backend: FakeBackend) -> str:
    """Register `backend` as the one `qa run` (app/runner.py) creates; returns the name for the config."""
    register_backend(SCRIPTED)(lambda config: backend)
    return SCRIPTED


def solve_by_heredoc(call: ExecCall) -> FakeOutput:
    """solve.sh as both examples write it: `cat > PATH <<'PY' ... PY` then `chmod +x PATH`."""
    script = call.sandbox.fs.read("/solution/solve.sh").decode()
    for path, _, body in HEREDOC.findall(script):
        executable = re.search(rf"chmod \+x {re.escape(path)}\b", script) is not None
        call.sandbox.fs.write(path, (body + "\n").encode(), 0o755 if executable else 0o644)
    return FakeOutput()


def run_program(call: ExecCall, path: str, stdin: str, argv: list[str] | None = None) -> tuple[int, str]:
    """Run the sandbox's program at `path` (a python3 script, executed here; anything else prints nothing)."""
    node = call.sandbox.fs.node(path)
    if node is None or node.data is None or not node.mode & 0o111:
        return 126 if node is not None else 127, ""
    source = node.data.decode(errors="replace")
    if not source.startswith("#!/usr/bin/env python3"):
        return (0 if re.search(r"^exit 0$", source, re.M) else 1), ""  # e.g. mutation testing's stub program
    out, saved = io.StringIO(), (sys.stdin, sys.argv)
    sys.stdin, sys.argv = io.StringIO(stdin), [path, *(argv or [])]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, path, "exec"), {"__name__": "__main__"})
        return 0, out.getvalue()
    except Exception:  # noqa: BLE001 - the program crashed: a non-zero exit, as on Docker
        return 1, out.getvalue()
    finally:
        sys.stdin, sys.argv = saved


def wordfreq_verifier(call: ExecCall) -> FakeOutput:
    """examples/clean-wordfreq/tests/test.sh: reward 0, then 1 only if every case of test_wordfreq.py passes."""
    fs = call.sandbox.fs
    fs.write("/logs/verifier/reward.txt", b"0\n", 0o644)
    tree = ast.parse(fs.read("/tests/test_wordfreq.py").decode())
    cases = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "CASES"
    )
    failed = [text for text, expected in cases if run_program(call, "/app/wordfreq", text) != (0, expected)]
    if not failed:
        fs.write("/logs/verifier/reward.txt", b"1\n", 0o644)
    return FakeOutput(stdout=f"{len(failed)} failed, {len(cases) - len(failed)} passed\n", duration=0.2)


def always_pass_verifier(call: ExecCall) -> FakeOutput:
    """examples/always-pass/tests/test.sh: checks /app/sum, then writes reward 1 unconditionally. The
    reward fixer's revision of it (agents/fixers/reward.py: the checks in a subshell, `__envqa_checks`)
    writes 1 exactly when the check passes, so the loop's revision can be gated and adopted."""
    ok = run_program(call, "/app/sum", "", ["1", "2", "3"]) == (0, "6\n")
    fixed = "__envqa_checks" in call.sandbox.fs.read("/tests/test.sh").decode()
    call.sandbox.fs.write("/logs/verifier/reward.txt", b"1\n" if ok or not fixed else b"0\n", 0o644)
    return FakeOutput(stdout="sum ok\n" if ok else "sum wrong\n")


def clear_verifier_logs(call: ExecCall) -> FakeOutput:
    """`mkdir -p /logs/verifier && find /logs/verifier -mindepth 1 -delete` (before a verifier re-run)."""
    fs = call.sandbox.fs
    fs.mkdirs("/logs/verifier")
    for path in fs.below("/logs/verifier"):
        fs.remove(path, recursive=True)
    return FakeOutput()


def regular_files(call: ExecCall) -> FakeOutput:
    """Mutation testing's `for p in PATHS; do [ -f "$p" ] && ... && echo "$p"; done` (files up to the limit)."""
    script = call.cmd[2]
    paths = shlex.split(script[len("for p in ") : script.index("; do")])
    limit = int(re.search(r"-le (\d+)", script).group(1))
    files = [
        p for p in paths if (n := call.sandbox.fs.node(p)) is not None and n.data is not None and len(n.data) <= limit
    ]
    return FakeOutput(stdout="".join(p + "\n" for p in files))


def collateral_damage(call: ExecCall) -> FakeOutput:
    """The collateral probe's `sh -c SCRIPT collateral TARGET` (probes/scripts/collateral/): delete.sh removes the
    file, truncate.sh empties an existing one, stop_service.sh finds no process to stop (the fake runs none)."""
    script, target, fs = call.cmd[2], call.cmd[4], call.sandbox.fs
    node = fs.node(target)
    if re.search(r"^rm -f -- \"\$1\"$", script, re.M):
        fs.remove(target)
    elif re.search(r": > \"\$1\"", script) and node is not None and node.data is not None:
        fs.write(target, b"", node.mode)
    return FakeOutput()


def script_probe_commands(backend: FakeBackend) -> None:
    backend.on(r"find /logs/verifier -mindepth 1 -delete")(clear_verifier_logs)
    backend.on(lambda argv: argv[:2] == ["sh", "-c"] and argv[3:4] == ["collateral"])(collateral_damage)
    backend.on(lambda argv: argv[:2] == ["bash", "-c"] and argv[2].startswith("for p in ") and "stat -c %s" in argv[2])(
        regular_files
    )


def _task_backend(verifier) -> FakeBackend:
    """A fake that runs the example's solve.sh (its heredocs) and plays `verifier` for tests/test.sh."""
    backend = FakeBackend()
    backend.on(r"bash /solution/solve\.sh")(solve_by_heredoc)
    backend.on(r"bash /tests/test\.sh")(verifier)
    script_probe_commands(backend)
    return backend


def wordfreq_backend() -> FakeBackend:
    """examples/clean-wordfreq on the fake: the oracle passes, nop (and every scripted exploit) fails."""
    return _task_backend(wordfreq_verifier)


def always_pass_backend() -> FakeBackend:
    """examples/always-pass on the fake: its verifier rewards every run, nop's included."""
    return _task_backend(always_pass_verifier)


def trial_of(sandbox) -> str:
    """The trial a fake sandbox was started for (agents/trial.py labels each trial's container)."""
    return sandbox.spec.labels.get("envqa.trial", "")
