/**
 * Device and CPU time on the user's own source lines, indexed per file and per line for the editor (hovers, gutter
 * heat, inline text, CodeLens). Built once per profile from an Analysis; every lookup afterwards is O(1).
 *
 * Attribution: the analysis's (lines.ts), nothing recomputed here. A line's entry is its LineStat — self (the ops
 * whose innermost frame is the line) and total (with callees) — with the slices the editor's commands select; where
 * one line has rows of several kinds (the exact ops of `loss.backward()` and the autograd ops charged to it), the
 * entry adds their self times and sums the total over the same call chains, so no op counts twice. Functions
 * (CodeLens) and a line's callee lines are summed over the same chains.
 *
 * Staleness: the index speaks of the file as it was profiled. A LineShiftMap follows edits (pure functions over
 * the document's change events) and says when the file changed in a way that cannot be mapped.
 *
 * No 'vscode' import: the CLI, tests and benchmarks use this module unchanged.
 */
import type { Profile, SourceFrameKind } from '../model/profile';
import { isDeviceKind } from '../model/profile';
import { formatBytes, formatMs } from '../shared/format';
import type { LineDiff } from './diff';
import { analyzeMemory } from './memory';
import { markdownCode, markdownText } from '../shared/text';
import { LINE_KIND_LABELS, chainTotals, kernelNames, opNames } from './lines';
import type { Analysis, LineStat } from './types';

export interface OpTime {
  name: string;
  calls: number;
  /** CPU wall time of the calls (including the op's child ops). */
  cpuNs: number;
  /** Device time of everything the calls launched, child ops included. */
  deviceNs: number;
}

export interface KernelTime {
  name: string;
  count: number;
  totalNs: number;
}

/** A line whose own ops run under another line (it is in their call chain): the time it spends there. */
export interface CalleeLine {
  readonly file: string;
  readonly line: number;
  readonly function: string;
  readonly cpuNs: number;
  readonly deviceNs: number;
}

export interface LineEntry {
  /** The file as the profile names it. */
  readonly file: string;
  /** 1-based line in the file as it was profiled. */
  readonly line: number;
  readonly function: string;
  /** 1-based column of the leftmost expression with ops, where known. */
  readonly column: number | undefined;
  /** true: an exact call site; false: a function's def line (the trace had no call sites). */
  readonly exact: boolean;
  /** Absent: the exact line that called; otherwise how the line was found (the first row's, see `stats`). */
  readonly kind: SourceFrameKind | undefined;
  /** The analysis's rows for this line, one per kind; the numbers below are theirs. */
  readonly stats: readonly LineStat[];
  /** Top-level op calls made from this line. */
  calls: number;
  /** Self: the ops whose innermost frame is this line. */
  cpuSelfNs: number;
  deviceSelfNs: number;
  /** Total (with callees): every op with this line in its call chain, once. */
  cpuTotalNs: number;
  deviceTotalNs: number;
  /** Device events (kernels, memcpy, memset) launched by the line's own ops, and with callees. */
  kernelCount: number;
  totalKernelCount: number;
  /** Largest device time first (then CPU time). */
  readonly topOps: OpTime[];
  /** Largest total time first; every kernel name, not only the top few. */
  readonly kernels: KernelTime[];
  /** The lines that spend this line's callee time, largest first (device time; CPU without device activity). */
  readonly callees: readonly CalleeLine[];
  /** Top-level op slices called from this line: what "Show in timeline" selects. */
  readonly slices: Int32Array;
  /** Device slices launched from this line: what "Show kernels" lists. */
  readonly kernelSlices: Int32Array;
  /** What the line's ops allocated, when the profile recorded memory (profile --memory); summed over devices. */
  readonly memory?: LineMemoryTotals;
}

export interface FunctionEntry {
  readonly file: string;
  readonly function: string;
  /**
   * 1-based def line when known (function-level profiles name it); otherwise the first line of the function seen in
   * the profile, from which the editor finds the `def` above (findDefinitionLine).
   */
  readonly defLine: number | undefined;
  readonly firstLine: number;
  /** Including callees: every op whose call chain passes through the function, counted once. */
  cpuNs: number;
  deviceNs: number;
  kernelCount: number;
  calls: number;
}

export interface LineMemoryTotals {
  allocations: number;
  allocatedBytes: number;
  freedBytes: number;
  /** Still held at the device's peak; undefined where the trace has no addresses. */
  atPeakBytes: number | undefined;
  devices: string[];
}

/** Per row of Analysis.lines: its memory, summed over devices. */
function memoryOfRows(analysis: Analysis): Map<number, LineMemoryTotals> {
  const byRow = new Map<number, LineMemoryTotals>();
  for (const row of analyzeMemory(analysis)?.lines ?? []) {
    const total = byRow.get(row.line) ?? {
      allocations: 0,
      allocatedBytes: 0,
      freedBytes: 0,
      atPeakBytes: undefined,
      devices: [],
    };
    total.allocations += row.allocations;
    total.allocatedBytes += row.allocatedBytes;
    total.freedBytes += row.freedBytes;
    if (row.atPeakBytes !== undefined) total.atPeakBytes = (total.atPeakBytes ?? 0) + row.atPeakBytes;
    if (!total.devices.includes(row.device)) total.devices.push(row.device);
    byRow.set(row.line, total);
  }
  return byRow;
}

