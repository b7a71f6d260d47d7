"""The Java driver itself, built and run with no cluster (a bootstrap nobody listens on):
it answers its protocol on stdout and logs on stderr, bounds the Java client's waits,
never keeps the harness waiting past a reply's time-out, dies for real when killed, and
exits when its stdin ends. Skipped where javac or the 4.4.0 jars are missing."""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvstore import DEFAULT_TIMEOUTS
from workloads.java_client import JavaTxnClient, driver_config
from workloads.java_driver import (
    CLOCK_FILE_KEY,
    FAKETIME_LIBRARIES,
    JVM_LOG,
    LIB,
    Driver,
    DriverError,
    java_versions,
)
from workloads.queue_client import QueueSettings
from workloads.txn_rules import TransactionalIds

pytestmark = pytest.mark.skipif(
    shutil.which("javac") is None or not (LIB / ".complete").exists(),
    reason="needs javac and compose/lib/4.4.0 (compose/fetch-kafka.sh 4.4.0)",
)
TIMEOUTS = dataclasses.replace(DEFAULT_TIMEOUTS, operation=1.0, close=1.0)
NOBODY = QueueSettings(
    bootstrap="127.0.0.1:1",
    topic="t",
    partitions=2,
    acks="all",
    idempotence=True,
    consumer_group=False,
    timeouts=TIMEOUTS,
    txn=True,
)


@pytest.fixture
def jvm_log() -> Iterator[list[str]]:
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    JVM_LOG.addHandler(handler)
    JVM_LOG.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        JVM_LOG.removeHandler(handler)
        JVM_LOG.setLevel(logging.NOTSET)


def test_the_driver_serves_ops_and_an_unreachable_coordinator_fails_the_init_in_time(
    jvm_log: list[str],
) -> None:
    client = JavaTxnClient(NOBODY, "p0", TransactionalIds("t"))
    try:
        assert client.invoke({"f": "assign", "value": [1, 0]}) == {"type": "ok", "value": [0, 1]}
        assert client.invoke({"f": "poll", "value": None}) == {"type": "ok", "value": {}}
        started = time.monotonic()
        txn = client.invoke({"f": "txn", "value": [["send", 0, 1], ["poll"]], "abort": False})
        took = time.monotonic() - started
        bogus = client.invoke({"f": "bogus", "value": None})
    finally:
        client.close()
    # Nothing was begun: fail, and the client stays (initTransactions may be tried again).
    assert txn["type"] == "fail" and txn["error"].startswith("init: TimeoutException")
    assert txn["value"] == [["send", 0, 1], ["poll"]]
    assert txn["transactional-id"] == "t-txn-1#1" and client.failure is None
    assert took < TIMEOUTS.operation + 2.0
    assert bogus["type"] == "fail" and "no such op" in bogus["error"]
    assert any("t-txn-1#1" in line for line in jvm_log), "the JVM's stderr never reached the log"


def test_a_reply_that_does_not_come_in_time_raises_and_a_killed_driver_is_gone() -> None:
    driver = Driver.start(driver_config(NOBODY, "p0", "t-txn-9"), "t-txn-9#1", 30.0)
    try:
        with pytest.raises(DriverError, match=r"no answer from the Java driver within 0\.2 s"):
            driver.ask({"f": "txn", "value": [["poll"]], "abort": False, "crash": False}, 0.2)
        # Its late reply must never answer the next request.
        with pytest.raises(DriverError, match=r"within 0\.2 s"):
            driver.ask({"f": "poll"}, 5.0)
        driver.kill()
        assert driver.exit_code == -9  # SIGKILL: nothing closed, nothing aborted
    finally:
        driver.kill()


def test_the_driver_exits_when_its_stdin_ends() -> None:
    driver = Driver.start(driver_config(NOBODY, "p0", "t-txn-8"), "t-txn-8#1", 30.0)
    started = time.monotonic()
    driver.close(10.0)
    assert time.monotonic() - started < 10.0 and driver.exit_code == 0
    with pytest.raises(DriverError):
        driver.ask({"f": "poll"}, 1.0)


def test_the_java_clients_versions_are_read() -> None:
    found = java_versions()
    assert found["kafka_clients"] == "4.4.0" and found["java"] != "unknown"


@pytest.mark.skipif(
    not any(Path(p).exists() for p in FAKETIME_LIBRARIES), reason="needs Debian's libfaketime"
)
def test_a_driver_given_a_clock_file_reads_the_wall_clock_it_says(tmp_path: Path) -> None:
    # The client clock faults' mechanism: the JVM's System.currentTimeMillis moves with
    # its file (read again within about two seconds), the harness's clock does not.
    clock_file = tmp_path / "t-txn-7#1"
    config = driver_config(NOBODY, "p0", "t-txn-7") | {CLOCK_FILE_KEY: str(clock_file)}
    driver = Driver.start(config, "t-txn-7#1", 30.0)
    try:
        assert clock_file.read_text() == "+0\n"
        assert abs(_driver_skew(driver)) < 5
        clock_file.write_text("+3600\n")
        assert 3590 < _skew_once(driver, 3600) < 3610
        clock_file.write_text("-300\n")
        assert -310 < _skew_once(driver, -300) < -290
    finally:
        driver.kill()


def test_a_run_with_client_clocks_gives_each_incarnation_its_own_clock_file() -> None:
    configs: list[dict[str, Any]] = []

    def start(config: dict[str, Any], label: str, timeout: float) -> Driver:
        configs.append(config)
        raise DriverError("not started")

    clocked = dataclasses.replace(NOBODY, client_clocks="/run/client-clocks")
    with pytest.raises(DriverError):
        JavaTxnClient(clocked, "p0", TransactionalIds("t"), start=start)
    with pytest.raises(DriverError):
        JavaTxnClient(NOBODY, "p0", TransactionalIds("t"), start=start)
    assert configs[0][CLOCK_FILE_KEY] == "/run/client-clocks/t-txn-1#1"
    assert CLOCK_FILE_KEY not in configs[1]


def _driver_skew(driver: Driver) -> float:
    """Returns how far (s) the driver's wall clock stands from this process's."""
    return float(driver.ask({"f": "clock"}, 30.0)["value"]) / 1000 - time.time()


def _skew_once(driver: Driver, wanted: float) -> float:
    """Returns the driver's skew once it is within 60 s of wanted, or after 8 s."""
    deadline = time.monotonic() + 8
    skew = _driver_skew(driver)
    while abs(skew - wanted) > 60 and time.monotonic() < deadline:
        time.sleep(0.25)
        skew = _driver_skew(driver)
    return skew
