"""Cycles in the dependency graph (checkers/txn/graph.py), by kind: G0, G1c and their
-process and -realtime variants, one shortest cycle per strongly connected component.

The kinds are Elle's (elle/txn.clj `base-cycle-anomaly-specs` and
`cycle-anomaly-spec-variant`), without rw edges, which kafka.clj never draws:

| kind         | edges it may use              | edges it must use        |
| ------------ | ----------------------------- | ------------------------ |
| G0           | ww                            |                          |
| G1c          | wr                            | wr                       |
| G0-process   | ww, process                   | process                  |
| G1c-process  | wr, process                   | wr and process           |
| G0-realtime  | ww, process, realtime         | realtime                 |
| G1c-realtime | wr, process, realtime         | wr and realtime          |

G1c here never uses a ww edge, as in kafka.clj by default (its `:ww-deps` off): Kafka
isolates no transaction's writes from another's, so a cycle such as T0 -ww-> T1 -wr-> T0
is what its design allows (kafka.clj `allowed-error-types`: "When we include ww edges,
G1c is normal"), while one of reads alone is an anomaly at read_committed. Such mixed
cycles are reported only when asked (`--ww-deps`, kafka.clj's `:ww-deps`: cycle_kinds);
G0 reports the cycles of writes alone, which Kafka allows too, whatever was asked.

An edge of several labels is used as the first of them the kind may use, in the order
ww, wr, process, realtime (Elle's explainers try data dependencies first, and its
cycle explainer names a cycle by the edges so explained): a cycle whose every edge is ww
is G0 even where one of them is also real-time order, as in Elle. The -realtime kinds
may use process edges, which real-time order implies (a process runs one op at a time).
Real-time order comes through a tree (checkers/txn/realtime.py) whose edges into a
transaction carry the view of the kinds that may read them: a pair an edge of the kind
explains is that edge, never real-time order, as above; a run of tree nodes in a cycle
is read back as one real-time step, and costs the search one step.

The search: the strongly connected components of the whole graph first (a healthy
history has none of two or more transactions, and costs one linear pass); within each,
per kind, the components of the edges the kind may use; within each of those, a
breadth-first search from an edge's head back to its tail, over (node, labels used so
far), gives the shortest cycle through that edge using every required label. The start
edges are those going back in invoke order, which every cycle has (process and
real-time edges never do), the shortest steps back first, up to MAX_STARTS per
component and MAX_STATES states visited: the cycle reported is the shortest found.
`unresolved` counts the components that hold every required label but gave no cycle:
the budget ran out, or (with two required labels) no simple cycle uses both, though a
closed walk does. A kind's count is the
number of components with a cycle of it, as Elle reports one cycle per component; a kind
another found in the same component implies is not searched there (find_cycles).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from checkers.txn.graph import PROCESS, REALTIME, VIEWS, WR, WW, WW_DEPS_VIEWS, Deps

MAX_STARTS = 16
MAX_STATES = 200_000

Step = tuple[int, int, int]
"""One edge of a cycle: (from, to, the label it is used as)."""
Adjacency = dict[int, list[tuple[int, int]]]
"""A strongly connected part of the graph a kind may use: each transaction's successors
within it, with the label each edge is used as."""


@dataclass(frozen=True, slots=True)
class CycleKind:
    """A kind of cycle: its name, the labels its edges may have, and those it must use
    at least once each."""

    name: str
    allowed: int
    required: int


CYCLE_KINDS = (
    CycleKind("G0", WW, 0),
    CycleKind("G1c", WR, WR),
    CycleKind("G0-process", WW | PROCESS, PROCESS),
    CycleKind("G1c-process", WR | PROCESS, WR | PROCESS),
    CycleKind("G0-realtime", WW | PROCESS | REALTIME, REALTIME),
    CycleKind("G1c-realtime", WR | PROCESS | REALTIME, WR | REALTIME),
)
# Each real-time kind reads the real-time edges of its own view (checkers/txn/graph.py).
assert all(k.allowed & ~REALTIME in VIEWS for k in CYCLE_KINDS if k.allowed & REALTIME)
G1C_KINDS = tuple(k for k in CYCLE_KINDS if k.required & WR)
"""The kinds a cycle of reads makes: those --ww-deps lets use ww edges too."""


def cycle_kinds(ww_deps: bool) -> tuple[CycleKind, ...]:
    """Takes whether ww edges join G1c's (kafka.clj `:ww-deps`). Returns the kinds to
    search: with them, each G1c kind may use ww edges, and still needs a wr one (elle/
    txn.clj's G1c: ww and wr edges, at least one wr)."""
    if not ww_deps:
        return CYCLE_KINDS
    kinds = tuple(
        CycleKind(k.name, k.allowed | WW, k.required) if k in G1C_KINDS else k for k in CYCLE_KINDS
    )
    assert all(k.allowed & ~REALTIME in WW_DEPS_VIEWS for k in kinds if k.allowed & REALTIME)
    return kinds


@dataclass(slots=True)
class Found:
    """One kind's cycles, one per component that has one, and the number of components
    holding every required label that gave none (module docstring)."""

    cycles: list[list[Step]] = field(default_factory=list)
    unresolved: int = 0


IMPLIED = {
    "G0": ("G0-process", "G0-realtime"),
    "G0-process": ("G0-realtime",),
    "G1c": ("G1c-process", "G1c-realtime"),
    "G1c-process": ("G1c-realtime",),
}
"""The kinds a kind's cycle is one of too (elle/consistency_model.clj `implied-anomalies`:
a process runs one op at a time, so process order is real-time order), within its family.
Elle's G0 implies G1c as well; here G0 is searched without --ww-deps, where Jepsen draws
no ww edge, and is allowed while G1c is not: a G0 never hides a G1c."""


def find_cycles(
    deps: Deps, kinds: tuple[CycleKind, ...] = CYCLE_KINDS, unpruned: Collection[str] = ()
) -> dict[str, Found]:
    """Takes a dependency graph, the kinds to search (cycle_kinds, weakest last) and the
    kinds whose cycles prune no other (the ignored: a kind implied by an ignored one still
    counts). Returns, per kind, its cycles. In a component where a kind has a cycle, the
    kinds it implies (IMPLIED) are not searched, as Elle's cycle-cases-in-scc skips "a
    type we've already implied"."""
    found = {kind.name: Found() for kind in kinds}
    for component in strongly_connected(deps.succ, deps.ops):
        implied: set[str] = set()
        for kind in kinds:
            if kind.name in implied:
                continue
            for part in _kind_components(deps, component, kind):
                cycle = shortest_cycle(part, kind.required, deps.tree_nodes)
                if cycle is None:
                    found[kind.name].unresolved += 1
                    continue
                found[kind.name].cycles.append(cycle)
                if kind.name not in unpruned:
                    implied.update(IMPLIED.get(kind.name, ()))
    return found


def strongly_connected(
    succ: Mapping[int, Mapping[int, int]], first: Iterable[int] = ()
) -> Iterator[set[int]]:
    """Takes the edges out of each node and the nodes to start from first (then every
    node with an edge out). Yields each strongly connected component of two nodes or more
    (Tarjan's algorithm, its depth-first search kept on a list, not Python's stack)."""
    order: dict[int, int] = {}  # each node's place in the search
    low: dict[int, int] = {}  # the lowest place it reaches within its component
    stack: list[int] = []
    on_stack: set[int] = set()
    for root in (*first, *succ):
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        path = [(root, iter(succ.get(root, ())))]
        while path:
            node, out = path[-1]
            for nxt in out:
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    path.append((nxt, iter(succ.get(nxt, ()))))
                    break
                if nxt in on_stack and order[nxt] < low[node]:
                    low[node] = order[nxt]
            else:  # every edge out of node followed
                path.pop()
                if path and low[node] < low[path[-1][0]]:
                    low[path[-1][0]] = low[node]
                if low[node] == order[node]:
                    component = {node}
                    while (member := stack.pop()) != node:
                        component.add(member)
                    on_stack.difference_update(component)
                    if len(component) > 1:
                        yield component


def _kind_components(deps: Deps, component: set[int], kind: CycleKind) -> Iterator[Adjacency]:
    """Yields the strongly connected parts of a component's edges a kind may use, as
    Adjacency, where the kind's required labels all appear."""
    import networkx as nx  # only where a component has a cycle: a healthy history has none

    sub = nx.DiGraph()
    view = deps.views.get(kind.allowed & ~REALTIME, 0)  # the real-time edges the kind reads
    for u in sorted(component):
        for v, rels in deps.succ.get(u, {}).items():
            bits = rels & kind.allowed
            if bits & REALTIME and not rels & view:
                bits &= ~REALTIME  # another view's: an edge this kind may use explains it
            if bits and v in component:
                sub.add_edge(u, v, used=bits & -bits)
    for part in nx.strongly_connected_components(sub):
        if len(part) < 2:
            continue
        adjacency = {
            u: [(v, data["used"]) for v, data in sub.succ[u].items() if v in part] for u in part
        }
        present = 0
        for out in adjacency.values():
            for _, used in out:
                present |= used
        if present & kind.required == kind.required:
            yield adjacency


def shortest_cycle(
    part: Adjacency, required: int, tree_nodes: Collection[int] = frozenset()
) -> list[Step] | None:
    """Takes a strongly connected part's Adjacency, the labels a cycle must use and the
    nodes of real-time order's tree (checkers/txn/realtime.py). Returns the shortest
    simple cycle found in it that uses them all, as steps between transactions (a run of
    tree nodes read as one real-time step) from its lowest transaction, or None (module
    docstring)."""
    best: list[Step] | None = None
    visited = 0
    for u, v, used in _starts(part, tree_nodes):
        if visited >= MAX_STATES or (best is not None and len(best) == 2):
            break
        path, cost = _path_back(part, v, u, required, used, tree_nodes)
        visited += cost
        if path is None:
            continue
        cycle = _simple([(u, v, used), *path], required)
        cycle = None if cycle is None else _through_tree(cycle, tree_nodes)
        if cycle is not None and (best is None or len(cycle) < len(best)):
            best = cycle
    return None if best is None else _rotated(best)


def _through_tree(cycle: list[Step], tree_nodes: Collection[int]) -> list[Step]:
    """Takes a cycle. Returns it with each run of steps through tree nodes made one
    real-time step from the transaction before the run to the one after it."""
    out: list[Step] = []
    start = next(i for i, step in enumerate(cycle) if step[0] not in tree_nodes)
    for u, v, label in cycle[start:] + cycle[:start]:
        if u in tree_nodes:
            out[-1] = (out[-1][0], v, REALTIME)
        else:
            out.append((u, v, label))
    return out


def _rotated(cycle: list[Step]) -> list[Step]:
    # From its lowest transaction, so that one cycle always reads the same.
    first = min(range(len(cycle)), key=lambda i: cycle[i][0])
    return cycle[first:] + cycle[:first]


def _starts(part: Adjacency, tree_nodes: Collection[int]) -> list[Step]:
    # Every cycle has an edge that goes back in invoke order (nodes are invoke indexes),
    # and process and real-time edges never do: starting from those edges alone misses no
    # cycle. The shortest backward steps first, as the likeliest to close soon. A tree node
    # is numbered below every transaction: its edges go forward in time, never a start.
    backward = [
        (u, v, used)
        for u, out in part.items()
        for v, used in out
        if v < u and v not in tree_nodes and u not in tree_nodes
    ]
    backward.sort(key=lambda e: (e[0] - e[1], e))
    return backward[:MAX_STARTS]


def _path_back(
    part: Adjacency, start: int, goal: int, required: int, used: int, tree_nodes: Collection[int]
) -> tuple[list[Step] | None, int]:
    """Breadth-first from `start` to `goal` over (node, labels used), having used `used`
    already; a path reaching the goal must bring the labels up to `required`. A step into
    a tree node costs nothing, so that a path's length is its transactions, as if each run
    of tree nodes were one real-time edge (0-1 breadth-first search). Returns the path's
    steps (or None) and the states visited."""
    first = (start, used & required)
    parent: dict[tuple[int, int], tuple[tuple[int, int], int] | None] = {first: None}
    cost = {first: 0}
    queue = deque([first])
    expanded: set[tuple[int, int]] = set()
    while queue and len(parent) < MAX_STATES:
        state = queue.popleft()
        if state in expanded:  # put back in front at a lower cost, and expanded then
            continue
        expanded.add(state)
        node, mask = state
        if node == goal:
            if mask == required:
                return _unwound(parent, state), len(parent)
            continue  # the goal closes the cycle: never pass through it
        for nxt, label in part[node]:
            after = (nxt, mask | (label & required))
            free = nxt in tree_nodes
            reached = cost[state] + (0 if free else 1)
            if after in cost and cost[after] <= reached:
                continue
            cost[after], parent[after] = reached, (state, label)
            if free:
                queue.appendleft(after)
            else:
                queue.append(after)
    return None, len(parent)


def _unwound(
    parent: dict[tuple[int, int], tuple[tuple[int, int], int] | None], end: tuple[int, int]
) -> list[Step]:
    steps: list[Step] = []
    state = end
    link = parent[state]
    while link is not None:
        before, label = link
        steps.append((before[0], state[0], label))
        state, link = before, parent[before]
    steps.reverse()
    return steps


def _simple(walk: list[Step], required: int) -> list[Step] | None:
    """Takes a closed walk. Returns it if no transaction repeats in it; else the first
    simple cycle within it that still uses every required label, or None."""
    seen: dict[int, int] = {}
    for i, (u, _, _) in enumerate(walk):
        if u in seen:
            inner = walk[seen[u] : i]
            outer = walk[: seen[u]] + walk[i:]
            for piece in (inner, outer):
                cycle = _simple(piece, required)
                if cycle is not None:
                    return cycle
            return None
        seen[u] = i
    labels = 0
    for step in walk:
        labels |= step[2]
    return walk if labels & required == required else None
