"""Build contexts for environment images: the content-hash tag, and tars for uploads.

No container registry is reachable on these machines, so `FROM ubuntu:22.04` would fail; the image
map (config, core/image_map.py) rewrites such references to a locally built base. The tag is a hash of exactly what
docker would build (context files, rewritten Dockerfile, the ids of the base images), so an unchanged
environment is never rebuilt and a changed base image always is.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

from envqa.core.environment import iter_files

IMAGE_REPO = "envqa-env"


def build_context_tar(context_dir: Path, dockerfile: Path, dockerfile_text: str) -> bytes:
    """The build context as an in-memory tar with the (rewritten) Dockerfile at its root."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in iter_files(context_dir):
            rel = path.relative_to(context_dir).as_posix()
            if path == dockerfile or rel == "Dockerfile":
                continue
            info = tar.gettarinfo(str(path), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 0
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
        data = dockerfile_text.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def image_tag(context_tar: bytes, base_ids: list[str]) -> str:
    h = hashlib.sha256(context_tar)
    for base in base_ids:
        h.update(base.encode())
    return f"{IMAGE_REPO}:{h.hexdigest()[:24]}"


def tar_path(source: Path, arcname: str) -> bytes:
    """A host file or directory as a tar whose top entry is `arcname` (for put_archive)."""
    return tar_many([(source, arcname)])


def tar_many(items: list[tuple[Path, str]]) -> bytes:
    """Several host files or directories in one tar, each under its own top entry."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for source, arcname in items:
            _add(tar, Path(source), arcname)
    return buf.getvalue()


def _add(tar: tarfile.TarFile, source: Path, arcname: str) -> None:
    if source.is_file():
        info = tar.gettarinfo(str(source), arcname=arcname)
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        with open(source, "rb") as fh:
            tar.addfile(info, fh)
        return
    top = tarfile.TarInfo(arcname)
    top.type, top.mode = tarfile.DIRTYPE, 0o755
    tar.addfile(top)
    for path in iter_files(source):
        rel = path.relative_to(source).as_posix()
        info = tar.gettarinfo(str(path), arcname=f"{arcname}/{rel}")
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        with open(path, "rb") as fh:
            tar.addfile(info, fh)


def tar_bytes(name: str, data: bytes, mode: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), mode
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tar_dirs(names: list[str], mode: int) -> bytes:
    """Directory entries only (for creating directories without an exec)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
    return buf.getvalue()
