"""The cost model (placement-model.md section 4): how placement turns into time.

Every parameter is a named module constant, set once for all runs (never per table or per
scenario); each carries its source or reasoning. Times in nanoseconds.

CFS tunables are the kernel defaults scaled for >= 8 CPUs (SCHED_TUNABLESCALING_LOG:
factor 1 + ilog2(min(ncpus, 8)) = 4), as on every preset machine.
"""

from __future__ import annotations

from typing import Final

# --- CPU sharing (CFS, v6.0-v6.5) -------------------------------------------------------
# sysctl_sched_latency 6 ms x 4: the period over which runnable tasks each get a slice.
SCHED_LATENCY_NS: Final = 24_000_000
# sysctl_sched_min_granularity 0.75 ms x 4: the shortest slice.
SCHED_MIN_GRANULARITY_NS: Final = 3_000_000
# sysctl_sched_wakeup_granularity 1 ms x 4: a wakee preempts the current task when its
# vruntime is this much smaller (check_preempt_wakeup / wakeup_preempt_entity).
SCHED_WAKEUP_GRANULARITY_NS: Final = 4_000_000
# GENTLE_FAIR_SLEEPERS: a waking sleeper is placed at min_vruntime - latency/2.
SLEEPER_CREDIT_NS: Final = SCHED_LATENCY_NS // 2
# Cost of a context switch on the CPU (switch_mm/register state, cache disturbance):
# lmbench lat_ctx and will-it-scale context_switch1 on Zen3/ICX give 1-2 us per switch pair.
CONTEXT_SWITCH_NS: Final = 1_500
# The periodic tick (HZ=250) that drives periodic load balancing.
TICK_NS: Final = 4_000_000

# --- SMT -----------------------------------------------------------------------------
# Two busy hyperthreads of one core each run at about 0.6x a lone thread (throughput gain
# of SMT around 1.2x on integer/server workloads; placement-model.md gives "about 0.6x").
SMT_SPEED: Final = 0.6

# --- Wakeup latency --------------------------------------------------------------------
# Exit from a shallow idle state (C1, MWAIT): cpuidle exit_latency 1-2 us on Zen3 and ICX.
IDLE_EXIT_NS: Final = 2_000
# After a long idle the menu governor has chosen a deeper state (Zen3 C2 ~ 18-20 us exit as
# /sys/devices/system/cpu/cpu*/cpuidle/state2/latency reports; ICX C1E 10 us, C6 ~100+ us).
IDLE_EXIT_DEEP_NS: Final = 20_000
# The menu governor picks the deeper state once a CPU has been idle this long (its predicted
# idle then exceeds C2's target residency by a wide margin).
DEEP_IDLE_AFTER_NS: Final = 2_000_000
# A wakeup onto an LLC whose every CPU has been in deep idle that long: the whole LLC was
# power-gated with its cache flushed (Zen3: a CCX whose cores are all in CC6 flushes and gates
# its L3; a Xeon socket in package C6 likewise). On top of the core's exit, the path from the
# wakeup to the wakee's first user instruction (the wake IPI handler, the runqueue, the
# wakee's task_struct, kernel stack and page-table walks, the futex and data lines the waker
# wrote) misses in a cold LLC: a few hundred lines from DRAM or the waker's LLC at ~100 ns
# instead of L3 hits at ~12 ns, ~20 us. The RFC's schbench shows its size: a worker woken on
# the messenger's (awake) LLC has a p99 of 17-18 us against 37 us on its own idle LLC.
# Only split LLCs (an LLC smaller than its package, a CCX) are gated on their own; a unified
# LLC is the whole socket's and sleeps only in package C6, which server firmware defaults
# commonly disable (and the RFC's Xeon shows no such gap: 18 us at 1 worker, hints or not).
LLC_WAKE_NS: Final = 20_000
# Remote wakeup: the wakee is queued on the target's wake list and an IPI sent
# (ttwu_queue_wakelist); delivery and handling cost by distance between waker and target.
WAKE_IPI_SAME_LLC_NS: Final = 1_000
WAKE_IPI_CROSS_LLC_NS: Final = 4_000
WAKE_IPI_CROSS_NODE_NS: Final = 6_000
# Work the wakee must redo when the waker's data is in another LLC of the same socket:
# cross-CCX cache-to-cache transfer ~100-120 ns per line on Zen3 against ~30 ns within the CCX,
# for the few dozen lines a message touches.
CROSS_LLC_WAKE_NS: Final = 4_000
# Same across a socket (Infinity Fabric / UPI hop: ~200-250 ns per line).
CROSS_NODE_WAKE_NS: Final = 9_000
# A wakeup on a CPU that shares the LLC with the waker but not the core (L2 miss, L3 hit).
SAME_LLC_WAKE_NS: Final = 500
# try_to_wake_up() tests a CPU for idleness in select_task_rq() and marks it busy only later,
# when ttwu_queue() writes its ttwu_pending (set_task_cpu() and the wakelist queueing between):
# a select_task_rq() on another CPU within that time still reads it as idle, and both wakees
# are queued there (Chen Yu's analysis of the context_switch1 collapse behind SIS_SHORT,
# 373e6886e274 v6: "race condition between select_task_rq() and the task enqueue"). Its length:
# the tail of select_task_rq_fair() and set_task_cpu(), a few hundred ns of a ~2 us wakeup; an
# estimate, not fitted. An idle CPU's idle exit (IDLE_EXIT_NS) is longer, so the first wakee
# has not started when the window closes.
WAKE_SELECT_RACE_NS: Final = 500

