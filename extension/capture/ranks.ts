/**
 * Multi-process sessions (`flagprof profile -- torchrun ...`): the launcher's session folder holds one part per
 * worker, SESSION/ranks/<RANK>/, each a whole session of its own (session.json, trace.json.gz, sites*.json).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { analyze } from '../analysis/analyze';
import { buildSummary, type SummaryJson } from '../analysis/summary';
import { ImportError } from '../import/errors';
import { locateSession, openProfile, type OpenedProfile } from './open';
import { SESSION_FILES } from './session';

export const RANKS_FOLDER = 'ranks';

/** One worker's part: its rank (the folder's name: RANK, or the pid where the launcher gave none). */
export interface RankPart {
  rank: string;
  folder: string;
}

/** The parts of a multi-process session, rank 0 first (numbers in order, then anything else); [] for any other. */
export function rankFolders(folder: string): RankPart[] {
  const ranks = path.join(folder, RANKS_FOLDER);
  let names: string[];
  try {
    names = readdirSync(ranks).filter((n) => existsSync(path.join(ranks, n, SESSION_FILES.session)));
  } catch {
    return [];
  }
  const numeric = (n: string): number => (/^\d+$/.test(n) ? Number(n) : Infinity);
  names.sort((a, b) => numeric(a) - numeric(b) || a.localeCompare(b));
  return names.map((rank) => ({ rank, folder: path.join(ranks, rank) }));
}

export interface OpenedRank extends RankPart {
  opened?: OpenedProfile;
  /** Why the part could not be opened (a rank killed before it wrote its first segment). */
  problem?: string;
}

/** Every rank's part, opened; a part that cannot be opened says why and the others still open. */
export async function openRanks(folder: string): Promise<OpenedRank[]> {
  const parts = rankFolders(folder);
  if (parts.length === 0)
    throw new ImportError(folder, undefined, `not a multi-process session (no ${RANKS_FOLDER}/ parts)`);
  const opened: OpenedRank[] = [];
  for (const part of parts) {
    try {
      opened.push({ ...part, opened: await openProfile(locateSession(part.folder)) });
    } catch (error) {
      if (!(error instanceof ImportError)) throw error;
      opened.push({ ...part, problem: error.message });
    }
  }
  return opened;
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
  summary: SummaryJson;
}

export function rankStats(rank: OpenedRank & { opened: OpenedProfile }): RankStats {
  const summary = buildSummary(analyze(rank.opened.profile), { steps: true, memory: false });
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
    summary,
  };
}
