"""The metadata watch: who leads the metadata, sampled on the history's clock into
metadata.jsonl (errors kept as samples), read back, and drawn."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness.cluster.admin import AdminError
from harness.cluster.quorum import Quorum, ReplicaView
from harness.report.plots.images import IMAGE, METADATA_FILE
from harness.report.plots.metadata import metadata_plot, plot_rows, steady_leader
from harness.run.metadata_watch import FILE, MetadataWatch, read_samples, sample


class Controllers:
    """Just what the watch asks of a cluster: a KRaft quorum (c1..c3 are 101..103), or a
    ZooKeeper-mode controller."""

    def __init__(self, metadata: str = "kraft") -> None:
        self.metadata = metadata
        self.answers: list[Quorum | Exception] = []

    def node_of_broker(self, node_id: int) -> str:
        return f"c{node_id - 100}" if node_id > 100 else f"n{node_id}"

    def active_controller(self) -> str | None:
        return "n2"

    def quorum(self) -> Quorum:
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def quorum(leader: int, epoch: int, fetched_ago: dict[int, int | None]) -> Quorum:
    voters = tuple(ReplicaView(i, 10, 0, fetched_ago.get(i, 100)) for i in (101, 102, 103))
    return Quorum(leader=leader, epoch=epoch, high_watermark=10, voters=voters, observers=())


def test_a_sample_names_the_leader_its_epoch_and_the_voters_not_fetching() -> None:
    cluster = Controllers()
    cluster.answers = [quorum(102, 7, {101: 4500, 102: None, 103: None})]
    found = sample(cluster)  # type: ignore[arg-type]
    assert found == {"leader": "c2", "epoch": 7, "behind": ["c1", "c3"]}
    assert sample(Controllers("zookeeper")) == {"leader": "n2"}  # type: ignore[arg-type]


def test_the_watch_writes_samples_on_the_history_clock_errors_included(tmp_path: Path) -> None:
    cluster = Controllers()
    cluster.answers = [AdminError("no controller leads"), quorum(101, 3, {})]
    started = time.monotonic_ns()
    with MetadataWatch(cluster, tmp_path, lambda: time.monotonic_ns() - started):  # type: ignore[arg-type]
        time.sleep(1.5)
    samples = read_samples(tmp_path)
    assert samples[0]["leader"] is None and samples[0]["error"] == "no controller leads"
    assert samples[1] | {"time": 0} == {"time": 0, "leader": "c1", "epoch": 3, "behind": []}
    assert 0 <= samples[0]["time"] < samples[1]["time"] < 1.5e9


def test_a_torn_last_line_ends_the_samples_and_no_file_is_none(tmp_path: Path) -> None:
    assert read_samples(tmp_path) == []
    (tmp_path / FILE).write_text(json.dumps({"time": 1, "leader": "c1"}) + '\n{"time": 2, "lea')
    assert read_samples(tmp_path) == [{"time": 1, "leader": "c1"}]


def test_the_plot_has_a_row_per_node_and_one_for_nobody(tmp_path: Path) -> None:
    samples: list[dict[str, Any]] = [
        {"time": 0, "leader": "c1", "epoch": 1, "behind": []},
        {"time": 10**9, "leader": None, "error": "no controller leads"},
        {"time": 2 * 10**9, "leader": "c2", "epoch": 2, "behind": ["c1"]},
    ]
    windows = [{"fault": "kill-active-controller", "start": 0.5, "stop": 2.5}]
    assert plot_rows(samples) == ["c1", "c2", "none"]
    path = metadata_plot(samples, windows, tmp_path / METADATA_FILE)
    assert b"<svg" in path.read_bytes()[:2000]
    assert metadata_plot([], [], tmp_path / f"empty{IMAGE}").exists()


def test_one_leader_throughout_is_said_not_drawn() -> None:
    steady = [{"time": t, "leader": "n1", "behind": []} for t in range(3)]
    assert steady_leader(steady) == "n1"
    assert steady_leader([*steady, {"time": 3, "leader": "n2"}]) is None
    assert steady_leader([*steady, {"time": 3, "leader": "n1", "behind": ["n3"]}]) is None
    assert steady_leader([{"time": 0, "leader": None}]) is None
    assert steady_leader([]) is None