# --- Migration ---------------------------------------------------------------------------
# A migrated task refills its working set (Task.wss_kb, set by the workload) on its next run,
# charged once as extra work. From another LLC the lines come from DRAM or a remote LLC at
# ~10 GB/s effective for dependent misses: 100 ns per KiB; across a node boundary remote DRAM
# is ~1.5x slower.
COLD_NS_PER_KB: Final = 100
COLD_CACHE_NUMA_FACTOR: Final = 1.5
# Within the LLC only the private L2 is cold (L3 hits at ~40 GB/s: 25 ns per KiB), and only up
# to the L2's size (512 KiB on Zen3, 1.25 MiB on ICX: 1 MiB taken).
COLD_NS_PER_KB_SAME_LLC: Final = 25
L2_KB: Final = 1024
# The refill never exceeds an LLC's worth (a 32 MiB Zen3 L3).
COLD_MAX_KB: Final = 32 * 1024

# --- Memory bandwidth ------------------------------------------------------------------
# A memory-bound thread alone streams ~15 GB/s (single-thread Stream Triad 17 GB/s on ICX,
# Copy 28 GB/s; ~12-15 GB/s on Zen3).
THREAD_BANDWIDTH_MBS: Final = 15_000
# A split LLC reaches memory through its own link, whose ceiling grows with its cores: a Zen3
# CCX (8 cores) reaches ~28 GB/s through its GMI link (3.5 GB/s per core). An LLC that spans
# its whole node (a unified-LLC Xeon) has no such link: its cores sit on the same mesh as the
# memory controllers, so there only the node's channels bind.
LLC_BANDWIDTH_PER_CORE_MBS: Final = 3_500
# A socket's 8 channels of DDR4-3200 give ~150 GB/s of Stream bandwidth on Zen3 and ICX; an
# NPS2/NPS4 node gets its share of the channels. The channels are a queue: a thread's
# bandwidth is its outstanding misses over the loaded memory latency (Little's law), and that
# latency grows with the demand on the channels, so each added stream on a node slows the
# others long before the ceiling (ICX Stream Copy: 28 GB/s alone, 24.5 each for 2 threads on a
# socket, 14 each for 8). Total = demand / (1 + demand / ceiling).
SOCKET_BANDWIDTH_MBS: Final = 150_000

# --- Scheduler overheads ------------------------------------------------------------------
# One idle check of a remote runqueue in select_idle_cpu (a cache miss on its rq line).
SIS_SCAN_COST_PER_CPU_NS: Final = 40
# newidle_balance() per domain: update_sd_lb_stats walks every CPU of the span.
NEWIDLE_LB_BASE_NS: Final = 2_000
NEWIDLE_LB_PER_CPU_NS: Final = 100
# STEAL: a bitmap search and one task move within the LLC (Sistare: 1-2 us).
STEAL_COST_NS: Final = 1_500


