"""NATS cluster shapes, server config rendering and the stream and bucket configs (no
Docker, no server)."""

from __future__ import annotations

import ipaddress
import re

import pytest
from nats.js.api import DiscardPolicy, StorageType

from harness.cluster.layout import SpecError
from harness.cluster.nats import (
    SYNC_PROFILES,
    NatsSpec,
    Server,
    kv_config,
    plan_servers,
    server_config,
    stream_config,
)
from harness.cluster.nats.config import client_urls, next_server_name, node_of_server

SUBNET = ipaddress.IPv4Network("172.30.7.0/24")


def render(sync: str, servers: int = 3, node: int = 1) -> str:
    spec = NatsSpec(name="t", servers=servers, sync=sync)
    planned = plan_servers(spec, SUBNET)
    return server_config(planned[node - 1], planned, spec.profile, spec.name)


def block(text: str, name: str) -> str:
    """Returns the body of a top-level `name { ... }` block (they do not nest here)."""
    found = re.search(rf"^{name} \{{\n(.*?)^\}}", text, re.M | re.S)
    assert found, f"no {name} block in:\n{text}"
    return found.group(1)


def test_servers_get_fixed_addresses_and_their_node_names() -> None:
    planned = plan_servers(NatsSpec(servers=5), SUBNET)
    assert [(s.name, s.address) for s in planned] == [
        (f"n{i}", f"172.30.7.{100 + i}") for i in range(1, 6)
    ]
    assert client_urls(planned[:2]) == ["nats://172.30.7.101:4222", "nats://172.30.7.102:4222"]


def test_a_server_routes_to_every_other_server_and_not_to_itself() -> None:
    text = render("default", servers=5, node=3)
    assert "server_name: n3\n" in text
    routes = re.findall(r"nats-route://([\d.]+):6222", block(text, "cluster"))
    assert routes == [f"172.30.7.{100 + i}" for i in (1, 2, 4, 5)]
    assert "name: t\n" in block(text, "cluster")


def test_the_default_profile_leaves_the_sync_interval_to_nats() -> None:
    jetstream = block(render("default"), "jetstream")
    assert "sync" not in jetstream
    assert 'store_dir: "/var/lib/nats"' in jetstream


def test_the_always_profile_syncs_every_write() -> None:
    jetstream = block(render("always"), "jetstream")
    assert re.search(r"^\s*sync_interval: always$", jetstream, re.M)
    assert SYNC_PROFILES["always"].setting() == "sync_interval: always"


def test_the_monitoring_and_client_ports_are_on() -> None:
    text = render("default")
    assert "http_port: 8222\n" in text
    assert "listen: 0.0.0.0:4222\n" in text
    assert "${" not in text


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        ({"servers": 4}, "servers 4"),
        ({"servers": 1}, "servers 1"),
        ({"version": "2.10.0"}, "nats version '2.10.0'"),
        ({"sync": "10s"}, "sync profile '10s'"),
        ({"name": "-bad"}, "cluster name '-bad'"),
    ],
)
def test_a_spec_no_cluster_can_have_is_refused(shape: dict[str, object], problem: str) -> None:
    with pytest.raises(SpecError, match=re.escape(problem)):
        NatsSpec(**shape)  # type: ignore[arg-type]


def test_the_stream_is_file_backed_replicated_and_refuses_when_full() -> None:
    config = stream_config("queue", ["queue.>"], 5)
    assert (config.storage, config.num_replicas, config.discard) == (
        StorageType.FILE,
        5,
        DiscardPolicy.NEW,
    )
    assert config.subjects == ["queue.>"]


def test_only_the_direct_variant_of_a_bucket_allows_direct_get() -> None:
    leader, direct = kv_config("kv", 3, "leader"), kv_config("kv", 3, "direct")
    assert (leader.direct, direct.direct) == (False, True)
    assert (leader.storage, leader.replicas, leader.history) == (StorageType.FILE, 3, 1)


def test_a_rejoined_server_has_a_new_name_and_the_same_routes() -> None:
    spec = NatsSpec(name="t")
    planned = plan_servers(spec, SUBNET)
    renamed = Server(next_server_name("n2"), planned[1].address)
    text = server_config(renamed, planned, spec.profile, spec.name)
    assert "server_name: n2-2\n" in text
    routes = re.findall(r"nats-route://([\d.]+):6222", block(text, "cluster"))
    assert routes == ["172.30.7.101", "172.30.7.103"]
    assert next_server_name("n2-2") == "n2-3" and next_server_name("n12-9") == "n12-10"
    assert [node_of_server(n) for n in ("n2", "n2-2", "n12-10", "other")] == [
        "n2",
        "n2",
        "n12",
        "other",
    ]


def test_clients_need_no_credentials_and_the_system_account_has_its_user() -> None:
    text = render("default")
    assert re.search(r"^no_auth_user: (\S+)$", text, re.M)
    assert "$SYS {" in block(text, "accounts") and "user: sys," in block(text, "accounts")
    assert "$JS.API.SERVER.REMOVE" in text  # the comment's $$ is one $ once rendered
