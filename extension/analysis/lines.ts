/**
 * The one line attribution: which source line costs which ops and kernels. Every view reads it — the CLI's table
 * and JSON, the timeline's Lines table (through LineStat), the editor's hovers, gutter, inline text and CodeLens
 * (through the line index, lineIndex.ts) — so a line shows the same numbers everywhere.
 *
 * Each op slice has a call chain, innermost frame first: the capture agent's sites (profile.sites, by External
 * id) or, without them, the user's python_function frames around the op (function level: def lines). An op with no
 * chain of its own takes its enclosing op's. A line is keyed by (file, line, kind), and for it:
 *  - self: the ops whose innermost frame is the line;
 *  - total (with callees): every op with the line anywhere in its chain, once per line even where the line recurs.
 * Op time is CPU self time (the op minus its child ops) and the device time it launched directly, so self times
 * partition the profile's time and nothing is counted twice in a total.
 */
import {
  SliceKind,
  isDeviceKind,
  isOpKind,
  type Profile,
  type SourceFrame,
  type SourceFrameKind,
} from '../model/profile';
import type { LineKernelStat, LineOpStat, LineStat } from '../shared/stats';
import { userFrameOfPythonFunction } from './sourceLines';

/** How each kind of line is named wherever a line is shown. */
export const LINE_KIND_LABELS: Record<SourceFrameKind, string> = {
  function: 'function level',
  backward: 'backward',
  trace: 'from the trace',
};

/** Op and kernel names a LineStat carries: the tables and hovers show fewer. */
const TOP_NAMES = 10;

/**
 * The call chains ops hang on, as a tree of frames shared by every chain with the same callers (a trace's
 * millions of ops have a few thousand distinct chains). A chain is a node and its callers up to the outermost.
 */
export interface CallChains {
  /** Per node: the frame's line (index into Analysis.lines), function name and caller node (-1: outermost). */
  readonly line: Int32Array;
  readonly function: readonly string[];
  readonly caller: Int32Array;
  /** Per op slice: the node of its innermost frame; -1 for ops on no user line (and for every other slice). */
  readonly nodeOf: Int32Array;
  /**
   * The nodes ops hang on (leaves), with the sums over their ops: CPU self time, device time launched directly,
   * device events launched, and op calls (ops whose enclosing op hangs on another node, or none).
   */
  readonly leaves: Int32Array;
  readonly cpuNs: Float64Array;
  readonly deviceNs: Float64Array;
  readonly kernels: Float64Array;
  readonly calls: Float64Array;
}

export interface ChainTotals {
  cpuNs: Float64Array;
  deviceNs: Float64Array;
  kernels: Float64Array;
}

/**
 * Sums of ops per key, where `keyOfLine` maps each line to a key (itself, or one shared by several lines) or -1:
 * an op counts once for every key its chain passes through, however often the chain passes it (recursion).
 */
export function chainTotals(chains: CallChains, keyOfLine: ArrayLike<number>, keyCount: number): ChainTotals {
  const totals = {
    cpuNs: new Float64Array(keyCount),
    deviceNs: new Float64Array(keyCount),
    kernels: new Float64Array(keyCount),
  };
  const seen = new Int32Array(keyCount).fill(-1);
  for (let k = 0; k < chains.leaves.length; k++) {
    for (let node = chains.leaves[k]; node >= 0; node = chains.caller[node]) {
      const key = keyOfLine[chains.line[node]];
      if (key < 0 || seen[key] === k) continue;
      seen[key] = k;
      totals.cpuNs[key] += chains.cpuNs[k];
      totals.deviceNs[key] += chains.deviceNs[k];
      totals.kernels[key] += chains.kernels[k];
    }
  }
  return totals;
}

