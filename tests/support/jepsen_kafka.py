"""Histories written as Jepsen's Kafka tests write them (jepsen-io/jepsen,
jepsen/test/jepsen/tests/kafka_test.clj), checked as `harness check` checks a Jepsen
history.edn: the model guessed, the options asked, the warnings kept.

`o` is kafka_test.clj's shorthand op, an EDN map with :index and :time both `index`;
`op` one without them (kafka_test.clj's `h/history` numbers such ops by position). The
value is EDN text, as the test writes it (`"[[:send :x :a]]"`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.commands.check_file import Asked, Outcome, check_file
from history import Keyword


def o(index: int, process: int, type_: str, f: str, value: str) -> str:
    """kafka_test.clj's `o`: an op at index and time `index`, as an EDN line."""
    return (
        f"{{:index {index}, :time {index}, :process {process}, :type :{type_}, "
        f":f :{f}, :value {value}}}"
    )


def op(type_: str, f: str, value: str, **fields: int) -> str:
    """An op with only the fields given besides its type, f and value (`time`,
    `process`), as an EDN line."""
    more = "".join(f", :{name} {number}" for name, number in fields.items())
    return f"{{:type :{type_}, :f :{f}, :value {value}{more}}}"


def check_ops(folder: Path, *ops: str, **asked: Any) -> Outcome:
    """Takes a folder, ops as EDN lines and what `harness check` is asked (Asked's
    fields). Writes them as history.edn and returns its Outcome."""
    path = folder / "history.edn"
    path.write_text("".join(line + "\n" for line in ops), encoding="utf-8")
    return check_file(str(path), Asked(**asked), None)


def k(name: str) -> Keyword:
    """An EDN keyword, as a case holds a message written `:name`."""
    return Keyword(name)


def cases(outcome: Outcome, kind: str) -> list[dict[str, Any]]:
    """Takes a checked queue history's Outcome. Returns a kind's cases (none when not
    found)."""
    assert "malformed" not in outcome and "crash" not in outcome, outcome
    entry = outcome["kinds"][kind]
    assert entry["count"] == len(entry["cases"]), "more cases than the result keeps"
    return list(entry["cases"])


def found(outcome: Outcome) -> dict[str, int]:
    """Takes a checked queue history's Outcome. Returns every kind found, with its count."""
    assert "malformed" not in outcome and "crash" not in outcome, outcome
    return {kind: entry["count"] for kind, entry in outcome["kinds"].items() if entry["count"]}
