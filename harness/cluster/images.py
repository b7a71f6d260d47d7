"""Makes sure the node image exists: Kafka jars from Maven Central, the
debootstrapped base image, then `docker build` of compose/Dockerfile.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable

import docker
from docker.errors import ImageNotFound

from harness.cluster.config import COMPOSE_DIR
from harness.cluster.labels import HARNESS_LABEL

NODE_IMAGE = "harness-kafka:3.9.1"
DEFAULT_BASE_IMAGE = "harness-base:bookworm"
INPUTS_LABEL = "kafka-harness.inputs"
# Everything the image is built from; a change to any of them rebuilds it.
_IMAGE_INPUTS = ("Dockerfile", "entrypoint.sh", "log4j.properties", "lib/.complete")


class ImageError(RuntimeError):
    """The node image could not be made; the message says which step failed."""


def base_image() -> str:
    """Returns the base image to build on: $HARNESS_BASE_IMAGE or the bootstrapped one."""
    return os.environ.get("HARNESS_BASE_IMAGE", DEFAULT_BASE_IMAGE)


def _run_step(script: str, *args: str) -> None:
    # stdout passes through: the scripts print one line when they do real work.
    proc = subprocess.run(
        ["bash", str(COMPOSE_DIR / script), *args], stderr=subprocess.PIPE, text=True, check=False
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-5:]
        raise ImageError(f"compose/{script} failed: " + " | ".join(tail))


def inputs_digest() -> str:
    """Returns a digest of the files the node image is built from, and of its base."""
    digest = hashlib.sha256(base_image().encode())
    for name in _IMAGE_INPUTS:
        digest.update((COMPOSE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def _image_is_current(client: docker.DockerClient, want: str) -> bool:
    try:
        image = client.images.get(NODE_IMAGE)
    except ImageNotFound:
        return False
    labels = image.labels or {}
    return bool(labels.get(INPUTS_LABEL) == want)


def ensure_node_image(client: docker.DockerClient, say: Callable[[str], None]) -> str:
    """Fetches jars, bootstraps the base image and builds the node image, each only if
    missing or stale; returns the node image's tag."""
    _run_step("fetch-kafka.sh")
    if base_image() == DEFAULT_BASE_IMAGE:
        try:
            client.images.get(DEFAULT_BASE_IMAGE)
        except ImageNotFound:
            _run_step("bootstrap-base.sh", DEFAULT_BASE_IMAGE)
    want = inputs_digest()
    if _image_is_current(client, want):
        return NODE_IMAGE
    say(f"building {NODE_IMAGE}")
    try:
        client.images.build(
            path=str(COMPOSE_DIR),
            tag=NODE_IMAGE,
            buildargs={"BASE_IMAGE": base_image()},
            labels={HARNESS_LABEL: "1", INPUTS_LABEL: want},
            rm=True,
            forcerm=True,
        )
    except docker.errors.BuildError as err:
        raise ImageError(f"docker build of {NODE_IMAGE} failed: {err}") from err
    return NODE_IMAGE
