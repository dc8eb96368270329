"""Limits the engine does not enforce for us, enforced from the host: the writable-layer cap, and clearing a
container an agent has wrecked (a fork bomb's orphans) so the verifier can still judge it.

The cap: overlay2 on ext4 (the usual engine set-up, and this machine's) has no per-container quota
(`--storage-opt size` needs xfs with pquota), so a `DiskWatch` thread measures the container's upper
directory every `interval` seconds and, past `[environment] storage_mb`, kills every process in the
container but its init. The agent's command then ends as killed (exit 137) with `disk_limit_exceeded`,
and the trial is the agent's failure; the host's disk never fills. Stray processes are found through
/proc (we are root on the engine's host), so this works when the container cannot fork any more.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from envqa.core.defaults import DISK_WATCH_INTERVAL_SEC, WATCHER_JOIN_SEC

log = structlog.get_logger(__name__)


def descendants(pid: int) -> list[int]:
    """Host pids of `pid` and all its descendants (we are root on the engine's host)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL `pid` and all its descendants. Each is stopped first, parents before children, until no new
    process appears: killing a child first lets its still-running parent react (a `bash -c "sleep 30; echo
    never"` would go on to print), and killing a parent first leaves children free to fork meanwhile."""
    stopped: list[int] = []
    while fresh := [p for p in descendants(pid) if p not in stopped]:
        for p in fresh:
            _signal(p, signal.SIGSTOP)
        stopped.extend(fresh)
    for p in stopped:
        _signal(p, signal.SIGKILL)


def _signal(pid: int, sig: signal.Signals) -> bool:
    """False when the process is already gone."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


def container_pids(container_id: str) -> list[int]:
    """Host pids of every process in the container (its cgroup names the container id)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cgroup") as fh:
                if container_id in fh.read():
                    out.append(int(entry))
        except OSError:
            continue
    return out


def _pids_max_path(container_id: str) -> str | None:
    for path in (
        f"/sys/fs/cgroup/pids/docker/{container_id}/pids.max",
        f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/pids.max",
        f"/sys/fs/cgroup/docker/{container_id}/pids.max",
    ):
        if os.path.exists(path):
            return path
    return None


@contextmanager
def no_forks(container_id: str) -> Iterator[None]:
    """Nothing in the container can fork meanwhile: its pids cgroup's limit drops to 1 (below what runs,
    so every fork fails) and comes back after. (The engine's pause would do, but its freezer is not
    available everywhere: "unable to freeze" in nested containers.)"""
    path = _pids_max_path(container_id)
    old = None
    if path is not None:
        try:
            with open(path) as fh:
                old = fh.read().strip()
            with open(path, "w") as fh:
                fh.write("1")
        except OSError:
            old = None
    try:
        yield
    finally:
        if old is not None:
            try:
                with open(path, "w") as fh:
                    fh.write(old)
            except OSError:
                pass  # the container is gone


def _stat(pid: int) -> tuple[int, int]:
    """(parent pid, start time in clock ticks) of a host process."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[19])


def keepers(pids: list[int], init_pid: int) -> set[int]:
    """The container's own processes: its init (the engine's docker-init, which reaps orphans) and the
    command init started first (our `sleep infinity`); everything else came from an exec."""
    children = []
    for p in pids:
        try:
            ppid, start = _stat(p)
        except (OSError, IndexError, ValueError):
            continue
        if ppid == init_pid:
            children.append((start, p))
    return {init_pid} | ({min(children)[1]} if children else set())


def kill_strays(container_id: str, init_pid: int) -> int:
    """SIGKILL every process of the container but its own (`keepers`); returns how many. With forks
    blocked, so a fork bomb cannot replace what is being killed; repeated until none is left. The killed
    become zombies that the container's init reaps (the engine's `--init`: `sleep` as PID 1 would not,
    and the zombies would hold the pids limit)."""
    killed = 0
    for _ in range(20):
        with no_forks(container_id):
            pids = container_pids(container_id)
            spare = keepers(pids, init_pid)
            victims = [p for p in pids if p not in spare]
            killed += sum(_signal(p, signal.SIGKILL) for p in victims)
        if not victims:
            break
    return killed


def tree_bytes(root: str) -> int:
    """Disk blocks used under `root` (sparse files count what they really hold), not following links."""
    total, todo = 0, [root]
    while todo:
        try:
            entries = os.scandir(todo.pop())
        except OSError:
            continue
        with entries:
            for e in entries:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += st.st_blocks * 512
                if e.is_dir(follow_symlinks=False):
                    todo.append(e.path)
    return total


class DiskWatch:
    """Watches one container's writable layer; past `limit_bytes` it kills the container's processes (but
    init), then re-arms one more `limit_bytes` above what was used: the files stay (the verifier judges
    the state the agent left), only further growth is stopped again."""

    def __init__(
        self,
        container_id: str,
        upper_dir: str,
        init_pid: int,
        limit_bytes: int,
        interval: float = DISK_WATCH_INTERVAL_SEC,
    ):
        self.container_id, self.upper_dir, self.init_pid = container_id, upper_dir, init_pid
        self.limit, self.interval = limit_bytes, interval
        self.exceeded = threading.Event()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"envqa-disk-{container_id[:12]}", daemon=True)

    def start(self) -> DiskWatch:
        self._thread.start()
        return self

    def _run(self) -> None:
        limit, wait = self.limit, self.interval / 4
        while not self._stop.wait(wait):
            used = tree_bytes(self.upper_dir)
            self.peak = max(self.peak, used)
            # a fast writer (1 GB/s) overshoots by what one interval lets through: look 4x as often while the
            # layer is small (a scan is cheap) or near the cap; a big layer of many files is scanned less often
            wait = self.interval / 4 if (used < 64 * 2**20 or used > limit / 2) else self.interval
            if used <= limit:
                continue
            killed = kill_strays(self.container_id, self.init_pid)
            log.warning(
                "sandbox.disk_limit",
                container=self.container_id[:12],
                used_mb=used // 2**20,
                limit_mb=self.limit // 2**20,
                killed=killed,
            )
            self.exceeded.set()
            limit = used + self.limit

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=WATCHER_JOIN_SEC)


def pids_current(container_id: str) -> int:
    """Processes in the container now: the pids cgroup's counter (v1 or v2), else a /proc scan."""
    for path in (
        f"/sys/fs/cgroup/pids/docker/{container_id}/pids.current",
        f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/pids.current",
        f"/sys/fs/cgroup/docker/{container_id}/pids.current",
    ):
        try:
            with open(path) as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            continue
    return len(container_pids(container_id))


def clear_if_saturated(container_id: str, init_pid: int, pids_limit: int) -> int:
    """A container at its pids limit (a fork bomb) can run nothing, not even the verifier: kill its
    processes but init. Returns how many were killed (0 when it was not saturated)."""
    if pids_current(container_id) < max(8, int(pids_limit * 0.9)):
        return 0
    killed = kill_strays(container_id, init_pid)
    log.warning("sandbox.pids_saturated", container=container_id[:12], pids_limit=pids_limit, killed=killed)
    return killed
