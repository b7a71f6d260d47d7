"""NATS as the nemeses see it: servers n<i> are brokers i, a stream is a partition whose
leader is the one a majority of its replicas name and whose in-sync replicas are the
ones its leader calls current; no stream, no answer; a probe aims at the client port.
No Docker: the servers' /jsz views are given."""

from __future__ import annotations

import pytest

from harness.cluster.admin import AdminError
from harness.cluster.nats import JetStreamView, NatsSpec, Peer, StreamView
from harness.cluster.nats.config import CLIENT_PORT
from harness.db import NatsDb
from nemesis import net
from nemesis.cluster import PartitionState, ServicePorts


def peer(name: str, current: bool = True) -> Peer:
    return Peer(name=name, current=current, offline=False, lag=0, active_ns=0)


def view(
    server: str, leader: str | None, peers: tuple[Peer, ...], meta: str = "n1"
) -> JetStreamView:
    stream = StreamView("s", leader, peers, messages=3, first_seq=1, last_seq=3)
    return JetStreamView(server, meta, (), 3, {"s": stream}, False, 0)


def db_seeing(views: dict[str, JetStreamView]) -> NatsDb:
    db = object.__new__(NatsDb)
    db.spec = NatsSpec(name="t")
    db.jetstream_views = lambda: views  # type: ignore[method-assign]
    return db


def test_the_stream_is_one_partition_led_where_the_majority_says() -> None:
    views = {
        "n1": view("n1", "n2", (peer("n2"), peer("n3"))),
        "n2": view("n2", "n2", (peer("n1"), peer("n3", current=False))),
        "n3": view("n3", "n2", (peer("n1"), peer("n2"))),
    }
    db = db_seeing(views)
    assert db.partitions("s") == [PartitionState(0, 2, (2, 1, 3), (2, 1))]
    assert db.committed_partitions("s") == db.partitions("s")
    assert db.node_of_broker(db.broker_id("n3")) == "n3"
    assert db.active_controller() == "n1" and db.controller() == 1


def test_a_cut_off_leader_claiming_itself_is_outvoted() -> None:
    views = {
        "n1": view("n1", "n1", (peer("n2"), peer("n3"))),
        "n2": view("n2", "n3", (peer("n1"), peer("n3"))),
        "n3": view("n3", "n3", (peer("n1", current=False), peer("n2"))),
    }
    assert db_seeing(views).partitions("s")[0].leader == 3


def test_no_agreed_leader_is_minus_one_and_no_stream_is_an_error() -> None:
    views = {
        "n1": view("n1", None, (peer("n2"), peer("n3"))),
        "n2": view("n2", None, (peer("n1"), peer("n3"))),
    }
    assert db_seeing(views).partitions("s") == [PartitionState(0, -1, (1, 2, 3), ())]
    with pytest.raises(AdminError, match="no answering server holds stream other or bucket other"):
        db_seeing(views).partitions("other")


def test_a_bucket_is_the_stream_that_holds_it() -> None:
    views = {n: view(n, "n3", (peer("n1"), peer("n2"))) for n in ("n1", "n2", "n3")}
    for v in views.values():
        v.streams["KV_b"] = v.streams.pop("s")
    assert db_seeing(views).partitions("b")[0].leader == 3


def test_a_probe_of_a_cut_tries_the_nats_client_port() -> None:
    db = db_seeing({})
    assert isinstance(db, ServicePorts)
    assert net.service_port(db, "n1") == CLIENT_PORT  # type: ignore[arg-type]


def test_replicas_that_still_differ_after_the_bound_are_a_split_brain() -> None:
    views = {
        "n1": view("n1", "n1", (peer("n2"), peer("n3"))),
        "n3": view("n3", "n3", (peer("n1"), peer("n2"))),
    }
    found = db_seeing(views).replica_agreement("s", bound_s=0.0)
    assert found["states"]["n3"] == {"leader": "n3", "messages": 3, "first_seq": 1, "last_seq": 3}
    assert found["split_brain"][0] == "2 servers each lead the stream: n1, n3"


def test_replicas_that_agree_are_no_split_brain_and_a_bucket_is_asked_by_its_stream() -> None:
    views = {n: view(n, "n2", (peer("n1"), peer("n3"))) for n in ("n1", "n2", "n3")}
    for v in views.values():
        v.streams["KV_b"] = v.streams.pop("s")
    found = db_seeing(views).replica_agreement("b", bound_s=30.0)
    assert found["split_brain"] == [] and set(found["states"]) == {"n1", "n2", "n3"}
    # A stream no server holds (lost to a power cut of all) is no split brain.
    assert db_seeing({}).replica_agreement("b", bound_s=30.0) == {
        "states": {},
        "split_brain": [],
        "seconds": 0.0,
    }
