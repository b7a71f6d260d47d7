"""The report's lines on what a run ran with besides the cluster: the client library and
its version, and the protocol each transactional client spoke (results.json's
`release`, written by harness/run/cluster_facts.py)."""

from __future__ import annotations

from typing import Any


def release_rows(release: Any) -> list[tuple[str, str]]:
    """Takes results.json's `release` (absent in runs older than it). Returns the summary
    rows: the client, and with transactions their protocol."""
    if not isinstance(release, dict):
        return []
    rows = [("client", client_line(release))]
    if isinstance(release.get("transactions"), dict):
        rows.append(("transaction protocol", transactions_line(release["transactions"])))
    return rows


def client_line(release: dict[str, Any]) -> str:
    """Returns e.g. "confluent-kafka 2.16.1 (librdkafka 2.16.0)"."""
    line = f"{release.get('client', '?')} {release.get('client_version') or '?'}"
    if release.get("librdkafka"):
        line += f" (librdkafka {release['librdkafka']})"
    return line


def transactions_line(found: dict[str, Any]) -> str:
    """Returns the protocol the transactions spoke, client by client, e.g. "TV2: t-0 TV2
    (41 ended), ...; the brokers' transaction.version 2"."""
    if "error" in found:
        return f"not read: {found['error']}"
    clients = found.get("clients") or {}
    if not clients:
        return "none: the coordinator logged no transaction's end"
    each = ", ".join(
        f"{tid} {'/'.join(c.get('protocols', []))} ({c.get('ended', 0)} ended)"
        for tid, c in sorted(clients.items())
    )
    level = found.get("broker_level")
    return f"{found.get('protocol')}: {each}; the brokers' transaction.version {level}"
