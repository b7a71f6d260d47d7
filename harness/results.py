"""The results folders: a run's folder results/<test>/<YYYYmmddTHHMMSS>/ (test.json,
history.jsonl, results.json, plots, report.html; results/latest points at the newest)
made and written, and the run folders under a results directory found and read back.

A folder that cannot be analysed is set aside with the reason, never fatal: a name that
is not UTF-8, no test.json, no history, no results.json (still running, or stopped
before its check), or a test.json or results.json not of the shape that is read.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness.verdicts import DURATION
from history import jsonable

if TYPE_CHECKING:  # a run's spec, which loads every workload's options: only for runs
    from harness.spec import TestSpec

TEST, HISTORY, RESULTS = "test.json", "history.jsonl", "results.json"
LOST_ACKS_SECTIONS = ("lost-acks", "lost_acks")
"""The results.json sections in checkers.lost_acks' shape, by the workloads that write one."""


def new_run_folder(root: Path, name: str, now: float | None = None) -> Path:
    """Takes the results root and a test name. Creates and returns a fresh folder for one
    run, named by the local time (suffixed when two runs start in the same second)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now))
    base = root / name
    base.mkdir(parents=True, exist_ok=True)
    for n in range(1000):
        folder = base / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"no free run folder under {base}")


def point_latest(root: Path, folder: Path) -> None:
    """Makes root/latest a relative link to folder (replacing any older link atomically)."""
    link = root / "latest"
    tmp = root / f".latest-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    tmp.symlink_to(os.path.relpath(folder, root))
    tmp.replace(link)


def versions(kafka_version: str, client: str = "librdkafka") -> dict[str, str]:
    """Returns the versions a result depends on: Kafka, Python, confluent-kafka and its
    librdkafka, the harness, and with the Java client its release and the JVM's."""
    import platform  # only when a run starts

    found = {"kafka": kafka_version, "python": platform.python_version()}
    if client == "java":
        from workloads.java_driver import java_versions

        found |= java_versions()
    try:
        import confluent_kafka

        found["librdkafka"] = confluent_kafka.libversion()[0]
    except ImportError:
        found["librdkafka"] = "absent"
    # The package's own record: confluent_kafka.version() is a plain string in 2.16 (a
    # tuple before), whose first item was "2".
    from importlib import metadata  # email's parser and more: only when a run starts

    for name, package in (("confluent_kafka", "confluent-kafka"), ("harness", "kafka-harness")):
        try:
            found[name] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[name] = "unknown"
    return found


def write_test_json(folder: Path, spec: TestSpec, started: float, command: str = "") -> None:
    """Writes test.json: the spec, the versions, when the run started and, when given,
    the command that runs this test again (harness.commands.run.rerun_command)."""
    body = {
        "spec": spec.to_json(),
        "versions": versions(spec.cluster.kafka_version, spec.queue.client),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
    }
    if command:
        body["command"] = command
    write_json(folder / TEST, body)


