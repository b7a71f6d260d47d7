"""`harness check --spark PATH`: the per-key linearizability search as Spark tasks, with
the local path's code at every step, so both give the same result.

1. Lines: a history.jsonl is read by Spark (numbered, blank lines skipped); an EDN history
   or a Jepsen log is parsed on the driver by the local readers.
2. Per process (a Spark task a group of processes): each line is read by the local jsonl
   reader and the process's events are paired by `pair_invocations`; every check it makes
   is about one process, so the first error of the history is the first of any process.
3. The model, when not given, is guessed by checkers.guess.default_model from one invocation
   of each kind (it depends only on the operations and whether a read returned a list).
4. Per key (a Spark task a bucket of keys): `linearizable.prepare`, `split_by_key` and
   `check_key_safely`, as `linearizable.check` does; the driver merges the key results in
   the order the local path gives them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from checkers import check_safe, linearizable
from checkers.linearizable import MODELS, Model
from history import (
    JSONL,
    History,
    HistoryError,
    Invocation,
    Op,
    detect_format,
    drop_failures,
    find_history_file,
    freeze,
    pair_invocations,
    parse_history,
    read_jsonl,
    to_op,
)

FORMAT_PROBE_BYTES = 1 << 16
PARSE, PAIR = 0, 1  # a line that cannot be read is reported before any pairing error
Located = tuple[int, int, Any]  # (position among non-blank lines, line number, text or event)


def parse_line(item: Located, path: str) -> tuple[Any, ...]:
    """Takes one numbered line. Returns ("event", process, (position, line, event)) with
    the event as the local reader makes it (one without an index takes its position), or
    ("error", PARSE, line, problem). An already parsed event (EDN, log) passes through."""
    position, line_no, text = item
    if isinstance(text, dict):
        return ("event", _process_key(text), (position, line_no, text))
    try:
        ((_, event),) = read_jsonl(text, path)
    except HistoryError as err:
        return ("error", PARSE, line_no, err.problem)
    if event["index"] == 0 and position != 0 and '"index"' not in text:
        event["index"] = position  # the reader numbered it as if it were the first line
    return ("event", _process_key(event), (position, line_no, event))


def _process_key(event: dict[str, Any]) -> tuple[str, str]:
    # 1 and "1" are different processes; equal keys must hash alike in every worker.
    process = event.get("process")
    return type(process).__name__, str(process)


def pair_process(items: Iterable[tuple[int, int, dict[str, Any]]], path: str) -> Iterator[Any]:
    """Takes one process's (position, line, event) items. Yields ("error", PAIR, line,
    problem) for its first problem, else ("invocation", Invocation) for each invocation."""
    ordered = sorted(items, key=lambda item: item[0])
    try:
        invocations, _ = pair_invocations(
            [e for _, _, e in ordered], path=path, lines=[line for _, line, _ in ordered]
        )
    except HistoryError as err:
        yield ("error", PAIR, err.line, err.problem)
        return
    for invocation in invocations:
        yield ("invocation", invocation)


def kind_of(invocation: Invocation) -> tuple[str, bool]:
    """Returns what the model guess looks at: the op's f and whether it is an ok or info
    read whose value is a list."""
    ops = [to_op(i) for i in drop_failures([invocation])]
    return invocation.invoke["f"], any(
        o.f == "read" and isinstance(o.value, list | frozenset) for o in ops
    )


def bucket_of(op: Op, model: Model, buckets: int) -> int:
    """Returns the bucket of the op's key: equal keys hash alike in every worker (PySpark
    fixes PYTHONHASHSEED for them). -1 when the model cannot name the op's key."""
    try:
        return hash(freeze(model.key_of(op))) % buckets
    except Exception:  # reported by the driver, as the local check would report it
        return -1


def check_bucket(
    ops: Iterable[Op], model: Model, time_limit: float | None, max_cache_bytes: int
) -> Iterator[tuple[int, int, Any, dict[str, Any] | None]]:
    """Takes one bucket's ops. Yields (first op index, ops, verdict, failure or None) for
    each of its keys, checked by the local checker's own functions."""
    prepared = linearizable.prepare(sorted(ops, key=lambda op: op.index), model)
    for key, key_ops in linearizable.split_by_key(prepared, model).items():
        _, verdict, failure = linearizable.check_key_safely(
            key, key_ops, model, time_limit, max_cache_bytes
        )
        yield key_ops[0].index, len(key_ops), verdict, failure


def merge(model: Model, keys: list[tuple[int, int, Any, dict[str, Any] | None]]) -> dict[str, Any]:
    """Takes every key's (first op index, ops, verdict, failure). Returns the result in the
    shape and order of `linearizable.check`'s (without its time)."""
    keys = sorted(keys, key=lambda k: k[0])
    return {
        "valid": linearizable.merge_validity([v for _, _, v, _ in keys]),
        "model": model.name,
        "ops": sum(n for _, n, _, _ in keys),
        "keys": len(keys),
        "failures": [f for _, _, _, f in keys if f is not None],
    }


