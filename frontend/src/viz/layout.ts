/**
 * Grid layout of a Topology: NUMA nodes > LLCs > cores > SMT CPUs, fitted into width x height.
 * Owns only geometry (pure, no DOM). Built with d3-hierarchy's treemap and a custom "packed grid"
 * tile so every CPU of a group gets the same cell size (readable from 2 to 512+ CPUs); SMT
 * siblings sit side by side inside their core. CPU-less NUMA nodes get a thin labelled strip at the
 * bottom; CPUs with unknown node/LLC (offline) go to a group with id -1.
 */
import { hierarchy, treemap, type HierarchyRectangularNode } from "d3-hierarchy";
import type { Topology } from "../client/types";

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface CpuCell extends Rect {
  cpu: number;
  core: number | null;
  llc: number | null;
  node: number | null;
  online: boolean;
}

export interface GroupBox extends Rect {
  /** LLC index or NUMA node id; -1 for "unknown" (offline CPUs without topology). */
  id: number;
  /** For LLC boxes: the NUMA node the box sits in. */
  node: number;
  cpus: number[];
  /** Height reserved at the top of the box for its label (0 when it does not fit). */
  labelH: number;
}

export interface GridLayout {
  width: number;
  height: number;
  cpus: CpuCell[];
  /** cpu number -> cell (sparse array; undefined for CPUs not in the topology). */
  byCpu: (CpuCell | undefined)[];
  nodes: GroupBox[];
  llcs: GroupBox[];
  cores: GroupBox[];
  /** NUMA nodes without CPUs (memory-only), drawn as a strip at the bottom. */
  emptyNodes: GroupBox[];
}

type Kind = "root" | "node" | "llc" | "core" | "cpu";
interface Datum {
  kind: Kind;
  id: number;
  node: number;
  children?: Datum[];
  cell?: Omit<CpuCell, keyof Rect>;
}

const NODE_LABEL_H = 14;
const LLC_LABEL_H = 11;
const EMPTY_STRIP_H = 16;

function cmpId(a: number, b: number): number {
  // unknown (-1) groups go last
  if (a < 0 && b >= 0) return 1;
  if (b < 0 && a >= 0) return -1;
  return a - b;
}

function buildTree(topo: Topology): Datum {
  const nodes = new Map<number, Map<number, Map<number, Datum[]>>>();
  for (const c of topo.cpus) {
    const node = c.numa_node ?? -1;
    const llc = c.llc ?? -1;
    // CPUs without a core index become their own core (negative ids keep them unique).
    const core = c.core ?? -(c.cpu + 1);
    let llcs = nodes.get(node);
    if (!llcs) nodes.set(node, (llcs = new Map<number, Map<number, Datum[]>>()));
    let cores = llcs.get(llc);
    if (!cores) llcs.set(llc, (cores = new Map<number, Datum[]>()));
    let cpus = cores.get(core);
    if (!cpus) cores.set(core, (cpus = []));
    cpus.push({
      kind: "cpu",
      id: c.cpu,
      node,
      cell: { cpu: c.cpu, core: c.core, llc: c.llc, node: c.numa_node, online: c.online },
    });
  }
  const root: Datum = { kind: "root", id: 0, node: -1, children: [] };
  for (const nodeId of [...nodes.keys()].sort(cmpId)) {
    const llcs = nodes.get(nodeId);
    if (!llcs) continue;
    const nd: Datum = { kind: "node", id: nodeId, node: nodeId, children: [] };
    for (const llcId of [...llcs.keys()].sort(cmpId)) {
      const cores = llcs.get(llcId);
      if (!cores) continue;
      const ld: Datum = { kind: "llc", id: llcId, node: nodeId, children: [] };
      const coreList = [...cores.entries()].map(([coreId, cpus]) => ({
        coreId,
        cpus: cpus.sort((a, b) => a.id - b.id),
      }));
      // order cores by their first CPU so the grid reads in CPU order
      coreList.sort((a, b) => (a.cpus[0]?.id ?? 0) - (b.cpus[0]?.id ?? 0));
      for (const { coreId, cpus } of coreList) {
        ld.children?.push({ kind: "core", id: coreId, node: nodeId, children: cpus });
      }
      nd.children?.push(ld);
    }
    root.children?.push(nd);
  }
  return root;
}

/** Preferred width/height ratio of a subtree when laid out on its own. */
function idealAspect(d: Datum): number {
  if (d.kind === "cpu") return 1;
  const kids = d.children ?? [];
  if (d.kind === "core") return Math.max(1, kids.length);
  const n = kids.length;
  if (n === 0) return 1;
  const a = idealAspect(kids[0] as Datum);
  const cols = Math.max(1, Math.min(n, Math.round(Math.sqrt(n / a))));
  const rows = Math.ceil(n / cols);
  return (cols * a) / rows;
}

