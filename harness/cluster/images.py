"""Makes sure the node image of a Kafka release exists: its jars from Maven Central,
the debootstrapped base image, the faultfs and faultproxy binaries (the power-loss
layer and the in-path proxy, built from faultfs/ and faultproxy/ with Go), then
`docker build` of compose/Dockerfile.

The node image's tag carries the digest of its inputs, so checkouts of different
versions on one engine each use their own image instead of rebuilding over each
other's, and a change to any input builds a new one. On the bootstrapped base the
build runs without a network: it must never need one.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import docker
from docker.errors import ImageNotFound

from harness.cluster.config import COMPOSE_DIR
from harness.cluster.labels import HARNESS_LABEL
from harness.cluster.releases import DEFAULT_VERSION

NODE_IMAGE_REPO = "harness-kafka"
DEFAULT_BASE_IMAGE = "harness-base:bookworm-2"
"""The bootstrapped base (compose/bootstrap-base.sh). Its tag's number goes up whenever
the packages it is bootstrapped with change, so an engine holding an older base
bootstraps the new one (2: libfaketime, for the clock faults)."""
INPUTS_LABEL = "kafka-harness.inputs"
# Everything the image is built from besides its release's jars; a change to any of
# them rebuilds it (the jars' folder has a stamp holding the digest of their pom).
_IMAGE_FILES = ("Dockerfile", "entrypoint.sh", "log4j.properties")
# The Go binaries are built from their sources (reproducibly: compose/build-<name>.sh),
# so the digest hashes the sources and a binary need not exist to name the image.
GO_TOOLS = ("faultfs", "faultproxy")


class ImageError(RuntimeError):
    """The node image could not be made; the message says which step failed."""


def base_image() -> str:
    """Returns the base image to build on: $HARNESS_BASE_IMAGE or the bootstrapped one."""
    return os.environ.get("HARNESS_BASE_IMAGE", DEFAULT_BASE_IMAGE)


def run_step(script: str, *args: str) -> None:
    """Runs compose/<script> with args; raises ImageError with its last lines of stderr
    when it fails. Its stdout passes through: the scripts print one line when they do
    real work."""
    proc = subprocess.run(
        ["bash", str(COMPOSE_DIR / script), *args], stderr=subprocess.PIPE, text=True, check=False
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-5:]
        raise ImageError(f"compose/{script} failed: " + " | ".join(tail))


def jar_folder(version: str) -> str:
    """Returns the folder under compose/ that holds a release's jars."""
    return f"lib/{version}"


def inputs_digest(version: str = DEFAULT_VERSION) -> str:
    """Returns a digest of the files a release's node image is built from, and of its
    base."""
    digest = hashlib.sha256(base_image().encode())
    for name in (*_IMAGE_FILES, f"{jar_folder(version)}/.complete"):
        digest.update((COMPOSE_DIR / name).read_bytes())
    for tool in GO_TOOLS:
        for source in go_sources(tool):
            digest.update(f"{tool}/{source.name}".encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


def go_sources(tool: str) -> list[Path]:
    """Returns the files a Go tool's binary is built from, in a fixed order."""
    return sorted(
        p
        for p in (COMPOSE_DIR.parent / tool).iterdir()
        if (p.suffix == ".go" and not p.name.endswith("_test.go")) or p.name in ("go.mod", "go.sum")
    )


def go_binary(tool: str) -> Path:
    """Returns where compose/build-<tool>.sh puts a Go tool's binary."""
    return COMPOSE_DIR.parent / "build" / tool / tool


def node_image(version: str = DEFAULT_VERSION) -> str:
    """Returns the tag of a release's node image for the current inputs."""
    return f"{NODE_IMAGE_REPO}:{version}-{inputs_digest(version)}"


def image_is_current(client: docker.DockerClient, tag: str, want: str) -> bool:
    """Returns whether image tag exists and was built from inputs of digest want."""
    try:
        image = client.images.get(tag)
    except ImageNotFound:
        return False
    labels = image.labels or {}
    return bool(labels.get(INPUTS_LABEL) == want)


def ensure_base_image(client: docker.DockerClient) -> None:
    """Bootstraps the base image when it is the default one and missing."""
    if base_image() != DEFAULT_BASE_IMAGE:
        return
    try:
        client.images.get(DEFAULT_BASE_IMAGE)
    except ImageNotFound:
        try:
            run_step("bootstrap-base.sh", DEFAULT_BASE_IMAGE)
        except ImageError as err:
            raise ImageError(
                f"{err} (where a container registry is reachable, "
                "HARNESS_BASE_IMAGE=debian:bookworm builds on a stock image instead)"
            ) from err


def ensure_node_image(
    client: docker.DockerClient, say: Callable[[str], None], version: str = DEFAULT_VERSION
) -> str:
    """Fetches a release's jars, bootstraps the base image and builds the release's node
    image, each only if missing or stale; returns the node image's tag."""
    run_step("fetch-kafka.sh", version)
    ensure_base_image(client)
    want = inputs_digest(version)
    tag = node_image(version)
    if image_is_current(client, tag, want):
        return tag
    for tool in GO_TOOLS:
        run_step(f"build-{tool}.sh")
    say(f"building {tag}")
    # The context is packed here (the one list of what `docker build` is given: there is
    # no .dockerignore), following symlinks, with the release's jars as lib/.
    with tempfile.TemporaryFile() as context:
        with tarfile.open(fileobj=context, mode="w", dereference=True) as tar:
            for name in _IMAGE_FILES:
                tar.add(COMPOSE_DIR / name, arcname=name)
            for tool in GO_TOOLS:
                tar.add(go_binary(tool), arcname=tool)
            tar.add(COMPOSE_DIR / jar_folder(version), arcname="lib", filter=_without_stamp)
        context.seek(0)
        build_image(client, context, tag, want)
    return tag


def _without_stamp(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if member.name.endswith("/.complete") else member


def build_image(client: docker.DockerClient, context: BinaryIO, tag: str, want: str) -> None:
    """Builds image tag from a packed context on the base image, labelled as the
    harness's and with its inputs' digest want; raises ImageError when the build fails."""
    # The bootstrapped base has everything; a stock base installs the rest with apt.
    network = "none" if base_image() == DEFAULT_BASE_IMAGE else None
    try:
        client.images.build(
            fileobj=context,
            custom_context=True,
            tag=tag,
            buildargs={"BASE_IMAGE": base_image()},
            labels={HARNESS_LABEL: "1", INPUTS_LABEL: want},
            network_mode=network,
            rm=True,
            forcerm=True,
        )
    except (docker.errors.BuildError, docker.errors.APIError) as err:
        raise ImageError(f"docker build of {tag} failed: {err}") from err
