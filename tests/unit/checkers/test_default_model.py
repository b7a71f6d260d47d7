"""A history of Jepsen's micro-op sends alone (f send, value [[send, key, value] ...]) is a
queue history, as JSON lines or EDN, one micro-op or two (which history.jepsen reads as
jepsen.independent's [key value]): `harness check` guesses the queue model for it, never
the set model, which judged nothing in it and said unknown. A set history's sends of
plain values stay the set model's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkers import default_model
from history import load
from tests.unit.harness.commands.test_check import run


def _sends(micro_ops: int) -> list[dict[str, Any]]:
    events = []
    for i in range(3):
        asked = [["send", p, 10 * i + p] for p in range(micro_ops)]
        acked = [["send", p, [i, 10 * i + p]] for p in range(micro_ops)]
        events.append({"process": 0, "type": "invoke", "f": "send", "value": asked})
        events.append({"process": 0, "type": "ok", "f": "send", "value": acked})
    return [e | {"index": k, "time": k} for k, e in enumerate(events)]


def _edn(value: Any) -> str:
    if isinstance(value, list):
        return "[" + " ".join(_edn(v) for v in value) + "]"
    return ":send" if value == "send" else json.dumps(value)


def _written(tmp_path: Path, micro_ops: int, fmt: str) -> Path:
    events = _sends(micro_ops)
    path = tmp_path / f"history.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
    else:
        path.write_text(
            "".join(
                f"{{:index {e['index']}, :time {e['time']}, :type :{e['type']}, :process 0, "
                f":f :send, :value {_edn(e['value'])}}}\n"
                for e in events
            )
        )
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "edn"])
@pytest.mark.parametrize("micro_ops", [1, 2])
def test_micro_op_sends_alone_are_a_queue_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], micro_ops: int, fmt: str
) -> None:
    path = _written(tmp_path, micro_ops, fmt)
    assert default_model(load(path)) == "queue"
    code, out, _ = run(capsys, str(path), "--json")
    result = json.loads(out)
    assert result["model"] == "queue" and result["acknowledged"] == 3 * micro_ops
    # Judged as the queue checker judges sends no poll read (checkers/queue/policy.py).
    assert (code, result["valid"]) == (1, False) and result["kinds"]["unseen"]["count"] > 0


def test_sends_of_plain_values_stay_a_set_history(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    events = [
        {"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send", "value": 1},
        {"index": 1, "time": 1, "process": 0, "type": "ok", "f": "send", "value": 1},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert default_model(load(path)) == "set"
