"""A run folder's two logs: run.log tells the run's story (the cluster, each nemesis step
with its test and wall time, the verdict, why a run stopped), client.log the Kafka clients'."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.cluster.admin import KAFKA_LOG as ADMIN_KAFKA_LOG
from harness.results import utc_stamp
from kvstore.kafka_log import KAFKA_LOG as STORE_KAFKA_LOG
from kvstore.kafka_log import LIBRDKAFKA_DEBUG
from workloads.nats_loop import LOG as NATS_LOG

RUN_LOG, CLIENT_LOG = "run.log", "client.log"
STORY_LOGGERS = ("harness", "kvstore", "nemesis")
CLIENT_LOGGERS = (ADMIN_KAFKA_LOG.name, STORE_KAFKA_LOG.name, NATS_LOG.name)
"""librdkafka's lines, the Java driver's stderr and nats-py's errors: thousands in a run
with faults, which would bury the story (none propagates to the story's loggers)."""
VALUE_CHARS = 300


class UtcFormatter(logging.Formatter):
    """Stamps each line in ISO 8601 UTC to the millisecond, as test.json's t0 is written,
    so a line can be put beside the plots (test seconds) and the brokers' logs."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return utc_stamp(record.created)


@contextlib.contextmanager
def run_logs(folder: Path) -> Iterator[None]:
    """Sends the harness's and the store's lines to folder/run.log, and the Kafka clients'
    to folder/client.log, while the block runs."""
    story = _handler(folder / RUN_LOG)
    clients = _handler(folder / CLIENT_LOG)
    # librdkafka's debug lines, when asked for, come at DEBUG.
    client_level = logging.DEBUG if LIBRDKAFKA_DEBUG else logging.INFO
    attached = [(name, story, logging.INFO) for name in STORY_LOGGERS]
    attached += [(name, clients, client_level) for name in CLIENT_LOGGERS]
    levels = []
    for name, handler, level in attached:
        logger = logging.getLogger(name)
        levels.append(logger.level)
        logger.addHandler(handler)
        logger.setLevel(level)
    try:
        yield
    finally:
        for (name, handler, _), level in zip(attached, levels, strict=True):
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).setLevel(level)
        story.close()
        clients.close()


def _handler(path: Path) -> logging.Handler:
    handler = logging.FileHandler(path, delay=True)  # no empty client.log for a run without one
    handler.setFormatter(UtcFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    return handler


def nemesis_line(
    f: str, invoked: tuple[int, float] | None, done_ns: int, value: Any, error: str | None
) -> str:
    """Takes a nemesis op, its invoke's (history time in ns, wall time), its completion's
    history time, value and error. Returns its line for run.log, e.g. `nemesis
    start-kill-leader: t=20.003-20.412 s (wall 2026-11-26T00:10:23.456Z): {"killed": "n2"}`."""
    start_ns, wall = invoked if invoked is not None else (done_ns, None)
    when = f"t={start_ns / 1e9:.3f}-{done_ns / 1e9:.3f} s"
    if wall is not None:
        when += f" (wall {utc_stamp(wall)})"
    said = f"failed: {error}" if error else _value_text(value)
    return f"nemesis {f}: {when}: {said}"


def _value_text(value: Any) -> str:
    # What the fault did, without the partition tables before and after (results.json has
    # them): a line, not a page.
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in ("before", "after")}
    text = json.dumps(value, default=repr, sort_keys=True)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 3] + "..."