/** Top-level op slices by name: calls, CPU wall time and the device time they launched, child ops included. */
export function opNames(profile: Profile, deviceTotalNs: Float64Array, ops: ArrayLike<number>): LineOpStat[] {
  const { slices } = profile;
  const byName = new Map<number, LineOpStat>();
  for (let k = 0; k < ops.length; k++) {
    const i = ops[k];
    let stat = byName.get(slices.name[i]);
    if (!stat) {
      stat = { name: profile.strings.get(slices.name[i]), calls: 0, cpuNs: 0, deviceNs: 0 };
      byName.set(slices.name[i], stat);
    }
    stat.calls++;
    stat.cpuNs += slices.dur[i];
    stat.deviceNs += deviceTotalNs[i];
  }
  return [...byName.values()].sort(
    (a, b) => b.deviceNs - a.deviceNs || b.cpuNs - a.cpuNs || compare(a.name, b.name),
  );
}

/** Device slices by name: count and time, largest first. */
export function kernelNames(profile: Profile, devices: ArrayLike<number>): LineKernelStat[] {
  const { slices } = profile;
  const byName = new Map<number, LineKernelStat>();
  for (let k = 0; k < devices.length; k++) {
    const d = devices[k];
    let stat = byName.get(slices.name[d]);
    if (!stat) {
      stat = { name: profile.strings.get(slices.name[d]), count: 0, totalNs: 0 };
      byName.set(slices.name[d], stat);
    }
    stat.count++;
    stat.totalNs += slices.dur[d];
  }
  return [...byName.values()].sort((a, b) => b.totalNs - a.totalNs || compare(a.name, b.name));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What the linking computed per slice, which the attribution spreads over lines. */
export interface OpLinks {
  /** Enclosing op on the same thread, or -1. */
  readonly opParent: Int32Array;
  /** For device slices: the op that launched them, or -1. */
  readonly opOf: Int32Array;
  /** For op slices: CPU self time, device time launched directly, and device time including child ops. */
  readonly cpuSelfNs: Float64Array;
  readonly deviceSelfNs: Float64Array;
  readonly deviceTotalNs: Float64Array;
}

export interface LineAttribution {
  /** Sorted by device self time, then CPU self time, then the totals, descending. */
  readonly lines: LineStat[];
  /** Per op slice: its self line (the innermost frame), an index into lines; -1 when none. */
  readonly lineOf: Int32Array;
  readonly chains: CallChains;
  /** Per line: its top-level op slices (what "Show in timeline" selects) and the device slices its ops launched. */
  readonly lineOps: readonly Int32Array[];
  readonly lineKernels: readonly Int32Array[];
}

interface LineKey {
  file: string;
  line: number;
  function: string;
  kind: SourceFrameKind | undefined;
  column: number | undefined;
}

/**
 * (caller, frame) packs into one double: frames and nodes are distinct source locations and call paths, far fewer
 * than 2^26 (each costs a string and several array entries; a trace with that many could not be held anyway).
 */
const FRAME_SPAN = 2 ** 26;

export function attributeLines(profile: Profile, links: OpLinks): LineAttribution {
  const { slices, strings } = profile;
  const n = slices.length;
  const { opParent, opOf, cpuSelfNs, deviceSelfNs, deviceTotalNs } = links;

  // Lines by (file, line, kind); frames by (line, function); nodes by (caller, frame).
  const keys: LineKey[] = [];
  const keyIndex = new Map<string, number>();
  const frameLine: number[] = [];
  const frameFunction: string[] = [];
  const frameIndex = new Map<string, number>();
  const frameOf = (frame: SourceFrame): number => {
    const kind = frame.kind;
    const text = `${frame.file}\u0000${frame.line}\u0000${kind ?? ''}\u0000${frame.function}`;
    let id = frameIndex.get(text);
    if (id === undefined) {
      const lineText = `${frame.file}\u0000${frame.line}\u0000${kind ?? ''}`;
      let line = keyIndex.get(lineText);
      if (line === undefined) {
        line = keys.length;
        keys.push({ file: frame.file, line: frame.line, function: frame.function, kind, column: undefined });
        keyIndex.set(lineText, line);
      }
      id = frameLine.length;
      frameLine.push(line);
      frameFunction.push(frame.function);
      frameIndex.set(text, id);
    }
    // The leftmost expression of the line that ran ops, wherever the line sits in the chains.
    if (frame.column !== undefined) {
      const key = keys[frameLine[id]];
      if (key.column === undefined || frame.column < key.column) key.column = frame.column;
    }
    return id;
  };
  const nodeLine: number[] = [];
  const nodeFunction: string[] = [];
  const nodeCaller: number[] = [];
  const nodeIndex = new Map<number, number>();
  const nodeOfFrame = (caller: number, frame: number): number => {
    const packed = (caller + 1) * FRAME_SPAN + frame;
    let node = nodeIndex.get(packed);
    if (node === undefined) {
      node = nodeLine.length;
      nodeLine.push(frameLine[frame]);
      nodeFunction.push(frameFunction[frame]);
      nodeCaller.push(caller);
      nodeIndex.set(packed, node);
    }
    return node;
  };

  // Per op slice: the node of its innermost frame. Chains shared by many ops (one array per caller) are read once.
  const nodeOf = new Int32Array(n).fill(-1);
  const sites = profile.sites;
  if (sites) {
    const chainNode = new Map<readonly SourceFrame[], number>();
    const ownNode = (op: number): number => {
      const chain = sites.get(slices.externalId[op]);
      if (!chain || chain.length === 0) return -1;
      let node = chainNode.get(chain);
      if (node === undefined) {
        node = -1;
        for (let k = chain.length - 1; k >= 0; k--) node = nodeOfFrame(node, frameOf(chain[k]));
        chainNode.set(chain, node);
      }
      return node;
    };
    // An op without a site of its own runs in its enclosing op's: -2 marks "not yet known".
    nodeOf.fill(-2);
    const pending: number[] = [];
    for (let i = 0; i < n; i++) {
      if (nodeOf[i] !== -2) continue;
      if (!isOpKind(slices.kind[i])) {
        nodeOf[i] = -1;
        continue;
      }
      let j = i;
      let node = -1;
      for (;;) {
        node = ownNode(j);
        if (node >= 0) break;
        pending.push(j);
        const parent = opParent[j];
        if (parent < 0) break;
        if (nodeOf[parent] !== -2) {
          node = nodeOf[parent];
          break;
        }
        j = parent;
      }
      nodeOf[j] = node;
      while (pending.length > 0) nodeOf[pending.pop()!] = node;
    }
  } else {
    // Function level: the user's python_function frames around the op, each at its def line.
    const pythonFrame = new Map<number, number>();
    const frameOfPython = (slice: number): number => {
      const nameId = slices.name[slice];
      let frame = pythonFrame.get(nameId);
      if (frame === undefined) {
        const parsed = userFrameOfPythonFunction(strings.get(nameId));
        frame = parsed ? frameOf({ ...parsed, kind: 'function' }) : -1;
        pythonFrame.set(nameId, frame);
      }
      return frame;
    };
    // Per slice: the node of the innermost user python_function at or above it (-2: not yet known).
    const around = new Int32Array(n).fill(-2);
    const pending: number[] = [];
    const resolve = (i: number): number => {
      let j = i;
      while (j >= 0 && around[j] === -2) {
        pending.push(j);
        j = slices.parent[j];
      }
      let node = j >= 0 ? around[j] : -1;
      while (pending.length > 0) {
        const k = pending.pop()!;
        if (slices.kind[k] === SliceKind.PythonFunction) {
          const frame = frameOfPython(k);
          if (frame >= 0) node = nodeOfFrame(node, frame);
        }
        around[k] = node;
      }
      return node;
    };
    for (let i = 0; i < n; i++) {
      if (!isOpKind(slices.kind[i])) continue;
      const parent = slices.parent[i];
      nodeOf[i] = parent >= 0 ? resolve(parent) : -1;
    }
  }
  // Device events each op launched directly.
  const opKernels = new Float64Array(n);
  for (let d = 0; d < n; d++) if (isDeviceKind(slices.kind[d]) && opOf[d] >= 0) opKernels[opOf[d]]++;

  // Leaves and their sums; self per line; top-level op calls per line.
  const lineCount = keys.length;
  const leafOf = new Int32Array(nodeLine.length).fill(-1);
  const leaves: number[] = [];
  const leafSums: number[][] = [[], [], [], []];
  const selfCpu = new Float64Array(lineCount);
  const selfDevice = new Float64Array(lineCount);
  const opSlices: number[][] = keys.map(() => []);
  const kernelSlices: number[][] = keys.map(() => []);
  const lineOf = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) if (nodeOf[i] >= 0) lineOf[i] = nodeLine[nodeOf[i]];
  for (let i = 0; i < n; i++) {
    const node = nodeOf[i];
    if (node < 0) continue;
    let leaf = leafOf[node];
    if (leaf < 0) {
      leaf = leafOf[node] = leaves.length;
      leaves.push(node);
      for (const sums of leafSums) sums.push(0);
    }
    const parent = opParent[i];
    leafSums[0][leaf] += cpuSelfNs[i];
    leafSums[1][leaf] += deviceSelfNs[i];
    leafSums[2][leaf] += opKernels[i];
    if (parent < 0 || nodeOf[parent] !== node) leafSums[3][leaf]++;
    const line = lineOf[i];
    selfCpu[line] += cpuSelfNs[i];
    selfDevice[line] += deviceSelfNs[i];
    // A child op on its parent's line is part of that call, not a call of its own.
    if (parent < 0 || lineOf[parent] !== line) opSlices[line].push(i);
  }
  for (let d = 0; d < n; d++) {
    if (!isDeviceKind(slices.kind[d]) || opOf[d] < 0) continue;
    const line = lineOf[opOf[d]];
    if (line >= 0) kernelSlices[line].push(d);
  }

  const chains: CallChains = {
    line: Int32Array.from(nodeLine),
    function: nodeFunction,
    caller: Int32Array.from(nodeCaller),
    nodeOf,
    leaves: Int32Array.from(leaves),
    cpuNs: Float64Array.from(leafSums[0]),
    deviceNs: Float64Array.from(leafSums[1]),
    kernels: Float64Array.from(leafSums[2]),
    calls: Float64Array.from(leafSums[3]),
  };
  const identity = Int32Array.from({ length: lineCount }, (_, l) => l);
  const totals = chainTotals(chains, identity, lineCount);

  const unsorted: LineStat[] = keys.map((key, l) => {
    const stat: LineStat = {
      file: key.file,
      line: key.line,
      function: key.function,
      exact: key.kind !== 'function',
      cpuSelfNs: selfCpu[l],
      cpuTotalNs: totals.cpuNs[l],
      deviceSelfNs: selfDevice[l],
      deviceTotalNs: totals.deviceNs[l],
      ops: opSlices[l].length,
      topOps: opNames(profile, deviceTotalNs, opSlices[l]).slice(0, TOP_NAMES),
      topKernels: kernelNames(profile, kernelSlices[l]).slice(0, TOP_NAMES),
    };
    if (key.column !== undefined) stat.column = key.column;
    if (key.kind !== undefined) stat.kind = key.kind;
    return stat;
  });
  const order = unsorted
    .map((_, l) => l)
    .sort((a, b) => {
      const x = unsorted[a];
      const y = unsorted[b];
      return (
        y.deviceSelfNs - x.deviceSelfNs ||
        y.cpuSelfNs - x.cpuSelfNs ||
        y.deviceTotalNs - x.deviceTotalNs ||
        y.cpuTotalNs - x.cpuTotalNs ||
        compare(x.file, y.file) ||
        x.line - y.line ||
        compare(x.kind ?? '', y.kind ?? '')
      );
    });
  // Every index into lines is given in the sorted order.
  const rank = new Int32Array(lineCount);
  order.forEach((old, position) => (rank[old] = position));
  for (let i = 0; i < n; i++) if (lineOf[i] >= 0) lineOf[i] = rank[lineOf[i]];
  for (let node = 0; node < chains.line.length; node++) chains.line[node] = rank[chains.line[node]];
  return {
    lines: order.map((l) => unsorted[l]),
    lineOf,
    chains,
    lineOps: order.map((l) => Int32Array.from(opSlices[l])),
    lineKernels: order.map((l) => Int32Array.from(kernelSlices[l])),
  };
}
