"""Migration classification at ingest (level by topology, cause by what the task was doing), on the
real g4 events laid on 2-CPU topologies built here, and a fork-placement case built from rows."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from test_helpers import ingest

from placemap.schema.events import EVENT_SCHEMA
from placemap.schema.models.topology_schema import Cpu, Llc, NumaNode, Topology
from placemap.store import Store


def two_cpus(relation: str) -> Topology:
    """CPU 0 and 1 as SMT siblings, cores of one LLC, LLCs of one node, or on two sockets/nodes."""
    core = {"smt": (0, 0)}.get(relation, (0, 1))
    llc = {"smt": (0, 0), "llc": (0, 0)}.get(relation, (0, 1))
    node = (0, 1) if relation == "cross_node" else (0, 0)
    cpus = [
        Cpu(cpu=c, online=True, core=core[c], llc=llc[c], numa_node=node[c], package=node[c],
            smt_siblings=[0, 1] if relation == "smt" else [c])
        for c in (0, 1)
    ]  # fmt: skip
    llcs = [
        Llc(id=i, cpus=[c for c in (0, 1) if llc[c] == i], numa_nodes=[node[i]]) for i in sorted(set(llc))
    ]
    nodes = [NumaNode(id=n, cpus=[c for c in (0, 1) if node[c] == n]) for n in sorted(set(node))]
    dist = [[10, 32], [32, 10]] if len(nodes) == 2 else [[10]]
    return Topology(machine=f"test-{relation}", source="manual", cpus=cpus, llcs=llcs, numa_nodes=nodes,
                    node_distances=dist)  # fmt: skip


def _metrics(store: Store, rid: str) -> dict[str, Any]:
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    m: dict[str, Any] = json.loads(blob)
    return m


def _reference_causes(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The cause rule, event by event: waking without wakeup yet -> wakeup; forked without
    wakeup_new yet -> fork; otherwise balance."""
    waking: set[int] = set()
    forked: set[int] = set()
    out = {"wakeup": 0, "fork": 0, "balance": 0}
    for r in rows:
        k, pid = r["kind"], r["pid"]
        if k == 1:
            waking.add(pid)
        elif k == 2:
            waking.discard(pid)
        elif k == 5:
            forked.add(r["child_pid"])
            waking.discard(r["child_pid"])
        elif k == 0:
            forked.discard(pid)
        elif k == 3:
            out["wakeup" if pid in waking else "fork" if pid in forked else "balance"] += 1
    return out


@pytest.mark.parametrize("relation", ["smt", "llc", "node", "cross_node"])
def test_every_g4_migration_gets_the_level_of_its_cpu_pair(
    store: Store, g4_table: pa.Table, relation: str
) -> None:
    rid = ingest(store, g4_table, topology=two_cpus(relation))
    m = _metrics(store, rid)
    # the VM has CPUs 0 and 1 only: every migration goes between them, so all take one level
    expected = {lvl: (629 if lvl == relation else 0) for lvl in ("smt", "llc", "node", "cross_node")}
    assert m["migrations"]["by_level"] == expected
    assert m["migrations"]["total"] == 629
    assert m["wakeups"]["by_level"][relation] == m["wakeups"]["total"] - m["wakeups"]["same_cpu"] == 293


def test_causes_follow_the_rule(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, topology=two_cpus("cross_node"))
    m = _metrics(store, rid)
    assert m["migrations"]["by_cause"] == _reference_causes(g4_table.to_pylist())
    assert m["migrations"]["by_cause"] == {"wakeup": 293, "fork": 0, "balance": 336}
    assert m["migrations"]["by_level_cause"]["cross_node"] == m["migrations"]["by_cause"]


def _row(ts: int, kind: int, pid: int, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {name: None for name in EVENT_SCHEMA.names}
    row.update(ts_ns=ts, cpu=kw.pop("cpu", 0), kind=kind, cur_pid=1, pid=pid, comm=f"t{pid}", **kw)
    return row


def test_fork_cause_until_wakeup_new(store: Store) -> None:
    rows = [
        _row(1, 5, 1, child_pid=100, child_comm="child"),  # fork: 100 is new
        _row(2, 3, 100, orig_cpu=0, dest_cpu=1),  # placed before wakeup_new: fork
        _row(3, 0, 100, target_cpu=1),  # wakeup_new
        _row(4, 3, 100, orig_cpu=1, dest_cpu=0),  # nothing pending: balance
        _row(5, 1, 100, cpu=1, target_cpu=0),  # waking (prev CPU 0)
        _row(6, 3, 100, orig_cpu=0, dest_cpu=1),  # between waking and wakeup: wakeup
        _row(7, 2, 100, target_cpu=1),  # woke on 1, last ran on 0: a cross_node wakeup
    ]
    rid = ingest(store, pa.Table.from_pylist(rows, schema=EVENT_SCHEMA), topology=two_cpus("cross_node"))
    m = _metrics(store, rid)
    assert m["migrations"]["by_cause"] == {"wakeup": 1, "fork": 1, "balance": 1}
    # the waker ran on CPU 1, the other node's LLC, and the task woke there: on the waker's CPU
    by_waker = {"shared_llc": 0, "cross_llc": 1, "to_waker_llc": 1, "to_prev_llc": 0, "elsewhere": 0,
                "on_waker_cpu": 1, "still_running": 0, "unknown": 0}  # fmt: skip
    by_level = {"smt": 0, "llc": 0, "node": 0, "cross_node": 1}
    # and by LLC pair: from the waker's LLC 1 into LLC 1
    pairs = {"llcs": 2, "pairs": [[1, 1, 1]]}
    assert m["wakeups"] == {
        "total": 1,
        "same_cpu": 0,
        "by_level": by_level,
        "by_waker": by_waker,
        "llc_pairs": pairs,
    }
