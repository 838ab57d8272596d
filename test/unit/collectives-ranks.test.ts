/**
 * Collectives across ranks (analysis/ranksCollectives.ts): the i-th (name, group) on every rank is one collective,
 * its straggler the rank that started last, the waits up to that start; ranks whose clocks are offset are noted.
 */
import { describe, expect, it } from 'vitest';
import type { CollectiveInstance, RankCollectives } from '../../extension/analysis/collectives';
import { matchCollectives, type RankCollectiveInput } from '../../extension/analysis/ranksCollectives';

/** An instance on the device from start to end (ns from its rank's origin). */
function instance(
  name: string,
  index: number,
  startNs: number,
  endNs: number,
  group = '0',
): CollectiveInstance {
  return {
    name,
    group,
    index,
    part: 'device',
    op: -1,
    kernels: [],
    startNs,
    endNs,
    durationNs: endNs - startNs,
    issueNs: startNs,
  };
}

function rank(name: string, instances: CollectiveInstance[], originNs = 0n): RankCollectiveInput {
  const collectives: RankCollectives = {
    instances,
    device: true,
    unionNs: 0,
    exposedNs: 0,
    sumNs: 0,
    overlapShare: 0,
  };
  return { rank: name, originNs, collectives };
}

describe('matching collectives across ranks', () => {
  // Three ranks; every collective ends at once everywhere (as NCCL's do), the late starter waits least.
  const ranks = [
    rank('0', [instance('allreduce', 0, 1_000, 5_000), instance('allreduce', 1, 10_000, 12_000)]),
    rank('1', [instance('allreduce', 0, 3_000, 5_000), instance('allreduce', 1, 9_000, 12_000)]),
    rank('2', [instance('allreduce', 0, 2_000, 5_000), instance('allreduce', 1, 11_500, 12_000)]),
  ];
  const across = matchCollectives(ranks);

  it('names the rank that started last, and what each waited', () => {
    expect(across.matched.map((c) => [c.name, c.index, c.straggler, c.maxWaitNs])).toEqual([
      ['allreduce', 0, '1', 2_000],
      ['allreduce', 1, '2', 2_500],
    ]);
    expect(across.matched[0].ranks.map((r) => [r.rank, r.waitNs])).toEqual([
      ['0', 2_000],
      ['1', 0],
      ['2', 1_000],
    ]);
    expect(across.matched[0].durationNs).toEqual({ min: 2_000, median: 3_000, max: 4_000 });
    expect(across.unmatched).toBe(0);
  });

  it('adds up per rank: times straggler, wait caused, wait suffered', () => {
    expect(across.perRank).toEqual([
      { rank: '0', stragglerCount: 0, waitCausedNs: 0, waitSufferedNs: 2_000 + 1_500 },
      { rank: '1', stragglerCount: 1, waitCausedNs: 3_000, waitSufferedNs: 0 + 2_500 },
      { rank: '2', stragglerCount: 1, waitCausedNs: 4_000, waitSufferedNs: 1_000 + 0 },
    ]);
  });

  it('sees no clock offset when the ends agree', () => {
    expect(across.skew.offsets.map((o) => o.offsetNs)).toEqual([0, 0]);
    expect(across.skew.note).toBeUndefined();
  });

  it('compares ranks on one clock whatever their traces’ origins', () => {
    // Rank 1's trace starts 4 µs later: the same collectives at the same epoch times.
    const shifted = matchCollectives([
      ranks[0],
      rank(
        '1',
        ranks[1].collectives.instances.map((c) =>
          instance(c.name, c.index, c.startNs - 4_000, c.endNs - 4_000),
        ),
        4_000n,
      ),
      ranks[2],
    ]);
    expect(shifted.matched.map((c) => [c.straggler, c.maxWaitNs])).toEqual(
      across.matched.map((c) => [c.straggler, c.maxWaitNs]),
    );
  });

  it('matches by name and group, and counts what only one rank has', () => {
    const mixed = matchCollectives([
      rank('0', [
        instance('allreduce', 0, 0, 10, 'a'),
        instance('allreduce', 0, 0, 10, 'b'),
        instance('broadcast', 0, 5, 9),
      ]),
      rank('1', [instance('allreduce', 0, 4, 10, 'a'), instance('allreduce', 0, 7, 10, 'b')]),
    ]);
    expect(mixed.matched.map((c) => [c.group, c.straggler, c.maxWaitNs])).toEqual([
      ['a', '1', 4],
      ['b', '1', 7],
    ]);
    expect(mixed.unmatched).toBe(1);
  });

  it('notes ranks whose ends sit a constant away: an offset clock', () => {
    // Rank 1's clock runs 50 µs ahead: its every time reads 50 µs late; the collectives last 2–4 µs.
    const skewed = matchCollectives([
      ranks[0],
      rank(
        '1',
        ranks[1].collectives.instances.map((c) =>
          instance(c.name, c.index, c.startNs + 50_000, c.endNs + 50_000),
        ),
      ),
      ranks[2],
    ]);
    expect(skewed.skew.offsets).toEqual([
      { rank: '1', offsetNs: 50_000 },
      { rank: '2', offsetNs: 0 },
    ]);
    expect(skewed.skew.note).toMatch(
      /clocks look offset against rank 0's: .*collectives end rank 1 \+50\.0 µs from/,
    );
    expect(skewed.skew.note).not.toMatch(/rank 2 /);
  });

  it('does not judge clocks by CPU collectives, whose ends differ by nature', () => {
    const cpu = (c: CollectiveInstance): CollectiveInstance => ({ ...c, part: 'cpu' });
    const late = matchCollectives([
      rank('0', ranks[0].collectives.instances.map(cpu)),
      rank(
        '1',
        ranks[1].collectives.instances.map((c) =>
          cpu(instance(c.name, c.index, c.startNs, c.endNs + 50_000)),
        ),
      ),
    ]);
    expect(late.matched).toHaveLength(2);
    expect(late.skew.offsets).toEqual([]);
    expect(late.skew.note).toBeUndefined();
  });
});
