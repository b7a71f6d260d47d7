"""Tests of the pure parts of the benchmark beside Porcupine (bench/bench_porcupine.py): the
guard's comparison with the committed figures, the comparison of verdicts, and the seeded
register histories of bench/hard_register.py (the same for a seed, well formed, and valid
as `harness check` reads them). Nothing here is timed, and nothing needs Go."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from bench_porcupine import disagreements
from hard_register import Shape, register_log, write_register_log
from porcupine_guard import Committed, load_guard, regressions, save_guard

LINE = re.compile(
    r"INFO  jepsen\.util - (\d+)\t:(invoke|ok|fail|info)\t:(read|write|cas)\t"
    r"(nil|\d+|\[\d+ \d+\]|:timed-out)"
)


def committed(**figures: float) -> Committed:
    return Committed(figures, 0.25, "a test")


def test_guard_passes_figures_up_to_a_quarter_worse_and_better_ones() -> None:
    assert regressions(committed(etcd=2.0, kv=0.5), {"etcd": 2.5, "kv": 0.1}) == []


def test_guard_names_each_figure_worse_by_more_than_a_quarter() -> None:
    problems = regressions(
        committed(etcd=2.0, kv=0.5, hard=1.0), {"etcd": 2.6, "kv": 0.5, "hard": 9}
    )
    assert [p.split(":")[0] for p in problems] == ["etcd", "hard"]
    assert "2.6 against 2 committed, +30%" in problems[0]


def test_guard_names_figures_only_one_side_has() -> None:
    problems = regressions(committed(etcd=2.0, kv=0.5), {"etcd": 2.0, "startup-help": 0.1})
    assert problems == [
        "kv: committed 0.5, not measured",
        "startup-help: measured 0.1, no committed figure",
    ]


def test_guard_file_round_trips_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    path = tmp_path / "guard.json"
    save_guard(Committed({"kv": 0.123456, "etcd": 2.0}, 0.25, "quiet"), path)
    assert load_guard(path) == Committed({"etcd": 2.0, "kv": 0.123}, 0.25, "quiet")
    path.write_text(json.dumps({"figures": {"kv": 0}, "tolerance": 0.25, "measured": ""}))
    with pytest.raises(ValueError, match="positive"):
        load_guard(path)
    path.write_text(json.dumps({"figures": [], "measured": ""}))
    with pytest.raises(ValueError, match="not a guard file"):
        load_guard(path)


def test_the_committed_guard_file_loads() -> None:
    guard = load_guard()
    assert guard.tolerance == 0.25
    assert {"etcd", "kv", "hard", "startup-help", "startup-check"} <= set(guard.figures)


def test_verdicts_differ_only_valid_against_invalid_or_one_side_missing() -> None:
    ours = {"a": "valid", "b": "invalid", "c": "unknown", "d": "valid"}
    theirs = {"a": "valid", "b": "valid", "c": "invalid", "e": "valid"}
    assert disagreements(ours, theirs) == [
        "b: Porcupine valid, harness check invalid",
        "d: Porcupine not checked, harness check valid",
        "e: Porcupine valid, harness check not checked",
    ]


def test_register_log_is_the_same_for_a_seed_and_differs_across_seeds() -> None:
    shape = Shape(ops=300)
    assert register_log(shape, 7) == register_log(shape, 7)
    assert register_log(shape, 7) != register_log(shape, 8)


def test_register_log_is_well_formed() -> None:
    shape = Shape(ops=3000)
    lines = register_log(shape, 2)
    records = [LINE.fullmatch(line) for line in lines]
    assert all(records), [line for line, r in zip(lines, records, strict=True) if not r][:3]
    open_ops: dict[int, str] = {}
    crashed: set[int] = set()
    kinds: Counter[str] = Counter()
    for record in records:
        assert record is not None
        process, kind, f, value = int(record[1]), record[2], record[3], record[4]
        kinds[kind] += 1
        assert process not in crashed, "a crashed client comes back as a new process"
        if kind == "invoke":
            assert process not in open_ops
            open_ops[process] = f
            continue
        assert open_ops.pop(process) == f
        if kind == "fail":
            assert f == "cas", "only a cas that found another value fails"
        if kind == "info":
            crashed.add(process)
            assert value == ":timed-out"
        elif f == "read" and value != "nil":
            assert 0 <= int(value) < shape.values
    assert not open_ops
    assert kinds["invoke"] == shape.ops == kinds["ok"] + kinds["fail"] + kinds["info"]
    assert 0.05 < kinds["info"] / shape.ops < 0.15  # about the shape's 10% timed out
    assert kinds["fail"] > 0


def test_a_small_register_log_is_valid_for_harness_check(tmp_path: Path) -> None:
    path = tmp_path / "register.log"
    write_register_log(path, Shape(ops=200, concurrency=4), 3)
    done = subprocess.run(
        [sys.executable, "-m", "harness", "check", "--jobs", "1", "--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    outcome = json.loads(done.stdout)
    assert (done.returncode, outcome["valid"], outcome["format"]) == (0, True, "jepsen-log")
    assert outcome["model"] == "cas-register"
