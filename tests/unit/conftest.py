"""Fixtures shared by the unit tests' files: one local Spark session per test process,
since a second session in the same process would clash with the first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness.pipeline.session import spark_session


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    log = tmp_path_factory.mktemp("spark") / "spark.log"
    with spark_session("local[2]", log, shuffle_partitions=2) as session:
        yield session
