"""The store under test as a workload's client: a Client over one store instance turning
its outcomes into completions (a result is ok, DefiniteFailure is fail, anything else is
info), and what the kv and register workloads share: topic, clients, final reads.
A store instance that fails (truncated log, fatal client error) says so in `failure`, and
the runner replaces it with a fresh one under a new process id.

Only an error the store can prove means "not applied" becomes fail; an unexpected
exception is info, since nothing says the op did not happen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kvstore import VARIANTS, DefiniteFailure, Indeterminate, KVMap, create_store_topic
from kvstore.topic import TopicAdmin
from workloads.core import Client, Context, OpDict, fail, info
from workloads.names import STORES

Handler = Callable[[KVMap, Any, Any], OpDict]
"""Takes the store, an op's key and value; returns the completion (ok or fail)."""


class StoreClient:
    """A Client whose ops are served by one store instance, through named handlers."""

    def __init__(self, store: KVMap, handlers: Mapping[str, Handler]) -> None:
        self._store = store
        self._handlers = handlers

    def invoke(self, op: OpDict) -> OpDict:
        """Takes an invoke. Returns its completion; never raises."""
        handler = self._handlers[op["f"]]
        try:
            return handler(self._store, op.get("key"), op.get("value"))
        except DefiniteFailure as err:
            return fail(str(err))
        except Indeterminate as err:
            return info(str(err))
        except Exception as err:  # an unknown outcome: never guess ok or fail
            return info(f"{type(err).__name__}: {err}")

    @property
    def failure(self) -> str | None:
        """Returns why the store instance serves no more ops (e.g. its log was truncated),
        or None; the runner then opens a fresh instance under a new process id."""
        return self._store.failure

    def close(self) -> None:
        """Closes the store instance."""
        self._store.close()


def create_topic(admin: TopicAdmin, ctx: Context) -> None:
    """Creates the store's topic with the run's partitions and safety settings, compacted
    so that a fresh instance's replay stays short however long the run (kvstore.topic)."""
    create_store_topic(
        admin,
        ctx.topic,
        ctx.partitions,
        ctx.replication_factor,
        compaction=True,
        safety="unsafe" if ctx.kafka_config == "unsafe" else "safe",
        timeouts=ctx.timeouts,
    )


def opener(handlers: Mapping[str, Handler]) -> Callable[[Context, str], Client]:
    """Takes a workload's handlers. Returns the function that opens a fresh instance of
    the run's `--store` as a client, given a client id."""

    def open_client(ctx: Context, client_id: str) -> Client:
        cls = VARIANTS[STORES[ctx.store]]
        return StoreClient(cls(ctx.bootstrap, ctx.topic, client_id, ctx.timeouts), handlers)

    return open_client
