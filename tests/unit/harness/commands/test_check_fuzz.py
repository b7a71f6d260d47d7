"""Fuzz tests of `harness check` over the three readers: whatever the input (any bytes, any
JSON or EDN structure, any Jepsen log line; a consumer group's, a share group's or Jepsen's
micro-op transactions' history, mostly well formed, beside its run's test.json), the exit
code is 0, 1, 2 or 254, never a traceback, and never 1 (invalid) for input the checker
could not parse.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from history import load

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5)
    | st.sampled_from(["\ud800", "x" * 300, "a/b", ""])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=6,
)
SMALL = st.none() | st.integers(0, 3)
# Each family's operations, with the values they take; a history mostly keeps to one.
FAMILIES: list[dict[str, st.SearchStrategy[Any]]] = [
    {"read": SMALL, "write": SMALL, "cas": st.lists(SMALL, min_size=2, max_size=2)},
    {
        "get": SMALL,
        "put": SMALL,
        "remove": st.booleans(),
        "put-if-absent": st.tuples(SMALL, st.booleans()).map(list),
    },
    {"add": st.integers(0, 3), "read": st.lists(st.integers(0, 3), max_size=4)},
    {"append": st.text("xy ", max_size=3), "get": st.none() | st.text("xy ", max_size=4)},
]
OTHER_FS = st.sampled_from(["read", "write", "cas", "add", "get", "append", "dequeue"])
COMPLETIONS = st.sampled_from(["ok", "ok", "fail", "info"])


def mostly(draw: st.DrawFn, good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> Any:
    """Draws from `good` 39 times in 40, else from `bad`."""
    return draw(bad) if draw(st.integers(0, 39)) == 0 else draw(good)


@st.composite
def events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Histories that are mostly well formed (each op's invoke, then its completion, in
    time order; small values) with values, fields and orders that sometimes are not."""
    timed: list[tuple[Any, int, dict[str, Any]]] = []
    family = draw(st.sampled_from(FAMILIES))
    for process in range(draw(st.integers(0, 8))):
        f = mostly(draw, st.sampled_from(sorted(family)), OTHER_FS | VALUES)
        small = family.get(f, SMALL) if isinstance(f, str) else SMALL
        key = mostly(draw, st.none() | st.integers(0, 1), VALUES)
        start = draw(st.integers(0, 20))
        times = (start, start + draw(st.integers(0, 5)))
        for n, kind in enumerate(("invoke", mostly(draw, COMPLETIONS, VALUES | st.just("invoke")))):
            event = {"process": mostly(draw, st.just(process), VALUES), "type": kind, "f": f}
            event["value"] = mostly(draw, small, VALUES)
            event["time"] = mostly(draw, st.just(times[n]), VALUES)
            if key is not None:
                event["key"] = key
            if draw(st.integers(0, 39)) == 0:
                event.pop(draw(st.sampled_from(sorted(event))))
            timed.append((times[n], n, event))
    timed.sort(key=lambda t: t[:2])
    return [event for _, _, event in timed]


