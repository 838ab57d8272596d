/**
 * Multi-process runs, opened rank by rank: a session of `flagprof profile -- torchrun ...` holds one part per
 * worker, SESSION/ranks/<RANK>/, each a whole session of its own (session.json, trace.json.gz, sites*.json); a
 * folder of Kineto traces from elsewhere holds one trace per rank (worker<R>_….pt.trace.json.gz, as torch's
 * tensorboard_trace_handler writes them).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { analyze } from '../analysis/analyze';
import { rankCollectives, type RankCollectives } from '../analysis/collectives';
import { buildSummary, type SummaryJson } from '../analysis/summary';
import { ImportError } from '../import/errors';
import { ImportCancelled } from '../import/kineto';
import { locateSession, openProfile, type OpenedProfile, type OpenOptions } from './open';
import { SESSION_FILES } from './session';

export const RANKS_FOLDER = 'ranks';
/** Child processes of a profiled process (DataLoader workers, multiprocessing, Python subprocesses): one part each,
 * PART/procs/<pid>/, written by the agent's children.py. */
export const PROCS_FOLDER = 'procs';

/** One worker's part: its rank (the folder's name: RANK, or the pid where the launcher gave none). */
export interface RankPart {
  rank: string;
  folder: string;
}

/** The names of the folders in PARTS that hold a session.json (a part each); [] when PARTS is not there. */
function sessionFolders(parts: string): string[] {
  try {
    return readdirSync(parts).filter((n) => existsSync(path.join(parts, n, SESSION_FILES.session)));
  } catch {
    return [];
  }
}

/** The parts of a multi-process session, rank 0 first (numbers in order, then anything else); [] for any other. */
export function rankFolders(folder: string): RankPart[] {
  const ranks = path.join(folder, RANKS_FOLDER);
  const names = sessionFolders(ranks);
  const numeric = (n: string): number => (/^\d+$/.test(n) ? Number(n) : Infinity);
  names.sort((a, b) => numeric(a) - numeric(b) || a.localeCompare(b));
  return names.map((rank) => ({ rank, folder: path.join(ranks, rank) }));
}

/**
 * "2 ranks", "2 child processes", "2 ranks · 4 child processes": the parts a session's timeline shows besides its
 * main process (the Sessions view says it); '' for a run of one process.
 */
export function runPartsText(folder: string): string {
  const ranks = rankFolders(folder);
  const children =
    childFolders(folder).length + ranks.reduce((sum, rank) => sum + childFolders(rank.folder).length, 0);
  const counted = (count: number, one: string, many: string): string | undefined =>
    count === 0 ? undefined : `${count} ${count === 1 ? one : many}`;
  return [counted(ranks.length, 'rank', 'ranks'), counted(children, 'child process', 'child processes')]
    .filter(Boolean)
    .join(' · ');
}

export interface OpenedRank extends RankPart {
  opened?: OpenedProfile;
  /** Why the part could not be opened (a rank killed before it wrote its first segment). */
  problem?: string;
  /** A child process of a rank (or of the main process): its track group's name; not a rank of its own. */
  child?: { label: string; pid: string };
}

/** The child processes' parts of one process's session folder, by pid; [] for none. */
export function childFolders(folder: string): RankPart[] {
  const procs = path.join(folder, PROCS_FOLDER);
  const names = sessionFolders(procs);
  names.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return names.map((pid) => ({ rank: pid, folder: path.join(procs, pid) }));
}

/**
 * The child processes of the process whose part is FOLDER, opened; each named as its session says
 * ("DataLoader worker 0", "SpawnPoolWorker-1") with its pid. One that cannot be opened (killed while it started,
 * before it wrote anything) says why; the others still open.
 */
