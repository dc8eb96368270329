"""Round 2 of the published passwords: a fixed task key (Terminal-Bench's maze task, `openssl enc -k`) and a
per-task derived one (CocoaBench: sha256(task name)[:16], XOR-sha256), each opened by the in-image opener."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess

import pytest

from envqa.core.adapter_passwords import DATA, known_passwords

pytestmark = pytest.mark.fast

SCAN = DATA.parent.parent / "probes" / "scripts" / "image_scan.py"


def _opener():
    ns: dict = {}
    exec(compile(SCAN.read_text(), str(SCAN), "exec"), ns)  # the functions only (the scan runs as __main__)
    return ns["opens"]


def test_a_derived_password_is_computed_from_the_task_name_and_names_its_source():
    cocoa = [p for p in known_passwords("react-milestone-contributor-analysis") if p.adapter == "CocoaBench"]
    assert [p.value for p in cocoa] == [hashlib.sha256(b"react-milestone-contributor-analysis").hexdigest()[:16]]
    assert "zzn-nzz/cocoa-agent encrypt.py" in cocoa[0].origin
    assert not [p for p in known_passwords() if p.adapter == "CocoaBench"]  # no task name: nothing to derive


def test_a_cocoabench_style_file_opens_with_the_derived_password_only(tmp_path):
    opens = _opener()
    task = "my-cocoa-task"
    password = next(p.value for p in known_passwords(task) if p.adapter == "CocoaBench")
    pad = hashlib.sha256(password.encode()).digest()
    (tmp_path / "test.py.enc").write_bytes(
        base64.b64encode(bytes(b ^ pad[i % 32] for i, b in enumerate(b"assert answer == 42\n")))
    )
    assert opens(str(tmp_path / "test.py.enc"), "encrypted (by its name)", password)
    assert not opens(str(tmp_path / "test.py.enc"), "encrypted (by its name)", "maze_solution_encryption_key")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_the_maze_tasks_openssl_key_opens_its_solution(tmp_path):
    opens = _opener()
    key = next(p.value for p in known_passwords() if p.adapter.startswith("Terminal-Bench"))
    enc = subprocess.run(
        ["openssl", "enc", "-aes-256-cbc", "-salt", "-k", key],
        input=b"module.exports = 1;\n",
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    (tmp_path / "encrypted.enc").write_bytes(enc)
    assert opens(str(tmp_path / "encrypted.enc"), "openssl-encrypted", key)
    assert not opens(str(tmp_path / "encrypted.enc"), "openssl-encrypted", "password")
