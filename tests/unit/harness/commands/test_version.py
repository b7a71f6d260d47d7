"""`harness --version`: the harness's release and the Kafka releases it runs, exit 0."""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.cluster.releases import RELEASES


def test_version_names_the_harness_and_its_kafka_releases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    said = capsys.readouterr().out.strip()
    assert said.startswith("harness ") and said.endswith(
        f"runs Kafka {min(RELEASES, key=_order)} to {max(RELEASES, key=_order)}"
    )


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in version.split("."))
