"""The Docker sandbox on the real engine: timeouts, output caps, resource limits, network, file round trips."""

from __future__ import annotations

import os
import resource
import stat

import pytest

from envqa.core.sandbox import SandboxError
from tests.foundation.conftest import containers_with


def _ps(sb) -> str:
    return sb.exec(["ps", "-eo", "pid,args"], timeout=30).stdout


def test_timeout_kills_the_whole_process_tree(start_sandbox):
    sb = start_sandbox()
    res = sb.exec(["bash", "-c", "sleep 1000 & sleep 1001 & (sleep 1002; true) & sleep 1003"], timeout=1.5)
    assert res.timed_out and not res.ok
    assert 1.4 < res.duration_sec < 10
    left = _ps(sb)
    assert not any(f"sleep {n}" in left for n in (1000, 1001, 1002, 1003)), left
    assert sb.exec(["true"], timeout=30).ok  # the sandbox still works afterwards


def _peak_rss_kb() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_one_gigabyte_of_stdout_does_not_fill_memory(start_sandbox):
    sb = start_sandbox()
    try:  # reset the peak-RSS counter so the measurement covers only this exec
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    before = _peak_rss_kb()
    res = sb.exec(["bash", "-c", "head -c 1000000000 /dev/zero; echo done-writing"], timeout=120)
    grown_mb = (_peak_rss_kb() - before) / 1024
    assert res.truncated
    assert len(res.stdout) < 2 * 1024 * 1024  # head + tail of the 1 MiB default cap, plus the marker line
    assert "bytes of output truncated" in res.stdout
    # Either the runaway writer was killed at kill_after_output_bytes, or it finished on its own.
    assert res.output_limit_exceeded or res.output_bytes >= 1_000_000_000
    if res.output_limit_exceeded:
        assert res.output_bytes >= sb.spec.kill_after_output_bytes
        assert "done-writing" not in res.stdout
        assert "head -c" not in _ps(sb)
    assert grown_mb < 100, f"peak RSS grew by {grown_mb:.0f} MB while reading 1 GB of output"


def test_small_kill_after_output_limit(start_sandbox):
    sb = start_sandbox(output_limit_bytes=4096, kill_after_output_bytes=1_000_000)
    res = sb.exec(["bash", "-c", "yes"], timeout=60)
    assert res.output_limit_exceeded and not res.timed_out
    assert res.output_bytes >= 1_000_000
    assert len(res.stdout) < 4096 + 200
    assert res.stdout.startswith("y\ny\n") and res.stdout.endswith("y\n")


def test_memory_limit_oom_kills(start_sandbox):
    sb = start_sandbox(memory_mb=64)
    res = sb.exec(
        ["python3", "-c", "b = bytearray(300 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('survived')"],
        timeout=60,
    )
    assert res.exit_code == 137, res
    assert "survived" not in res.stdout
    small = sb.exec(["python3", "-c", "b = bytearray(8 * 1024 * 1024); print('ok')"], timeout=60)
    assert small.stdout.strip() == "ok"


FORK_MANY = """
import os, time
pids = []
try:
    for _ in range(200):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    print("forked", len(pids))
except OSError as e:
    print("blocked", len(pids), e.errno)
for p in pids:
    os.kill(p, 9)
"""


def test_pids_limit(start_sandbox):
    sb = start_sandbox(pids_limit=16)
    res = sb.exec(["python3", "-c", FORK_MANY], timeout=60)
    word, count, *_ = res.stdout.split()
    assert word == "blocked", res.stdout
    assert int(count) < 16


def test_network_none_has_only_loopback(start_sandbox):
    sb = start_sandbox(network="none")
    res = sb.exec(["ls", "/sys/class/net"], timeout=30)
    assert res.stdout.split() == ["lo"]


def test_cwd_env_user_stdin(start_sandbox):
    sb = start_sandbox(env={"FROM_SPEC": "spec-value"})
    assert sb.exec(["pwd"], cwd="/tmp", timeout=30).stdout == "/tmp\n"
    res = sb.exec(["bash", "-c", "echo $FOO $FROM_SPEC"], env={"FOO": "bar baz"}, timeout=30)
    assert res.stdout == "bar baz spec-value\n"
    assert sb.exec(["id", "-u"], user="nobody", timeout=30).stdout.strip() == "65534"
    assert sb.exec(["id", "-u"], timeout=30).stdout.strip() == "0"
    assert sb.exec(["cat"], input=b"hello\x00world", timeout=30).stdout == "hello\x00world"
    big = os.urandom(3 * 1024 * 1024)
    assert sb.exec(["wc", "-c"], input=big, timeout=60).stdout.strip() == str(len(big))
    split = sb.exec(["bash", "-c", "echo out; echo err >&2; exit 3"], timeout=30)
    assert (split.stdout, split.stderr, split.exit_code) == ("out\n", "err\n", 3)


