/**
 * Two runs compared: the same tables as `flagprof summary` (ops by name, kernels by name, source lines, and
 * ProfilerStep#N spans) with A's and B's times side by side, Δ = B − A and ratio = B / A. Rows are sorted by the
 * impact |Δ| of the primary time — device time when both runs have device activity, else CPU time — and rows only
 * in A ("missing") or only in B ("new") are flagged. Pure: the source texts of the lines come in through a reader.
 *
 * Source lines across an edit. A session keeps no copy of the script (session.json, sites*.json name files and
 * lines only), so the texts are the files as they are now, read through `DiffRun.source`; the caller hands out only
 * a text that is still the one the run profiled (the file is unchanged since the run), else undefined. Then:
 *  - files match by their path under the run's script folder (two copies of a project), else by the path itself,
 *    else by a file name that only one unmatched file in each run bears;
 *  - both texts known: equal texts match line for line; different ones by a line diff (longest common
 *    subsequence). Lines outside it are the user's edit: they lead the line table. A hunk that replaced k lines by
 *    k lines pairs them in order (an edited line keeps its row, with both runs' times);
 *  - a text unknown (the file was edited in place and rerun, or is not on this machine): when no function both runs
 *    name has moved its def line (each run's python_function events name the def lines), nothing moved and lines
 *    match by number; else the lines each run has data on are aligned the same way as texts, each line read as its
 *    function, kind and op names — an edit elsewhere keeps those, an inserted line or a changed expression does
 *    not. A note says so.
 */
import { detectPlatform } from './checks/index';
import { SliceKind, isDeviceKind, isOpKind, type Profile } from '../model/profile';
import type { SourceFrameKind } from '../shared/stats';
import { userFrameOfPythonFunction } from './sourceLines';
import type { Analysis } from './types';

/** One run as the diff sees it. */
export interface DiffRun {
  analysis: Analysis;
  /** How the run is named in the output (what the user typed); the profile's path without it. */
  label?: string;
  /** The folder of the profiled script (a session's): files under it match by their path below it. */
  root?: string;
  /** The text of a source file as the run profiled it; undefined when unknown (gone, or changed since the run). */
  source?: (file: string) => string | undefined;
}

export type DiffStatus = 'both' | 'missing' | 'new';

/** One side of a row: what summary's tables show. Kernels: calls = launches, device = their time, no CPU. */
export interface DiffSide {
  calls: number;
  cpuSelfNs: number;
  cpuTotalNs: number;
  deviceSelfNs: number;
  deviceTotalNs: number;
}

export interface DiffRowBase {
  status: DiffStatus;
  a: DiffSide | null;
  b: DiffSide | null;
  /** B − A of the table's primary time (missing and new sides count as 0). */
  deltaNs: number;
  /** B / A of the primary time; null when A's is 0. */
  ratio: number | null;
}

export interface OpDiff extends DiffRowBase {
  name: string;
}

export interface KernelDiff extends DiffRowBase {
  name: string;
  kind: string;
}

export interface LineDiff extends DiffRowBase {
  /** The file as both runs know it: its path under the script folder, else B's path (A's when only in A). */
  file: string;
  /** 1-based line in each run; null on the side that does not have it. */
  lineA: number | null;
  lineB: number | null;
  function: string;
  kind?: SourceFrameKind;
  /** The line is part of what changed in the source between the runs. */
  edited: boolean;
}

export interface StepDiff extends DiffRowBase {
  /** N of ProfilerStep#N in each run. */
  stepA: number | null;
  stepB: number | null;
}

export interface TotalDiff {
  a: number;
  b: number;
  deltaNs: number;
  ratio: number | null;
}

export interface RunFacts {
  path: string;
  format: string;
  events: number;
  platform: string;
  hasDevice: boolean;
}

export type DiffLevel = 'op' | 'kernel' | 'line' | 'step';

