"""Who is in a NATS JetStream cluster and how a server leaves it: the meta leader asked
to remove a server (`$JS.API.SERVER.REMOVE`, what `nats server raft peer-remove` sends,
as the system account's user), and what each server's /jsz says of the meta group and
of one stream, with the server_names as NATS tells them (n2-2 for n2 rejoined).

Jepsen's NATS suite (jepsen-io/nats src/jepsen/nats/db.clj: leave!, wipe!, join!) kills
and wipes a server, peer-removes it, and starts it again empty under a new name; NATS
says a removed server must not come back under its old server_name (nats-server#7561).
The meta leader then drops the server from every stream it held and places another
replica if a server is free (server/jetstream_cluster.go: processRemovePeer,
remapStreamAssignment); a new server that joins is added to every stream short of its
replicas (processAddPeer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import nats

from harness.cluster.nats.config import SYSTEM_PASSWORD, SYSTEM_USER
from harness.cluster.nats.monitor import MonitorError, get, health

REMOVE_SUBJECT = "$JS.API.SERVER.REMOVE"
REQUEST_S = 5.0


def remove_server(urls: Sequence[str], server_name: str) -> dict[str, Any]:
    """Takes client URLs of live servers and the server_name to remove. Returns the meta
    leader's answer ({"success": true} or {"error": ...}); raises on no answer (a request
    only the meta leader answers: none while there is no leader)."""
    return asyncio.run(_remove(urls, server_name))


async def _remove(urls: Sequence[str], server_name: str) -> dict[str, Any]:
    nc = await nats.connect(
        servers=list(urls),
        user=SYSTEM_USER,
        password=SYSTEM_PASSWORD,
        connect_timeout=2,
        max_reconnect_attempts=1,
    )
    try:
        request = json.dumps({"peer": server_name}).encode()  # the name, despite the key
        answer = await nc.request(REMOVE_SUBJECT, request, timeout=REQUEST_S)
        said: dict[str, Any] = json.loads(answer.data)
        return said
    finally:
        with contextlib.suppress(Exception):
            await nc.close()


def server_view(body: Mapping[str, Any], stream: str) -> dict[str, Any]:
    """Takes one server's /jsz answer (with accounts and streams) and a stream's name.
    Returns what it says of membership, names as NATS gives them: {"meta_leader",
    "cluster_size", "meta_peers": the other members (name, current, offline), "stream":
    None when it holds no replica, else {"leader", "peers", "last_seq"}}."""
    meta = body.get("meta_cluster") or {}
    found = next(
        (
            s
            for account in body.get("account_details") or ()
            for s in account.get("stream_detail") or ()
            if s.get("name") == stream
        ),
        None,
    )
    said: dict[str, Any] = {
        "meta_leader": meta.get("leader") or None,
        "cluster_size": int(meta.get("cluster_size", 0)),
        "meta_peers": [_peer(p) for p in meta.get("replicas") or ()],
        "stream": None,
    }
    if found is not None:
        cluster = found.get("cluster") or {}
        said["stream"] = {
            "leader": cluster.get("leader") or None,
            "peers": [_peer(p) for p in cluster.get("replicas") or ()],
            "last_seq": int((found.get("state") or {}).get("last_seq", 0)),
        }
    return said


def _peer(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": str(raw.get("name")),
        "current": bool(raw.get("current", False)),
        "offline": bool(raw.get("offline", False)),
    }


def membership(
    addresses: Mapping[str, str], names: Mapping[str, str], stream: str
) -> dict[str, dict[str, Any]]:
    """Takes node -> address, node -> its server_name now, and a stream. Returns node ->
    {"server": its name, "healthy": /healthz, and server_view}, for every server whose
    monitoring port answers (one that does not is left out)."""
    views: dict[str, dict[str, Any]] = {}
    for node, address in addresses.items():
        with contextlib.suppress(MonitorError):
            status, body = get(address, "/jsz?accounts=true&streams=true")
            if status != 200 or not isinstance(body, dict):
                continue
            views[node] = {
                "server": names[node],
                "healthy": health(address).ok,
                **server_view(body, stream),
            }
    return views
