"""What a NATS server says on its monitoring port: /healthz and /jsz, read over HTTP and
parsed into plain views (who leads the meta group and each stream, and how far each
replica lags), so readiness and the nemeses ask one place.

The fields are nats-server's own (server/monitor.go: JSInfo, MetaClusterInfo,
AccountDetail, StreamDetail; server/stream.go: ClusterInfo, PeerInfo). A server answers
for itself: its view of a leader may be stale while it is cut off, so cluster-wide
questions take the views of every server that answers (`agreed_leader`). /healthz with
js-enabled-only answers 200 once JetStream is on; plain /healthz waits until the meta
group and every stream and consumer on the server are current (monitoring docs,
docs.nats.io running-a-nats-service/nats_admin/monitoring).

Views speak of nodes: a server that rejoined under a new server_name (n2-2) is its
node's (n2), so the nemeses and the runner keep naming the container they act on.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.cluster.nats.config import MONITOR_PORT, node_of_server

HTTP_TIMEOUT_S = 2.0


class MonitorError(RuntimeError):
    """A server's monitoring port did not answer, or answered something unreadable."""


@dataclass(frozen=True, slots=True)
class Health:
    """A /healthz answer: the HTTP status and the server's own words."""

    status: int
    error: str

    @property
    def ok(self) -> bool:
        """Returns whether the server called itself healthy."""
        return self.status == 200


@dataclass(frozen=True, slots=True)
class Peer:
    """A replica of the meta group or of a stream, as its leader (or a follower) sees it."""

    name: str
    current: bool
    offline: bool
    lag: int
    """Raft entries behind the leader (0 when /jsz leaves it out)."""
    active_ns: int
    """Nanoseconds since it was last heard from."""


@dataclass(frozen=True, slots=True)
class StreamView:
    """One stream as one server sees it."""

    name: str
    leader: str | None
    replicas: tuple[Peer, ...]
    """The replicas other than the server asked (its own entry is left out; a follower
    lists the leader among them, with figures only the leader's own view makes good)."""
    messages: int
    first_seq: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class JetStreamView:
    """One server's /jsz: the server asked, the meta group's leader and peers, and its
    streams."""

    server: str
    meta_leader: str | None
    meta_peers: tuple[Peer, ...]
    meta_size: int
    """The servers the meta group counts. Its leader lists the others in meta_peers;
    a follower lists none on 2.12.1 and them all on 2.15.3, so only the leader's list is
    read for their state."""
    streams: dict[str, StreamView]
    sync_always: bool
    """Whether the server fsyncs every write (sync_interval: always)."""
    sync_interval_ns: int
    """Its background fsync interval, in nanoseconds."""


def get(address: str, path: str) -> tuple[int, Any]:
    """Takes a server's address and a monitoring path; returns the HTTP status and the
    JSON answer. Raises MonitorError when the port does not answer JSON."""
    url = f"http://{address}:{MONITOR_PORT}{path}"
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as answer:
            status, body = int(answer.status), answer.read()
    except urllib.error.HTTPError as err:
        status, body = err.code, err.read()
    except (OSError, ValueError) as err:
        raise MonitorError(f"{url}: {err}") from err
    try:
        return status, json.loads(body)
    except ValueError as err:
        raise MonitorError(f"{url}: not JSON ({body[:80]!r})") from err


def health(address: str, *, js_enabled_only: bool = False) -> Health:
    """Takes a server's address; returns its /healthz (js-enabled-only: only whether
    JetStream is on). Raises MonitorError when the port does not answer."""
    path = "/healthz?js-enabled-only=true" if js_enabled_only else "/healthz"
    status, body = get(address, path)
    return Health(status, str(body.get("error", "")) if isinstance(body, dict) else "")


def jetstream(server: str, address: str) -> JetStreamView:
    """Takes a server's name and address; returns its /jsz with every account's streams.
    Raises MonitorError when the port does not answer or says something else."""
    status, body = get(address, "/jsz?accounts=true&streams=true")
    if status != 200 or not isinstance(body, dict):
        raise MonitorError(f"{server}: /jsz answered {status}")
    return parse_jsz(server, body)