/** Choose a column count so n equal cells in w x h come closest to aspect a, wasting few cells. */
export function chooseColumns(n: number, w: number, h: number, a: number): number {
  let best = 1;
  let bestScore = Infinity;
  for (let c = 1; c <= n; c++) {
    const r = Math.ceil(n / c);
    if (c > 1 && Math.ceil(n / (c - 1)) === r) continue; // same rows, fewer columns is better
    const cw = w / c;
    const ch = h / r;
    const waste = (c * r - n) / n;
    const score = Math.abs(Math.log(cw / ch / a)) + 0.35 * waste;
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

const aspectCache = new WeakMap<Datum, number>();
function aspectOf(d: Datum): number {
  let a = aspectCache.get(d);
  if (a === undefined) {
    a = idealAspect(d);
    aspectCache.set(d, a);
  }
  return a;
}

function packedGridTile(
  parent: HierarchyRectangularNode<Datum>,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
): void {
  const kids = parent.children ?? [];
  const n = kids.length;
  if (n === 0) return;
  const w = Math.max(0, x1 - x0);
  const h = Math.max(0, y1 - y0);
  if (parent.data.kind === "core") {
    // SMT siblings side by side
    const cw = w / n;
    kids.forEach((k, i) => {
      k.x0 = x0 + i * cw;
      k.x1 = x0 + (i + 1) * cw;
      k.y0 = y0;
      k.y1 = y1;
    });
    return;
  }
  const a = aspectOf(kids[0]?.data as Datum);
  const cols = chooseColumns(n, w, h, a);
  const rows = Math.ceil(n / cols);
  const cw = w / cols;
  const ch = h / rows;
  kids.forEach((k, i) => {
    const c = i % cols;
    const r = Math.floor(i / cols);
    k.x0 = x0 + c * cw;
    k.x1 = x0 + (c + 1) * cw;
    k.y0 = y0 + r * ch;
    k.y1 = y0 + (r + 1) * ch;
  });
}

function rectOf(n: HierarchyRectangularNode<Datum>): Rect {
  return { x: n.x0, y: n.y0, w: Math.max(0, n.x1 - n.x0), h: Math.max(0, n.y1 - n.y0) };
}

function labelFits(n: HierarchyRectangularNode<Datum>, labelH: number): boolean {
  // a label only when the box stays useful below it
  return n.y1 - n.y0 > labelH * 3 && n.x1 - n.x0 > 28;
}

/** Lay out the topology's CPUs into a width x height box. */
export function layoutGrid(topo: Topology, width: number, height: number): GridLayout {
  const emptyNodeIds = topo.numa_nodes
    .filter((n) => !topo.cpus.some((c) => c.numa_node === n.id))
    .map((n) => n.id)
    .sort((a, b) => a - b);
  const stripH = emptyNodeIds.length > 0 ? EMPTY_STRIP_H : 0;
  const gridH = Math.max(0, height - stripH);

  const root = hierarchy(buildTree(topo), (d) => d.children).sum((d) => (d.kind === "cpu" ? 1 : 0));
  const tm = treemap<Datum>()
    .size([width, gridH])
    .tile(packedGridTile)
    .round(false)
    .paddingOuter((n) => {
      switch (n.data.kind) {
        case "node":
          return 3;
        case "llc":
          return 2;
        case "core":
          return n.x1 - n.x0 > 12 ? 1 : 0;
        default:
          return 0;
      }
    })
    .paddingTop((n) => {
      if (n.data.kind === "node") return labelFits(n, NODE_LABEL_H) ? NODE_LABEL_H : 3;
      if (n.data.kind === "llc") return labelFits(n, LLC_LABEL_H) ? LLC_LABEL_H : 2;
      if (n.data.kind === "core") return n.x1 - n.x0 > 12 ? 1 : 0;
      return 0;
    })
    .paddingInner((n) => {
      switch (n.data.kind) {
        case "root":
          return 6;
        case "node":
          return 4;
        case "llc":
          return 2;
        case "core":
          return n.x1 - n.x0 > 10 ? 1 : 0;
        default:
          return 0;
      }
    });
  const laid = tm(root);

  const cpus: CpuCell[] = [];
  const byCpu: (CpuCell | undefined)[] = [];
  const nodes: GroupBox[] = [];
  const llcs: GroupBox[] = [];
  const cores: GroupBox[] = [];
  for (const n of laid.descendants()) {
    const d = n.data;
    if (d.kind === "cpu" && d.cell) {
      const cell: CpuCell = { ...rectOf(n), ...d.cell };
      cpus.push(cell);
      byCpu[cell.cpu] = cell;
    } else if (d.kind === "node" || d.kind === "llc" || d.kind === "core") {
      const box: GroupBox = {
        ...rectOf(n),
        id: d.id,
        node: d.node,
        cpus: n.leaves().map((l) => l.data.id),
        labelH: 0,
      };
      if (d.kind === "node") {
        box.labelH = labelFits(n, NODE_LABEL_H) ? NODE_LABEL_H : 0;
        nodes.push(box);
      } else if (d.kind === "llc") {
        box.labelH = labelFits(n, LLC_LABEL_H) ? LLC_LABEL_H : 0;
        llcs.push(box);
      } else cores.push(box);
    }
  }
  cpus.sort((a, b) => a.cpu - b.cpu);

  const emptyNodes: GroupBox[] = [];
  if (emptyNodeIds.length > 0) {
    const w = width / emptyNodeIds.length;
    emptyNodeIds.forEach((id, i) => {
      emptyNodes.push({
        x: i * w + 3,
        y: gridH + 2,
        w: Math.max(0, w - 6),
        h: EMPTY_STRIP_H - 4,
        id,
        node: id,
        cpus: [],
        labelH: 0,
      });
    });
  }
  return { width, height, cpus, byCpu, nodes, llcs, cores, emptyNodes };
}

/** The CPU under (x, y), or null. */
export function hitTestCpu(layout: GridLayout, x: number, y: number): number | null {
  for (const c of layout.cpus) {
    if (x >= c.x && x < c.x + c.w && y >= c.y && y < c.y + c.h) return c.cpu;
  }
  return null;
}

export function center(r: Rect): { x: number; y: number } {
  return { x: r.x + r.w / 2, y: r.y + r.h / 2 };
}
