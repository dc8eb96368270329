"""kill_tree on host processes: a tree that keeps forking leaves no survivor (killing by a snapshot of the tree,
children first, left orphans behind in 17 of 20 tries; a parent that got to run after its child was killed printed
what a timed-out command must not)."""

import os
import subprocess

from envqa.sandbox.limits import descendants, kill_tree
from qa_testkit import wait_for


def _live_with_cmdline(cmdline: bytes) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if fh.read() != cmdline:
                    continue
            with open(f"/proc/{entry}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    out.append(int(entry))
        except OSError:
            continue
    return out


def test_a_forking_tree_leaves_no_survivor():
    seconds = f"31.{os.getpid()}"  # a cmdline no other process has
    marker = b"sleep\x00" + seconds.encode() + b"\x00"
    for _ in range(3):
        proc = subprocess.Popen(["bash", "-c", f"while :; do sleep {seconds} & sleep 0.002; done"])
        try:
            wait_for(lambda pid=proc.pid: len(descendants(pid)) >= 6, 5.0, "the tree to fork", every=0.01)
            kill_tree(proc.pid)
            assert proc.wait(timeout=10) == -9
            wait_for(lambda: not _live_with_cmdline(marker), 5.0, "every forked child to die", every=0.01)
        finally:
            if proc.poll() is None:
                proc.kill()
            for pid in _live_with_cmdline(marker):
                os.kill(pid, 9)


def test_a_killed_shell_does_not_run_on_after_its_child(tmp_path):
    marker = tmp_path / "never"
    proc = subprocess.Popen(["bash", "-c", f"bash -c 'sleep 30; echo inner >> {marker}'; echo outer >> {marker}"])
    try:
        wait_for(lambda: len(descendants(proc.pid)) >= 3, 5.0, "the tree to start", every=0.01)
        kill_tree(proc.pid)
        assert proc.wait(timeout=10) == -9
        assert not marker.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
