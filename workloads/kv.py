"""The kv workload: every op of the store under test (get, put, put-if-absent, replace,
remove) over a few keys, checked per key against the `map` model.

Values are unique per key (a counter), so a stale read names the write it saw, with one
exception: half of the put-if-absent ops repeat the key's last put-if-absent value, since
racing equal values is what exposes the published design's value-equality rule.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from typing import Any

from kvstore import KVMap
from workloads.core import OpDict, Workload, ok
from workloads.store_client import Handler, create_topic, opener

# Reads dominate, as in most stores; replace needs recent values to succeed often.
MIX: tuple[tuple[str, int], ...] = (
    ("get", 40),
    ("put", 15),
    ("put-if-absent", 15),
    ("replace", 20),
    ("remove", 10),
)
RECENT = 3


def kv_ops(rng: random.Random, keys: int) -> Iterator[OpDict]:
    """Takes a random source and a key count. Yields kv invokes forever, each put and
    replace with a value never used before on its key (put-if-absent: see the module
    docstring); replace expects one of the key's recent values."""
    names = [f for f, _ in MIX]
    weights = [w for _, w in MIX]
    written = [0] * keys
    recent: list[deque[int]] = [deque(maxlen=RECENT) for _ in range(keys)]
    last_pia: list[int | None] = [None] * keys

    def fresh(key: int) -> int:
        written[key] += 1
        recent[key].append(written[key])
        return written[key]

    while True:
        key = rng.randrange(keys)
        f = rng.choices(names, weights)[0]
        value: Any = None
        if f == "put-if-absent":
            repeat = last_pia[key]
            value = repeat if repeat is not None and rng.random() < 0.5 else fresh(key)
            last_pia[key] = value
        elif f == "put":
            value = fresh(key)
        elif f == "replace":
            old = rng.choice(recent[key]) if recent[key] else 0
            value = [old, fresh(key)]
        yield {"f": f, "key": key, "value": value}


def serve_get(store: KVMap, key: Any, _value: Any) -> OpDict:
    """Reads the key: ok with its value (None when absent)."""
    return ok(store.get(key))


def serve_put(store: KVMap, key: Any, value: Any) -> OpDict:
    """Sets the key: ok with the value written."""
    store.put(key, value)
    return ok(value)


def _put_if_absent(store: KVMap, key: Any, value: Any) -> OpDict:
    return ok([value, store.put_if_absent(key, value)])


def _replace(store: KVMap, key: Any, value: Any) -> OpDict:
    old, new = value
    return ok([old, new, store.replace(key, old, new)])


def _remove(store: KVMap, key: Any, _value: Any) -> OpDict:
    return ok(store.remove(key))


HANDLERS: dict[str, Handler] = {
    "get": serve_get,
    "put": serve_put,
    "put-if-absent": _put_if_absent,
    "replace": _replace,
    "remove": _remove,
}

KV = Workload(
    name="kv",
    create_topics=create_topic,
    ops=lambda rng, ctx: kv_ops(rng, ctx.keys),
    open_client=opener(HANDLERS),
    final_reads=lambda ctx: [{"f": "get", "key": k, "value": None} for k in range(ctx.keys)],
    model="map",
)
