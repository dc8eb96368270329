"""Load beside the chaos benchmark (`benchmarks/chaos.py --load ...`): the machine busy the way it was when a
chaos run lost a trial (Docker-heavy work beside it), started and stopped by this process, by pid.

A spec is a comma list of parts:
- `docker`: one loop that builds benchmarks/chaos_load/Dockerfile again and again (no cache, classic builder,
  FROM the local envqa-base:bookworm, `--pull=false`, `--network none`: nothing is pulled) and one loop that
  runs the built image like a trial (`--network none`), each unit 64 MB written, hashed and compressed;
- `cpu:N`: N processes spinning on sha256;
- `io:N`: N processes writing and fsyncing 64 MB files in a temp dir.
stress-ng would do the last two, but it is not in the Debian package lists this project may install from.

    .venv/bin/python benchmarks/chaos_load.py docker,cpu:1 --seconds 30   # the load alone, for a look
`Load.stop()` ends every loop (SIGKILL to its process group), then removes what the loops left in Docker:
containers (by label) and the image tag. `Load.summary()` is what the benchmark prints: the spec, the units
each loop finished, and the 1-minute load average sampled during the run (which includes everything else on
the host: other users' work is load too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent / "chaos_load"
BASE_IMAGE = "envqa-base:bookworm"
LABEL = "envqa-chaos-load"


class Load:
    def __init__(self, spec: str):
        self.spec = spec
        self.tmp = Path()  # made by start(): the loops' logs, counts and scratch files; removed by cleanup()
        self.tag = f"{LABEL}:{os.getpid()}"
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.counts: dict[str, Path] = {}  # loop name -> the file it counts its finished units in
        self.loadavg: list[float] = []
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="loadavg", daemon=True)

    def parts(self) -> list[tuple[str, int]]:
        out = []
        for part in filter(None, (p.strip() for p in self.spec.split(","))):
            kind, _, count = part.partition(":")
            if kind not in ("docker", "cpu", "io") or (count and not count.isdigit()):
                raise SystemExit(f"--load: cannot read {part!r} (docker, cpu:N, io:N)")
            out.append((kind, int(count or 1)))
        return out

    def start(self) -> Load:
        parts = self.parts()
        self.tmp = Path(tempfile.mkdtemp(prefix="envqa-chaos-load-"))
        for kind, count in parts:
            if kind == "docker":
                self._docker_ready()
                self._spawn("docker-build", "build", self.tag)
                self._spawn("docker-run", "run", self.tag)
                continue
            for i in range(count):
                self._spawn(f"{kind}-{i}", kind, str(self.tmp))
        self._sampler.start()
        return self

    def _docker_ready(self) -> None:
        """The image the run loop needs, built once before the benchmark starts (the build loop rebuilds it)."""
        if shutil.which("docker") is None:
            raise SystemExit("--load docker: no docker CLI")
        _build(self.tag)

    def _spawn(self, name: str, *args: str) -> None:
        self.counts[name] = self.tmp / f"{name}.count"
        with open(self.tmp / f"{name}.log", "ab") as err:
            proc = subprocess.Popen(
                [sys.executable, __file__, "--loop", *args, str(self.counts[name])],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
        self.procs.append((name, proc))

    def _sample(self) -> None:
        while not self._stop.wait(2.0):
            self.loadavg.append(float(Path("/proc/loadavg").read_text().split()[0]))

    def stop(self) -> None:
        self._stop.set()
        for _, proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        if any(name.startswith("docker") for name, _ in self.procs):
            left = subprocess.run(
                ["docker", "ps", "-aq", "--filter", f"label={LABEL}={os.getpid()}"],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout.split()
            if left:
                subprocess.run(["docker", "rm", "-f", *left], capture_output=True, timeout=120)
            subprocess.run(["docker", "rmi", "-f", self.tag], capture_output=True, timeout=120)

    def summary(self) -> dict:
        units = {name: int(path.read_text() or 0) if path.exists() else 0 for name, path in self.counts.items()}
        avg = self.loadavg
        return {
            "load": self.spec,
            "units_done": units,
            "loadavg_1m_mean": round(sum(avg) / len(avg), 2) if avg else None,
            "loadavg_1m_max": max(avg) if avg else None,
            "cpus": os.cpu_count(),
        }

    def cleanup(self) -> None:
        if self.tmp != Path():
            shutil.rmtree(self.tmp, ignore_errors=True)


def _build(tag: str) -> None:
    subprocess.run(
        [
            "docker",
            "build",
            "-q",
            "--pull=false",
            "--no-cache",
            "--force-rm",
            "--network",
            "none",
            "-t",
            tag,
            str(HERE),
        ],
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
        check=True,
        capture_output=True,
        timeout=600,
    )


def _count(path: str) -> None:
    """One more unit done; replaced atomically (the loop is killed at any moment, a write included)."""
    p = Path(path)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(str(int(p.read_text() or 0) + 1 if p.exists() else 1))
    os.replace(tmp, p)


def _loop(kind: str, args: list[str]) -> None:
    """One load loop, forever (the parent kills it)."""
    n = 0
    while True:
        n += 1
        if kind == "build":
            _build(args[0])
        elif kind == "run":
            subprocess.run(
                ["docker", "run", "--rm", "--network", "none", "--label", f"{LABEL}={os.getppid()}", args[0]],
                check=False,
                capture_output=True,
                timeout=600,
            )
        elif kind == "cpu":
            digest = b"x"
            for _ in range(200_000):
                digest = hashlib.sha256(digest).digest()
        elif kind == "io":
            blob = Path(args[0]) / f"io-{os.getpid()}.blob"  # in the Load's dir: gone with cleanup()
            with open(blob, "wb") as f:
                for _ in range(64):
                    f.write(os.urandom(1 << 20))
                f.flush()
                os.fsync(f.fileno())
            blob.unlink()
        _count(args[-1])


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--loop":
        _loop(sys.argv[2], sys.argv[3:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args()
    load = Load(args.spec).start()
    try:
        time.sleep(args.seconds)
    finally:
        load.stop()
    print(json.dumps(load.summary()))
    load.cleanup()


if __name__ == "__main__":
    main()
