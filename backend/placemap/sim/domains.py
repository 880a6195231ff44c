"""Scheduling domains built from a Topology the way kernel/sched/topology.c does.

Levels, bottom up (x86_topology / sched_init_numa):
- SMT: the core's threads (SD_SHARE_CPUCAPACITY | SD_SHARE_LLC), imbalance_pct 110.
- MC: the LLC (SD_SHARE_LLC), imbalance_pct 117. Absent with NO_MC (CONFIG_SCHED_MC=n).
- PKG (formerly DIE): cpu_cpu_mask, i.e. the CPU's NUMA node. x86 drops it when a node is
  smaller than its package (x86_has_numa_in_package: AMD NPS2/NPS4, Intel SNC).
- NODE: numa level 0, the node itself (no SD_NUMA), usually degenerate against PKG.
- NUMA: one level per larger SLIT distance, SD_NUMA | SD_SERIALIZE, overlapping groups; beyond
  node_reclaim_distance a level loses SD_BALANCE_FORK/EXEC and SD_WAKE_AFFINE.

A level whose span equals its child's is degenerate and removed (sd_parent_degenerate). The
allowed NUMA imbalance `imb_numa_nr` is computed before degeneration, as build_sched_domains
does (v5.18+): for the first domain above the LLC, its number of LLCs (span/8 when it holds one
LLC), scaled for higher domains by span / span of the first SD_NUMA domain.

With NO_MC the first level above SMT also carries SD_SHARE_LLC: the placement model asks that
the wakeup scan then cover that level (the socket in NPS1), rather than the kernel's degenerate
result of scanning only the SMT siblings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from placemap.sim.topology import Topology

SD_BALANCE_NEWIDLE: Final = 1 << 0
SD_BALANCE_EXEC: Final = 1 << 1
SD_BALANCE_FORK: Final = 1 << 2
SD_BALANCE_WAKE: Final = 1 << 3
SD_WAKE_AFFINE: Final = 1 << 4
SD_SHARE_CPUCAPACITY: Final = 1 << 5
SD_SHARE_LLC: Final = 1 << 6  # SD_SHARE_PKG_RESOURCES before v6.8
SD_SHARE_PKG_RESOURCES: Final = SD_SHARE_LLC
SD_SERIALIZE: Final = 1 << 7
SD_PREFER_SIBLING: Final = 1 << 8
SD_OVERLAP: Final = 1 << 9
SD_NUMA: Final = 1 << 10

FLAG_NAMES: Final = {
    SD_BALANCE_NEWIDLE: "SD_BALANCE_NEWIDLE",
    SD_BALANCE_EXEC: "SD_BALANCE_EXEC",
    SD_BALANCE_FORK: "SD_BALANCE_FORK",
    SD_BALANCE_WAKE: "SD_BALANCE_WAKE",
    SD_WAKE_AFFINE: "SD_WAKE_AFFINE",
    SD_SHARE_CPUCAPACITY: "SD_SHARE_CPUCAPACITY",
    SD_SHARE_LLC: "SD_SHARE_LLC",
    SD_SERIALIZE: "SD_SERIALIZE",
    SD_PREFER_SIBLING: "SD_PREFER_SIBLING",
    SD_OVERLAP: "SD_OVERLAP",
    SD_NUMA: "SD_NUMA",
}

# sd_init(): the defaults every level starts from.
_SD_DEFAULT: Final = (
    SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING
)


def flag_names(flags: int) -> list[str]:
    return [name for bit, name in FLAG_NAMES.items() if flags & bit]


class Domain:
    """One CPU's sched_domain at one level (spans and groups as ascending CPU tuples).

    A plain class rather than a dataclass: compiled, a dataclass's __init__ is the one the
    dataclasses module generates, run interpreted (about 1.7 us per Domain, a thousand per
    build of a 256-CPU machine); this one is native."""

    __slots__ = (
        "busy_factor",
        "cache_nice_tries",
        "flags",
        "group_ids",
        "groups",
        "imb_numa_nr",
        "imbalance_pct",
        "kind",
        "max_interval_ms",
        "min_interval_ms",
        "name",
        "numa_distance",
        "span",
        "span_set",
    )

    def __init__(
        self,
        *,
        name: str,
        kind: str,
        span: tuple[int, ...],
        span_set: frozenset[int],
        groups: tuple[tuple[int, ...], ...],
        flags: int,
        imbalance_pct: int,
        cache_nice_tries: int,
        imb_numa_nr: int,
        min_interval_ms: int,
        max_interval_ms: int,
        busy_factor: int,
        numa_distance: int,
        group_ids: tuple[int, ...] = (),
    ) -> None:
        self.name = name  # SMT, MC, PKG, NODE, NUMA
        self.kind = kind  # counter key of a move within this level: smt, llc, pkg, numa
        self.span = span
        self.span_set = span_set
        self.groups = groups  # local group first, as build_sched_groups orders them
        self.flags = flags
        self.imbalance_pct = imbalance_pct
        self.cache_nice_tries = cache_nice_tries
        self.imb_numa_nr = imb_numa_nr
        self.min_interval_ms = min_interval_ms
        self.max_interval_ms = max_interval_ms
        self.busy_factor = busy_factor
        self.numa_distance = numa_distance  # 0 below the NUMA levels
        # index in SchedDomains.group_cpus of each group (State.group_rqs holds their runqueues)
        self.group_ids = group_ids

    @property
    def weight(self) -> int:
        return len(self.span)

    def __repr__(self) -> str:
        return f"Domain({self.name}, {len(self.span)} CPUs, {len(self.groups)} groups, flags {self.flags:#x})"


@dataclass(frozen=True, slots=True)
class _Level:
    name: str
    flags: int
    spans: tuple[frozenset[int], ...]  # indexed by CPU
    numa_distance: int


def _levels(topo: Topology, no_mc: bool) -> list[_Level]:
    n = topo.nr_cpus
    empty: frozenset[int] = frozenset()
    out: list[_Level] = []
    online = topo.online
    cpus = topo.cpus

    # every distinct span as one object, whatever level it comes from (a NODE span equal to
    # its PKG span is the PKG span's set): the build's dictionaries keyed by spans and its
    # span comparisons then find equal spans by identity instead of comparing two sets of up
    # to a few hundred CPUs element by element (their hashes are equal, so every lookup did)
    canon: dict[frozenset[int], frozenset[int]] = {}

    def spans(key: list[int], span_of: dict[int, tuple[int, ...]]) -> tuple[frozenset[int], ...]:
        """Per CPU, the set span_of[key[cpu]]: one frozenset per distinct key, shared by the CPUs
        that have it (built once, not per CPU), and by the levels that have it (canon)."""
        sets: dict[int, frozenset[int]] = {}
        out_: list[frozenset[int]] = []
        for c in range(n):
            if not online[c]:
                out_.append(empty)
                continue
            k = key[c]
            s = sets.get(k)
            if s is None:
                s = frozenset(span_of[k])
                s = sets[k] = canon.setdefault(s, s)
            out_.append(s)
        return tuple(out_)

    ident = list(range(n))
    out.append(
        _Level("SMT", SD_SHARE_CPUCAPACITY | SD_SHARE_LLC, spans(ident, dict(enumerate(topo.siblings))), 0)
    )
    node_of = list(topo.node_of)
    nodes = dict(enumerate(topo.node_cpus))
    if not no_mc:
        out.append(_Level("MC", SD_SHARE_LLC, spans(list(topo.llc_of), dict(enumerate(topo.llc_cpus))), 0))
    package_sets: dict[int, set[int]] = {}
    for c in cpus:
        package_sets.setdefault(topo.package_of[c], set()).add(c)
    # per (node, package) pair once, not per CPU
    pairs = {(topo.node_of[c], topo.package_of[c]) for c in cpus}
    numa_in_package = any(set(topo.node_cpus[n]) != package_sets[pk] for n, pk in sorted(pairs))
    if not numa_in_package:
        out.append(_Level("PKG", 0, spans(node_of, nodes), 0))
    dists = sorted({d for row in topo.distances for d in row})
    for j, d in enumerate(dists):
        # the CPUs of every node within distance d of a node, per node
        within: dict[int, tuple[int, ...]] = {}
        for node in range(len(topo.node_cpus)):
            row = topo.distances[node]
            within[node] = tuple(x for i, cs in enumerate(topo.node_cpus) if row[i] <= d for x in cs)
        if j == 0:
            out.append(_Level("NODE", 0, spans(node_of, within), 0))
        else:
            out.append(_Level("NUMA", SD_NUMA, spans(node_of, within), d))
    if no_mc:
        # The level above SMT becomes the LLC-sharing scan domain (see module docstring).
        lv = out[1]
        out[1] = _Level(lv.name, lv.flags | SD_SHARE_LLC, lv.spans, lv.numa_distance)
    return out


def _sd_flags(level: _Level, reclaim: int) -> tuple[int, int, int]:
    """sd_init(): flags, imbalance_pct, cache_nice_tries."""
    flags = _SD_DEFAULT | level.flags
    if flags & SD_SHARE_CPUCAPACITY:
        return flags, 110, 0
    if flags & SD_SHARE_LLC:
        return flags, 117, 1
    if flags & SD_NUMA:
        flags = (flags & ~SD_PREFER_SIBLING) | SD_SERIALIZE | SD_OVERLAP
        if level.numa_distance > reclaim:
            flags &= ~(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE)
        return flags, 117, 2
    return flags, 117, 1


class _Partition:
    """How the child spans of one span's CPUs cut it, when they partition it (every level but
    overlapping NUMA ones): per group (child span), its CPUs' positions in the span
    (ascending), its sorted tuple and its uid; the group at each position; and, per position, the next
    position of the same group (its first position + len(span) past the last one: the walk
    wraps)."""

    __slots__ = ("group_at", "next_pos", "positions", "tuples", "uids")

    def __init__(
        self, positions: list[list[int]], tuples: list[tuple[int, ...]], uids: list[Any], group_at: list[int]
    ) -> None:
        self.positions = positions
        self.tuples = tuples
        # _Build uid of each group, as the int objects themselves (compiled, a list[int] item
        # read into a tuple is unboxed and boxed again: an allocation per uid above 256)
        self.uids = uids
        self.group_at = group_at
        n = len(group_at)
        next_pos = [0] * n
        for pos in positions:
            for j in range(len(pos) - 1):
                next_pos[pos[j]] = pos[j + 1]
            next_pos[pos[-1]] = pos[0] + n
        self.next_pos = next_pos


_KIND: Final = {"SMT": "smt", "MC": "llc", "PKG": "pkg", "NODE": "pkg", "NUMA": "numa"}
# Counter keys by SchedDomains.level_index (0: the same CPU)
LEVEL_NAMES: Final = ("", "smt", "llc", "pkg", "numa")


def _first_at_least(a: list[int], x: int) -> int:
    """bisect_left(a, x) on an ascending list of ints (compiled: native int compares instead of
    a call into the bisect module comparing int objects)."""
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def index_after(a: tuple[int, ...], x: int) -> int:
    """bisect_right(a, x) on an ascending tuple of ints (a span or group): compiled, native int
    compares instead of a call into the bisect module comparing int objects."""
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sorted_contains(a: tuple[int, ...], x: int) -> bool:
    """`x in a` for an ascending tuple of ints (a span or group), by bisection instead of
    comparing x with each item."""
    i = index_after(a, x)
    return i > 0 and a[i - 1] == x


def _walk_groups(
    part: _Partition, start: int, cur: int, keys: list[int], groups: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """The groups in the order the walk from position `start` meets them: by each group's
    first position at or after start (wrapping), since with a partition a CPU is covered
    exactly when its own group is added. keys: the order from position `cur` as sorted ints
    (first position * ng + group; distinct, so plain int sorting gives the order), updated in
    place; groups: the tuple made for `cur`, returned again when the order is the same."""
    ng = len(part.tuples)
    group_at = part.group_at
    if start == cur + 1:
        # one step on: only the group at `cur`, which came first, moves (to its next position);
        # the others' first positions at or after start are unchanged
        g0 = group_at[cur]
        moved = part.next_pos[cur] * ng + g0
        if group_at[start] == g0:
            keys[0] = moved  # still first: the same order, the same tuple
            return groups
        del keys[0]
        keys.insert(_first_at_least(keys, moved), moved)
    else:
        n = len(group_at)
        keys.clear()
        for gi in range(ng):
            pos = part.positions[gi]
            i = _first_at_least(pos, start)
            keys.append((pos[i] if i < len(pos) else pos[0] + n) * ng + gi)
        keys.sort()
    tuples = part.tuples
    return tuple([tuples[k % ng] for k in keys])


class _Build:
    """One SchedDomains build's state: the full span chains (`full`, per CPU) and imb_numa_nr
    (`imb`, per CPU and level); each distinct CPU set sorted once into one tuple (spans and
    groups share them); each distinct group numbered (a uid) when first made, so that Domains
    carry their groups' uids until SchedDomains numbers the groups CPU by CPU, without hashing
    tuples (the lowest level's single-CPU groups are new tuples, and uids, per CPU, as
    build_sched_groups makes them); per CPU its domains so far, and every Domain made."""

    __slots__ = ("cpus", "doms_of", "full", "imb", "made", "sorted_of", "tuples", "uid_of")

    def __init__(self, cpus: tuple[int, ...], full: list[list[frozenset[int]]], imb: list[list[int]]) -> None:
        self.cpus = cpus
        self.full = full
        self.imb = imb
        self.sorted_of: dict[frozenset[int], tuple[int, ...]] = {}
        self.uid_of: dict[frozenset[int], int] = {}
        self.tuples: list[tuple[int, ...]] = []  # by uid
        self.doms_of: list[list[Domain]] = [[] for _ in range(len(full))]
        self.made: list[Domain] = []  # their group_ids hold group uids until numbered

    def span(self, s: frozenset[int]) -> tuple[int, ...]:
        t = self.sorted_of.get(s)
        if t is None:
            t = self.sorted_of[s] = tuple(sorted(s))
        return t

    def uid(self, s: frozenset[int]) -> int:
        u = self.uid_of.get(s)
        if u is None:
            u = self.uid_of[s] = len(self.tuples)
            self.tuples.append(self.span(s))
        return u


def _overlap_groups(
    span: tuple[int, ...], start: int, child: int, b: _Build, uids: list[int]
) -> tuple[tuple[int, ...], ...]:
    """build_overlap_sched_groups' walk for a span whose child spans overlap or stick out of
    it (NUMA levels): from position `start`, wrapping, each not yet covered CPU's child span
    (their uids into `uids`)."""
    groups: list[tuple[int, ...]] = []
    uids.clear()
    covered: set[int] = set()
    for x in span[start:] + span[:start]:
        if x in covered:
            continue
        g = b.full[x][child]
        covered |= g
        u = b.uid(g)
        uids.append(u)
        groups.append(b.tuples[u])
    return tuple(groups)


def _partition(span: tuple[int, ...], key: frozenset[int], child: int, b: _Build) -> _Partition | None:
    """When the child spans of the span's CPUs partition it (each CPU in its own child span,
    two child spans equal or disjoint within the span), the partition; else None. key: the
    span as a set. Each group's positions are the CPUs of the span whose child span it is, all
    of them in it; they are all its CPUs in the span exactly when they are as many, and the
    child spans then partition the span."""
    positions: list[list[int]] = []
    uids: list[int] = []
    group_at: list[int] = []
    inside: list[int] = []  # per group, its number of CPUs in the span
    seen: dict[frozenset[int], int] = {}
    full = b.full
    for i, x in enumerate(span):
        g = full[x][child]
        if x not in g:
            return None
        gi = seen.get(g)
        if gi is None:
            gi = seen[g] = len(uids)
            uids.append(b.uid(g))
            positions.append([])
            inside.append(len(g) if g <= key else len(g & key))
        positions[gi].append(i)
        group_at.append(gi)
    for gi in range(len(positions)):
        if len(positions[gi]) != inside[gi]:
            return None
    return _Partition(positions, [b.tuples[u] for u in uids], uids, group_at)


class SchedDomains:
    """Per-CPU domain chains (bottom up) plus the LLC-level facts the wakeup path needs.

    Built level by level: at each level, per distinct span, the CPUs that have it walk it in
    ascending order (a CPU's position in the span found by a merge, its group order derived
    from the previous CPU's), rather than CPU by CPU with a lookup per level. CPUs whose domain
    at a level would be equal share one Domain object where the walk gives them one groups
    tuple (nothing changes a Domain once built); tests/sim/test_domains_build.py checks every
    field against a plain per-CPU build."""

    def __init__(self, topo: Topology, *, no_mc: bool = False) -> None:
        self.topo = topo
        self.no_mc = no_mc
        levels = _levels(topo, no_mc)
        cpus = topo.cpus
        n = topo.nr_cpus
        nlev = len(levels)
        # Full (pre-degeneration) spans, each widened to contain its child as the kernel does.
        # (CPUs share their span sets, so each (child, span) pair is widened once, and
        # consecutive CPUs mostly have the same pair.)
        full: list[list[frozenset[int]]] = [[] for _ in range(n)]
        widened: dict[tuple[frozenset[int], frozenset[int]], frozenset[int]] = {}
        flag_info = [_sd_flags(lv, topo.node_reclaim_distance) for lv in levels]
        level_flags = [f[0] for f in flag_info]
        # imb_numa_nr depends on the chain's span sizes only: per distinct sizes, once
        imb_of: dict[tuple[int, ...], list[int]] = {}
        imb: list[list[int]] = [[] for _ in range(n)]
        last_inner: frozenset[int] | None = None
        last_s: frozenset[int] | None = None
        last_wide: frozenset[int] | None = None
        for c in cpus:
            chain = full[c]
            sizes: list[int] = []
            for i in range(nlev):
                s = levels[i].spans[c]
                if i:
                    inner = chain[i - 1]
                    if inner is not s:
                        if inner is last_inner and s is last_s and last_wide is not None:
                            s = last_wide
                        else:
                            last_inner, last_s = inner, s
                            wide = widened.get((inner, s))
                            if wide is None:
                                wide = widened[(inner, s)] = s if inner <= s else s | inner
                            s = last_wide = wide
                chain.append(s)
                sizes.append(len(s))
            skey = tuple(sizes)
            got = imb_of.get(skey)
            if got is None:
                got = imb_of[skey] = self._imb_numa_nr(chain, level_flags)
            imb[c] = got
        # Degeneration, decided per level for the whole machine: keep a level when, for some
        # CPU, it is wider than one CPU and than the last kept level below it.
        kept: list[int] = []
        for li in range(nlev):
            below = kept[-1] if kept else -1
            # (`is not` first: a set compared with itself by != is still compared element by
            # element, and equal spans are one object here, see _levels' canon)
            for c in cpus:
                s = full[c][li]
                if len(s) > 1 and (below < 0 or (s is not full[c][below] and s != full[c][below])):
                    kept.append(li)
                    break
        self.level_names: tuple[str, ...] = tuple(levels[li].name for li in kept)
        b = _Build(cpus, full, imb)
        for k, li in enumerate(kept):
            self._build_level(levels[li], flag_info[li], li, kept[k - 1] if k else -1, b)
        self.per_cpu: list[tuple[Domain, ...]] = [tuple(d) for d in b.doms_of]
        # every distinct sched group (CPU tuple) once, numbered in the order CPU by CPU and level
        # by level meets them; Domain.group_ids index it (State.group_rqs, State.group_stats)
        self.group_cpus: list[tuple[int, ...]] = []
        # (by uid; Any: the int objects themselves, boxed once, see _Partition.uids)
        gid_of: list[Any] = [None] * len(b.tuples)
        for c in cpus:
            for dom in self.per_cpu[c]:
                for u in dom.group_ids:
                    if gid_of[u] is None:
                        gid_of[u] = len(self.group_cpus)
                        self.group_cpus.append(b.tuples[u])
        for dom in b.made:
            dom.group_ids = tuple([gid_of[u] for u in dom.group_ids])
        # sd_llc: the highest domain sharing the LLC; its span defines cpus_share_cache(). The
        # levels are the same for every CPU, so is its index.
        idx = -1
        for i, li in enumerate(kept):
            if flag_info[li][0] & SD_SHARE_LLC:
                idx = i
        self.llc_index: list[int] = [-1] * n  # per CPU, index of sd_llc in its chain
        self.llc_id: list[int] = [-1] * n
        llc_spans: dict[tuple[int, ...], int] = {}
        last_span: tuple[int, ...] = ()
        last_id = -1
        for c in cpus:
            self.llc_index[c] = idx
            span = self.per_cpu[c][idx].span if idx >= 0 else (c,)
            if span is not last_span:
                last_span = span
                last_id = llc_spans.setdefault(span, len(llc_spans))
            self.llc_id[c] = last_id
        self.llc_spans: tuple[tuple[int, ...], ...] = tuple(llc_spans)
        # cost_row's tables, by (costs, CPU), and the rows they start from, by (costs, LLC id,
        # node); the CPUs of each core (by core id), made on the first cost_row
        self._cost_rows: dict[tuple[tuple[int, ...], int], list[int]] = {}
        self._cost_templates: dict[tuple[tuple[int, ...], int, int], list[int]] = {}
        self._core_cpus: dict[int, list[int]] = {}

    @staticmethod
    def _build_level(level: _Level, info: tuple[int, int, int], li: int, child: int, b: _Build) -> None:
        """Append every CPU's domain at level `li` (child: the kept level below, -1 if none) to
        b.doms_of, and each new Domain to b.made, its group_ids holding its groups' uids.
        Groups: build_sched_groups / build_overlap_sched_groups, the span walked from the CPU
        (wrapping), each not yet covered CPU's child span added as a group."""
        flags, pct, nice = info
        name = level.name
        kind = _KIND[name]
        dist = level.numa_distance
        full, imb, doms_of, made = b.full, b.imb, b.doms_of, b.made
        # the CPUs of each distinct span, ascending (dicts keep insertion order)
        members: dict[frozenset[int], list[int]] = {}
        last_set: frozenset[int] | None = None
        last_members: list[int] = []
        for c in b.cpus:
            s = full[c][li]
            if s is not last_set:
                got = members.get(s)
                if got is None:
                    got = members[s] = []
                last_set, last_members = s, got
            last_members.append(c)
        uids: list[int] = []
        for key, ms in members.items():
            span = b.span(key)
            w = len(span)
            part = _partition(span, key, child, b) if child >= 0 else None
            keys: list[int] = []  # with part: group order keys of the walk from `cur`
            groups: tuple[tuple[int, ...], ...] = ()
            cur = -2
            # CPUs given the same groups tuple (consecutive ones of the span, see _walk_groups)
            # share their Domain when their imb_numa_nr is the same too
            run_groups: tuple[tuple[int, ...], ...] = ()
            run: dict[int, Domain] = {}
            j = 0
            for c in ms:
                while span[j] < c:  # c's position: ms and span ascending, c in span
                    j += 1
                if child < 0:
                    # the lowest level: single CPUs, from c on, new groups of their own
                    groups = tuple([(span[i if i < w else i - w],) for i in range(j, j + w)])
                    base = len(b.tuples)
                    b.tuples.extend(groups)
                    guids = tuple(range(base, base + len(groups)))
                elif part is not None:
                    groups = _walk_groups(part, j, cur, keys, groups)
                    cur = j
                    if groups is run_groups:
                        dom = run.get(imb[c][li])
                        if dom is not None:
                            doms_of[c].append(dom)
                            continue
                    else:
                        run_groups = groups
                        run.clear()
                    puids: list[Any] = part.uids
                    ng = len(puids)
                    guids = tuple([puids[k % ng] for k in keys])
                else:
                    groups = _overlap_groups(span, j, child, b, uids)
                    guids = tuple(uids)
                ci = imb[c][li]
                dom = Domain(
                    name=name,
                    kind=kind,
                    span=span,
                    span_set=key,
                    groups=groups,
                    flags=flags,
                    imbalance_pct=pct,
                    cache_nice_tries=nice,
                    imb_numa_nr=ci,
                    min_interval_ms=w,
                    max_interval_ms=2 * w,
                    busy_factor=16,
                    numa_distance=dist,
                    group_ids=guids,
                )
                if part is not None:
                    run[ci] = dom
                made.append(dom)
                doms_of[c].append(dom)

    @staticmethod
    def _imb_numa_nr(chain: list[frozenset[int]], flags: list[int]) -> list[int]:
        """build_sched_domains(): the allowed NUMA imbalance of every level of one CPU."""
        out = [0] * len(chain)
        imb = 0
        imb_span = 1
        for i in range(len(chain)):
            child_shares = i > 0 and bool(flags[i - 1] & SD_SHARE_LLC)
            if not flags[i] & SD_SHARE_LLC and child_shares:
                nr_llcs = len(chain[i]) // len(chain[i - 1])
                imb = max(1, len(chain[i]) >> 3 if nr_llcs == 1 else nr_llcs)
                out[i] = imb
                top = next((j for j in range(i + 1, len(chain)) if flags[j] & SD_NUMA), None)
                imb_span = len(chain[top]) if top is not None else len(chain[i])
            else:
                out[i] = imb * max(1, len(chain[i]) // imb_span)
        return out

    def sd_llc(self, cpu: int) -> Domain | None:
        i = self.llc_index[cpu]
        return self.per_cpu[cpu][i] if i >= 0 else None

    def llc_span(self, cpu: int) -> tuple[int, ...]:
        return self.llc_spans[self.llc_id[cpu]]

    def share_cache(self, a: int, b: int) -> bool:
        """cpus_share_cache()."""
        return self.llc_id[a] == self.llc_id[b]

    def level_index(self, a: int, b: int) -> int:
        """level_between as an index into LEVEL_NAMES (for tables indexed by level)."""
        if a == b:
            return 0
        t = self.topo
        if t.core_of[a] == t.core_of[b]:
            return 1
        if self.llc_id[a] == self.llc_id[b]:
            return 2
        if t.node_of[a] == t.node_of[b]:
            return 3
        return 4

    def cost_row(self, costs: tuple[int, ...], cpu: int) -> list[int]:
        """costs[level_index(c, cpu)] for every CPU c: a cost by distance (indexed like
        LEVEL_NAMES) as a table by the other CPU, for costs paid per message. Built once per
        costs and CPU and kept with the domains, which the runs on one topology share:
        callers must not modify it."""
        key = (costs, cpu)
        row = self._cost_rows.get(key)
        if row is None:
            # level_index(c, cpu) for every c, its tests inlined against cpu's core, LLC, node:
            # a copy of the row by LLC and node (levels 2 to 4) that the CPUs of cpu's LLC and
            # node share, then its core's CPUs (level 1) and cpu itself (0) on top, in
            # level_index's order of tests
            t = self.topo
            core_of, llc_id, node_of = t.core_of, self.llc_id, t.node_of
            core, llc, node = core_of[cpu], llc_id[cpu], node_of[cpu]
            tkey = (costs, llc, node)
            template = self._cost_templates.get(tkey)
            if template is None:
                template = []
                for c in range(t.nr_cpus):
                    if llc_id[c] == llc:
                        template.append(costs[2])
                    elif node_of[c] == node:
                        template.append(costs[3])
                    else:
                        template.append(costs[4])
                self._cost_templates[tkey] = template
            if not self._core_cpus:
                for c in range(t.nr_cpus):
                    self._core_cpus.setdefault(core_of[c], []).append(c)
            siblings = self._core_cpus[core]
            # When the same CPU, its core and its LLC cost the same (hackbench's message and
            # pipe costs: 0, 0, 0) and its core lies in its LLC, the row is the template: the
            # CPUs of an LLC and node share one list instead of a copy each (on a 256-CPU
            # machine 512 lists of 256 items fewer for hackbench's two costs, and the rows a
            # run reads stay in 32 lists' lines instead of 512)
            share = costs[0] == costs[2] and costs[1] == costs[2]
            for c in siblings:
                if llc_id[c] != llc:
                    share = False
            if share:
                row = template
            else:
                row = template[:]
                for c in siblings:
                    row[c] = costs[1]
                row[cpu] = costs[0]
            self._cost_rows[key] = row
        return row

    def level_between(self, a: int, b: int) -> str:
        """Counter key of a move or wakeup from a to b: smt, llc, pkg or numa ("" when a == b)."""
        return LEVEL_NAMES[self.level_index(a, b)]

    def describe(self, cpu: int) -> list[dict[str, object]]:
        """The domain chain of one CPU as plain data (for tests and the API)."""
        return [
            {
                "name": d.name,
                "span_weight": d.weight,
                "groups": len(d.groups),
                "flags": flag_names(d.flags),
                "imbalance_pct": d.imbalance_pct,
                "imb_numa_nr": d.imb_numa_nr,
            }
            for d in self.per_cpu[cpu]
        ]