def _saturate(n: int, cap: float) -> float:
    """Total bandwidth of n streams through a link of ceiling cap: a smooth min(n * thread,
    cap), so that contention starts before the ceiling is reached."""
    x = n * THREAD_BANDWIDTH_MBS
    return float(x / (1.0 + (x / cap) ** 2) ** 0.5)


def _queue(n: int, cap: float) -> float:
    """Total bandwidth of n streams on memory channels of ceiling cap: the demand slowed by
    the loaded latency, demand / (1 + demand / cap)."""
    x = n * THREAD_BANDWIDTH_MBS
    return float(x / (1.0 + x / cap))


def mem_speed(n_llc: int, n_node: int, llc_cores: int, nodes_per_socket: int, node_cores: int = 0) -> float:
    """Speed factor (0..1] of a memory-bound task sharing its LLC (of llc_cores cores) with
    n_llc and its node (1/nodes_per_socket of a socket, of node_cores cores; 0: unknown, the
    LLC taken as split) with n_node running memory-bound tasks, itself included."""
    if n_llc <= 0 or n_node <= 0:
        return 1.0
    per = min(float(THREAD_BANDWIDTH_MBS), _queue(n_node, SOCKET_BANDWIDTH_MBS / nodes_per_socket) / n_node)
    if not node_cores or llc_cores < node_cores:
        per = min(per, _saturate(n_llc, LLC_BANDWIDTH_PER_CORE_MBS * llc_cores) / n_llc)
    return per / THREAD_BANDWIDTH_MBS


def initial_util(cpu_util: float, cpu_load: float) -> float:
    """post_init_entity_util_avg(): a new task's utilization on the CPU it was placed on (not
    its parent's): its share of that CPU's utilization by weight, capped at half the spare
    capacity; on an idle CPU (no utilization) the whole cap, 512. A child that sleeps right
    away leaves that much blocked utilization behind, which is what the next fork's tie-break
    by utilization (update_pick_idlest, fork_spread) sees."""
    cap = max(0.0, (1024.0 - cpu_util) / 2)
    if cpu_util <= 0.0:
        return cap
    return min(cpu_util * 1024.0 / (cpu_load + 1.0), cap)


def newidle_lb_cost_ns(weight: int) -> int:
    """Cost of one newly idle load_balance() over a domain of `weight` CPUs."""
    return NEWIDLE_LB_BASE_NS + NEWIDLE_LB_PER_CPU_NS * weight


def llc_wake_ns(llc_cpus: int, package_cpus: int) -> int:
    """Extra wakeup latency onto an LLC that was asleep (see LLC_WAKE_NS)."""
    return LLC_WAKE_NS if llc_cpus < package_cpus else 0


def wake_transfer_ns(level: str) -> int:
    """Extra work of a wakee whose waker ran `level` away ("", smt, llc, pkg, numa)."""
    if level == "numa":
        return CROSS_NODE_WAKE_NS
    if level == "pkg":
        return CROSS_LLC_WAKE_NS
    if level == "llc":
        return SAME_LLC_WAKE_NS
    return 0


def wake_ipi_ns(level: str) -> int:
    """Delay before a woken task can run on an idle remote CPU, by waker-target distance."""
    if level == "numa":
        return WAKE_IPI_CROSS_NODE_NS
    if level == "pkg":
        return WAKE_IPI_CROSS_LLC_NS
    if level in ("llc", "smt"):
        return WAKE_IPI_SAME_LLC_NS
    return 0


def cold_cache_ns(level: str, wss_kb: int) -> int:
    """Working-set refill after a migration of `level` for a working set of wss_kb."""
    if level in ("pkg", "numa"):
        ns = min(wss_kb, COLD_MAX_KB) * COLD_NS_PER_KB
        return int(ns * COLD_CACHE_NUMA_FACTOR) if level == "numa" else ns
    if level == "llc":
        return min(wss_kb, L2_KB) * COLD_NS_PER_KB_SAME_LLC
    return 0  # an SMT sibling shares the core's caches


