"""The Java driver of the queue workload's transactions (clients/java/): built on first use
with javac against the kafka-clients jars the project fetches, and run as one JVM per
client incarnation that answers JSON lines on stdin with JSON lines on stdout.

The build goes into build/java-client/ (git-ignored) and is redone only when the sources
or the jars change. A driver's stderr (the Java client's warnings, its transaction
manager's state changes) goes to the `kvstore.kafka.java` logger, and so into the run's
client.log.
The JVM exits when its stdin ends, so a driver never outlives the harness that started it.
A driver given a clock file (a run with a client clock fault) reads its wall clock through
libfaketime, offset by the seconds that file holds, as the nodes' JVMs do.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import queue
import re
import shutil
import subprocess
import threading
import zipfile
from pathlib import Path
from typing import IO, Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "clients" / "java"
KAFKA_CLIENTS_VERSION = "4.4.0"
"""The release of the Java client the driver is built against (transactions v2, KIP-890)."""
LIB = ROOT / "compose" / "lib" / KAFKA_CLIENTS_VERSION
BUILD = ROOT / "build" / "java-client"
MAIN_CLASS = "kafkaharness.Driver"
COMPILE_JARS = ("kafka-clients-", "jackson-databind-", "jackson-core-", "jackson-annotations-")
RUNTIME_JARS = (
    *COMPILE_JARS,
    *("lz4-java-", "snappy-java-", "zstd-jni-", "slf4j-api-", "slf4j-reload4j-", "reload4j-"),
)
"""The jars the Java client needs at run time, by name prefix: compression codecs and a
logger besides the client and Jackson (the folder also holds the broker's jars)."""
JVM_OPTIONS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
"""A small heap and the quick compiler only: a driver is a light client, and a run starts
many of them beside the cluster."""
JVM_LOG = logging.getLogger("kvstore.kafka.java")
CLOCK_FILE_KEY = "clock_file"
"""The key of a driver's config naming its clock file (read here, never sent to the JVM)."""
FAKETIME_LIBRARIES = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
)
"""Where Debian's libfaketime puts its multithreaded library (compose/ensure-debs.sh
installs it for the client clock faults)."""
_BUILD_LOCK = threading.Lock()


class DriverError(RuntimeError):
    """The driver could not be built or started, or did not answer."""


