"""One colour per fault kind, the same in every plot of every run (and for any page that
draws faults), keyed by the names `--nemesis` takes (nemesis/names.py).

A fault's colour never depends on which other faults share the run. Families share a
hue: network faults blue to purple, kills brown, pauses pink, isr-shrink olive, the
coordinators' faults gold to teal, power loss grey (of brokers) and slate (of the
metadata quorum), darker the more nodes it takes, file corruption khaki, the composed
power-loss scenarios indigo; late delivery teal, slow links periwinkle, the client faults
lavender, clock bumps steel blue and strobes mauve, darker the further down the targets'
list. None is the red, green or orange that mean lost, ok and info in the plots. A
renamed fault (kill-random) keeps its new name's colour.
"""

from __future__ import annotations

import colorsys

from nemesis.names import RENAMED, TARGETS

FAULT_COLOURS: dict[str, str] = {
    "partition-leader": "#1f77b4",
    "partition-random-halves": "#9ecae1",
    "partition-majorities-ring": "#17becf",
    "partition-zookeeper": "#08306b",
    "flaky-leader": "#6a51a3",
    "partition-controller-quorum": "#bcbddc",
    "partition-brokers-from-controllers": "#3f007d",
    "kill-leader": "#8c564b",
    "kill-one": "#c49c94",
    "kill-active-controller": "#543005",
    "kill-leader-and-followers": "#6b3d2e",
    "kill-minority": "#d2b48c",
    "kill-majority": "#7f4f24",
    "kill-brokers": "#3e2417",
    "kill-quorum-one": "#b08968",
    "kill-quorum-minority": "#ddb892",
    "kill-quorum-majority": "#9c6644",
    "kill-quorum": "#5e3023",
    "kill-txn-coordinator": "#b5651d",
    "kill-all": "#2b1a0f",
    "pause-leader": "#e377c2",
    "pause-one": "#f7b6d2",
    "pause-active-controller": "#ae017e",
    "pause-leader-and-followers": "#c51b8a",
    "pause-minority": "#fcc5c0",
    "pause-majority": "#dd3497",
    "pause-brokers": "#7a0177",
    "pause-quorum-one": "#fa9fb5",
    "pause-quorum-minority": "#fde0dd",
    "pause-quorum-majority": "#f768a1",
    "pause-quorum": "#49006a",
    "pause-txn-coordinator": "#f1c232",
    "pause-all": "#3f0030",
    "isr-shrink": "#bcbd22",
    "kill-coordinator": "#a6761d",
    "pause-coordinator": "#e6ab02",
    "partition-coordinator": "#01665e",
    "power-loss-one": "#bdbdbd",
    "power-loss-leader": "#969696",
    "power-loss-leader-and-followers": "#525252",
    "power-loss-minority": "#d9d9d9",
    "power-loss-majority": "#737373",
    "power-loss-brokers": "#252525",
    "power-loss-quorum-one": "#9fb3c8",
    "power-loss-quorum-minority": "#c6d2de",
    "power-loss-quorum-majority": "#6b7f94",
    "power-loss-quorum": "#2c3e50",
    "power-loss-active-controller": "#486581",
    "power-loss-coordinator": "#aaaaaa",
    "power-loss-txn-coordinator": "#666666",
    "power-loss-all": "#000000",
    "bitflip-log": "#5c4a1c",
    "truncate-log": "#8c6d31",
    "bitflip-index": "#a68a3c",
    "truncate-index": "#bd9e39",
    "bitflip-checkpoint": "#d4b96b",
    "truncate-checkpoint": "#e7cb94",
    "bitflip-metadata": "#c9b07a",
    "truncate-metadata": "#f2e2b6",
    "partition-power-loss": "#393b79",
    "pause-power-loss": "#6b6ecf",
    "late-produce": "#00a6a6",
    "late-end-txn": "#007c7c",
    "late-txn-requests": "#66c2c2",
    "late-txn-markers": "#004d4d",
    "late-replication": "#3fb8af",
    "slow-leader": "#8da0cb",
    "slow-network": "#4a5a8c",
    "partition-client-txn-coordinator": "#b2abd2",
    "partition-client-group-coordinator": "#8073ac",
    "pause-client": "#d8b5e6",
    "add-partitions": "#f781bf",
    "remove-controller": "#1b9e77",
    "remove-controller-partitioned": "#0b5d45",
    "decommission-broker": "#d95f02",
    "decommission-kill-leader": "#7f3a00",
    # Jepsen's NATS suite draws its membership package this green (nemesis.clj :perf).
    "remove-server": "#9ae48b",
}


def _shades(verb: str, hue: float, saturation: float) -> dict[str, str]:
    """Returns a colour for each target of a clock fault: one hue, from light to dark."""
    shades = {}
    for i, target in enumerate(TARGETS):
        value = 0.92 - 0.6 * i / (len(TARGETS) - 1)
        r, g, b = colorsys.hsv_to_rgb(hue, saturation, value)
        shades[f"{verb}-clock-{target}"] = (
            f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
        )
    return shades


FAULT_COLOURS |= _shades("bump", 0.58, 0.45) | _shades("strobe", 0.86, 0.3)
# The clients' clocks: the hues of the nodes', darkest (the clients stand past every node).
FAULT_COLOURS |= {"bump-clock-clients": "#1f3b57", "strobe-clock-clients": "#4d2a47"}
OTHER_FAULT = "#7f7f7f"
"""A fault the table does not name: one recorded elsewhere, or by an older harness."""


def fault_colour(fault: str) -> str:
    """Takes a fault's name (a window's "fault"). Returns its colour."""
    return FAULT_COLOURS.get(RENAMED.get(fault, fault), OTHER_FAULT)