export async function openChildren(
  folder: string,
  of: string | undefined,
  options: OpenOptions = {},
): Promise<OpenedRank[]> {
  const opened: OpenedRank[] = [];
  for (const part of childFolders(folder)) {
    if (options.signal?.aborted) throw new ImportCancelled(folder);
    const source = locateSession(part.folder);
    const process = (source.session?.document as { process?: { label?: unknown } } | undefined)?.process;
    const named = typeof process?.label === 'string' && process.label ? process.label : 'child process';
    const label = `${of ? `${of} · ` : ''}${named} · pid ${part.rank}`;
    const child = { label, pid: part.rank };
    try {
      opened.push({ ...part, child, opened: await openProfile(source, { signal: options.signal }) });
    } catch (error) {
      opened.push({ ...part, child, problem: partProblem(error) });
    }
  }
  return opened;
}

/**
 * How the parts of a run are opened: the run's Cancel stops at the part being read, its progress is the share of
 * the parts read, and `onOpened` hears of each part as soon as it is open (the editor shows the first one while
 * the others are read).
 */
export interface PartsOptions extends OpenOptions {
  onOpened?: (part: OpenedRank, index: number, total: number) => void | Promise<void>;
}

/** Part INDEX of TOTAL's own options: the same Cancel, its share of the whole run's progress. */
function partOptions(options: PartsOptions, index: number, total: number): OpenOptions {
  const { onProgress, signal, timings } = options;
  return {
    signal,
    timings,
    onProgress: onProgress && ((fraction: number) => onProgress((index + fraction) / total)),
  };
}

/** A part that failed to open is reported as such; a Cancel is the whole run's and goes on up. */
function partProblem(error: unknown): string {
  if (!(error instanceof ImportError) || error instanceof ImportCancelled) throw error;
  return error.message;
}

/** Every rank's part, opened; a part that cannot be opened says why and the others still open. */
export async function openRanks(folder: string, options: PartsOptions = {}): Promise<OpenedRank[]> {
  const parts = rankFolders(folder);
  if (parts.length === 0)
    throw new ImportError(folder, undefined, `not a multi-process session (no ${RANKS_FOLDER}/ parts)`);
  const opened: OpenedRank[] = [];
  for (const [index, part] of parts.entries()) {
    let rank: OpenedRank;
    try {
      const own = partOptions(options, index, parts.length);
      rank = { ...part, opened: await openProfile(locateSession(part.folder), own) };
    } catch (error) {
      rank = { ...part, problem: partProblem(error) };
    }
    opened.push(rank);
    await options.onOpened?.(rank, index, parts.length);
  }
  return opened;
}

/** Kineto traces as files are named: `.json`, `.json.gz` (`.pt.trace.json.gz` included). */
const TRACE_FILE = /\.json(\.gz)?$/i;

