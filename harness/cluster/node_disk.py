"""A stopped node's files, read and written through Docker's archive API (which, unlike
exec, works on a stopped container): what the file corruption faults change while a
node is down.

On faultfs the data directories are mount points over their backing directories
(faultfs.BACKING_SUFFIX), and with the node stopped only the backing directory holds
the files: a path under a data directory is read and written there. A file written
back keeps its owner, group, mode and times (the archive's own header goes back with
it: Docker's extraction keeps a header's owner unless asked to chown), so the node's
unprivileged JVM can still open it.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable

from docker.models.containers import Container

from harness.cluster import faultfs


def disk_path(path: str, layered_dirs: Iterable[str]) -> str:
    """Takes a path as the node's processes see it and the directories faultfs layers (none
    without faultfs). Returns where the node's disk holds it while the node is stopped."""
    for directory in layered_dirs:
        if path == directory or path.startswith(directory.rstrip("/") + "/"):
            return directory + faultfs.BACKING_SUFFIX + path[len(directory) :]
    return path


def _member(container: Container, path: str) -> tuple[tarfile.TarInfo, bytes]:
    stream, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        info = tar.next()
        if info is None or not info.isfile():
            raise FileNotFoundError(f"{path} is not a regular file")
        member = tar.extractfile(info)
        return info, member.read() if member is not None else b""


def read_file(container: Container, path: str) -> bytes:
    """Returns the bytes of a regular file in a container, running or stopped."""
    return _member(container, path)[1]


def read_tree(container: Container, path: str) -> dict[str, bytes]:
    """Returns every regular file under a directory of a container, running or stopped,
    by its path relative to the directory's parent (the archive's own naming)."""
    stream, _ = container.get_archive(path)
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        for info in tar:
            member = tar.extractfile(info) if info.isfile() else None
            if member is not None:
                found[info.name] = member.read()
    return found


def write_file(container: Container, path: str, data: bytes) -> None:
    """Replaces a regular file's bytes in a container, running or stopped, keeping its
    owner, group, mode and times."""
    info, _ = _member(container, path)
    info.size = len(data)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.addfile(info, io.BytesIO(data))
    parent = path.rsplit("/", 1)[0] or "/"
    if not container.put_archive(parent, buf.getvalue()):
        raise OSError(f"Docker did not write {path}")
