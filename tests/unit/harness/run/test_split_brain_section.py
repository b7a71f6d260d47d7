"""A NATS run's `split-brain` section (harness/run/split_brain.py): the servers' copies
that NatsDb.stream_copies read, compared, named by their stream, said in the run's
explanation when they diverge; a comparison that crashes is unknown, never a verdict."""

from __future__ import annotations

from typing import Any

from harness.report.explain import explain
from harness.run.split_brain import split_brain_section


def read(copies: dict[str, dict[int, str]]) -> dict[str, Any]:
    return {"stream": "store-7567", "copies": copies, "errors": {}}


def test_diverging_copies_make_the_run_invalid_and_say_so() -> None:
    section = split_brain_section(read({"n1": {1: "5", 2: "6"}, "n2": {1: "5", 2: "9"}}))
    assert section["valid"] is False and section["stream"] == "store-7567"
    said = explain({"valid": False, "split-brain": section}, {"db": "nats"})
    assert said[0].startswith("Split brain: after the heal the servers' copies of stream")


def test_agreeing_copies_say_nothing_and_a_crash_is_unknown() -> None:
    section = split_brain_section(read({"n1": {1: "5"}, "n2": {1: "5"}}))
    assert section["valid"] is True
    said = explain({"valid": True, "split-brain": section}, {"db": "nats"})
    assert not any("Split brain" in s for s in said)
    assert split_brain_section({"copies": None, "errors": {}})["valid"] == "unknown"