def cold_cache_ns_at(level_index: int, wss_kb: int) -> int:
    """cold_cache_ns by the level's SchedDomains.level_index (domains.LEVEL_NAMES: 2 llc,
    3 pkg, 4 numa), for the engine's migrations: no level name to look up and compare."""
    if level_index >= 3:
        ns = min(wss_kb, COLD_MAX_KB) * COLD_NS_PER_KB
        return int(ns * COLD_CACHE_NUMA_FACTOR) if level_index == 4 else ns
    if level_index == 2:
        return min(wss_kb, L2_KB) * COLD_NS_PER_KB_SAME_LLC
    return 0


def params() -> dict[str, float]:
    """Every parameter by name (for the report and the API)."""
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, int | float)}


# --- Messages read on another LLC (appended; used by workloads/hackbench.py) ----------------
# A pipe or socket message read on another LLC than the one it was written on: its data (100
# bytes: 2 lines) and the lines its writer dirtied to queue it (the pipe_buffer slot or skb,
# the pipe's head and the reader's wait queue: ~4 more) come from the writer's cache instead
# of the reader's own L3. Per line the extra over an L3 hit is the cross-CCX cache-to-cache
# latency less an L3 hit (~110 - 30 ns on Zen3: CROSS_LLC_WAKE_NS's figures), and across a
# socket ~230 - 30 ns (CROSS_NODE_WAKE_NS's figures). The wakeup charges (CROSS_*_WAKE_NS)
# stay the wakee's first touch of its waker's data; this is each message's own lines, and a
# receiver woken once may read hundreds of messages.
MSG_LINES: Final = 6
MSG_LINE_CROSS_LLC_NS: Final = 80
MSG_LINE_CROSS_NODE_NS: Final = 200


def line_transfer_ns(level: str) -> int:
    """Extra cost of one cache line last dirtied `level` away ("", smt, llc, pkg, numa)."""
    if level == "numa":
        return MSG_LINE_CROSS_NODE_NS
    if level == "pkg":
        return MSG_LINE_CROSS_LLC_NS
    return 0


def msg_transfer_ns(level: str) -> int:
    """Extra cost of reading one message written `level` away."""
    return MSG_LINES * line_transfer_ns(level)


# --- Request/response data read on another LLC (appended; used by workloads/pairs.py) -------
# The same per-line transfer as msg_transfer_ns for a message of `nbytes`: its data lines
# (64 bytes each) plus the lines its writer dirtied to queue it (MSG_LINES less hackbench's two
# data lines: the socket buffer head, the receive queue and the wait queue).
CACHE_LINE_BYTES: Final = 64
MSG_QUEUE_LINES: Final = MSG_LINES - 2


def data_transfer_ns(level: str, nbytes: int) -> int:
    """Extra cost of reading a message of nbytes written `level` away."""
    return (MSG_QUEUE_LINES + -(-nbytes // CACHE_LINE_BYTES)) * line_transfer_ns(level)


# --- The writer's side of a pipe shared across LLCs (appended; used by workloads/hackbench.py) --
# pipe_write() takes pipe->mutex, reads tail and writes head (struct pipe_inode_info: the
# mutex and rd_wait share its first line, head and tail its second), fills the pipe_buffer slot
# at head and appends to the last page (PIPE_BUF_FLAG_CAN_MERGE: a 100-byte message lands next
# to the previous one). Those lines were last dirtied by whoever used the pipe last: its reader
# (mutex, tail) or another of its 20 writers (mutex, head, slot, page). From another LLC each
# comes at the same per-line cost as a message read there (msg_transfer_ns's figures). The
# reader's own side is msg_transfer_ns (the lines the writer dirtied to queue the message).
PIPE_WRITE_LINES: Final = 4


def pipe_write_transfer_ns(level: str) -> int:
    """Extra cost of one pipe write whose pipe was last used `level` away."""
    return PIPE_WRITE_LINES * line_transfer_ns(level)