function mergeMemory(
  rows: readonly number[],
  byRow: Map<number, LineMemoryTotals>,
): LineMemoryTotals | undefined {
  const found = rows.map((row) => byRow.get(row)).filter((m): m is LineMemoryTotals => m !== undefined);
  if (found.length === 0) return undefined;
  if (found.length === 1) return found[0];
  const peaks = found.filter((m) => m.atPeakBytes !== undefined);
  return {
    allocations: found.reduce((sum, m) => sum + m.allocations, 0),
    allocatedBytes: found.reduce((sum, m) => sum + m.allocatedBytes, 0),
    freedBytes: found.reduce((sum, m) => sum + m.freedBytes, 0),
    atPeakBytes: peaks.length ? peaks.reduce((sum, m) => sum + (m.atPeakBytes ?? 0), 0) : undefined,
    devices: [...new Set(found.flatMap((m) => m.devices))],
  };
}

export interface FileIndex {
  /** The file as the profile names it. */
  readonly file: string;
  readonly exact: boolean;
  /** By 1-based line as profiled. */
  readonly byLine: ReadonlyMap<number, LineEntry>;
  /** Sorted by line. */
  readonly lines: readonly LineEntry[];
  /** Sorted by def line (first line seen when unknown). */
  readonly functions: readonly FunctionEntry[];
}

export interface LineIndex {
  /** By normalised path (normalizePath). */
  readonly files: ReadonlyMap<string, FileIndex>;
  /** Whether any line is an exact call site (profile.sites was used). */
  readonly exact: boolean;
  /** Device time of all device events in the profile, and whether there is any (CPU-only profiles have none). */
  readonly totalDeviceNs: number;
  /** CPU self time of every op on a user line: what the lines' self times add up to. */
  readonly totalCpuNs: number;
  readonly hasDevice: boolean;
  /** Device (or, without device time, CPU) total of the hottest line: the top of the heat scale. */
  readonly maxLineNs: number;
}

const TOP_OPS = 5;
/** Callee lines a hover lists. */
const TOP_CALLEES = 5;

/** Paths compare with forward slashes, no `.`/`..` segments, and case-folded Windows drive paths. */
export function normalizePath(file: string): string {
  let p = file.replace(/\\/g, '/');
  const parts: string[] = [];
  const absolute = p.startsWith('/');
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
    else parts.push(part);
  }
  p = (absolute ? '/' : '') + parts.join('/');
  if (/^[A-Za-z]:\//.test(p) || /^\/[A-Za-z]:\//.test(p)) p = p.toLowerCase().replace(/^\/(?=[a-z]:)/, '');
  return p;
}

interface FunctionAcc {
  file: string;
  function: string;
  defLine: number | undefined;
  firstLine: number;
  cpuNs: number;
  deviceNs: number;
  kernelCount: number;
  calls: number;
}

export interface LineIndexOptions {
  /**
   * The text of a source file, when it can be read: call sites name a function but not where it starts, and two
   * functions of one file may share a name (every nn.Module has a forward). With the text each function is told
   * apart by its def line; without it, functions of the same name in a file are added together.
   */
  readSource?: (file: string) => string | undefined;
}

