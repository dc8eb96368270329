"""What every Sandbox backend promises (core/sandbox.py), written once and run against each backend.

In the style of inspect_ai's sandbox `self_check`: each check is a plain function of a sandbox factory
(`make(**spec_overrides)`; without overrides it may hand out one shared sandbox) and a host temp dir,
and fails with an assertion. Checks use only commands the fake runs itself (sandbox/fake_commands.py)
and real images have, and each works under its own paths, so they can share one sandbox.
tests/sandbox/test_conformance.py runs them all against the fake and against Docker.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from envqa.core.sandbox import PathChange, Sandbox, SandboxError

Make = Callable[..., Sandbox]
CHECKS: list[Callable[[Make, Path], None]] = []


def check(fn):
    CHECKS.append(fn)
    return fn


def run_check(fn, make: Make, tmp: Path) -> str | None:
    """One check's outcome, inspect_ai `self_check` style: None when the backend kept the promise, else what
    failed (the check's assertion message)."""
    try:
        fn(make, tmp)
    except AssertionError as e:
        return f"{fn.__name__}: {e}"
    return None


@check
def exec_passes_argv_verbatim(make: Make, tmp: Path) -> None:
    res = make().exec(["echo", "a  b", "c;d", "$HOME", "*"], timeout=30)
    assert (res.exit_code, res.stdout) == (0, "a  b c;d $HOME *\n"), res


@check
def exec_reports_exit_codes(make: Make, tmp: Path) -> None:
    sb = make()
    assert sb.exec(["true"], timeout=30).ok
    res = sb.exec(["false"], timeout=30)
    assert (res.exit_code, res.ok) == (1, False)
    assert sb.exec(["sh", "-c", "exit 3"], timeout=30).exit_code == 3


@check
def exec_keeps_stdout_and_stderr_apart(make: Make, tmp: Path) -> None:
    res = make().exec(["cat", "/conformance/no/such/file"], timeout=30)
    assert res.exit_code == 1 and res.stdout == "" and res.stderr.startswith("cat: ")


@check
def exec_feeds_stdin(make: Make, tmp: Path) -> None:
    sb = make()
    assert sb.exec(["cat"], input=b"hello\x00world", timeout=30).stdout == "hello\x00world"
    big = b"0123456789abcdef" * 20_000  # 320 KB: more than one pipe buffer, under the output cap
    res = sb.exec(["cat"], input=big, timeout=60)
    assert res.stdout.encode() == big and not res.truncated


@check
def exec_in_cwd(make: Make, tmp: Path) -> None:
    sb = make()
    sb.mkdirs("/conformance/cwd")
    assert sb.exec(["pwd"], cwd="/tmp", timeout=30).stdout == "/tmp\n"
    assert sb.exec(["pwd"], cwd="/conformance/cwd", timeout=30).stdout == "/conformance/cwd\n"


@check
def exec_env_adds_to_the_specs(make: Make, tmp: Path) -> None:
    sb = make(env={"FROM_SPEC": "spec-value"})
    assert sb.exec(["printenv", "FOO"], env={"FOO": "bar baz"}, timeout=30).stdout == "bar baz\n"
    assert sb.exec(["printenv", "FROM_SPEC"], timeout=30).stdout == "spec-value\n"
    assert sb.exec(["printenv", "FOO"], timeout=30).exit_code == 1  # env is per call


@check
def exec_as_user(make: Make, tmp: Path) -> None:
    sb = make()
    assert sb.exec(["id", "-u"], timeout=30).stdout.strip() == "0"
    assert sb.exec(["id", "-u"], user="nobody", timeout=30).stdout.strip() == "65534"


@check
def missing_command_is_an_exit_code(make: Make, tmp: Path) -> None:
    res = make().exec(["/conformance/no/such/binary"], timeout=30)
    assert res.exit_code not in (0, None) and not res.ok


@check
def timeout_returns_timed_out_and_the_sandbox_lives_on(make: Make, tmp: Path) -> None:
    sb = make()
    res = sb.exec(["sleep", "30"], timeout=1)
    assert res.timed_out and not res.ok, res
    assert 0.9 <= res.duration_sec < 10
    assert sb.exec(["true"], timeout=30).ok


@check
def fast_command_within_timeout(make: Make, tmp: Path) -> None:
    res = make().exec(["sleep", "0.1"], timeout=20)
    assert res.ok and not res.timed_out and res.duration_sec >= 0.1


@check
def output_over_the_limit_is_cut_from_the_middle(make: Make, tmp: Path) -> None:
    res = make(output_limit_bytes=4096).exec(["head", "-c", "100000", "/dev/zero"], timeout=60)
    assert res.ok and res.truncated and not res.output_limit_exceeded
    assert res.output_bytes == 100_000
    assert len(res.stdout) < 4096 + 200 and "bytes of output truncated" in res.stdout


@check
def runaway_writer_is_killed_at_kill_after_output_bytes(make: Make, tmp: Path) -> None:
    sb = make(output_limit_bytes=4096, kill_after_output_bytes=1_000_000)
    res = sb.exec(["yes"], timeout=60)
    assert res.output_limit_exceeded and not res.timed_out and not res.ok
    assert res.output_bytes >= 1_000_000
    assert res.stdout.startswith("y\ny\n") and res.stdout.endswith("y\n")


@check
def write_and_read_text(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/text/a.txt", "grüße\n".encode())
    assert sb.read_file("/conformance/text/a.txt").decode() == "grüße\n"


@check
def write_and_read_binary(make: Make, tmp: Path) -> None:
    sb = make()
    data = bytes(range(256)) * 40
    sb.write_file("/conformance/bin/b.bin", data)
    assert sb.read_file("/conformance/bin/b.bin") == data


@check
def write_replaces_and_read_caps(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/replace/f", b"first version")
    sb.write_file("/conformance/replace/f", b"replaced")
    assert sb.read_file("/conformance/replace/f") == b"replaced"
    assert sb.read_file("/conformance/replace/f", max_bytes=3) == b"rep"


@check
def write_keeps_the_mode(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/mode/x.sh", b"#!/bin/sh\n", mode=0o750)
    assert sb.exec(["stat", "-c", "%a", "/conformance/mode/x.sh"], timeout=30).stdout.strip() == "750"


@check
def reading_what_is_not_a_file_raises(make: Make, tmp: Path) -> None:
    sb = make()
    sb.mkdirs("/conformance/dir")
    with pytest.raises(FileNotFoundError):
        sb.read_file("/conformance/missing")
    with pytest.raises(IsADirectoryError):
        sb.read_file("/conformance/dir")


@check
def exec_sees_written_files_and_the_other_way(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/both/in.txt", b"from write_file\n")
    assert sb.exec(["cat", "/conformance/both/in.txt"], timeout=30).stdout == "from write_file\n"
    sb.exec(["tee", "/conformance/both/out.txt"], input=b"from exec\n", timeout=30)
    assert sb.read_file("/conformance/both/out.txt") == b"from exec\n"


@check
def upload_a_tree_and_a_file(make: Make, tmp: Path) -> None:
    sb = make()
    src = tmp / "tree"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("alpha\n")
    (src / "sub" / "b.bin").write_bytes(bytes(range(256)))
    (src / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (src / "run.sh").chmod(0o755)
    sb.upload(src, "/conformance/up/tree")
    assert sb.read_file("/conformance/up/tree/sub/b.bin") == bytes(range(256))
    assert sb.exec(["stat", "-c", "%a", "/conformance/up/tree/run.sh"], timeout=30).stdout.strip() == "755"
    (tmp / "one.txt").write_text("one file\n")
    sb.upload(tmp / "one.txt", "/conformance/up/renamed.txt")
    assert sb.read_file("/conformance/up/renamed.txt") == b"one file\n"


@check
def download_a_tree_or_report_it_missing(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/down/d/a.txt", b"alpha\n")
    sb.write_file("/conformance/down/d/x/run.sh", b"#!/bin/sh\n", mode=0o755)
    assert sb.download("/conformance/down/d", tmp / "out") is True
    assert (tmp / "out" / "d" / "a.txt").read_text() == "alpha\n"
    assert (tmp / "out" / "d" / "x" / "run.sh").stat().st_mode & stat.S_IXUSR
    assert sb.download("/conformance/down/missing", tmp / "nothing") is False
    assert not (tmp / "nothing").exists()


@check
def download_is_capped(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/big/a", bytes(500_000))
    sb.write_file("/conformance/big/b", bytes(500_000))
    assert sb.download("/conformance/big", tmp / "big", max_bytes=600_000) is True
    total = sum(p.stat().st_size for p in (tmp / "big").rglob("*") if p.is_file())
    assert 0 < total <= 600_000


@check
def mkdirs_with_a_mode(make: Make, tmp: Path) -> None:
    sb = make()
    sb.mkdirs("/conformance/made/deep", "/conformance/made/other", mode=0o700)
    res = sb.exec(["stat", "-c", "%a", "/conformance/made/deep", "/conformance/made/other"], timeout=30)
    assert res.stdout.split() == ["700", "700"], res


@check
def exec_with_files_uploads_then_runs(make: Make, tmp: Path) -> None:
    (tmp / "d").mkdir()
    (tmp / "d" / "a.txt").write_text("from the host\n")
    res = make().exec_with_files([(tmp / "d", "/conformance/ewf/d")], ["cat", "/conformance/ewf/d/a.txt"], timeout=30)
    assert (res.exit_code, res.stdout) == (0, "from the host\n")


@check
def stop_is_idempotent_and_final(make: Make, tmp: Path) -> None:
    sb = make(labels={"envqa.conformance": "stop"})
    with sb:
        assert sb.exec(["true"], timeout=30).ok
    sb.stop()
    with pytest.raises(SandboxError):
        sb.exec(["true"], timeout=10)


@check
def changed_paths_since_the_image(make: Make, tmp: Path) -> None:
    sb = make()
    sb.write_file("/conformance/changes/new.txt", b"x")
    try:
        changes = sb.changed_paths()
    except NotImplementedError:
        return
    assert all(isinstance(c, PathChange) for c in changes)
    assert PathChange(path="/conformance/changes/new.txt", kind="added") in changes
    assert any(c.path == "/conformance/changes" for c in changes)


@check
def network_none_is_offline_and_cutting_it_is_a_no_op(make: Make, tmp: Path) -> None:
    sb = make()
    assert sb.spec.network == "none"
    try:
        assert sb.offline() is True
        sb.cut_network()
        sb.restore_network()
        assert sb.offline() is True
    except NotImplementedError:
        pass
    assert sb.exec(["true"], timeout=30).ok


@check
def trace_capabilities_work_or_say_they_are_missing(make: Make, tmp: Path) -> None:
    sb = make()
    try:
        assert sb.host_pid() > 0
    except NotImplementedError:
        pass
    try:
        trace = sb.start_trace(tmp / "strace.txt")
    except NotImplementedError:
        return
    sb.exec(["echo", "traced"], timeout=30)
    events = trace.stop()
    assert any(e.kind == "exec" and e.path.endswith("/echo") for e in events), events


@check
def egress_log_is_none_without_a_proxy(make: Make, tmp: Path) -> None:
    try:
        assert make().egress_log() is None
    except NotImplementedError:
        pass