class DriverProcess(Protocol):
    """What a client needs of a running driver (a fake stands in for it in tests)."""

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Sends one request; returns the reply, or raises DriverError."""
        ...

    def kill(self) -> None:
        """Kills the process at once (SIGKILL)."""
        ...

    def close(self, timeout: float) -> None:
        """Ends stdin so that the driver closes its clients and exits; kills it after timeout."""
        ...


def jars(lib: Path, prefixes: tuple[str, ...]) -> list[Path]:
    """Takes a folder of jars and name prefixes. Returns, per prefix, the jar named by it
    and a version (jackson-core-2.21.7.jar, never jackson-core-asl-1.9.jar); raises
    DriverError naming a prefix no jar has."""
    found: list[Path] = []
    for prefix in prefixes:
        matches = sorted(lib.glob(f"{prefix}[0-9]*.jar"))
        if not matches:
            raise DriverError(f"no {prefix}*.jar in {lib}")
        found.append(matches[-1])
    return found


def _fetch_jars() -> None:
    if (LIB / ".complete").exists():
        return
    proc = subprocess.run(
        ["bash", str(ROOT / "compose" / "fetch-kafka.sh"), KAFKA_CLIENTS_VERSION],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
        raise DriverError(f"compose/fetch-kafka.sh {KAFKA_CLIENTS_VERSION} failed: {tail}")


def _digest(sources: list[Path], compile_jars: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for jar in compile_jars:
        digest.update(jar.name.encode() + b"\0")
    return digest.hexdigest()


def ensure_driver() -> str:
    """Fetches the jars and builds the driver unless built from the same sources and jars.
    Returns the classpath to run it with; raises DriverError (no javac, a failed build)."""
    with _BUILD_LOCK:
        _fetch_jars()
        sources = sorted(SOURCES.glob("*.java"))
        compile_jars = jars(LIB, COMPILE_JARS)
        classes = BUILD / "classes"
        stamp = BUILD / ".stamp"
        want = _digest(sources, compile_jars)
        BUILD.mkdir(parents=True, exist_ok=True)
        with (BUILD / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another harness process may build at once
            if not stamp.exists() or stamp.read_text() != want:
                _compile(sources, compile_jars, classes)
                stamp.write_text(want)
        return ":".join(str(p) for p in [classes, *jars(LIB, RUNTIME_JARS)])


def _compile(sources: list[Path], compile_jars: list[Path], classes: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise DriverError(
            "javac not found: the Java client is built from clients/java/ with a JDK "
            "(`make setup` installs openjdk-17-jdk-headless)"
        )
    shutil.rmtree(classes, ignore_errors=True)
    classpath = ":".join(str(p) for p in compile_jars)
    argv = [javac, "--release", "17", "-encoding", "UTF-8", "-d", str(classes)]
    proc = subprocess.run(
        [*argv, "-cp", classpath, *map(str, sources)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-8:])
        raise DriverError(f"javac failed on clients/java/: {tail}")


def java_command(classpath: str, label: str) -> list[str]:
    """Returns the command that runs one driver; label (its transactional id and
    incarnation) names the process, for a person reading `ps`."""
    java = shutil.which("java")
    if java is None:
        raise DriverError("java not found: the Java client needs a Java 17 runtime")
    return [
        java,
        *JVM_OPTIONS,
        f"-Dlog4j.configuration=file:{SOURCES / 'log4j.properties'}",
        f"-Dkafka-harness.client={label}",
        "-cp",
        classpath,
        MAIN_CLASS,
    ]


def clock_environment(clock_file: Path) -> dict[str, str]:
    """Takes a driver's clock file (made "+0" if missing). Returns the environment that
    has its JVM read the wall clock through libfaketime, offset by the seconds the file
    holds, read again within about two seconds; the monotonic clock stays true (the same
    settings as the nodes', compose/entrypoint.sh). Raises DriverError without libfaketime."""
    library = next((p for p in FAKETIME_LIBRARIES if Path(p).exists()), None)
    if library is None:
        raise DriverError(
            "libfaketime not found: a client clock fault needs Debian's libfaketime "
            "(`make setup` installs it)"
        )
    if not clock_file.exists():
        clock_file.write_text("+0\n")
    return {
        "LD_PRELOAD": library,
        "FAKETIME_TIMESTAMP_FILE": str(clock_file),
        "FAKETIME_CACHE_DURATION": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_FORCE_MONOTONIC_FIX": "0",
    }


def java_versions() -> dict[str, str]:
    """Returns the Java client's release (as its jar says) and the JVM's version, or
    "unknown" for what cannot be read."""
    found = {"kafka_clients": "unknown", "java": "unknown"}
    with contextlib.suppress(OSError, KeyError, zipfile.BadZipFile, DriverError):
        [jar] = jars(LIB, ("kafka-clients-",))
        with zipfile.ZipFile(jar) as z:
            text = z.read("kafka/kafka-version.properties").decode()
        if m := re.search(r"^version=(\S+)", text, re.MULTILINE):
            found["kafka_clients"] = m.group(1)
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        proc = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        if m := re.search(r'version "([^"]+)"', proc.stderr):
            found["java"] = m.group(1)
    return found


class Driver:
    """One running driver: requests in as JSON lines, replies read by a thread of their
    own so that every wait for one is bounded; its stderr copied to JVM_LOG."""

    def __init__(self, proc: subprocess.Popen[str], label: str) -> None:
        self._proc = proc
        self._label = label
        self._replies: queue.Queue[str | None] = queue.Queue()
        self._spent: str | None = None
        """Why no reply can be trusted any more (one came late, or none will come)."""
        assert proc.stdout is not None and proc.stderr is not None
        for target, stream in ((self._read_replies, proc.stdout), (self._copy_log, proc.stderr)):
            threading.Thread(target=target, args=(stream,), daemon=True, name=label).start()

    @classmethod
    def start(cls, config: dict[str, Any], label: str, timeout: float) -> Driver:
        """Builds the driver if needed, starts it and sends it config; returns it once it
        answered, within timeout. Raises DriverError, the process killed, when it did not."""
        command = java_command(ensure_driver(), label)
        config = dict(config)
        clock_file = config.pop(CLOCK_FILE_KEY, None)
        proc = subprocess.Popen(
            command,
            env=os.environ | clock_environment(Path(clock_file)) if clock_file else None,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
            start_new_session=True,  # a ^C at the terminal is the harness's to handle
        )
        driver = cls(proc, label)
        try:
            hello = driver.ask(config, timeout)
        except DriverError:
            driver.kill()
            raise
        if not hello.get("ready"):
            driver.kill()
            raise DriverError(f"the Java driver did not start: {hello}")
        return driver

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Sends one request; returns its reply. Raises DriverError when the driver is gone
        or has not answered within timeout seconds."""
        stdin = self._proc.stdin
        assert stdin is not None
        if self._spent is not None:  # a late reply must never answer a later request
            raise DriverError(self._spent)
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
        except (OSError, ValueError) as err:  # ValueError: stdin already closed
            raise DriverError(f"the Java driver is gone ({self._status()}): {err}") from err
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._spent = f"no answer from the Java driver within {timeout:g} s"
            raise DriverError(self._spent) from None
        if line is None:
            self._spent = f"the Java driver exited ({self._status()})"
            raise DriverError(self._spent)
        try:
            reply = json.loads(line)
        except ValueError as err:
            raise DriverError(f"the Java driver answered {line[:200]!r}") from err
        if not isinstance(reply, dict):
            raise DriverError(f"the Java driver answered {line[:200]!r}")
        return reply

    @property
    def exit_code(self) -> int | None:
        """Returns the process's exit code (-9 when killed), or None while it runs."""
        return self._proc.poll()

    def kill(self) -> None:
        """Kills the process at once (SIGKILL): nothing is closed, nothing is aborted."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._reap(5.0)

    def close(self, timeout: float) -> None:
        """Ends stdin, so that the driver closes its clients and exits; kills it after timeout."""
        if self._proc.poll() is None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                JVM_LOG.warning("java %s: did not exit within %g s: killed", self._label, timeout)
                self._proc.kill()
        self._reap(5.0)

    def _reap(self, timeout: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout)
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()

    def _status(self) -> str:
        code = self._proc.poll()
        return "still running" if code is None else f"exit code {code}"

    def _read_replies(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self._replies.put(line)
        finally:
            self._replies.put(None)
            stream.close()

    def _copy_log(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                JVM_LOG.info("java %s: %s", self._label, line.rstrip())
        finally:
            stream.close()
