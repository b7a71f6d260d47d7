"""`harness run`'s options: bad ones exit 254 with one line before anything starts; the
spec carries every option; the generators make unique values per key."""

from __future__ import annotations

import itertools
import random

import pytest

from harness.cli import build_parser, main
from harness.run_cli import spec_from_args
from workloads.kv import kv_ops
from workloads.register import register_ops


@pytest.mark.parametrize(
    "argv",
    [
        ["--nemesis", "bogus"],
        ["--nemesis", ""],
        ["--name", "bad/name"],
        ["--cluster-name", "-x"],
        ["--rate", "0"],
        ["--time-limit", "-1"],
        ["--store", "nope"],
        ["--workload", "queue2"],
        ["--concurrency", "1.5"],
    ],
)
def test_bad_options_exit_254_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["run", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 254
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error" in err[-1]


def test_spec_carries_every_option() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "--workload",
            "register",
            "--store",
            "local-read",
            "--nemesis",
            "kill-leader,pause-random",
            "--kafka-config",
            "unsafe",
            "--time-limit",
            "12",
            "--keys",
            "3",
            "--partitions",
            "2",
            "--leave-cluster-running",
        ]
    )
    spec = spec_from_args(args, seed=7)
    assert spec.name == "register-local-read-kill-leader+pause-random"
    assert spec.nemesis == ("kill-leader", "pause-random")
    assert (spec.kafka_config, spec.time_limit, spec.keys, spec.partitions) == (
        "unsafe",
        12.0,
        3,
        2,
    )
    assert spec.leave_cluster_running and spec.seed == 7
    assert spec.to_json()["nemesis"] == ["kill-leader", "pause-random"]
    everything = spec_from_args(build_parser().parse_args(["run", "--nemesis", "all"]), seed=1)
    assert everything.name == "kv-linearizable-9-faults"


@pytest.mark.parametrize("ops", [kv_ops, register_ops])
def test_written_values_are_unique_per_key(ops: object) -> None:
    seen: set[tuple[int, int]] = set()
    for op in itertools.islice(ops(random.Random(3), 4), 5000):  # type: ignore[operator]
        value = op["value"]
        if op["f"] == "put-if-absent":
            continue  # repeats values on purpose (workloads/kv.py)
        new = value if isinstance(value, int) else value[1] if isinstance(value, list) else None
        if new is not None:
            assert (op["key"], new) not in seen
            seen.add((op["key"], new))
        assert 0 <= op["key"] < 4
    assert len(seen) > 1000
