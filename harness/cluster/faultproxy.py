"""The control node's end of faultproxy (faultproxy/, the in-path proxy in front of
every broker of a cluster made with --faultproxy): its control API over HTTP on the
broker's address (faultproxy/control.go says what each call does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import requests

from harness.cluster.config import PROXY_CONTROL_PORT
from harness.cluster.errors import ClusterError

TIMEOUT_S = 5.0
"""How long one call may take: the proxy answers at once unless its node is paused."""


def call(address: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """Sends one call to the proxy at address. Returns its JSON answer; raises
    ClusterError when the proxy cannot be reached or refuses (its message says why)."""
    url = f"http://{address}:{PROXY_CONTROL_PORT}{path}"
    try:
        answer = requests.request(method, url, json=body, timeout=TIMEOUT_S)
    except requests.RequestException as err:
        raise ClusterError(f"faultproxy at {address}: {err}") from err
    try:
        found = answer.json()
    except ValueError:
        found = {"error": answer.text[:300]}
    if answer.status_code != 200:
        error = found.get("error") if isinstance(found, dict) else found
        raise ClusterError(f"faultproxy at {address}: {method} {path}: {error}")
    return found


class ProxyControl(ABC):
    """The faultproxy calls of a cluster (nemesis.cluster.InPath), for a cluster class
    that knows its brokers' addresses and whether it was made with the proxy."""

    @abstractmethod
    def ip(self, node: str) -> str:
        """Returns node's address."""

    @property
    @abstractmethod
    def proxied(self) -> bool:
        """Returns whether every broker is reached through faultproxy."""

    def _proxy(
        self, broker: str, method: str, path: str, body: dict[str, Any] | None = None
    ) -> Any:
        if not self.proxied:
            raise ClusterError("the cluster has no faultproxy: make it with --faultproxy")
        return call(self.ip(broker), method, path, body)

    def proxy_add_rule(self, broker: str, rule: dict[str, Any]) -> dict[str, Any]:
        """Installs a rule in broker's proxy; returns its report (with its id)."""
        found: dict[str, Any] = self._proxy(broker, "POST", "/rules", rule)
        return found

    def proxy_rule(self, broker: str, rule_id: int) -> dict[str, Any]:
        """Returns what a rule of broker's proxy did so far."""
        found: dict[str, Any] = self._proxy(broker, "GET", f"/rules/{rule_id}")
        return found

    def proxy_end_rule(self, broker: str, rule_id: int, release_now: bool) -> dict[str, Any]:
        """Stops a rule of broker's proxy (releasing what it holds at once if asked);
        returns its report."""
        query = "?now=1" if release_now else ""
        found: dict[str, Any] = self._proxy(broker, "DELETE", f"/rules/{rule_id}{query}")
        return found

    def proxy_heal(self, broker: str) -> list[dict[str, Any]]:
        """Stops every rule of broker's proxy and releases everything; returns the
        rules' reports."""
        found: list[dict[str, Any]] = self._proxy(broker, "DELETE", "/rules")
        return found

    def proxy_stats(self, broker: str) -> dict[str, Any]:
        """Returns what passed broker's proxy, per client id."""
        found: dict[str, Any] = self._proxy(broker, "GET", "/stats")
        return found

    def proxy_ends(self, broker: str, since: float) -> list[dict[str, Any]]:
        """Returns the EndTxn requests that reached broker's proxy since a time (unix
        seconds), held or not."""
        found: list[dict[str, Any]] = self._proxy(broker, "GET", f"/ends?since={since:.6f}")
        return found

    def proxy_markers(self, broker: str, since: float) -> list[dict[str, Any]]:
        """Returns the transaction markers coordinators sent broker since a time."""
        found: list[dict[str, Any]] = self._proxy(broker, "GET", f"/markers?since={since:.6f}")
        return found
