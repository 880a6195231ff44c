"""A plain-Python statement of the placement rules, one event at a time: the oracle the numba kernel
and keyframe seek are checked against (fine for 72k events, far too slow for real use)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RefState:
    cpu: dict[int, int | None] = field(default_factory=dict)
    state: dict[int, str] = field(default_factory=dict)
    comm: dict[int, str] = field(default_factory=dict)
    running: dict[int, int | None] = field(default_factory=dict)  # cpu -> pid (0 idle, None unknown)

    def _task(self, pid: int) -> None:
        self.cpu.setdefault(pid, None)
        self.state.setdefault(pid, "sleeping")

    def apply(self, r: dict[str, Any]) -> None:
        k, pid = r["kind"], r["pid"]
        if k >= 8:
            return
        for p, name in ((pid, r["comm"]), (r["next_pid"], r["next_comm"]), (r["child_pid"], r["child_comm"])):
            if p and (k == 4 or p != r["next_pid"]) and (k == 5 or p != r["child_pid"]):
                self._task(p)
                self.comm[p] = name
        if k == 4:  # switch on cpu c
            c = r["cpu"]
            occ = self.running.get(c)
            if occ and occ != pid and self.state.get(occ) == "running" and self.cpu.get(occ) == c:
                self.state[occ] = "sleeping"  # its switch-out is missing from the trace
            if pid:
                ps = r["prev_state"] or ""
                if ps.startswith("R") or ps == "0":
                    self.state[pid] = "runnable"
                elif ps[:1] in ("X", "Z"):
                    self.state[pid] = "dead"
                elif self.state[pid] != "dead":
                    self.state[pid] = "sleeping"
                self.cpu[pid] = c
            nxt = r["next_pid"]
            if nxt:
                old = self.cpu[nxt]
                if old is not None and old != c and self.running.get(old) == nxt:
                    self.running[old] = None
                self.cpu[nxt] = c
                self.state[nxt] = "running"
            self.running[c] = nxt
        elif pid == 0:
            return
        elif k == 2:  # wakeup
            c = self.cpu[pid]
            if not (self.state[pid] == "running" and c is not None and self.running.get(c) == pid):
                self.cpu[pid] = r["target_cpu"]
                if self.state[pid] != "dead":
                    self.state[pid] = "runnable"
        elif k == 0:  # wakeup_new
            self.cpu[pid] = r["target_cpu"]
            self.state[pid] = "runnable"
        elif k == 3:
            self.cpu[pid] = r["dest_cpu"]
        elif k == 5:
            self.cpu[r["child_pid"]] = None
            self.state[r["child_pid"]] = "new"
        elif k == 6:
            self.state[pid] = "dead"
        elif k == 7 and r["old_pid"] and r["old_pid"] != pid:
            o = r["old_pid"]
            self._task(o)
            self.cpu[pid], self.state[pid] = self.cpu[o], self.state[o]
            oc = self.cpu[o]
            if oc is not None and self.running.get(oc) == o:
                self.running[oc] = pid
            self.state[o] = "dead"