def test_missing_command_is_an_exit_code_not_an_exception(start_sandbox):
    sb = start_sandbox()
    res = sb.exec(["/no/such/binary"], timeout=30)
    assert res.exit_code not in (0, None)


def test_file_round_trips(start_sandbox, tmp_path):
    sb = start_sandbox()
    src = tmp_path / "tree"
    (src / "sub" / "deeper").mkdir(parents=True)
    (src / "a.txt").write_text("alpha\n")
    (src / "sub" / "deeper" / "b.bin").write_bytes(bytes(range(256)) * 10)
    (src / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (src / "run.sh").chmod(0o755)
    sb.upload(src, "/opt/new/parent/tree")
    assert sb.exec(["/opt/new/parent/tree/run.sh"], timeout=30).stdout == "ran\n"
    assert sb.read_file("/opt/new/parent/tree/sub/deeper/b.bin") == bytes(range(256)) * 10

    single = tmp_path / "single.txt"
    single.write_text("one file\n")
    sb.upload(single, "/srv/renamed.txt")
    assert sb.read_file("/srv/renamed.txt") == b"one file\n"

    out = tmp_path / "out"
    assert sb.download("/opt/new/parent/tree", out) is True
    assert (out / "tree" / "a.txt").read_text() == "alpha\n"
    assert (out / "tree" / "sub" / "deeper" / "b.bin").read_bytes() == bytes(range(256)) * 10
    assert os.stat(out / "tree" / "run.sh").st_mode & stat.S_IXUSR
    assert sb.download("/does/not/exist", tmp_path / "nothing") is False

    payload = b"\xff\xfe binary \x00 data"
    sb.write_file("/var/tmp/x/y/data.bin", payload, mode=0o750)
    assert sb.read_file("/var/tmp/x/y/data.bin") == payload
    assert sb.exec(["stat", "-c", "%a", "/var/tmp/x/y/data.bin"], timeout=30).stdout.strip() == "750"
    sb.write_file("/var/tmp/x/y/data.bin", b"replaced")
    assert sb.read_file("/var/tmp/x/y/data.bin") == b"replaced"
    assert sb.read_file("/var/tmp/x/y/data.bin", max_bytes=3) == b"rep"
    with pytest.raises(FileNotFoundError):
        sb.read_file("/var/tmp/missing")
    with pytest.raises(IsADirectoryError):
        sb.read_file("/var/tmp/x")


def test_download_is_capped(start_sandbox, tmp_path):
    sb = start_sandbox()
    sb.exec(["bash", "-c", "mkdir -p /big && head -c 5000000 /dev/urandom > /big/a && echo small > /big/b"], timeout=60)
    assert sb.download("/big", tmp_path, max_bytes=1_000_000) is True
    total = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert total <= 1_000_000


def test_stop_removes_the_container_and_is_idempotent(start_sandbox, docker_client):
    sb = start_sandbox(labels={"envqa.test": "stop-idempotent"})
    assert len(containers_with(docker_client, **{"envqa.test": "stop-idempotent"})) == 1
    sb.stop()
    sb.stop()
    assert containers_with(docker_client, **{"envqa.test": "stop-idempotent"}) == []
    with pytest.raises(SandboxError):
        sb.exec(["true"], timeout=10)


def test_start_from_a_missing_image_is_a_sandbox_error(docker_backend):
    from envqa.core.sandbox import SandboxSpec

    with pytest.raises(SandboxError) as info:
        docker_backend.start(SandboxSpec(image="envqa-env:does-not-exist"))
    assert info.value.error_class == "sandbox_start"


def test_upload_keeps_existing_parents_untouched(start_sandbox, tmp_path):
    sb = start_sandbox()
    (tmp_path / "f.txt").write_text("x")
    sb.upload(tmp_path / "f.txt", "/tmp/made/here/f.txt")
    modes = sb.exec(["stat", "-c", "%a %U", "/tmp", "/tmp/made"], timeout=30).stdout.split("\n")
    assert modes[0] == "1777 root"  # /tmp keeps its sticky world-writable mode
    assert sb.read_file("/tmp/made/here/f.txt") == b"x"


def test_exec_with_files_in_one_call_and_its_fallback(start_sandbox, tmp_path):
    sb = start_sandbox()
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("from the host\n")
    res = sb.exec_with_files([(tmp_path / "d", "/up/d")], ["cat", "/up/d/a.txt"], timeout=30)
    assert (res.exit_code, res.stdout) == (0, "from the host\n")
    # No `sh` on PATH: the one-call path cannot run, so it falls back to put_archive + exec.
    res = sb.exec_with_files(
        [(tmp_path / "d", "/up2/d")], ["/bin/cat", "/up2/d/a.txt"], env={"PATH": "/nonexistent"}, timeout=30
    )
    assert (res.exit_code, res.stdout) == (0, "from the host\n")
