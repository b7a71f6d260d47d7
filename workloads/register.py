"""The register workload: read, write and cas per key, served by the store as get, put
and replace, checked per key against the `cas-register` model (the shape of other
tools' histories). A cas whose expected value was not there certainly did nothing: fail.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from kvstore import KVMap
from workloads.core import OpDict, Workload, fail, ok
from workloads.kv import serve_get, serve_put
from workloads.store_client import Handler, create_topic, opener

MIX: tuple[tuple[str, int], ...] = (("read", 50), ("write", 25), ("cas", 25))


def register_ops(rng: random.Random, keys: int) -> Iterator[OpDict]:
    """Takes a random source and a key count. Yields register invokes forever; writes and
    cas targets are values never used before on their key, cas expects a recent one."""
    names = [f for f, _ in MIX]
    weights = [w for _, w in MIX]
    written = [0] * keys
    while True:
        key = rng.randrange(keys)
        f = rng.choices(names, weights)[0]
        value: Any = None
        if f == "write":
            written[key] += 1
            value = written[key]
        elif f == "cas":
            old = rng.randint(max(1, written[key] - 2), max(1, written[key]))
            written[key] += 1
            value = [old, written[key]]
        yield {"f": f, "key": key, "value": value}


def _cas(store: KVMap, key: Any, value: Any) -> OpDict:
    old, new = value
    if store.replace(key, old, new):
        return ok(value)
    return fail("cas: the register did not hold the expected value", value)


HANDLERS: dict[str, Handler] = {"read": serve_get, "write": serve_put, "cas": _cas}

REGISTER = Workload(
    name="register",
    create_topics=create_topic,
    ops=lambda rng, ctx: register_ops(rng, ctx.keys),
    open_client=opener(HANDLERS),
    final_reads=lambda ctx: [{"f": "read", "key": k, "value": None} for k in range(ctx.keys)],
    model="cas-register",
)
