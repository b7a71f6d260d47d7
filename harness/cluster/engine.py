"""Connects to the Docker engine, failing with one clear line when none answers."""

from __future__ import annotations

import docker
from docker.errors import DockerException


class EngineError(RuntimeError):
    """No Docker engine answers."""


def docker_client() -> docker.DockerClient:
    """Returns a client of the engine named by DOCKER_HOST (or the local socket)."""
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except DockerException as err:
        raise EngineError(
            f"no Docker engine answers ({err}); `make run` starts one, or set DOCKER_HOST"
        ) from err
    return client
