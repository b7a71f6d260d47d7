"""The results folder of a run: results/<test>/<YYYYmmddTHHMMSS>/ with test.json,
history.jsonl, results.json, plots and report.html; results/latest points at the newest.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.spec import TestSpec


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


def versions(kafka_version: str) -> dict[str, str]:
    """Returns the versions a result depends on: Kafka, Python, librdkafka, the harness."""
    found = {"kafka": kafka_version, "python": platform.python_version()}
    try:
        import confluent_kafka

        found["librdkafka"] = confluent_kafka.libversion()[0]
        found["confluent_kafka"] = confluent_kafka.version()[0]
    except ImportError:
        found["librdkafka"] = "absent"
    try:
        found["harness"] = metadata.version("kafka-harness")
    except metadata.PackageNotFoundError:
        found["harness"] = "unknown"
    return found


def write_test_json(folder: Path, spec: TestSpec, started: float) -> None:
    """Writes test.json: the spec, the versions and when the run started."""
    body = {
        "spec": spec.to_json(),
        "versions": versions(spec.kafka_version),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
    }
    write_json(folder / "test.json", body)


def add_cluster_facts(folder: Path, facts: dict[str, Any]) -> None:
    """Adds the cluster's facts to folder/test.json under "cluster"."""
    path = folder / "test.json"
    write_json(path, json.loads(path.read_text()) | {"cluster": facts})


def write_json(path: Path, body: Any) -> None:
    """Writes body as indented JSON, through a temporary file so readers never see half."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(_finite(body), indent=2, default=_jsonable) + "\n")
    tmp.replace(path)


def _finite(value: Any) -> Any:
    # JSON has no NaN or infinity; a stray one would make the file unreadable elsewhere.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)
