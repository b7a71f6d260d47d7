"""A Client over one instance of the store under test (kvstore), turning its outcomes
into completions: a result is ok, DefiniteFailure is fail, anything else is info.

Only an error the store can prove means "not applied" becomes fail; an unexpected
exception is info, since nothing says the op did not happen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kvstore import VARIANTS, DefiniteFailure, Indeterminate, KVMap, Timeouts
from workloads.core import Client, Handler, OpDict, fail, info

STORES: dict[str, str] = {
    "linearizable": "kafka",
    "local-read": "local-read",
    "replica-style": "replica-style",
    "published-rule": "published-rule",
}
"""The `--store` names, each the key of its map class in kvstore.VARIANTS."""


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
        """Returns why the store instance serves no more ops, or None."""
        failure: str | None = getattr(self._store, "failure", None)
        return failure

    def close(self) -> None:
        """Closes the store instance."""
        self._store.close()


def store_opener(
    store: str, bootstrap: str, topic: str, timeouts: Timeouts, handlers: Mapping[str, Handler]
) -> Callable[[str], Client]:
    """Takes a `--store` name, where the topic is, and a workload's handlers. Returns a
    function that opens a fresh store instance as a client, given a client id."""
    cls = VARIANTS[STORES[store]]

    def open_client(client_id: str) -> Client:
        return StoreClient(cls(bootstrap, topic, client_id, timeouts), handlers)

    return open_client
