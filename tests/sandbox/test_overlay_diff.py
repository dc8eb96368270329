"""sandbox/overlay_diff.py against the engine's own `docker diff`, entry for entry, on an image whose layers
delete and remake things themselves and a container that adds, changes, deletes, remakes, retypes and only
touches metadata. The reader is only worth having if it says exactly what the engine says."""

from __future__ import annotations

import io
import tarfile
import uuid

import pytest

from envqa.core.sandbox import SandboxSpec
from envqa.sandbox.docker_sandbox import DIFF_KINDS, ENGINE_FILES
from envqa.sandbox.overlay_diff import overlay_changes

DOCKERFILE = """\
FROM {base}
RUN rm -f /etc/issue.net && mkdir -p /opt/img/keep /opt/img/gone && echo a > /opt/img/keep/a && echo b > /opt/img/gone/b
RUN rm -rf /usr/share/doc/apt && mkdir /usr/share/doc/apt && echo img > /usr/share/doc/apt/img
RUN rm -rf /opt/img/gone /opt/img/keep && mkdir /opt/img/keep && echo c > /opt/img/keep/c
"""

# What an agent and a verifier do to a file system, one kind of change per line.
CHANGES = r"""
set -e
mkdir -p /app/sub/deep && echo x > /app/out.txt && echo hi > /app/sub/deep/f.txt
echo more >> /etc/bash.bashrc
chmod 600 /etc/debian_version
chown nobody /etc/issue
touch -d '2001-01-01' /etc/host.conf
python3 -c "open('/etc/shells', 'r+').close()"
rm -f /etc/motd
rm -rf /usr/share/doc/bash && mkdir /usr/share/doc/bash && echo new > /usr/share/doc/bash/NEWS.gz
rm -rf /usr/share/doc/dpkg && mkdir -p /usr/share/doc/dpkg/nested
rm -f /etc/ld.so.conf && mkdir /etc/ld.so.conf
echo again > /opt/img/keep/a; mkdir /opt/img/gone && echo again > /opt/img/gone/b
echo app > /usr/share/doc/apt/mine; rm /usr/share/doc/apt/img
ln -s /tmp/nowhere /root/link; mkfifo /root/fifo; mkdir /tmp/t; echo 1 > /tmp/t/a
"""


@pytest.fixture
def image(docker_client, base_image):
    tag = f"envqa-test/overlay-diff:{uuid.uuid4().hex[:10]}"
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        data = DOCKERFILE.format(base=base_image).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    docker_client.images.build(fileobj=context, custom_context=True, tag=tag, network_mode="none", rm=True)
    yield tag
    docker_client.images.remove(tag, force=True)


def _engine(sandbox) -> list[tuple[str, int]]:
    return sorted((c["Path"], c["Kind"]) for c in sandbox.container.diff())


def _layers(sandbox) -> tuple[str, str]:
    sandbox.container.reload()
    data = sandbox.container.attrs["GraphDriver"]["Data"]
    return data["UpperDir"], data["LowerDir"]


def test_the_layers_say_what_the_engine_says(docker_backend, image):
    sandbox = docker_backend.start(SandboxSpec(image=image))
    try:
        assert overlay_changes(*_layers(sandbox)) == _engine(sandbox)  # untouched (the engine's own mounts)
        result = sandbox.exec(["bash", "-c", CHANGES])
        assert result.exit_code == 0, result.stderr
        engine = _engine(sandbox)
        assert overlay_changes(*_layers(sandbox)) == engine
        kinds = {kind for _path, kind in engine}
        assert kinds == {0, 1, 2}  # the scenario exercises every kind
        assert any(path.startswith("/usr/share/doc/bash/") and kind == 2 for path, kind in engine)  # remade dir
        assert ("/etc/shells", 0) not in engine  # opened for writing, never changed: copied up, not reported
        # changed_paths is the engine's answer without the engine's own init, which no agent wrote
        assert any(p in ENGINE_FILES for p, _k in engine)
        ours = [(p, DIFF_KINDS[k]) for p, k in engine if p not in ENGINE_FILES]
        assert [(c.path, c.kind) for c in sandbox.changed_paths()] == ours
    finally:
        sandbox.stop()


def test_unreadable_layers_leave_the_answer_to_the_engine(tmp_path):
    assert overlay_changes("", "/x") is None
    assert overlay_changes(str(tmp_path / "missing"), str(tmp_path)) is None
    upper = tmp_path / "upper"
    (upper / "d").mkdir(parents=True)
    assert overlay_changes(str(upper), "") is None
    assert overlay_changes(str(upper), str(tmp_path / "gone-lower")) is None
    (tmp_path / "lower").mkdir()
    assert overlay_changes(str(upper), str(tmp_path / "lower")) == [("/d", 1)]
