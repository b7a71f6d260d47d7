"""Slow links: every frame between one partition leader and everyone who talks to it
(clients and other brokers), or to and from every broker, delivered DELAY_MS plus up to
JITTER_MS late, in order, by faultproxy: netem's delay and jitter, which this kernel
lacks (issue 37, item 1). Its stop records how many frames of which APIs were slowed
and by how much on average.
"""

from __future__ import annotations

from nemesis import proxy
from nemesis.core import Skipped, Value, current_leader, split_f

DELAY_MS = 50
"""Each frame's fixed delay, each way: a link a few hundred kilometres long, under the
clients' and the brokers' timeouts by two orders of magnitude."""
JITTER_MS = 50
"""Up to this much more, uniformly drawn per frame (the order of frames is kept)."""


class SlowLink(proxy.ProxyFault):
    """slow-leader or slow-network: start delays the links, stop restores them."""

    def invoke(self, f: str) -> Value:
        """Delays the links (start), or restores them and says what was slowed (stop)."""
        action, _ = split_f(f)
        if action == "start":
            if self.installed:
                raise Skipped(f"{self.fault} is on already")
            about: Value = {}
            brokers = self.cluster.brokers
            if self.fault == "slow-leader":
                target = current_leader(self.cluster, self.topic, self.rng)
                brokers, about = (
                    [target.node],
                    {"leader": target.node, "partition": target.partition},
                )
            rule = {
                "name": self.fault,
                "action": "delay",
                "direction": "both",
                "delay_ms": DELAY_MS,
                "jitter_ms": JITTER_MS,
            }
            self.installed = proxy.install(self.proxies, brokers, rule)
            return {"delayed_ms": [DELAY_MS, DELAY_MS + JITTER_MS], "brokers": brokers, **about}
        if not self.installed:
            raise Skipped(f"{self.fault} slows nothing")
        reports = proxy.end(self.proxies, self.take_installed(), release_now=True)
        frames = sum(sum((r.get("frames") or {}).values()) for r in reports)
        delayed_ms = sum(int(r.get("delayed_ms") or 0) for r in reports)
        done: Value = {
            "slowed": proxy.summary(reports, [])["held"],
            "connections": sum(int(r.get("conns") or 0) for r in reports),
            "mean_delay_ms": round(delayed_ms / frames, 1) if frames else 0.0,
        }
        if errors := [f"{r['broker']}: {r['error']}" for r in reports if "error" in r]:
            done["error"] = "; ".join(errors)
        return done
