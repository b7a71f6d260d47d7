"""Fixtures shared by the unit tests' files: one local Spark session per test process,
since a second session in the same process would clash with the first; and Hypothesis
without its clocks (no deadline per example, no health check on how fast inputs are
made): unit tests are never timed, and a loaded machine would fail them for its load."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from harness.pipeline.session import spark_session

settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("untimed")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    log = tmp_path_factory.mktemp("spark") / "spark.log"
    with spark_session("local[2]", log, shuffle_partitions=2) as session:
        yield session