/** Builds the per-file, per-line index. O(lines' slices + call-chain frames); run once per profile. */
export function buildLineIndex(analysis: Analysis, options: LineIndexOptions = {}): LineIndex {
  const { profile, lines: stats, chains } = analysis;
  const slices = profile.slices;

  // Paths are few and frames many: normalise each distinct path once.
  const normalized = new Map<string, string>();
  const norm = (file: string): string => {
    let key = normalized.get(file);
    if (key === undefined) {
      key = normalizePath(file);
      normalized.set(file, key);
    }
    return key;
  };

  // One entry per (file, line) of the editor: the analysis's rows of that line, in their order (hottest first).
  const placeOf = new Int32Array(stats.length);
  const places: number[][] = [];
  const placeIndex = new Map<string, number>();
  stats.forEach((stat, l) => {
    const key = `${norm(stat.file)}\u0000${stat.line}`;
    let place = placeIndex.get(key);
    if (place === undefined) {
      place = places.length;
      places.push([]);
      placeIndex.set(key, place);
    }
    places[place].push(l);
    placeOf[l] = place;
  });
  const merged = chainTotals(chains, placeOf, places.length);

  // Callee lines: for each chain, its innermost line's own time goes to every other line of the chain, once.
  const callees: (Map<number, { cpuNs: number; deviceNs: number }> | undefined)[] = new Array(places.length);
  const seen = new Int32Array(places.length).fill(-1);
  for (let k = 0; k < chains.leaves.length; k++) {
    const leaf = chains.leaves[k];
    const own = placeOf[chains.line[leaf]];
    seen[own] = k;
    for (let node = chains.caller[leaf]; node >= 0; node = chains.caller[node]) {
      const place = placeOf[chains.line[node]];
      if (seen[place] === k) continue;
      seen[place] = k;
      const byLine = (callees[place] ??= new Map());
      const time = byLine.get(own) ?? { cpuNs: 0, deviceNs: 0 };
      time.cpuNs += chains.cpuNs[k];
      time.deviceNs += chains.deviceNs[k];
      byLine.set(own, time);
    }
  }

  let totalDeviceNs = 0;
  for (let d = 0; d < slices.length; d++) if (isDeviceKind(slices.kind[d])) totalDeviceNs += slices.dur[d];
  const hasDevice = totalDeviceNs > 0;
  const heatOf = (entry: LineEntry) => (hasDevice ? entry.deviceTotalNs : entry.cpuTotalNs);

  const memoryByRow = memoryOfRows(analysis);
  const entries: LineEntry[] = places.map((rows, place) => {
    const first = stats[rows[0]];
    const one = rows.length === 1;
    const opSlices = one ? analysis.lineOps[rows[0]] : concat(rows.map((l) => analysis.lineOps[l]));
    const kernelSlices = one
      ? analysis.lineKernels[rows[0]]
      : concat(rows.map((l) => analysis.lineKernels[l]));
    let cpuSelfNs = 0;
    let deviceSelfNs = 0;
    for (const l of rows) {
      cpuSelfNs += stats[l].cpuSelfNs;
      deviceSelfNs += stats[l].deviceSelfNs;
    }
    const exactRow = rows.find((l) => stats[l].kind === undefined);
    const column = rows.reduce<number | undefined>((min, l) => {
      const c = stats[l].column;
      return c !== undefined && (min === undefined || c < min) ? c : min;
    }, undefined);
    const calleeLines = [...(callees[place] ?? [])]
      .map(([other, time]): CalleeLine => {
        const stat = stats[places[other][0]];
        return { file: stat.file, line: stat.line, function: stat.function, ...time };
      })
      .filter((c) => (hasDevice ? c.deviceNs : c.cpuNs) > 0)
      .sort((a, b) =>
        hasDevice
          ? b.deviceNs - a.deviceNs || b.cpuNs - a.cpuNs
          : b.cpuNs - a.cpuNs || b.deviceNs - a.deviceNs,
      )
      .slice(0, TOP_CALLEES);
    return {
      file: first.file,
      line: first.line,
      function: first.function,
      column,
      exact: rows.some((l) => stats[l].exact),
      kind: exactRow === undefined ? first.kind : undefined,
      stats: rows.map((l) => stats[l]),
      calls: opSlices.length,
      cpuSelfNs,
      deviceSelfNs,
      // One row: its own totals; several: summed over the chains once, as each row's total is.
      cpuTotalNs: one ? first.cpuTotalNs : merged.cpuNs[place],
      deviceTotalNs: one ? first.deviceTotalNs : merged.deviceNs[place],
      kernelCount: kernelSlices.length,
      totalKernelCount: merged.kernels[place],
      topOps: opNames(profile, analysis.deviceTotalNs, opSlices).slice(0, TOP_OPS),
      kernels: kernelNames(profile, kernelSlices),
      callees: calleeLines,
      slices: opSlices,
      kernelSlices,
      memory: mergeMemory(rows, memoryByRow),
    };
  });

  // Functions (CodeLens): per chain, every distinct function on it gets the chain's ops once.
  const sources = new Map<string, string[] | null>();
  const defLines = new Map<string, number | undefined>();
  /** The 1-based def line of the function around a call site, from the source text when it can be read. */
  const definitionOf = (file: string, line: number, fn: string): number | undefined => {
    if (fn === '<module>') return 1;
    if (!options.readSource) return undefined;
    const cacheKey = `${file}\n${line}\n${fn}`;
    if (defLines.has(cacheKey)) return defLines.get(cacheKey);
    let text = sources.get(file);
    if (text === undefined) {
      const read = options.readSource(file);
      text = read === undefined ? null : read.split(/\r?\n/);
      sources.set(file, text);
    }
    const found = text && line - 1 < text.length ? findDefinitionLine((l) => text[l], fn, line - 1) : -1;
    const def = found >= 0 ? found + 1 : undefined;
    defLines.set(cacheKey, def);
    return def;
  };
  const functions = new Map<string, Map<string, FunctionAcc>>();
  const functionAcc = (file: string, fn: string, line: number, defLine: number | undefined): FunctionAcc => {
    const key = norm(file);
    let byName = functions.get(key);
    if (!byName) {
      byName = new Map();
      functions.set(key, byName);
    }
    const nameKey = defLine === undefined ? fn : `${fn}@${defLine}`;
    let f = byName.get(nameKey);
    if (!f) {
      f = { file, function: fn, defLine, firstLine: line, cpuNs: 0, deviceNs: 0, kernelCount: 0, calls: 0 };
      byName.set(nameKey, f);
    } else if (line < f.firstLine) f.firstLine = line;
    return f;
  };
  // Per node once: the function its frame runs in (a function-level frame's line is the def line itself).
  const functionOfNode: (FunctionAcc | undefined)[] = new Array(chains.line.length);
  const nodeFunction = (node: number): FunctionAcc => {
    let f = functionOfNode[node];
    if (!f) {
      const stat = stats[chains.line[node]];
      const fn = chains.function[node];
      const def = stat.kind === 'function' ? stat.line : definitionOf(stat.file, stat.line, fn);
      f = functionOfNode[node] = functionAcc(stat.file, fn, stat.line, def);
    }
    return f;
  };
  const onChain: FunctionAcc[] = [];
  for (let k = 0; k < chains.leaves.length; k++) {
    onChain.length = 0;
    for (let node = chains.leaves[k]; node >= 0; node = chains.caller[node]) {
      const f = nodeFunction(node);
      if (onChain.includes(f)) continue; // recursion: once per chain
      onChain.push(f);
      f.cpuNs += chains.cpuNs[k];
      f.deviceNs += chains.deviceNs[k];
      f.kernelCount += chains.kernels[k];
      f.calls += chains.calls[k];
    }
  }

  const byFile = new Map<string, LineEntry[]>();
  let maxLineNs = 0;
  let totalCpuNs = 0;
  for (const entry of entries) {
    const key = norm(entry.file);
    let list = byFile.get(key);
    if (!list) byFile.set(key, (list = []));
    list.push(entry);
    maxLineNs = Math.max(maxLineNs, heatOf(entry));
    totalCpuNs += entry.cpuSelfNs;
  }
  const fileIndexes = new Map<string, FileIndex>();
  for (const [key, list] of byFile) {
    list.sort((a, b) => a.line - b.line);
    fileIndexes.set(key, {
      file: list[0].file,
      exact: list.some((e) => e.exact),
      byLine: new Map(list.map((e) => [e.line, e])),
      lines: list,
      functions: [],
    });
  }
  const exact = stats.some((s) => s.exact);
  for (const [key, byName] of functions) {
    const list = [...byName.values()].sort((a, b) => (a.defLine ?? a.firstLine) - (b.defLine ?? b.firstLine));
    const fi = fileIndexes.get(key);
    if (fi) (fi.functions as FunctionEntry[]).push(...list);
    else fileIndexes.set(key, { file: list[0].file, exact, byLine: new Map(), lines: [], functions: list });
  }

  return { files: fileIndexes, exact, totalDeviceNs, totalCpuNs, hasDevice, maxLineNs };
}

