/**
 * Collectives across ranks: the i-th instance of (name, process group) on every rank is one collective. The rank
 * that started it last is its straggler — the others arrived first and waited for it — and each rank's wait is the
 * latest start minus its own. All of this trusts the ranks' clocks; the ends of one collective are near-simultaneous
 * on every rank (no rank leaves before the last one's data is in), so a rank whose ends sit a constant away from the
 * others' has an offset clock, and that is reported rather than silently corrected.
 */
import {
  instanceKey,
  type CollectiveInstance,
  type CollectivePart,
  type MessageSize,
  type RankCollectives,
} from './collectives';
import type { RanksOverview } from '../shared/results';

/** A clock offset counts as real once it exceeds this share of the median collective's duration. */
const SKEW_SHARE = 0.1;

export interface RankCollectiveInput {
  rank: string;
  /** The profile's originNs: the epoch time its relative times count from. */
  originNs: bigint;
  collectives: RankCollectives;
}

export interface MatchedRank {
  rank: string;
  /** ns from the earliest rank's origin (CrossRankCollectives.baseNs). */
  startNs: number;
  endNs: number;
  durationNs: number;
  /** Latest start among the ranks minus this rank's start (≥ 0). */
  waitNs: number;
}

export interface MatchedCollective {
  name: string;
  group: string;
  groupRanks?: string;
  groupDescription?: string;
  index: number;
  part: CollectivePart;
  size?: MessageSize;
  ranks: MatchedRank[];
  /** The rank that started last. */
  straggler: string;
  maxWaitNs: number;
  /** The waits of all ranks, summed. */
  totalWaitNs: number;
  durationNs: { min: number; median: number; max: number };
}

export interface RankWaits {
  rank: string;
  /** Collectives this rank started last. */
  stragglerCount: number;
  /** Over those collectives: the other ranks' waits, summed. */
  waitCausedNs: number;
  /** This rank's own waits, summed over every matched collective. */
  waitSufferedNs: number;
}

export interface ClockSkew {
  /** The rank the offsets are measured against (the first rank). */
  reference: string;
  /** Per rank: the median over device collectives of (its end − the reference rank's end); [] without any. */
  offsets: { rank: string; offsetNs: number }[];
  medianDurationNs: number;
  /** Present when some rank's offset exceeds 10% of the median collective: its starts are not comparable as is. */
  note?: string;
}

export interface CrossRankCollectives {
  /** The earliest rank origin (epoch ns): every MatchedRank time counts from it. */
  baseNs: bigint;
  /** In order of the first rank's start. */
  matched: MatchedCollective[];
  /** Instances found on one rank only (nothing to match them with). */
  unmatched: number;
  perRank: RankWaits[];
  skew: ClockSkew;
}

export function matchCollectives(ranks: RankCollectiveInput[]): CrossRankCollectives {
  const baseNs = ranks.reduce<bigint | undefined>(
    (min, r) => (min === undefined || r.originNs < min ? r.originNs : min),
    undefined,
  );
  const base = baseNs ?? 0n;
  const byKey = new Map<string, { instance: CollectiveInstance; rank: string; shiftNs: number }[]>();
  for (const r of ranks) {
    const shiftNs = Number(r.originNs - base);
    for (const instance of r.collectives.instances) {
      const key = `${instanceKey(instance)}\u0000${instance.index}`;
      let list = byKey.get(key);
      if (!list) byKey.set(key, (list = []));
      list.push({ instance, rank: r.rank, shiftNs });
    }
  }
  const matched: MatchedCollective[] = [];
  let unmatched = 0;
  for (const entries of byKey.values()) {
    if (entries.length < 2) {
      unmatched += entries.length;
      continue;
    }
    matched.push(matchOne(entries));
  }
  matched.sort((a, b) => a.ranks[0].startNs - b.ranks[0].startNs);
  return {
    baseNs: base,
    matched,
    unmatched,
    perRank: rankWaits(ranks, matched),
    skew: clockSkew(ranks, matched),
  };
}

function matchOne(
  entries: { instance: CollectiveInstance; rank: string; shiftNs: number }[],
): MatchedCollective {
  const ranks = entries.map(({ instance, rank, shiftNs }) => ({
    rank,
    startNs: instance.startNs + shiftNs,
    endNs: instance.endNs + shiftNs,
    durationNs: instance.durationNs,
    waitNs: 0,
  }));
  let straggler = ranks[0];
  for (const r of ranks) if (r.startNs > straggler.startNs) straggler = r;
  let maxWaitNs = 0;
  let totalWaitNs = 0;
  for (const r of ranks) {
    r.waitNs = Math.max(0, straggler.startNs - r.startNs);
    maxWaitNs = Math.max(maxWaitNs, r.waitNs);
    totalWaitNs += r.waitNs;
  }
  const durations = ranks.map((r) => r.durationNs).sort((a, b) => a - b);
  const first = entries[0].instance;
  return {
    name: first.name,
    group: first.group,
    groupRanks: first.groupRanks,
    groupDescription: first.groupDescription,
    index: first.index,
    part: first.part,
    size: entries.find((e) => e.instance.size)?.instance.size,
    ranks,
    straggler: straggler.rank,
    maxWaitNs,
    totalWaitNs,
    durationNs: { min: durations[0], median: median(durations), max: durations[durations.length - 1] },
  };
}