/** The trace files of a folder of rank traces, by name; [] for a session folder or a folder without traces. */
export function rankTraceFiles(folder: string): string[] {
  let names: string[];
  try {
    if (existsSync(path.join(folder, SESSION_FILES.session))) return [];
    names = readdirSync(folder);
  } catch {
    return [];
  }
  return names
    .filter((n) => TRACE_FILE.test(n))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((n) => path.join(folder, n))
    .filter((file) => {
      try {
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
}

/**
 * A rank number a file name carries: after "rank" or "worker" (worker3_step_12.….pt.trace.json.gz), else its
 * first number; undefined for none.
 */
export function rankInFileName(file: string): number | undefined {
  const name = path.basename(file);
  const named = /(?:rank|worker)[_-]?(\d+)/i.exec(name) ?? /(\d+)/.exec(name);
  return named ? Number(named[1]) : undefined;
}

/**
 * Every trace of a folder of rank traces, opened, with its rank: the trace's distributedInfo.rank, else a number
 * in its file name, else its place in the folder. A trace that cannot be opened says why and the others still
 * open; two traces of one rank are refused (which one would the collectives match?).
 */
export async function openRankTraces(folder: string, options: PartsOptions = {}): Promise<OpenedRank[]> {
  const files = rankTraceFiles(folder);
  if (files.length === 0)
    throw new ImportError(folder, undefined, 'no Kineto traces (*.json, *.json.gz) in this folder');
  const opened: { file: string; opened?: OpenedProfile; problem?: string }[] = [];
  const traceRank = (o: (typeof opened)[number]): number | undefined => {
    const rank = (o.opened?.profile.metadata.distributedInfo as { rank?: unknown } | undefined)?.rank;
    return typeof rank === 'number' && Number.isInteger(rank) ? rank : undefined;
  };
  for (const [index, file] of files.entries()) {
    let part: (typeof opened)[number];
    try {
      part = { file, opened: await openProfile(file, partOptions(options, index, files.length)) };
    } catch (error) {
      part = { file, problem: partProblem(error) };
    }
    opened.push(part);
    // Its rank as far as it alone tells (the folder's numbering is settled once every trace is read).
    const rank = String(traceRank(part) ?? rankInFileName(file) ?? index);
    await options.onOpened?.({ rank, folder: file, ...part }, index, files.length);
  }
  const fromTrace = opened.map(traceRank);
  const fromName = opened.map((o) => rankInFileName(o.file));
  const distinct = (ranks: (number | undefined)[]): boolean =>
    ranks.every((r) => r !== undefined) && new Set(ranks).size === ranks.length;
  // One rule for the whole folder, so that ranks never mix numbering schemes.
  const ranks = distinct(fromTrace) ? fromTrace : distinct(fromName) ? fromName : undefined;
  const claimed = new Map<number, string>();
  opened.forEach((o, i) => {
    const rank = fromTrace[i];
    if (rank === undefined) return;
    const other = claimed.get(rank);
    if (other !== undefined)
      throw new ImportError(
        folder,
        undefined,
        `two traces of rank ${rank} (distributedInfo.rank): ${path.basename(other)} and ${path.basename(o.file)}; keep one trace per rank`,
      );
    claimed.set(rank, o.file);
  });
  const parts = opened.map((o, i) => ({
    rank: String(ranks ? ranks[i] : i),
    folder: o.file,
    opened: o.opened,
    problem: o.problem,
  }));
  return parts.sort((a, b) => Number(a.rank) - Number(b.rank));
}

/** Op and kernel names of collectives: NCCL/RCCL/HCCL, gloo, c10d ops and the profiler's comms records. */
export const COLLECTIVE =
  /nccl|rccl|hccl|gloo|c10d|record_param_comms|all_?reduce|all_?gather|reduce_?scatter/i;

/** One rank's row of `summary --ranks`. */
export interface RankStats {
  rank: string;
  wallS: number | undefined;
  cpuOpsUs: number;
  deviceUs: number;
  /** Self time of collective ops (CPU) plus collective kernels (device): self times, so nesting is counted once. */
  collectiveUs: number;
  /** The rank's collectives (collectives.ts): instances, union, exposed communication. */
  collectives: RankCollectives;
  /** The profile's originNs, so that ranks' times can be compared. */
  originNs: bigint;
  summary: SummaryJson;
}

export function rankStats(rank: OpenedRank & { opened: OpenedProfile }): RankStats {
  // One analysis for both: the summary and the collectives read the same links.
  const analysis = analyze(rank.opened.profile);
  const summary = buildSummary(analysis, { steps: true, memory: false });
  const document = rank.opened.source.kind === 'session' ? rank.opened.source.session?.document : undefined;
  // The script's own time (from its first line to its end), else the agent's.
  const wall = document?.scriptTimeS ?? document?.wallTimeS;
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
  return {
    rank: rank.rank,
    wallS: typeof wall === 'number' ? wall : undefined,
    cpuOpsUs: sum(summary.ops.map((o) => o.cpu_self_us)),
    deviceUs: sum(summary.kernels.map((k) => k.total_us)),
    collectiveUs:
      sum(summary.ops.filter((o) => COLLECTIVE.test(o.name)).map((o) => o.cpu_self_us)) +
      sum(summary.kernels.filter((k) => COLLECTIVE.test(k.name)).map((k) => k.total_us)),
    collectives: rankCollectives(analysis),
    originNs: rank.opened.profile.originNs,
    summary,
  };
}