def history_lines(spark: Any, path: Path) -> tuple[str, Any]:
    """Takes the history file. Returns its format and an RDD of numbered lines, each
    (position, line number, text); other formats go through the local parser first."""
    with open(path, "rb") as f:
        head = f.read(FORMAT_PROBE_BYTES).decode("utf-8", errors="replace")
    fmt = detect_format(head)
    if fmt is None:
        parse_history(head, str(path))  # raises the local reader's own error
    if fmt == JSONL:
        numbered = spark.sparkContext.textFile(str(path)).zipWithIndex()
        kept = numbered.filter(lambda lt: lt[0].strip() != "").zipWithIndex()
        return fmt, kept.map(lambda x: (x[1], x[0][1] + 1, x[0][0]))
    fmt, located = parse_history(path.read_text(encoding="utf-8"), str(path))
    rows = [(i, line, event) for i, (line, event) in enumerate(located)]
    return fmt, spark.sparkContext.parallelize(rows)


def _local_step(step: Callable[[list[Op], Model], object], ops: list[Op], model: Model) -> Any:
    # Runs a step of the local check on the op it fails on, so its error reads the same.
    step(ops, model)
    raise AssertionError(f"{step.__name__} accepted op {ops[0].index}, which Spark refused")


def _raise_first(errors: Any, path: str) -> None:
    first = errors.takeOrdered(1, key=lambda e: (e[1], e[2]))
    if first:
        _, _, line, problem = first[0]
        raise HistoryError(path, line, problem)


def guess_model(invocations: Any, path: str, fmt: str) -> str:
    """Takes the RDD of invocations. Returns checkers.guess.default_model's guess, made on one
    invocation of each kind (the guess depends on nothing else)."""
    from checkers import default_model

    def earlier(a: Invocation, b: Invocation) -> Invocation:
        return a if a.invoke["index"] <= b.invoke["index"] else b

    kinds = invocations.map(lambda i: (kind_of(i), i)).reduceByKey(earlier).values().collect()
    events = [e for i in kinds for e in (i.invoke, i.completion) if e is not None]
    ops = [to_op(i) for i in drop_failures(kinds)]
    fs = frozenset(str(i.invoke["f"]) for i in kinds)
    return default_model(History(path=path, format=fmt, events=events, ops=ops, nemesis=[], fs=fs))


def check_with_spark(
    spark: Any, path: str | Path, model_name: str | None, time_limit: float | None
) -> tuple[History, dict[str, Any]]:
    """Takes a SparkSession, a history file or results folder, a model name (None: guess)
    and the search time per key. Returns the history (its path, format and count of client
    ops; no events) and the result as checkers.registry.check_history gives it. Raises
    HistoryError for a malformed history, ValueError for a model whose check is not split
    into keys (set)."""
    started = time.monotonic()
    file = find_history_file(path)
    where = str(file)
    fmt, lines = history_lines(spark, file)
    parsed = lines.map(lambda item: parse_line(item, where)).persist()
    _raise_first(parsed.filter(lambda r: r[0] == "error"), where)
    paired = (
        parsed.filter(lambda r: r[0] == "event")
        .map(lambda r: (r[1], r[2]))
        .groupByKey()
        .flatMap(lambda group: pair_process(group[1], where))
        .persist()
    )
    _raise_first(paired.filter(lambda r: r[0] == "error"), where)
    invocations = paired.filter(lambda r: r[0] == "invocation").map(lambda r: r[1])
    name = model_name or guess_model(invocations, where, fmt)
    if name not in linearizable_models():
        raise ValueError(f"check --spark checks linearizability; the {name} model runs locally")
    # The client ops, failed ones included, as the local reading counts them.
    count = invocations.count()
    history = History(path=where, format=fmt, events=[], ops=[], nemesis=[], invocations=count)
    result = _check_ops(spark, invocations, MODELS[name], time_limit)
    return history, {"model": name, **result, "time": round(time.monotonic() - started, 6)}


def linearizable_models() -> tuple[str, ...]:
    """Returns the models whose check --spark splits into per-key Spark tasks."""
    from checkers import LINEARIZABLE_MODELS

    return LINEARIZABLE_MODELS


def _check_ops(
    spark: Any, invocations: Any, model: Model, time_limit: float | None
) -> dict[str, Any]:
    buckets = max(1, spark.sparkContext.defaultParallelism * 4)
    by_index = lambda op: op.index  # noqa: E731 (a key for takeOrdered, pickled to workers)
    ops = invocations.flatMap(lambda i: [to_op(x) for x in drop_failures([i])]).persist()
    unknown = ops.filter(lambda op: op.f not in model.fs).takeOrdered(1, key=by_index)
    if unknown:  # the local check's first step, on the first op it would reject
        return check_safe(_local_step, linearizable.reject_unknown_ops, unknown, model)
    prepared = ops.filter(lambda op: not (op.type == "info" and op.f in model.reads))
    routed = prepared.map(lambda op: (bucket_of(op, model, buckets), op)).persist()
    unkeyed = routed.filter(lambda r: r[0] < 0).values().takeOrdered(1, key=by_index)
    if unkeyed:  # the local check's split by key, on the first op it would fail on
        return check_safe(_local_step, linearizable.split_by_key, unkeyed, model)
    cache = linearizable.DEFAULT_CACHE_BYTES
    keys = (
        routed.groupByKey(buckets)
        .flatMap(lambda group: check_bucket(group[1], model, time_limit, cache))
        .collect()
    )
    return merge(model, keys)
