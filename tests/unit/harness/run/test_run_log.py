"""run.log tells a run's story from the code that writes it: the run, t = 0 in UTC, the
workload's start and end, each nemesis step with its test and wall time, the verdict and
the exit, or why the run was interrupted; the Kafka clients' lines go to client.log; and
test.json records the wall-clock time of t = 0."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness import signals
from harness.db.kafka import KafkaDb
from harness.progress import StatusLine
from harness.run import core
from harness.run.run_log import nemesis_line
from harness.run.runner import Recorder
from harness.spec import TestSpec

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


class Quiet:
    def write(self, text: str) -> None: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool:
        return False


class FakeRunner:
    """Stands in for the runner: two ops, one fault started and stopped, a librdkafka line,
    and optionally ^C in the middle."""

    interrupt = False

    def __init__(self, *args: Any) -> None:
        self.recorder: Recorder = args[5]

    def run(self, status: Any) -> None:
        r = self.recorder
        r.invoke(0, {"f": "put", "key": 1, "value": 3})
        r.complete(0, {"f": "put", "key": 1, "value": 3}, {"type": "ok", "value": 3})
        r.nemesis("invoke", "start-partition-leader")
        logging.getLogger("kvstore.kafka").warning("FAIL [p0-producer]: Connection refused")
        r.nemesis("info", "start-partition-leader", {"isolated": "n2", "before": {"x": 1}})
        if self.interrupt:
            signals.install().names.append("SIGINT")
            raise KeyboardInterrupt
        r.nemesis("invoke", "stop-partition-leader")
        r.nemesis("info", "stop-partition-leader", None, error="Docker said 409")
        r.invoke(0, {"f": "get", "key": 1})
        r.complete(0, {"f": "get", "key": 1}, {"type": "ok", "value": 3})


@contextlib.contextmanager
def _no_watch(*args: Any) -> Iterator[None]:
    yield


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interrupt: bool) -> Path:
    def set_up(self: core.TestRun) -> None:
        self.cluster = SimpleNamespace()  # type: ignore[assignment]
        self.nemesis_set_up = True

    monkeypatch.setattr(signals.install(), "count", 0)  # no earlier test's interrupt
    monkeypatch.setattr(core.TestRun, "set_up", set_up)
    monkeypatch.setattr(core.TestRun, "heal", lambda self, recorder: None)
    monkeypatch.setattr(core.TestRun, "finish", lambda self, recorder: None)
    monkeypatch.setattr(core.TestRun, "tear_down", lambda self: None)
    monkeypatch.setattr(core, "MetadataWatch", _no_watch)
    monkeypatch.setattr(core, "Runner", type("R", (FakeRunner,), {"interrupt": interrupt}))
    spec = TestSpec(name="story", seed=7, nemesis=("partition-leader",), time_limit=0.0)
    before = time.time()
    outcome = core.run_test(spec, tmp_path, StatusLine(Quiet()))  # type: ignore[arg-type]
    t0 = json.loads((outcome.folder / "test.json").read_text())["t0"]
    assert re.fullmatch(STAMP, t0), t0
    at = datetime.fromisoformat(t0.replace("Z", "+00:00")).timestamp()
    assert before - 0.01 <= at <= time.time()
    return outcome.folder


def test_run_log_tells_the_story_and_client_log_holds_the_chatter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _run(tmp_path, monkeypatch, interrupt=False)
    story = (folder / "run.log").read_text()
    lines = story.splitlines()
    assert all(re.match(STAMP + r" (INFO|WARNING|ERROR) ", line) for line in lines), story
    t0 = json.loads((folder / "test.json").read_text())["t0"]
    expected = [
        r"harness.run: run story, seed 7: ",
        rf"harness.run: t=0 of the history is {t0}$",
        r"harness.run: t=0\.\d{3} s workload started: 5 clients at 100 ops/s for 0 s, "
        r"faults 10 s apart, nemesis partition-leader$",
        rf"INFO harness.run: nemesis start-partition-leader: t=0\.\d{{3}}-0\.\d{{3}} s "
        rf'\(wall {STAMP}\): {{"isolated": "n2"}}$',
        r"WARNING harness.run: nemesis stop-partition-leader: t=0\.\d{3}-0\.\d{3} s "
        rf"\(wall {STAMP}\): failed: Docker said 409$",
        r"harness.run: t=0\.\d{3} s workload ended after 0\.\d s: 2 ok, 0 fail, 0 info$",
        r"harness.run: verdict: VALID$",
        r"harness.run:   2 ops: 2 ok, 0 fail, 0 info; 1 key checked$",
        r"harness.run: exit 0$",
    ]
    found = [next((i for i, line in enumerate(lines) if re.search(e, line)), -1) for e in expected]
    assert -1 not in found and found == sorted(found), (found, story)
    assert "librdkafka" not in story and "Connection refused" not in story
    clients = (folder / "client.log").read_text()
    assert re.fullmatch(
        STAMP + r" WARNING kvstore.kafka: FAIL \[p0-producer\]: Connection refused\n", clients
    )


def test_run_log_says_why_a_run_was_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _run(tmp_path, monkeypatch, interrupt=True)
    story = (folder / "run.log").read_text()
    assert re.search(
        r"WARNING harness.run: t=0\.\d{3} s interrupted by SIGINT during the workload", story
    )
    assert "harness.run: verdict: INCOMPLETE\n" in story
    assert "harness.run:   INCOMPLETE: interrupted by SIGINT during the workload" in story
    assert story.rstrip().endswith("harness.run: exit 130")


def test_the_lines_of_a_step_and_of_the_cluster() -> None:
    value = {"killed": "n2", "after": [1] * 500}
    line = nemesis_line(
        "start-kill-leader", (20_003_000_000, 1790000000.5), 20_412_000_000, value, None
    )
    assert line == (
        "nemesis start-kill-leader: t=20.003-20.412 s (wall 2026-09-21T14:13:20.500Z): "
        '{"killed": "n2"}'
    )
    long = nemesis_line("start-x", None, 1_000_000_000, {"nodes": list(range(500))}, None)
    assert long.startswith("nemesis start-x: t=1.000-1.000 s: ") and long.endswith("...")
    cluster = SimpleNamespace(spec=SimpleNamespace(name="h24b"), bootstrap_servers="10.0.0.2:9092")
    facts = {"kafka_version": "4.4.0", "metadata": "kraft"}
    assert KafkaDb.summary(cluster, facts, 41.26) == (  # type: ignore[arg-type]
        "cluster h24b up in 41.3 s: Kafka 4.4.0 on kraft, bootstrap 10.0.0.2:9092"
    )