export interface ProfileDiff {
  a: RunFacts;
  b: RunFacts;
  /** Which time rows are sorted and Δ'd by. */
  primary: 'device' | 'cpu';
  /** The runs are of different vendors' devices: kernel names do not correspond, compare ops. */
  crossVendor: boolean;
  /** The levels in the order to read them (ops first across vendors). */
  order: DiffLevel[];
  notes: string[];
  totals: { wallNs: TotalDiff; cpuNs: TotalDiff; deviceNs: TotalDiff };
  ops: OpDiff[];
  kernels: KernelDiff[];
  lines: LineDiff[];
  steps: StepDiff[];
}

/** Below this share of device time under kernel names both runs have, the kernel table says little. */
const KERNEL_OVERLAP = 0.5;

export function diffAnalyses(a: DiffRun, b: DiffRun): ProfileDiff {
  const pa = a.analysis.profile;
  const pb = b.analysis.profile;
  const hasA = a.analysis.deviceEvents.total > 0;
  const hasB = b.analysis.deviceEvents.total > 0;
  const primary = hasA && hasB ? 'device' : 'cpu';
  const notes: string[] = [];
  if (hasA !== hasB)
    notes.push(
      `only ${hasA ? 'A' : 'B'} has device activity: rows compare CPU time, device columns are one-sided`,
    );
  const platformA = detectPlatform(pa).platform;
  const platformB = detectPlatform(pb).platform;
  const crossVendor =
    hasA && hasB && platformA !== platformB && platformA !== 'other' && platformB !== 'other';
  const kernels = diffKernels(a.analysis, b.analysis);
  if (crossVendor)
    notes.push(
      `A runs on ${platformA} and B on ${platformB}: kernel names differ between vendors' libraries, so compare ops (shown first)`,
    );
  else if (hasA && hasB && kernelOverlap(kernels) < KERNEL_OVERLAP)
    notes.push('most device time is under kernel names only one run has: the ops compare like with like');
  const lines = diffLines(a, b, primary, notes);
  const steps = diffSteps(a.analysis, b.analysis, notes);
  return {
    a: runFacts(a, platformA),
    b: runFacts(b, platformB),
    primary,
    crossVendor,
    order: crossVendor ? ['op', 'line', 'kernel', 'step'] : ['line', 'op', 'kernel', 'step'],
    notes,
    totals: {
      wallNs: total(wallNs(pa), wallNs(pb)),
      cpuNs: total(cpuNs(a.analysis), cpuNs(b.analysis)),
      deviceNs: total(deviceNs(pa), deviceNs(pb)),
    },
    ops: diffOps(a.analysis, b.analysis, primary),
    kernels,
    lines,
    steps,
  };
}

function runFacts(run: DiffRun, platform: string): RunFacts {
  const { analysis } = run;
  const { profile } = analysis;
  return {
    path: run.label ?? profile.path,
    format: profile.format,
    events: profile.eventCount,
    platform,
    hasDevice: analysis.deviceEvents.total > 0,
  };
}

function ratioOf(a: number, b: number): number | null {
  return a === 0 ? null : b / a;
}

function total(a: number, b: number): TotalDiff {
  return { a, b, deltaNs: b - a, ratio: ratioOf(a, b) };
}

/** First start and last end (relative ns) of the CPU and device activity, markers and counters left out. */
export function activitySpan(profile: Profile): { startNs: number; endNs: number } | undefined {
  const { slices } = profile;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < slices.length; i++) {
    const kind = slices.kind[i];
    if (kind === SliceKind.Instant || kind === SliceKind.Other) continue;
    first = Math.min(first, slices.start[i]);
    last = Math.max(last, slices.start[i] + slices.dur[i]);
  }
  return last >= first ? { startNs: first, endNs: last } : undefined;
}

function wallNs(profile: Profile): number {
  const span = activitySpan(profile);
  return span ? span.endNs - span.startNs : 0;
}

/** CPU time in ops: self times, so nested ops are counted once. */
function cpuNs(analysis: Analysis): number {
  let sum = 0;
  for (const op of analysis.ops) sum += op.cpuSelfNs;
  return sum;
}