def _peer(raw: Mapping[str, Any]) -> Peer:
    return Peer(
        name=node_of_server(str(raw["name"])),
        current=bool(raw.get("current", False)),
        offline=bool(raw.get("offline", False)),
        lag=int(raw.get("lag", 0)),
        active_ns=int(raw.get("active", 0)),
    )


def _node(name: Any) -> str | None:
    return node_of_server(str(name)) if name else None


def _stream(raw: Mapping[str, Any]) -> StreamView:
    cluster = raw.get("cluster") or {}
    state = raw.get("state") or {}
    return StreamView(
        name=str(raw["name"]),
        leader=_node(cluster.get("leader")),
        replicas=tuple(_peer(p) for p in cluster.get("replicas") or ()),
        messages=int(state.get("messages", 0)),
        first_seq=int(state.get("first_seq", 0)),
        last_seq=int(state.get("last_seq", 0)),
    )


def parse_jsz(server: str, body: Mapping[str, Any]) -> JetStreamView:
    """Takes the name of the server asked (/jsz does not say it) and its answer (with
    accounts and streams). Returns its view; raises MonitorError when a field it needs is
    missing or of the wrong type."""
    try:
        meta = body.get("meta_cluster") or {}
        config = body.get("config") or {}
        streams = [
            _stream(s)
            for account in body.get("account_details") or ()
            for s in account.get("stream_detail") or ()
        ]
        return JetStreamView(
            server=server,
            meta_leader=_node(meta.get("leader")),
            meta_peers=tuple(_peer(p) for p in meta.get("replicas") or ()),
            meta_size=int(meta.get("cluster_size", 0)),
            streams={s.name: s for s in streams},
            sync_always=bool(config.get("sync_always", False)),
            sync_interval_ns=int(config.get("sync_interval", 0)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise MonitorError(f"unreadable /jsz answer: {err!r}") from err


def agreed_leader(claims: Iterable[str | None]) -> str | None:
    """Takes the leader each answering server names (None: it names none). Returns the
    leader a strict majority of them names, else None: a server cut off may still name
    the leader it last knew."""
    claims = list(claims)
    named = Counter(c for c in claims if c is not None)
    if not named:
        return None
    leader, votes = named.most_common(1)[0]
    return leader if 2 * votes > len(claims) else None


def stream_lag(views: Iterable[JetStreamView], stream: str) -> dict[str, int]:
    """Takes every answering server's view. Returns each replica of stream -> its lag, as
    the server that leads the stream and says so of itself reports it (the leader's own
    entry is 0); {} when no answering server leads it."""
    for view in views:
        found = view.streams.get(stream)
        if found is not None and found.leader == view.server:
            return {view.server: 0} | {p.name: p.lag for p in found.replicas}
    return {}


def replica_states(views: Iterable[JetStreamView], stream: str) -> dict[str, dict[str, Any]]:
    """Takes every answering server's view. Returns node -> what that server says of its
    own replica of stream: the leader it names, its messages, first and last sequence
    (servers that hold no replica of it are left out)."""
    return {
        view.server: {
            "leader": found.leader,
            "messages": found.messages,
            "first_seq": found.first_seq,
            "last_seq": found.last_seq,
        }
        for view in views
        if (found := view.streams.get(stream)) is not None
    }


def split_brain(states: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Takes replica_states once every replica should agree (after the heal and the final
    drains, with no writes going on). Returns what shows a split brain (nats-server#7567):
    more than one server naming itself the leader, servers naming different leaders, or
    replicas holding different messages (count, first or last sequence); [] when all
    agree."""
    found = []
    claims = sorted(node for node, s in states.items() if s["leader"] == node)
    if len(claims) > 1:
        found.append(f"{len(claims)} servers each lead the stream: {', '.join(claims)}")
    named = {node: s["leader"] for node, s in states.items()}
    if len(set(named.values())) > 1:
        said = ", ".join(f"{node}: {leader or 'none'}" for node, leader in sorted(named.items()))
        found.append(f"the servers name different leaders ({said})")
    for field in ("messages", "first_seq", "last_seq"):
        values = {node: s[field] for node, s in states.items()}
        if len(set(values.values())) > 1:
            said = ", ".join(f"{node}: {v}" for node, v in sorted(values.items()))
            found.append(f"the replicas' {field} differ ({said})")
    return found