def utc_stamp(seconds: float) -> str:
    """Takes a Unix time. Returns it in ISO 8601, UTC, to the millisecond, as the brokers'
    logs can be lined up with it: 2026-11-26T00:10:03.123Z."""
    at = datetime.fromtimestamp(seconds, UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def add_to_test_json(folder: Path, name: str, facts: Any) -> None:
    """Adds facts learnt during the run (the cluster's, say) to folder/test.json under name."""
    path = folder / TEST
    write_json(path, json.loads(path.read_text()) | {name: facts})


def write_json(path: Path, body: Any) -> None:
    """Writes body as indented JSON, through a temporary file so readers never see half."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(to_json(body, indent=2) + "\n")
    tmp.replace(path)


def to_json(body: Any, indent: int | None = None) -> str:
    """Returns body as JSON text for a person or a program to read: sets as sorted lists,
    NaN and infinities as null, and anything else JSON has no word for as its repr."""
    return json.dumps(_finite(body), indent=indent, default=_jsonable)


_LEAVES: Final = frozenset({str, int, bool, type(None)})


def _finite(value: Any) -> Any:
    # JSON has no NaN or infinity; a stray one would make the file unreadable elsewhere.
    # A result has tens of thousands of values (a counterexample's graph): the exact
    # classes are told first, a list of leaves copied whole, subclasses as isinstance has
    # them after.
    # A leaf inside a list or a dict is taken as it is, without a call of its own.
    cls = value.__class__
    if cls in _LEAVES:
        return value
    if cls is list or cls is tuple:
        if _LEAVES.issuperset(map(type, value)):
            return list(value)
        return [v if v.__class__ in _LEAVES else _finite(v) for v in value]
    if cls is dict:
        return {
            k if k.__class__ is str else str(k): v if v.__class__ in _LEAVES else _finite(v)
            for k, v in value.items()
        }
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    try:
        return jsonable(value)  # sets, as the history writer writes them
    except TypeError:  # results are read, not replayed: a value's repr says what it was
        return repr(value)


RUN_FILES = (TEST, HISTORY, RESULTS)
IN_PROGRESS_S = 600.0
"""A history written to this recently, with no results.json yet, is a run still going."""


@dataclass(frozen=True, slots=True)
class Broken:
    """A run folder left out of the analysis, and why."""

    run: str
    reason: str

    @property
    def name(self) -> str:
        """The run id as text to print (see printable)."""
        return printable(self.run)


def printable(run: str) -> str:
    """Takes a run id as the file system gave it. Returns it as text that can be written
    anywhere: each byte of a name that is not UTF-8 as `\\xff`."""
    return run.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True, slots=True)
class Listing:
    """The run folders with all three files (by run id, `<test>/<stamp>`), and the rest."""

    root: Path
    complete: list[str]
    broken: list[Broken]

    def files(self, name: str) -> list[str]:
        """Returns the path of file `name` in every complete run folder as Spark reads a
        path: absolute (relative, a run named `x:y` would be a URL of scheme `x`), and a
        glob pattern matching only itself."""
        return [glob_literal(str(self.root.resolve() / run / name)) for run in self.complete]


GLOB_CHARACTERS = re.compile(r"([\\\[\]{}*?])")


def glob_literal(path: str) -> str:
    """Takes a path. Returns the Hadoop glob pattern (what Spark takes for a path) that
    matches that path only: `[`, `]`, `{`, `}`, `*`, `?` and `\\` escaped."""
    return GLOB_CHARACTERS.sub(r"\\\1", path)


def run_folders(root: Path, skip: Path | None = None) -> list[str]:
    """Takes a results directory. Returns the run ids of its run folders (a folder two
    levels down holding any run file), sorted; symbolic links and `skip` are left out."""
    found = []
    skipped = skip.resolve() if skip is not None else None
    for test in _subdirs(root):
        if skipped is not None and test.resolve() == skipped:
            continue
        for run in _subdirs(test):
            if any((run / name).is_file() for name in RUN_FILES):
                found.append(f"{test.name}/{run.name}")
    return sorted(found)


def _subdirs(folder: Path) -> list[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
    ]


def missing_reason(folder: Path, now: float) -> str | None:
    """Takes a run folder. Returns why it cannot be analysed from its files' presence
    alone, or None when test.json, history.jsonl and results.json are all there."""
    has = {name: (folder / name).is_file() for name in RUN_FILES}
    if has[RESULTS] and has[HISTORY] and has[TEST]:
        return None
    if not has[TEST]:
        return "no test.json"
    if not has[HISTORY]:
        return "no history.jsonl (the run stopped before its workload started)"
    age = now - (folder / HISTORY).stat().st_mtime
    if age < IN_PROGRESS_S:
        return f"in progress (history written {age:.0f} s ago, no results.json yet)"
    return "no results.json (the run stopped before its check)"


@dataclass(frozen=True, slots=True)
class Required:
    """A field of a shape that must be there, and not null; any other may be missing."""

    shape: Any


LONG = 2**63
"""Spark reads an integer field as 64 bits: a larger one would not be read."""
KINDS = {str: "a string", int: "an integer", float: "a number"}
COUNTS = ("ack_count", "lost_count", "recovered_count", "unexpected_count", "duplicated_count")
TEST_SHAPE: dict[str, Any] = {
    "spec": Required(
        {
            **dict.fromkeys(("name", "store", "kafka_config", "kafka_version", "metadata"), str),
            "workload": Required(str),
            "nemesis": [str],
            "seed": int,
            "concurrency": int,
            "time_limit": float,
            "rate": float,
        }
    ),
    "versions": dict.fromkeys(
        ("kafka", "python", "librdkafka", "confluent_kafka", "kafka_clients", "harness"), str
    ),
    "started": str,
}
"""What the index and the analysis read of test.json: a shape is a type, a dict of
fields (others are not looked at), a list of one shape, or a tuple of the values allowed."""
RESULTS_SHAPE: dict[str, Any] = {
    "valid": Required((True, False, "unknown")),
    "stats": {},
    "linearizable": {"keys": int, "failures": [{}]},
    "nemesis": {"windows": [{"start": float, "stop": float}]},
    DURATION: {"planned_s": float, "ran_s": float, "complete": (True, False), "reason": str},
    **dict.fromkeys(LOST_ACKS_SECTIONS, dict.fromkeys(COUNTS, int)),
    "release": {"transactions": {"protocol": str}},
}
"""What the index and the analysis read of results.json."""


def read_shaped(path: Path, shape: dict[str, Any]) -> tuple[Any, str | None]:
    """Takes a JSON file and the shape it must have. Returns (its body, None) when it has
    it, else (None, why not: not readable, not JSON, a field of the wrong kind)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        return None, f"{path.name} cannot be read ({err.strerror})"
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json reads
        return None, f"{path.name} is not JSON"
    found = _misfit(body, shape, "")
    if found is None:
        return body, None
    where, complaint = found
    return None, f"{path.name}: {where} {complaint}" if where else f"{path.name} {complaint}"


def _misfit(value: Any, shape: Any, where: str) -> tuple[str, str] | None:
    # Returns (where, what is wrong there) for the first field that does not fit.
    if isinstance(shape, dict):
        return _object_misfit(value, shape, where)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return where, "is not a list"
        return next(
            (m for i, v in enumerate(value) if (m := _misfit(v, shape[0], f"{where}[{i}]"))),
            None,
        )
    if isinstance(shape, tuple):
        # By type too: 1 == True in Python, but 1 is no validity.
        if any(type(value) is type(v) and value == v for v in shape):
            return None
        return where, "is not " + " or ".join(json.dumps(v) for v in shape)
    return None if _is(value, shape) else (where, f"is not {KINDS[shape]}")


def _object_misfit(value: Any, fields: dict[str, Any], where: str) -> tuple[str, str] | None:
    if not isinstance(value, dict):
        return where, "is not a JSON object"
    for name, field in fields.items():
        inner = f"{where}.{name}" if where else name
        required = isinstance(field, Required)
        if value.get(name) is None:
            if required:
                return inner, "is missing"
            continue
        misfit = _misfit(value[name], field.shape if required else field, inner)
        if misfit is not None:
            return misfit
    return None


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return type(value) is int and -LONG <= value < LONG  # bool is no integer here
    if kind is float:
        return type(value) is float or (type(value) is int and -LONG <= value < LONG)
    return isinstance(value, kind)


def list_runs(root: Path, skip: Path | None = None) -> Listing:
    """Takes a results directory (and a folder under it to leave out, the output's).
    Returns its run folders split into complete and broken."""
    now = time.time()
    complete, broken = [], []
    for run in run_folders(root, skip):
        reason = run_problem(root, run, now)
        if reason is None:
            complete.append(run)
        else:
            broken.append(Broken(run, reason))
    return Listing(root, complete, broken)


def run_problem(root: Path, run: str, now: float) -> str | None:
    """Takes a results directory and a run id. Returns why the run folder cannot be read
    (its name, a file missing, a file of the wrong shape), or None when it can."""
    if printable(run) != run:
        # Spark, py4j and every page take text; such a folder cannot be named there.
        return "the folder name is not UTF-8"
    folder = root / run
    return (
        missing_reason(folder, now)
        or read_shaped(folder / TEST, TEST_SHAPE)[1]
        or read_shaped(folder / RESULTS, RESULTS_SHAPE)[1]
    )