/** Device busy time: every kernel, memcpy and memset (concurrent streams add up). */
function deviceNs(profile: Profile): number {
  const { slices } = profile;
  let sum = 0;
  for (let i = 0; i < slices.length; i++) if (isDeviceKind(slices.kind[i])) sum += slices.dur[i];
  return sum;
}

/** A row from its two sides; `time` reads the primary time of a side. */
function row(a: DiffSide | null, b: DiffSide | null, time: (side: DiffSide) => number): DiffRowBase {
  const ta = a ? time(a) : 0;
  const tb = b ? time(b) : 0;
  return { status: a && b ? 'both' : a ? 'missing' : 'new', a, b, deltaNs: tb - ta, ratio: ratioOf(ta, tb) };
}

const primaryTime = (primary: 'device' | 'cpu') =>
  primary === 'device' ? (s: DiffSide) => s.deviceSelfNs : (s: DiffSide) => s.cpuSelfNs;

/** Larger |Δ| first; ties by the larger time of either run (what an unchanged run still spends), then by name. */
function byImpact<T extends DiffRowBase>(label: (row: T) => string, time: (side: DiffSide) => number) {
  const size = (r: T) => Math.max(r.a ? time(r.a) : 0, r.b ? time(r.b) : 0);
  return (x: T, y: T) =>
    Math.abs(y.deltaNs) - Math.abs(x.deltaNs) || size(y) - size(x) || compare(label(x), label(y));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Rows keyed by name (or any key) in both runs: the union, each with its sides. */
function joinByKey<S>(
  a: readonly S[],
  b: readonly S[],
  key: (s: S) => string,
): { key: string; a: S | undefined; b: S | undefined }[] {
  const joined = new Map<string, { key: string; a: S | undefined; b: S | undefined }>();
  for (const s of a) joined.set(key(s), { key: key(s), a: s, b: undefined });
  for (const s of b) {
    const k = key(s);
    const entry = joined.get(k);
    if (entry) entry.b = s;
    else joined.set(k, { key: k, a: undefined, b: s });
  }
  return [...joined.values()];
}

function diffOps(a: Analysis, b: Analysis, primary: 'device' | 'cpu'): OpDiff[] {
  const side = (op: Analysis['ops'][number] | undefined): DiffSide | null =>
    op
      ? {
          calls: op.calls,
          cpuSelfNs: op.cpuSelfNs,
          cpuTotalNs: op.cpuTotalNs,
          deviceSelfNs: op.deviceSelfNs,
          deviceTotalNs: op.deviceTotalNs,
        }
      : null;
  return joinByKey(a.ops, b.ops, (op) => op.name)
    .map((j) => ({ name: j.key, ...row(side(j.a), side(j.b), primaryTime(primary)) }))
    .sort(byImpact((r) => r.name, primaryTime(primary)));
}

const kernelTime = (s: DiffSide) => s.deviceTotalNs;

function diffKernels(a: Analysis, b: Analysis): KernelDiff[] {
  const side = (k: Analysis['kernels'][number] | undefined): DiffSide | null =>
    k
      ? { calls: k.count, cpuSelfNs: 0, cpuTotalNs: 0, deviceSelfNs: k.totalNs, deviceTotalNs: k.totalNs }
      : null;
  return joinByKey(a.kernels, b.kernels, (k) => k.name)
    .map((j) => ({
      name: j.key,
      kind: (j.a ?? j.b)!.kind,
      ...row(side(j.a), side(j.b), kernelTime),
    }))
    .sort(byImpact((r) => r.name, kernelTime));
}

/** The share of all device time (both runs) under kernel names both runs have. */
function kernelOverlap(kernels: KernelDiff[]): number {
  let shared = 0;
  let all = 0;
  for (const k of kernels) {
    const t = (k.a?.deviceTotalNs ?? 0) + (k.b?.deviceTotalNs ?? 0);
    all += t;
    if (k.status === 'both') shared += t;
  }
  return all > 0 ? shared / all : 1;
}

// ---------------------------------------------------------------------------------------------------------------
// Steps: ProfilerStep#N spans, the annotation torch.profiler's schedule writes around each step.

const PROFILER_STEP = /^ProfilerStep#(\d+)$/;

export interface StepSpan {
  step: number;
  wallNs: number;
  deviceNs: number;
}

/**
 * The ProfilerStep#N op slices of a run, by N, in step order: wall time, and the device time launched under the
 * step (the step's device total: every op inside it has the step among its enclosing ops). Where a step appears
 * on several threads, the longest span is the step.
 */
export function profilerSteps(analysis: Analysis): StepSpan[] {
  const { slices } = analysis.profile;
  const byStep = new Map<number, StepSpan>();
  const names = new Map<number, number>();
  for (let i = 0; i < slices.length; i++) {
    if (!isOpKind(slices.kind[i])) continue;
    let step = names.get(slices.name[i]);
    if (step === undefined) {
      const match = PROFILER_STEP.exec(analysis.profile.nameOf(i));
      step = match ? Number(match[1]) : -1;
      names.set(slices.name[i], step);
    }
    if (step < 0) continue;
    const prior = byStep.get(step);
    if (!prior || slices.dur[i] > prior.wallNs)
      byStep.set(step, { step, wallNs: slices.dur[i], deviceNs: analysis.deviceTotalNs[i] });
  }
  return [...byStep.values()].sort((x, y) => x.step - y.step);
}

const stepTime = (s: DiffSide) => s.cpuTotalNs;

/** Steps pair by N when the runs share step numbers (one schedule), else in order (first with first). */
function diffSteps(a: Analysis, b: Analysis, notes: string[]): StepDiff[] {
  const sa = profilerSteps(a);
  const sb = profilerSteps(b);
  if (sa.length === 0 || sb.length === 0) {
    if (sa.length + sb.length > 0) notes.push(`only ${sa.length > 0 ? 'A' : 'B'} has ProfilerStep#N spans`);
    return [];
  }
  const numbers = new Set(sa.map((s) => s.step));
  const byNumber = sb.some((s) => numbers.has(s.step));
  if (!byNumber) notes.push('the runs share no step numbers: steps are paired in order');
  const side = (s: StepSpan | undefined): DiffSide | null =>
    s
      ? { calls: 1, cpuSelfNs: 0, cpuTotalNs: s.wallNs, deviceSelfNs: s.deviceNs, deviceTotalNs: s.deviceNs }
      : null;
  // Keyed by N, or by the place in the run's step order.
  const keyed = (list: StepSpan[]) => list.map((s, k) => ({ ...s, key: String(byNumber ? s.step : k) }));
  const joined = joinByKey(keyed(sa), keyed(sb), (s) => s.key);
  return joined
    .map((j) => ({
      stepA: j.a?.step ?? null,
      stepB: j.b?.step ?? null,
      ...row(side(j.a), side(j.b), stepTime),
    }))
    .sort(byImpact((r) => String(r.stepB ?? r.stepA).padStart(12, '0'), stepTime));
}

// ---------------------------------------------------------------------------------------------------------------
// Source lines.

type LineStat = Analysis['lines'][number];

/** How one file's lines of A find theirs in B. */
interface LineMap {
  /** A's line → B's line; undefined: the line is not in B. */
  toB(lineA: number): number | undefined;
  editedA: ReadonlySet<number>;
  editedB: ReadonlySet<number>;
}

function diffLines(a: DiffRun, b: DiffRun, primary: 'device' | 'cpu', notes: string[]): LineDiff[] {
  const filesA = groupByFile(a.analysis.lines);
  const filesB = groupByFile(b.analysis.lines);
  const pairs = pairFiles(a, b, [...filesA.keys()], [...filesB.keys()]);
  const time = primaryTime(primary);
  const rows: LineDiff[] = [];
  const inexact: string[] = [];
  for (const [fileA, fileB] of pairs) {
    const linesA = filesA.get(fileA) ?? [];
    const linesB = filesB.get(fileB) ?? [];
    const shown = displayName(b, fileB) ?? displayName(a, fileA) ?? (fileB || fileA);
    const map = lineMap(a, b, fileA, fileB, linesA, linesB, () => inexact.push(shown));
    if (map.editedA.size + map.editedB.size > 0)
      notes.push(
        `${shown} differs between the runs (${count(map.editedB.size, 'line')} of B new or changed, ${map.editedA.size} of A gone or changed): edited lines lead the line table`,
      );
    const keyB = (line: number, kind: SourceFrameKind | undefined) => `${line}\u0000${kind ?? ''}`;
    const inB = new Map(linesB.map((l) => [keyB(l.line, l.kind), l]));
    for (const la of linesA) {
      const mapped = map.toB(la.line);
      const lb = mapped === undefined ? undefined : inB.get(keyB(mapped, la.kind));
      if (lb) inB.delete(keyB(lb.line, lb.kind));
      rows.push(lineRow(shown, la, lb, map, time));
    }
    for (const lb of inB.values()) rows.push(lineRow(shown, undefined, lb, map, time));
  }
  if (inexact.length > 0)
    notes.push(
      `${[...new Set(inexact)].join(', ')}: the text each run profiled is not known (the file changed since, or is not here); lines matched by their function and ops`,
    );
  const label = (r: LineDiff) => `${r.file}:${String(r.lineB ?? r.lineA).padStart(9, '0')}:${r.kind ?? ''}`;
  const impact = byImpact(label, time);
  // The user's own edit leads: what changed in the source comes first, by impact, then the rest by impact.
  return rows.sort((x, y) => Number(y.edited) - Number(x.edited) || impact(x, y));
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function lineRow(
  file: string,
  la: LineStat | undefined,
  lb: LineStat | undefined,
  map: LineMap,
  time: (s: DiffSide) => number,
): LineDiff {
  const side = (l: LineStat | undefined): DiffSide | null =>
    l
      ? {
          calls: l.ops,
          cpuSelfNs: l.cpuSelfNs,
          cpuTotalNs: l.cpuTotalNs,
          deviceSelfNs: l.deviceSelfNs,
          deviceTotalNs: l.deviceTotalNs,
        }
      : null;
  const edited =
    (la !== undefined && map.editedA.has(la.line)) || (lb !== undefined && map.editedB.has(lb.line));
  const either = (lb ?? la)!;
  return {
    file,
    lineA: la?.line ?? null,
    lineB: lb?.line ?? null,
    function: either.function,
    ...(either.kind === undefined ? {} : { kind: either.kind }),
    edited,
    ...row(side(la), side(lb), time),
  };
}

function groupByFile(lines: readonly LineStat[]): Map<string, LineStat[]> {
  const files = new Map<string, LineStat[]>();
  for (const l of lines) {
    const list = files.get(l.file);
    if (list) list.push(l);
    else files.set(l.file, [l]);
  }
  return files;
}

/** The path below the run's script folder, when the file is there. */
function displayName(run: DiffRun, file: string): string | undefined {
  if (!run.root) return undefined;
  const root = run.root.replace(/[\\/]+$/, '');
  if (!file.startsWith(root) || !/[\\/]/.test(file.charAt(root.length))) return undefined;
  return file.slice(root.length + 1);
}

function baseName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}

/** [A's file, B's file] pairs; a file of one run only pairs with '' (and its rows are missing or new). */
function pairFiles(a: DiffRun, b: DiffRun, filesA: string[], filesB: string[]): [string, string][] {
  const keyOf = (run: DiffRun, file: string) => displayName(run, file) ?? file;
  const byKeyB = new Map(filesB.map((f) => [keyOf(b, f), f]));
  const pairs: [string, string][] = [];
  const leftA: string[] = [];
  for (const fa of filesA) {
    const fb = byKeyB.get(keyOf(a, fa));
    if (fb === undefined) leftA.push(fa);
    else {
      pairs.push([fa, fb]);
      byKeyB.delete(keyOf(a, fa));
    }
  }
  const leftB = [...byKeyB.values()];
  const unique = (files: string[]) => {
    const count = new Map<string, number>();
    for (const f of files) count.set(baseName(f), (count.get(baseName(f)) ?? 0) + 1);
    return new Map(files.filter((f) => count.get(baseName(f)) === 1).map((f) => [baseName(f), f]));
  };
  const uniqueB = unique(leftB);
  const paired = new Set<string>();
  for (const fa of unique(leftA).values()) {
    const fb = uniqueB.get(baseName(fa));
    if (fb === undefined) continue;
    pairs.push([fa, fb]);
    paired.add(fa).add(fb);
  }
  for (const fa of leftA) if (!paired.has(fa)) pairs.push([fa, '']);
  for (const fb of leftB) if (!paired.has(fb)) pairs.push(['', fb]);
  return pairs;
}

const NOTHING: ReadonlySet<number> = new Set();

function lineMap(
  a: DiffRun,
  b: DiffRun,
  fileA: string,
  fileB: string,
  linesA: readonly LineStat[],
  linesB: readonly LineStat[],
  inexact: () => void,
): LineMap {
  if (!fileA || !fileB) return { toB: () => undefined, editedA: NOTHING, editedB: NOTHING };
  const textA = a.source?.(fileA);
  const textB = b.source?.(fileB);
  if (textA !== undefined && textB !== undefined) {
    if (textA === textB) return SAME_LINES;
    const number = (i: number) => i + 1;
    return alignedLineMap(textA.split('\n'), textB.split('\n'), number, number);
  }
  if (!defsMoved(defLines(a.analysis.profile, fileA, linesA), defLines(b.analysis.profile, fileB, linesB)))
    return SAME_LINES;
  inexact();
  const [numbersA, signaturesA] = signatures(linesA);
  const [numbersB, signaturesB] = signatures(linesB);
  return alignedLineMap(
    signaturesA,
    signaturesB,
    (i) => numbersA[i],
    (i) => numbersB[i],
  );
}

const SAME_LINES: LineMap = { toB: (l) => l, editedA: NOTHING, editedB: NOTHING };

/**
 * Per function name, the def lines of that name in the file (ascending), from the run's python_function events
 * ("file(LINE): function", LINE the def line) and its function-level lines (which are def lines).
 */
function defLines(profile: Profile, file: string, lines: readonly LineStat[]): Map<string, number[]> {
  const defs = new Map<string, Set<number>>();
  const add = (fn: string, line: number) => {
    const set = defs.get(fn);
    if (set) set.add(line);
    else defs.set(fn, new Set([line]));
  };
  for (const l of lines) if (l.kind === 'function') add(l.function, l.line);
  for (const frame of pythonFrames(profile))
    // Torch names a file as the interpreter found it: relative to its sys.path entry, or absolute.
    if (frame.file === file || file.endsWith(`/${frame.file}`)) add(frame.function, frame.line);
  return new Map([...defs].map(([fn, set]) => [fn, [...set].sort((x, y) => x - y)]));
}

type PythonFrame = NonNullable<ReturnType<typeof userFrameOfPythonFunction>>;
const framesOfProfile = new WeakMap<Profile, PythonFrame[]>();

/** The user frames a profile's python_function events name, each once (read once per profile). */
function pythonFrames(profile: Profile): PythonFrame[] {
  let frames = framesOfProfile.get(profile);
  if (frames) return frames;
  frames = [];
  const { slices, strings } = profile;
  const seen = new Set<number>();
  for (let i = 0; i < slices.length; i++) {
    if (slices.kind[i] !== SliceKind.PythonFunction || seen.has(slices.name[i])) continue;
    seen.add(slices.name[i]);
    const frame = userFrameOfPythonFunction(strings.get(slices.name[i]));
    if (frame) frames.push(frame);
  }
  framesOfProfile.set(profile, frames);
  return frames;
}

/**
 * Whether a function both runs name, as often in each, has its def at other lines: the file was edited between
 * the runs. (A name defined more often in one run's events is not evidence: the runs may have called different
 * ones.)
 */
function defsMoved(x: Map<string, number[]>, y: Map<string, number[]>): boolean {
  for (const [fn, lines] of x) {
    const other = y.get(fn);
    if (other && other.length === lines.length && other.join() !== lines.join()) return true;
  }
  return false;
}

/**
 * What a line does, where its text is not known: its function, kind and the names of its own ops. A line keeps
 * it across an edit elsewhere; an inserted line, or one whose expression now calls other ops, does not. Where the
 * line has more op names than a LineStat keeps, which ones are kept depends on their times: the function alone.
 */
function signatures(lines: readonly LineStat[]): [number[], string[]] {
  const byLine = new Map<number, string[]>();
  for (const l of lines) {
    const names = l.topOps.length < TOP_OP_NAMES ? l.topOps.map((op) => op.name).sort() : ['…'];
    const part = `${l.function}\u0000${l.kind ?? ''}\u0000${names.join('\u0000')}`;
    byLine.set(l.line, [...(byLine.get(l.line) ?? []), part]);
  }
  const numbers = [...byLine.keys()].sort((x, y) => x - y);
  return [numbers, numbers.map((n) => byLine.get(n)!.sort().join('\u0001'))];
}

/** The op names a LineStat keeps at most (analysis/lines.ts). */
const TOP_OP_NAMES = 10;

/** Most cells of the line-diff table; a larger middle after the common head and tail counts as one hunk. */
const MAX_DIFF_CELLS = 4_000_000;

/**
 * Lines matched by a longest common subsequence of `a` and `b` (their texts, or signatures); the unmatched ones
 * are edited, and a hunk that replaced k entries by k pairs them in order. `numberA`/`numberB`: index → line.
 */
function alignedLineMap(
  a: string[],
  b: string[],
  numberA: (i: number) => number,
  numberB: (i: number) => number,
): LineMap {
  const toB = new Map<number, number>();
  const editedA = new Set<number>();
  const editedB = new Set<number>();
  let ia = 0;
  let ib = 0;
  for (const [ma, mb] of [...commonLines(a, b), [a.length, b.length] as [number, number]]) {
    // The hunk before this match: a[ia..ma) replaced by b[ib..mb).
    for (let k = ia; k < ma; k++) editedA.add(numberA(k));
    for (let k = ib; k < mb; k++) editedB.add(numberB(k));
    if (ma - ia === mb - ib) for (let k = 0; k < ma - ia; k++) toB.set(numberA(ia + k), numberB(ib + k));
    if (ma < a.length) toB.set(numberA(ma), numberB(mb));
    ia = ma + 1;
    ib = mb + 1;
  }
  return { toB: (l) => toB.get(l), editedA, editedB };
}

/** 0-based [A index, B index] pairs of equal lines, ascending in both. */
function commonLines(a: string[], b: string[]): [number, number][] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  const pairs: [number, number][] = [];
  for (let k = 0; k < head; k++) pairs.push([k, k]);
  if (n > 0 && m > 0 && (n + 1) * (m + 1) <= MAX_DIFF_CELLS) {
    // lcs[i][j]: the longest common subsequence of the middles' suffixes from i and j.
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i * width + j] =
          a[head + i] === b[head + j]
            ? lcs[(i + 1) * width + j + 1] + 1
            : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[head + i] === b[head + j]) {
        pairs.push([head + i, head + j]);
        i++;
        j++;
      } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) i++;
      else j++;
    }
  }
  for (let k = tail; k > 0; k--) pairs.push([a.length - k, b.length - k]);
  return pairs;
}