function concat(parts: readonly Int32Array[]): Int32Array {
  const out = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface FileMatchOptions {
  /** The workspace folder that holds the file (an absolute path), when it lies in one. */
  workspaceFolder?: string;
  /** The path with symbolic links resolved, when the file exists here; undefined otherwise. */
  realPath?: (file: string) => string | undefined;
}

function isAbsolutePath(normalized: string): boolean {
  return normalized.startsWith('/') || /^[a-z]:\//.test(normalized);
}

function components(normalized: string): string[] {
  return normalized.split('/').filter((part) => part !== '');
}

function endsWith(parts: readonly string[], tail: readonly string[]): boolean {
  if (tail.length === 0 || tail.length > parts.length) return false;
  for (let i = 1; i <= tail.length; i++) if (parts[parts.length - i] !== tail[tail.length - i]) return false;
  return true;
}

function commonTail(a: readonly string[], b: readonly string[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

/**
 * The index of a file open in the editor, or undefined. Traces name files by the paths of the machine that
 * recorded them, and many files share a name (train.py, model.py, __init__.py), so a file matches only where the
 * path says it is the same file:
 *
 *  1. the same path, normalised, or the same file once symbolic links are resolved (`realPath`): a trace
 *     recorded here, and every session of Profile Current File, which ran this very file;
 *  2. an absolute path from another machine or checkout that ends with the file's path inside its workspace
 *     folder, when that path has a folder in it: `src/train.py` matches `/ci/build/src/train.py`. A file at the top
 *     of the workspace folder counts the folder's own name (`proj/train.py`); a file outside every workspace
 *     folder, its parent folder;
 *  3. a relative path (torch writes the paths of imported modules relative to sys.path entries, such as
 *     `models/resnet.py`) that is a tail of the file's workspace path with a folder in it, or the whole workspace
 *     path (`train.py` at the top of the workspace: Python puts the script's own folder on sys.path).
 *
 * The file name alone never matches: a trace naming train.py must not put its numbers on every train.py. Among
 * several candidates the one sharing the most trailing path components wins; a tie gives undefined rather than the
 * wrong file's numbers.
 */
export function lookupFile(
  index: LineIndex,
  file: string,
  options: FileMatchOptions = {},
): FileIndex | undefined {
  const key = normalizePath(file);
  const direct = index.files.get(key);
  if (direct) return direct;
  const real = options.realPath?.(file);
  const realKey = real === undefined ? undefined : normalizePath(real);
  if (realKey !== undefined) {
    const aliased = index.files.get(realKey);
    if (aliased) return aliased;
  }
  // Drive paths were case-folded by normalizePath; the trace's relative paths are folded the same way.
  const fold = /^[a-z]:\//.test(key) ? (p: string) => p.toLowerCase() : (p: string) => p;
  const parts = components(key);
  const name = parts[parts.length - 1];
  let relative: string[] | undefined;
  let anchor = parts.slice(-2);
  if (options.workspaceFolder !== undefined) {
    const folder = components(normalizePath(options.workspaceFolder));
    if (folder.length < parts.length && folder.every((part, i) => part === parts[i])) {
      relative = parts.slice(folder.length);
      anchor =
        relative.length >= 2 || folder.length === 0 ? relative : [folder[folder.length - 1], ...relative];
    }
  }
  const own = relative ?? parts;
  let best: FileIndex | undefined;
  let bestLength = 0;
  let tie = false;
  for (const [other, fi] of index.files) {
    const otherParts = components(other).map(fold);
    if (otherParts[otherParts.length - 1] !== name) continue;
    let matches: boolean;
    if (isAbsolutePath(other)) {
      if (realKey !== undefined && options.realPath) {
        const otherReal = options.realPath(fi.file);
        if (otherReal !== undefined && normalizePath(otherReal) === realKey) return fi;
      }
      matches = endsWith(otherParts, anchor);
    } else {
      matches =
        endsWith(otherParts, anchor) ||
        (endsWith(own, otherParts) &&
          (otherParts.length >= 2 || (relative !== undefined && otherParts.length === relative.length)));
    }
    if (!matches) continue;
    const common = commonTail(parts, otherParts);
    if (common > bestLength) {
      best = fi;
      bestLength = common;
      tie = false;
    } else if (common === bestLength) tie = true;
  }
  return tie ? undefined : best;
}

/**
 * The quantity the gutter heat and the inline text both show: the line's total, with callees. A line is hot when
 * running it costs time, wherever its ops sit: `logits = model(x)` spends the whole forward pass, and a self-only
 * heat would leave the most expensive line of a training script unmarked while its text said seconds. The hover
 * splits the total into self and callee lines.
 */
function heatNs(index: LineIndex, entry: LineEntry): number {
  return index.hasDevice ? entry.deviceTotalNs : entry.cpuTotalNs;
}

/** Heat of a line in [0, 1]: its total's share of the hottest line's (device time; CPU time on CPU-only profiles). */
export function lineHeat(index: LineIndex, entry: LineEntry): number {
  if (index.maxLineNs <= 0) return 0;
  return heatNs(index, entry) / index.maxLineNs;
}

/** Share of the whole profile's device time (CPU time when there is none) the line costs with its callees, in [0, 1]. */
export function lineShare(index: LineIndex, entry: LineEntry): number {
  const total = index.hasDevice ? index.totalDeviceNs : index.totalCpuNs;
  if (total <= 0) return 0;
  return heatNs(index, entry) / total;
}

/** Number of gutter heat levels (decoration types) the editor creates. */
export const HEAT_LEVELS = 5;

/**
 * Level 0 .. HEAT_LEVELS-1 by share of the hottest line, on a logarithmic scale over three decades (the hottest
 * line is the top level, a line at 1/10 of it is about two levels lower, 1/1000 and less the lowest): profiles are
 * dominated by a few lines, and a linear scale would paint every other line the same colour. Lines with no time
 * at all get -1 (no decoration).
 */
export function heatLevel(index: LineIndex, entry: LineEntry): number {
  if (heatNs(index, entry) <= 0) return -1;
  const h = lineHeat(index, entry);
  const level = Math.floor(((Math.log10(h) + 3) / 3) * HEAT_LEVELS);
  return Math.max(0, Math.min(HEAT_LEVELS - 1, level));
}

/**
 * The inline after-text: "1.23 ms device · 0.40 ms CPU", the line's total with callees (the heat's quantity). A
 * profile without any device activity (a CPU-only run) shows the CPU time alone rather than a column of "0 ms
 * device".
 */
export function inlineText(entry: LineEntry, hasDevice = true): string {
  const cpu = formatMs(entry.cpuTotalNs);
  if (!hasDevice) return `${cpu} CPU`;
  return `${formatMs(entry.deviceTotalNs)} device · ${cpu} CPU`;
}

/** The CodeLens title: "device 12.3 ms · CPU 4.1 ms · 28 kernels" ("CPU 4.1 ms · 12 calls" without device activity). */
export function codeLensTitle(fn: FunctionEntry, hasDevice = true): string {
  if (!hasDevice) return `CPU ${formatMs(fn.cpuNs)} · ${fn.calls} op call${fn.calls === 1 ? '' : 's'}`;
  const kernels = `${fn.kernelCount} kernel${fn.kernelCount === 1 ? '' : 's'}`;
  return `device ${formatMs(fn.deviceNs)} · CPU ${formatMs(fn.cpuNs)} · ${kernels}`;
}

/**
 * Finds the 0-based line of `def NAME` (or `class NAME`) at or above a 0-based line; -1 when there is none.
 * `lineText` reads one line (an editor document reads lines lazily; only those above the call are needed).
 */
export function findDefinitionLine(
  lineText: (line: number) => string,
  name: string,
  fromLine: number,
): number {
  if (name === '<module>') return 0;
  const bare = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
  const escaped = bare.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const def = new RegExp(`^\\s*(?:async\\s+)?(?:def|class)\\s+${escaped}\\b`);
  for (let l = fromLine; l >= 0; l--) if (def.test(lineText(l))) return l;
  return -1;
}

/** Names in the hover's tables are cut shorter than elsewhere: the hover is a narrow widget. */
const HOVER_NAME_LENGTH = 70;

/** A link destination the hover accepts: a command URI whose text needs no Markdown escaping. */
const SAFE_COMMAND_URI = /^command:[A-Za-z0-9._-]+(\?[A-Za-z0-9%._~-]*)?$/;

export interface HoverOptions {
  /** Label of the profile that annotates the editor (shown in the hover). */
  profileLabel: string;
  /** Command URIs for the links (commandUri); omitted links, and any that is not a plain command URI, are not shown. */
  showInTimeline?: string;
  showKernels?: string;
  /** The command URI that opens a file of the profile at a line (the callee lines' links); none: plain text. */
  openLine?: (file: string, line: number) => string | undefined;
  /** Set when the file changed since the profile in a way that cannot be mapped. */
  staleMessage?: string;
  /** The run the user compares against ("FlagOS: Compare with…"): its label and this line's row of the diff. */
  baseline?: { label: string; row: LineDiff | undefined };
}

/** "Memory: allocated 16 MB in 3 allocations (freed 0 bytes), 16 MB still held at the peak · cpu". */
function memoryLine(memory: LineMemoryTotals): string {
  const held =
    memory.atPeakBytes !== undefined ? `, **${formatBytes(memory.atPeakBytes)}** still held at the peak` : '';
  const count = `${memory.allocations} allocation${memory.allocations === 1 ? '' : 's'}`;
  return `Memory: allocated **${formatBytes(memory.allocatedBytes)}** in ${count} (freed ${formatBytes(memory.freedBytes)})${held} · ${markdownText(memory.devices.join(', '))}`;
}

function signedMs(ns: number): string {
  return ns === 0 ? '±0' : `${ns > 0 ? '+' : '−'}${formatMs(Math.abs(ns))}`;
}

/** "Δ vs base: CPU total +12.3 ms (1.25×) · self …", or why there is nothing to compare. */
function baselineLine(baseline: NonNullable<HoverOptions['baseline']>, hasDevice: boolean): string {
  const label = markdownText(baseline.label);
  const row = baseline.row;
  if (!row || !row.b) return `Δ vs ${label}: no data for this line in the diff`;
  if (!row.a)
    return `Δ vs ${label}: **new** — the line ran no ops there${row.edited ? ' (the line was edited)' : ''}`;
  const pick = hasDevice ? 'device' : 'CPU';
  const total = hasDevice ? row.b.deviceTotalNs - row.a.deviceTotalNs : row.b.cpuTotalNs - row.a.cpuTotalNs;
  const self = hasDevice ? row.b.deviceSelfNs - row.a.deviceSelfNs : row.b.cpuSelfNs - row.a.cpuSelfNs;
  const baseTotal = hasDevice ? row.a.deviceTotalNs : row.a.cpuTotalNs;
  const ratio = baseTotal > 0 ? ` (${((baseTotal + total) / baseTotal).toFixed(2)}×)` : '';
  const moved = row.lineA !== null && row.lineA !== row.lineB ? ` · was line ${row.lineA}` : '';
  return `Δ vs ${label}: ${pick} total **${signedMs(total)}**${ratio} · self ${signedMs(self)} · calls ${row.a.calls} → ${row.b.calls}${moved}${row.edited ? ' · edited' : ''}`;
}

/** What a row of another kind is, in the hover's words. */
const KIND_NOTE: Record<SourceFrameKind, string> = {
  function: 'function level',
  backward: 'backward: autograd ops charged to the line that called backward()',
  trace: 'from the trace',
};

/**
 * The hover's Markdown for a line: total (with callees) and self device and CPU time, calls, top ops and kernels,
 * the callee lines that spend the rest, links. Every name from the trace is data (markdownCode, markdownText): no
 * image, link, HTML or table row can come from it, and the only links are the command URIs of `options`. Render
 * it untrusted except for those commands, without HTML or icons.
 */
export function hoverMarkdown(index: LineIndex, entry: LineEntry, options: HoverOptions): string {
  const out: string[] = [];
  const where = !entry.exact
    ? `function ${markdownCode(entry.function)} (function level)`
    : entry.kind
      ? `this line (${LINE_KIND_LABELS[entry.kind]})`
      : 'this line';
  out.push(
    `**FlagOS Profiler** — ${where} · ${markdownText(options.profileLabel)}${index.hasDevice ? '' : ' · CPU only (no device activity)'}`,
  );
  if (options.staleMessage) out.push('', `⚠ ${markdownText(options.staleMessage, Infinity)}`);
  out.push('');
  const share = lineShare(index, entry);
  const sharePart =
    share > 0
      ? ` (${(share * 100).toFixed(share >= 0.1 ? 0 : 1)}% of ${index.hasDevice ? 'device' : 'CPU'} time)`
      : '';
  // A CPU-only profile shows CPU time alone: "Device —" on every line of every hover says nothing.
  const times = (deviceNs: number, cpuNs: number) =>
    index.hasDevice
      ? `Device **${formatMs(deviceNs)}** · CPU **${formatMs(cpuNs)}**`
      : `CPU **${formatMs(cpuNs)}**`;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const kernels = index.hasDevice ? ` · ${count(entry.totalKernelCount, 'kernel')}` : '';
  out.push(`Total (with callees): ${times(entry.deviceTotalNs, entry.cpuTotalNs)}${kernels}${sharePart}`, '');
  if (options.baseline) out.push(baselineLine(options.baseline, index.hasDevice), '');
  if (entry.calls === 0 && entry.cpuSelfNs === 0 && entry.deviceSelfNs === 0)
    out.push('Self: no ops of its own (all of it in the functions this line calls)');
  else out.push(`Self: ${times(entry.deviceSelfNs, entry.cpuSelfNs)} · ${count(entry.calls, 'call')}`);
  // Rows of several kinds on one line: each one's own share of the self time, named.
  if (entry.stats.length > 1)
    for (const stat of entry.stats)
      out.push(
        '',
        `- ${stat.kind ? KIND_NOTE[stat.kind] : 'exact line'}: ${times(stat.deviceSelfNs, stat.cpuSelfNs)} · ${count(stat.ops, 'call')}`,
      );
  if (entry.memory) out.push('', memoryLine(entry.memory));
  if (!entry.exact)
    out.push('', '_Function level: the trace has no call sites; Profile Current File records exact lines._');
  else if (entry.kind === 'backward' && entry.stats.length === 1) out.push('', `_${KIND_NOTE.backward}._`);
  if (entry.topOps.length > 0) {
    // Calls as "30×": a bare count right-aligned against the time beside it read as one number.
    if (index.hasDevice) out.push('', '| Op | Calls | Device | CPU |', '|:--|--:|--:|--:|');
    else out.push('', '| Op | Calls | CPU |', '|:--|--:|--:|');
    for (const op of entry.topOps) {
      const name = markdownCode(op.name, { max: HOVER_NAME_LENGTH, tableCell: true });
      const deviceCell = index.hasDevice ? ` ${formatMs(op.deviceNs)} |` : '';
      out.push(`| ${name} | ${op.calls}× |${deviceCell} ${formatMs(op.cpuNs)} |`);
    }
  }
  if (entry.kernels.length > 0) {
    out.push('', '| Kernel | Count | Time |', '|:--|--:|--:|');
    for (const k of entry.kernels.slice(0, TOP_OPS))
      out.push(
        `| ${markdownCode(k.name, { max: HOVER_NAME_LENGTH, tableCell: true })} | ${k.count} | ${formatMs(k.totalNs)} |`,
      );
    if (entry.kernels.length > TOP_OPS) out.push('', `…and ${entry.kernels.length - TOP_OPS} more kernels`);
  }
  const usable = (uri: string | undefined): uri is string => uri !== undefined && SAFE_COMMAND_URI.test(uri);
  if (entry.callees.length > 0) {
    out.push('', 'Callee lines (their own time under this line):', '');
    for (const callee of entry.callees) {
      const label = markdownText(`${callee.file.split(/[\\/]/).pop()}:${callee.line}`);
      const uri = options.openLine?.(callee.file, callee.line);
      const place = usable(uri) ? `[${label}](${uri})` : label;
      out.push(`- ${place} ${markdownCode(callee.function)} — ${times(callee.deviceNs, callee.cpuNs)}`);
    }
  }
  const links: string[] = [];
  if (usable(options.showInTimeline) && entry.slices.length > 0)
    links.push(`[Show in timeline](${options.showInTimeline})`);
  if (usable(options.showKernels) && entry.kernelSlices.length > 0)
    links.push(`[Show kernels (${entry.kernelCount})](${options.showKernels})`);
  if (links.length > 0) out.push('', links.join(' · '));
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Staleness: following edits from the profiled text to the current text.

/** One replacement, in the coordinates of the document before it (0-based), as VS Code reports changes. */
export interface TextChange {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
  text: string;
  /**
   * Whether the text before the start of the range on its first line is only whitespace (an Enter typed after the
   * indentation moves the statement down). Unknown counts as not blank.
   */
  headBlank?: boolean;
}

export interface LineShiftMap {
  /** Per profiled line (0-based): its current 0-based line, or -1 when it was deleted. */
  readonly toCurrent: Int32Array;
  /** Per profiled line: 1 where the profile has data (only those make a rewrite unmappable). */
  readonly tracked: Uint8Array;
  /** Set once the file changed in a way that cannot be mapped; the reason, for the user. */
  readonly unmappable: string | undefined;
  /** Whether any line moved or was deleted since the profile. */
  readonly shifted: boolean;
}

/** The identity map of a file as it was profiled. `tracked` lists the 0-based lines that carry data. */
export function createLineShiftMap(lineCount: number, tracked: Iterable<number> = []): LineShiftMap {
  const toCurrent = new Int32Array(Math.max(0, lineCount));
  for (let i = 0; i < toCurrent.length; i++) toCurrent[i] = i;
  const flags = new Uint8Array(toCurrent.length);
  for (const l of tracked) if (l >= 0 && l < flags.length) flags[l] = 1;
  return { toCurrent, tracked: flags, unmappable: undefined, shifted: false };
}

/** A map that cannot follow the file any more (e.g. the file on disk is newer than the profile). */
export function markUnmappable(map: LineShiftMap, reason: string): LineShiftMap {
  return { ...map, unmappable: reason };
}

function countNewlines(text: string): number {
  let k = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) k++;
  return k;
}

function applyOne(map: LineShiftMap, change: TextChange, toCurrent: Int32Array): string | undefined {
  const s = change.startLine;
  const e = change.endLine;
  const k = countNewlines(change.text);
  if (s === e && k === 0) return undefined; // an edit inside one line moves nothing
  const delta = k - (e - s);
  const headBlank = change.startCharacter === 0 || change.headBlank === true;
  for (let o = 0; o < toCurrent.length; o++) {
    const c = toCurrent[o];
    if (c < 0 || c < s) continue;
    if (c > e) {
      toCurrent[o] = c + delta;
      continue;
    }
    // The line is touched by the replaced range.
    if (s === e) {
      // Newlines typed into the line: the statement stays unless everything before it was blank.
      toCurrent[o] = headBlank ? c + k : c;
      continue;
    }
    if (map.tracked[o] && k > 0 && (c > s || headBlank) && (c < e || change.endCharacter > 0))
      return 'lines with profile data were replaced';
    if (c === s) toCurrent[o] = headBlank ? -1 : s;
    else if (c === e) toCurrent[o] = change.endCharacter === 0 ? s + k : -1;
    else toCurrent[o] = -1;
  }
  return undefined;
}

/**
 * The map after one document change event. `changes` refer to the document before the event and do not overlap
 * (VS Code's contentChanges); they are applied bottom-up so earlier ones do not move later ones. A replacement of
 * several lines that held profile data by several new lines cannot be mapped (the data could belong to any of
 * them); a change that covers the whole document (a reload from disk, a checkout) neither.
 */
export function applyTextChanges(
  map: LineShiftMap,
  changes: readonly TextChange[],
  documentLineCount?: number,
): LineShiftMap {
  if (map.unmappable || changes.length === 0) return map;
  if (changes.every((c) => c.startLine === c.endLine && !c.text.includes('\n'))) return map;
  const toCurrent = Int32Array.from(map.toCurrent);
  const ordered = [...changes].sort(
    (a, b) => b.startLine - a.startLine || b.startCharacter - a.startCharacter,
  );
  for (const change of ordered) {
    const wholeDocument =
      documentLineCount !== undefined &&
      change.startLine === 0 &&
      change.startCharacter === 0 &&
      change.endLine >= documentLineCount - 1 &&
      documentLineCount > 1 &&
      change.text.includes('\n');
    if (wholeDocument) return { ...map, unmappable: 'the whole file was replaced' };
    const reason = applyOne(map, change, toCurrent);
    if (reason) return { ...map, unmappable: reason };
  }
  return { toCurrent, tracked: map.tracked, unmappable: undefined, shifted: true };
}

/** The current 0-based line of a profiled 0-based line; -1 when deleted, unmappable, or out of range. */
export function currentLine(map: LineShiftMap, profiledLine: number): number {
  if (map.unmappable || profiledLine < 0) return -1;
  if (profiledLine >= map.toCurrent.length) {
    // Past the profiled end: the profile knows no such line (defensive; indexes never produce one).
    return -1;
  }
  return map.toCurrent[profiledLine];
}

/**
 * The inverse: per current 0-based line, the profiled 0-based line (-1 for new lines). Built once per map version
 * so hovers stay O(1); where two profiled lines were joined into one, the first keeps it.
 */
export function profiledLines(map: LineShiftMap, currentLineCount: number): Int32Array {
  const inverse = new Int32Array(Math.max(0, currentLineCount)).fill(-1);
  if (map.unmappable) return inverse;
  for (let o = 0; o < map.toCurrent.length; o++) {
    const c = map.toCurrent[o];
    if (c >= 0 && c < inverse.length && inverse[c] < 0) inverse[c] = o;
  }
  return inverse;
}

/** Convenience for callers holding a Profile: whether it carries exact call sites. */
export function hasExactSites(profile: Profile): boolean {
  return profile.sites !== undefined && profile.sites.size > 0;
}

/**
 * The one change that turns `before` into `after` line-wise: the lines they share at the top and at the bottom
 * stay, everything between is replaced. Used when a file is first seen already different from what was profiled
 * (unsaved edits made while the profile ran); undefined when the texts are equal.
 */
export function lineDiffChange(before: string, after: string): TextChange | undefined {
  if (before === after) return undefined;
  const a = before.split('\n');
  const b = after.split('\n');
  let top = 0;
  while (top < a.length && top < b.length && a[top] === b[top]) top++;
  let bottom = 0;
  while (
    bottom < a.length - top &&
    bottom < b.length - top &&
    a[a.length - 1 - bottom] === b[b.length - 1 - bottom]
  )
    bottom++;
  const endLine = a.length - bottom;
  const inserted = b.slice(top, b.length - bottom);
  // Replace whole lines [top, endLine) by the inserted lines, each ending with a newline.
  if (endLine < a.length || inserted.length === 0 || bottom > 0)
    return {
      startLine: top,
      startCharacter: 0,
      endLine,
      endCharacter: 0,
      text: inserted.map((l) => l + '\n').join(''),
    };
  // The change reaches the last line (no newline after it): replace up to the end of the old last line.
  return {
    startLine: top,
    startCharacter: 0,
    endLine: a.length - 1,
    endCharacter: a[a.length - 1].length,
    text: inserted.join('\n'),
  };
}

/**
 * How one open document's lines relate to the lines profiled, across its edits: the state an editor keeps per
 * document, without the editor. The profiled text is known only when the file on disk was not saved after the
 * profile; then an edit (an undo, a revert) that brings the document back to it makes every line match again.
 */
export class DocumentLines {
  map: LineShiftMap;
  lineCount: number;
  /** The text as profiled, when known. */
  private readonly profiledText: string | undefined;
  private readonly profiledLineCount: number;
  private readonly tracked: number[];

  constructor(options: {
    /** 0-based lines that carry profile data. */
    tracked: number[];
    /** Lines the profile knows of at least (its highest line). */
    minLines: number;
    /** The document's text and line count when first seen. */
    text: string;
    lineCount: number;
    /** The file on disk then (undefined when unreadable), and whether it was saved after the profile. */
    diskText: string | undefined;
    diskNewer: boolean;
  }) {
    const { tracked, diskText, diskNewer } = options;
    this.lineCount = options.lineCount;
    this.tracked = tracked;
    this.profiledLineCount = Math.max(
      diskText === undefined ? options.lineCount : diskText.split('\n').length,
      options.minLines,
    );
    this.map = createLineShiftMap(this.profiledLineCount, tracked);
    // A file saved after the profile is not the profiled text: nothing can bring the document back to it.
    this.profiledText = diskNewer ? undefined : diskText;
    if (diskNewer) {
      this.map = markUnmappable(this.map, 'the file was saved after the profile was taken');
    } else if (diskText !== undefined) {
      const change = lineDiffChange(diskText, options.text);
      if (change) this.map = applyTextChanges(this.map, [change]);
    }
  }

  /** Applies one change event; `text` and `lineCount` are the document's after it. Whether the map changed. */
  apply(changes: readonly TextChange[], text: () => string, lineCount: number): boolean {
    const before = this.lineCount;
    this.lineCount = lineCount;
    let next = applyTextChanges(this.map, changes, before);
    if ((next.shifted || next.unmappable) && this.profiledText !== undefined && text() === this.profiledText)
      next = createLineShiftMap(this.profiledLineCount, this.tracked);
    if (next === this.map) return false;
    this.map = next;
    return true;
  }
}