function rankWaits(ranks: RankCollectiveInput[], matched: MatchedCollective[]): RankWaits[] {
  const rows = new Map(
    ranks.map((r) => [r.rank, { rank: r.rank, stragglerCount: 0, waitCausedNs: 0, waitSufferedNs: 0 }]),
  );
  for (const c of matched) {
    const straggler = rows.get(c.straggler);
    // A collective every rank started at once has no straggler to blame.
    if (straggler && c.maxWaitNs > 0) {
      straggler.stragglerCount++;
      straggler.waitCausedNs += c.totalWaitNs;
    }
    for (const r of c.ranks) {
      const row = rows.get(r.rank);
      if (row) row.waitSufferedNs += r.waitNs;
    }
  }
  return [...rows.values()];
}

function clockSkew(ranks: RankCollectiveInput[], matched: MatchedCollective[]): ClockSkew {
  const reference = ranks[0]?.rank ?? '';
  const differences = new Map<string, number[]>();
  const durations: number[] = [];
  // Only device collectives end at once on every rank (NCCL's kernels finish together); a CPU backend's do not.
  for (const c of matched) {
    if (c.part !== 'device') continue;
    for (const r of c.ranks) durations.push(r.durationNs);
    const ref = c.ranks.find((r) => r.rank === reference);
    if (!ref) continue;
    for (const r of c.ranks) {
      if (r.rank === reference) continue;
      let list = differences.get(r.rank);
      if (!list) differences.set(r.rank, (list = []));
      list.push(r.endNs - ref.endNs);
    }
  }
  const offsets = [...differences].map(([rank, list]) => ({
    rank,
    offsetNs: median(list.sort((a, b) => a - b)),
  }));
  const medianDurationNs = durations.length > 0 ? median(durations.sort((a, b) => a - b)) : 0;
  const skewed = offsets.filter(
    (o) => o.offsetNs !== 0 && Math.abs(o.offsetNs) > SKEW_SHARE * medianDurationNs,
  );
  const skew: ClockSkew = { reference, offsets, medianDurationNs };
  if (skewed.length > 0) {
    const µs = (ns: number) => `${ns < 0 ? '−' : '+'}${(Math.abs(ns) / 1e3).toFixed(1)} µs`;
    const list = skewed.map((o) => `rank ${o.rank} ${µs(o.offsetNs)}`).join(', ');
    skew.note =
      `the ranks' clocks look offset against rank ${reference}'s: on median, collectives end ${list} from its ` +
      `(more than 10% of the median collective, ${(medianDurationNs / 1e3).toFixed(1)} µs); stragglers and waits ` +
      'compare starts on those clocks as they are';
  }
  return skew;
}

/** The median of sorted values. */
function median(sorted: number[]): number {
  if (sorted.length === 0) return 0;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Longest-wait collectives the Results view lists. */
const OVERVIEW_COLLECTIVES = 8;

/** A run's communication at a glance: per rank, and its most waited-for collectives (the Results view's). */
export function ranksOverview(ranks: RankCollectiveInput[]): RanksOverview {
  const matched = matchCollectives(ranks);
  const waits = new Map(matched.perRank.map((w) => [w.rank, w]));
  const notes = new Set<string>();
  for (const r of ranks) if (r.collectives.note) notes.add(r.collectives.note);
  if (matched.skew.note) notes.add(matched.skew.note);
  return {
    rows: ranks.map((r) => ({
      rank: r.rank,
      commNs: r.collectives.unionNs,
      exposedNs: r.collectives.exposedNs,
      stragglerCount: waits.get(r.rank)?.stragglerCount ?? 0,
      waitCausedNs: waits.get(r.rank)?.waitCausedNs ?? 0,
      waitSufferedNs: waits.get(r.rank)?.waitSufferedNs ?? 0,
    })),
    collectives: [...matched.matched]
      .sort((a, b) => b.maxWaitNs - a.maxWaitNs)
      .slice(0, OVERVIEW_COLLECTIVES)
      .map((c) => ({
        name: `${c.name} #${c.index}`,
        group: c.group,
        size: c.size?.inBytes ?? c.size?.outBytes,
        medianNs: c.durationNs.median,
        maxNs: c.durationNs.max,
        straggler: c.straggler,
        maxWaitNs: c.maxWaitNs,
      })),
    notes: [...notes],
  };
}
