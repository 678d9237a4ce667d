"""The suite's xdist scheduler (``tests/fixtures/scheduling.py``): every test runs once, a
``SHARED`` module's tests on one worker, and a node's workload keeps only unfinished scopes.

Driven as xdist's DSession drives a scheduler (add_node, add_node_collection, schedule,
mark_test_complete, remove_node), with nodes that record what they are sent, as xdist's own
scheduler tests do; the truths are the collection itself and which node was sent what."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tests.fixtures.scheduling import SHARED, ModuleFixtureScheduling

SHARED_MODULE = next(iter(SHARED))
COLLECTION = [f"tests/unit/test_a.py::test_{i}" for i in range(7)] + \
    [f"{SHARED_MODULE}::test_{i}" for i in range(5)] + ["tests/unit/test_b.py::test_x"]


class Node:
    """What the scheduler sees of a worker: its id, the indexes it was sent, shutdown."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.extend(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def scheduler(nodes: list[Node]) -> Any:
    config = SimpleNamespace(getvalue=lambda name: [f"{len(nodes)}*popen"] if name == "tx" else None,
                             option=SimpleNamespace(loadscopereorder=True))
    sched = ModuleFixtureScheduling(config, log=SimpleNamespace(loadscopesched=lambda *a: None))
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, COLLECTION)
    sched.schedule()
    return sched


def run_all(sched: Any, nodes: list[Node]) -> dict[str, list[str]]:
    """Complete every sent test, a node at a time, until nothing is pending."""
    ran: dict[str, list[str]] = {n.gateway.id: [] for n in nodes}
    done = {n.gateway.id: 0 for n in nodes}
    while sched.has_pending:
        progressed = False
        for node in nodes:
            if done[node.gateway.id] < len(node.sent):
                index = node.sent[done[node.gateway.id]]
                done[node.gateway.id] += 1
                ran[node.gateway.id].append(COLLECTION[index])
                sched.mark_test_complete(node, index)
                progressed = True
        assert progressed, "tests pending that no node was sent"
    return ran


def test_every_test_runs_once_and_a_shared_module_on_one_node() -> None:
    nodes = [Node("gw0"), Node("gw1")]
    sched = scheduler(nodes)
    ran = run_all(sched, nodes)
    assert sorted(ran["gw0"] + ran["gw1"]) == sorted(COLLECTION)
    assert ran["gw0"] and ran["gw1"]  # spread over both
    holders = [n for n, tests in ran.items() if any(t.startswith(SHARED_MODULE) for t in tests)]
    assert len(holders) == 1
    assert sched.tests_finished
    # finished scopes left the workloads: nothing is kept but what is still to run
    assert all(not workload for workload in sched.assigned_work.values())
    assert all(n.shutting_down for n in nodes)


def test_a_crashed_node_gives_back_only_its_unfinished_tests() -> None:
    nodes = [Node("gw0"), Node("gw1")]
    sched = scheduler(nodes)
    first = nodes[0]
    finished = COLLECTION[first.sent[0]]
    sched.mark_test_complete(first, first.sent[0])
    unfinished = [COLLECTION[i] for i in first.sent[1:]]
    crashed = sched.remove_node(first)
    assert crashed == unfinished[0]  # the test it was running
    requeued = [t for unit in sched.workqueue.values() for t, ok in unit.items() if not ok]
    assert set(unfinished) <= set(requeued) and finished not in requeued