def to_edn(value: Any) -> str:
    """EDN text for any decoded value, NaN and infinities included."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "##NaN" if math.isnan(value) else ("##Inf" if value > 0 else "##-Inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + " ".join(to_edn(v) for v in value) + "]"
    return "{" + ", ".join(f"{to_edn(k)} {to_edn(v)}" for k, v in value.items()) + "}"


def edn_event(event: dict[str, Any]) -> str:
    fields = []
    for name, value in event.items():
        keyword = name in ("type", "f") and isinstance(value, str) and re.fullmatch(r"\w+", value)
        fields.append(f":{name} {':' + value if keyword else to_edn(value)}")
    return "{" + ", ".join(fields) + "}"


def log_line(event: dict[str, Any]) -> str:
    parts = [str(event.get(k, "")) for k in ("process", "type", "f")]
    return f"INFO  jepsen.util - {parts[0]}\t:{parts[1]}\t:{parts[2]}\t{to_edn(event.get('value'))}"


def check_exits_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes) -> None:
    path = tmp_path / "history"
    path.write_bytes(data)
    argv = ["check", str(path), "--time-limit", "5", "--jobs", "1", "--out", str(tmp_path)]
    try:
        code = main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2, 254), (code, err)
    assert "Traceback" not in err + out
    if code == 254:
        assert re.fullmatch(rf"{re.escape(str(path))}:\d+: [^\n]+\n", err), err
        assert out == ""
    if code == 1:
        assert out.startswith("INVALID")
        load(path)  # it was parsed: an invalid verdict stands on a readable history


@FUZZ
@given(data=st.binary(max_size=400))
def test_any_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes) -> None:
    check_exits_cleanly(tmp_path, capsys, data)


@FUZZ
@given(
    history=events(), noise=st.integers(0, 9).flatmap(lambda n: VALUES if n == 0 else st.just(None))
)
def test_any_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], history: list[Any], noise: Any
) -> None:
    lines = [json.dumps(x) for x in history] + ([] if noise is None else [json.dumps(noise)])
    check_exits_cleanly(tmp_path, capsys, "\n".join(lines).encode())


@FUZZ
@given(history=events(), as_vector=st.booleans(), comment=st.booleans())
def test_any_edn(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    history: list[Any],
    as_vector: bool,
    comment: bool,
) -> None:
    text = "\n".join(edn_event(e) for e in history)
    text = f"[{text}]" if as_vector else text
    text = text + "\n; the end" if comment else text
    check_exits_cleanly(tmp_path, capsys, text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(history=events(), tail=st.none() | st.text(max_size=20))
def test_any_jepsen_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], history: list[Any], tail: str | None
) -> None:
    text = "\n".join(log_line(e) for e in history)
    text += "" if tail is None else "\nINFO  jepsen.util - 0 " + tail
    check_exits_cleanly(tmp_path, capsys, text.encode("utf-8", "surrogatepass"))


# --- the queue families: consumer groups, share groups, micro-op transactions -----------

PARTITION = st.integers(0, 2) | st.sampled_from(["0", "1", "00"])
OFFSET = st.integers(0, 4)
MONO = st.integers(10**9, 10**9 + 50)
FamilyOp = tuple[str, Any, Any, dict[str, Any], Any]
"""One op of a family: its f, invoke value, completion value, completion fields, key."""


def _records(draw: st.DrawFn) -> list[Any]:
    return [
        [draw(OFFSET), mostly(draw, st.integers(0, 6), VALUES)]
        for _ in range(draw(st.integers(0, 3)))
    ]


@st.composite
def group_ops(draw: st.DrawFn) -> list[FamilyOp]:
    """A consumer group's ops as workloads/group_log.py records them: sends, polls with
    rebalance callbacks, auto-commit reports and first-record times, commits."""
    ops: list[FamilyOp] = []
    for _ in range(draw(st.integers(0, 8))):
        f = draw(st.sampled_from(["send", "poll", "poll", "commit"]))
        done: dict[str, Any] = {"member": mostly(draw, st.sampled_from(["m0", "m1"]), VALUES)}
        if f == "send":
            message = draw(st.integers(0, 6))
            key = mostly(draw, PARTITION, VALUES)
            ops.append(
                ("send", message, mostly(draw, st.just([draw(OFFSET), message]), VALUES), {}, key)
            )
            continue
        if draw(st.booleans()):
            kinds = st.sampled_from(["assigned", "revoked", "lost"])
            entry = {
                "type": mostly(draw, kinds, VALUES),
                "partitions": mostly(draw, st.lists(st.integers(0, 2), unique=True), VALUES),
                "mono-ns": mostly(draw, MONO, VALUES),
            }
            done |= {"group-log": [entry], "mono-ns": mostly(draw, MONO, VALUES)}
        if draw(st.integers(0, 5)) == 0:
            report = {"offsets": {"0": mostly(draw, OFFSET, VALUES)}, "mono-ns": draw(MONO)}
            done |= {"auto-commits": [report], "mono-ns": draw(MONO)}
        if f == "poll":
            value = mostly(draw, st.just({str(draw(PARTITION)): _records(draw)}), VALUES)
            if draw(st.booleans()):
                done["first-record-ns"] = mostly(draw, MONO, VALUES)
        else:
            value = mostly(draw, st.dictionaries(PARTITION.map(str), OFFSET, max_size=2), VALUES)
        ops.append((f, None, value, done, None))
    return ops


@st.composite
def share_ops(draw: st.DrawFn) -> list[FamilyOp]:
    """A share group's ops as workloads/share_client.py records them: sends, and polls and
    drains of rounds of deliveries, acknowledgements and commits."""
    ops: list[FamilyOp] = []
    for _ in range(draw(st.integers(0, 6))):
        f = draw(st.sampled_from(["send", "poll", "poll", "drain"]))
        if f == "send":
            message = draw(st.integers(0, 6))
            key = mostly(draw, PARTITION, VALUES)
            ops.append(
                ("send", message, mostly(draw, st.just([draw(OFFSET), message]), VALUES), {}, key)
            )
            continue
        rounds = []
        for _ in range(draw(st.integers(0, 2))):
            delivery = [
                draw(PARTITION),
                draw(OFFSET),
                draw(st.integers(0, 6)),
                draw(st.integers(1, 4)),
            ]
            delivery = mostly(draw, st.just(delivery), VALUES)
            ack = mostly(
                draw,
                st.just(
                    [
                        delivery[0] if isinstance(delivery, list) and delivery else 0,
                        draw(OFFSET),
                        draw(st.sampled_from(["accept", "release", "reject"])),
                    ]
                ),
                VALUES,
            )
            began = draw(MONO)
            r = {
                "began-ns": mostly(draw, st.just(began), VALUES),
                "polled-ns": began + 1,
                "deliveries": [delivery],
                "acks": [ack],
                "acked-ns": began + 2,
                "committed-ns": began + 3,
                "committed": mostly(draw, st.just({"0": None, "1": None}), VALUES),
            }
            if draw(st.integers(0, 3)) == 0:
                r["commit-error"] = "KafkaError: _TIMED_OUT"
            rounds.append(mostly(draw, st.just(r), VALUES))
        done = {"member": f"c{draw(st.integers(0, 2))}", "mono-ns": 10**9 + 100}
        ops.append((f, None, mostly(draw, st.just(rounds), VALUES), done, None))
    return ops


@st.composite
def txn_ops(draw: st.DrawFn) -> list[FamilyOp]:
    """Jepsen's micro-op ops (kafka.clj): f send, poll or txn of [send k v] and [poll]
    micro-ops, completed in place, sometimes wrongly."""
    ops: list[FamilyOp] = []
    for _ in range(draw(st.integers(0, 6))):
        asked, done = [], []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.booleans()):
                p, m = draw(PARTITION), draw(st.integers(0, 6))
                asked.append(["send", p, m])
                done.append(["send", p, mostly(draw, st.just([draw(OFFSET), m]), VALUES)])
            else:
                asked.append(["poll"])
                done.append(["poll", {str(draw(st.integers(0, 2))): _records(draw)}])
        f = draw(st.sampled_from(["txn", "send", "poll"]))
        ops.append((f, asked, mostly(draw, st.just(done), VALUES), {}, None))
    return ops


@st.composite
def family_history(draw: st.DrawFn, family: str) -> list[dict[str, Any]]:
    """A family's ops as events, each op on its own process, in time order, completions
    ok mostly."""
    ops = draw({"group": group_ops(), "share": share_ops(), "txn": txn_ops()}[family])
    timed = []
    for process, (f, asked, value, extra, key) in enumerate(ops):
        start = draw(st.integers(0, 20))
        keyed = {} if key is None else {"key": key}
        invoke = {"process": process, "type": "invoke", "f": f, **keyed, "value": asked}
        kind = mostly(draw, COMPLETIONS, VALUES)
        done = {"process": process, "type": kind, "f": f, **keyed, "value": value, **extra}
        timed += [(start, 0, invoke), (start + draw(st.integers(0, 5)), 1, done)]
    timed.sort(key=lambda t: t[:2])
    return [e | {"index": i, "time": t} for i, (t, _, e) in enumerate(timed)]


FAMILY_SPECS: dict[str, dict[str, Any]] = {
    "group": {"workload": "queue", "consumer_group": True, "auto_commit": False},
    "share": {"workload": "share", "delivery_limit": 3},
    "txn": {"workload": "queue", "consumer_group": False, "txn": True},
}


@FUZZ
@given(
    data=st.data(),
    family=st.sampled_from(sorted(FAMILY_SPECS)),
    edn=st.booleans(),
    twice=st.booleans(),
)
def test_any_group_share_or_transaction_history(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    data: st.DataObject,
    family: str,
    edn: bool,
    twice: bool,
) -> None:
    history = data.draw(family_history(family))
    (tmp_path / "test.json").write_text(json.dumps({"spec": FAMILY_SPECS[family]}))
    if edn:
        text = "\n".join(edn_event(e) for e in history)
    else:
        text = "\n".join(json.dumps(e) for e in history)
        if twice:  # a key named twice, as a hand-edited file may: refused, never last-wins
            text = text.replace('"value": {"0"', '"value": {"0": [], "0"', 1)
    check_exits_cleanly(tmp_path, capsys, text.encode("utf-8", "surrogatepass"))
