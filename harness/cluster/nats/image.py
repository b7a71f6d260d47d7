"""Makes sure the node image of a nats-server release exists: the server built by
compose/fetch-nats.sh, the power-loss layer (faultfs), the debootstrapped base image,
then `docker build` of compose/nats/Dockerfile, labelled and tagged by its inputs'
digest as the Kafka image is (harness/cluster/images.py, whose steps it reuses).
"""

from __future__ import annotations

import hashlib
import tarfile
import tempfile
from collections.abc import Callable

import docker

from harness.cluster.images import (
    base_image,
    build_image,
    ensure_base_image,
    go_binary,
    go_sources,
    image_is_current,
    run_step,
)
from harness.cluster.nats.config import DEFAULT_NATS_VERSION, NATS_COMPOSE_DIR

NATS_IMAGE_REPO = "harness-nats"
# Everything the image is built from besides the server binary, under compose/nats/
# (the binary's folder has a stamp naming its version, its Go and its SHA-256).
_IMAGE_FILES = ("Dockerfile",)
_LAYER = "faultfs"
"""The power-loss layer, built from faultfs/ as for the Kafka image (its sources are
hashed, so the binary need not exist to name the image)."""


def binary_folder(version: str) -> str:
    """Returns the folder under compose/ that holds a release's nats-server."""
    return f"lib/nats/{version}"


def inputs_digest(version: str = DEFAULT_NATS_VERSION) -> str:
    """Returns a digest of the files a release's NATS image is built from, and of its
    base."""
    compose = NATS_COMPOSE_DIR.parent
    digest = hashlib.sha256(base_image().encode())
    for name in _IMAGE_FILES:
        digest.update((NATS_COMPOSE_DIR / name).read_bytes())
    digest.update((compose / binary_folder(version) / ".complete").read_bytes())
    for source in go_sources(_LAYER):
        digest.update(f"{_LAYER}/{source.name}".encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


def nats_image(version: str = DEFAULT_NATS_VERSION) -> str:
    """Returns the tag of a release's NATS image for the current inputs."""
    return f"{NATS_IMAGE_REPO}:{version}-{inputs_digest(version)}"


def ensure_nats_image(
    client: docker.DockerClient, say: Callable[[str], None], version: str = DEFAULT_NATS_VERSION
) -> str:
    """Builds a release's nats-server (once), bootstraps the base image and builds the
    release's NATS image, each only if missing or stale; returns the image's tag."""
    run_step("fetch-nats.sh", version)
    ensure_base_image(client)
    want = inputs_digest(version)
    tag = nats_image(version)
    if image_is_current(client, tag, want):
        return tag
    run_step(f"build-{_LAYER}.sh")
    say(f"building {tag}")
    binary = NATS_COMPOSE_DIR.parent / binary_folder(version) / "nats-server"
    with tempfile.TemporaryFile() as context:
        with tarfile.open(fileobj=context, mode="w") as tar:
            for name in _IMAGE_FILES:
                tar.add(NATS_COMPOSE_DIR / name, arcname=name)
            tar.add(binary, arcname="nats-server")
            tar.add(go_binary(_LAYER), arcname=_LAYER)
        context.seek(0)
        build_image(client, context, tag, want)
    return tag
