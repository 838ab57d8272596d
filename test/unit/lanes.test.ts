// buildLanes (protocol.ts), the timeline's rows: every slice in the lane of its track and depth, each lane in start
// order, whether the slices come in index order or in start order per track (input.byStart, the importer's order).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildLanes } from '../../extension/protocol';

interface Slices {
  track: Uint32Array;
  depth: Uint16Array;
  start: Float64Array;
}

const slicesArb = fc
  .array(
    fc.record({
      track: fc.integer({ min: 0, max: 2 }),
      depth: fc.integer({ min: 0, max: 3 }),
      start: fc.integer({ min: 0, max: 50 }),
    }),
    { maxLength: 200 },
  )
  .map((list): Slices => ({
    track: Uint32Array.from(list.map((s) => s.track)),
    depth: Uint16Array.from(list.map((s) => s.depth)),
    start: Float64Array.from(list.map((s) => s.start)),
  }));

const tracks = [{ id: 2 }, { id: 0 }, { id: 1 }];

/** The importer's order: by track, then by start (ties by index). */
function byTrackThenStart({ track, start }: Slices): Uint32Array {
  return Uint32Array.from(
    [...track.keys()].sort((a, b) => track[a] - track[b] || start[a] - start[b] || a - b),
  );
}

function lanesOf(slices: Slices, byStart?: Uint32Array) {
  return buildLanes(tracks, { count: slices.track.length, ...slices, byStart });
}

/** Each lane's slices as a set, and whether each lane is in start order. */
function check(slices: Slices, lanes: ReturnType<typeof lanesOf>): string[][] {
  const sets: string[][] = [];
  for (let l = 0; l + 1 < lanes.laneOffset.length; l++) {
    const members = Array.from(lanes.laneOrder.subarray(lanes.laneOffset[l], lanes.laneOffset[l + 1]));
    for (let k = 1; k < members.length; k++)
      expect(slices.start[members[k]]).toBeGreaterThanOrEqual(slices.start[members[k - 1]]);
    for (const i of members) {
      expect(slices.track[i]).toBe(lanes.laneTrack[l]);
      expect(slices.depth[i]).toBe(lanes.laneDepth[l]);
    }
    sets.push(members.map(String).sort());
  }
  return sets;
}

describe('buildLanes', () => {
  it('gives the same lanes, each in start order, from index order and from the importer start order', () => {
    fc.assert(
      fc.property(slicesArb, (slices) => {
        const plain = lanesOf(slices);
        const ordered = lanesOf(slices, byTrackThenStart(slices));
        expect(Array.from(ordered.laneOffset)).toEqual(Array.from(plain.laneOffset));
        expect(check(slices, ordered)).toEqual(check(slices, plain));
        expect(ordered.laneOrder.length).toBe(slices.track.length);
      }),
    );
  });

  it('ignores an order that is not a permutation of the slices, and sorts an order that is not by start', () => {
    fc.assert(
      fc.property(slicesArb, (slices) => {
        const n = slices.track.length;
        const plain = lanesOf(slices);
        const broken = n > 1 ? Uint32Array.from({ length: n }, () => 0) : new Uint32Array(n + 1);
        expect(check(slices, lanesOf(slices, broken))).toEqual(check(slices, plain));
        const reversed = Uint32Array.from([...Array(n).keys()].reverse());
        expect(check(slices, lanesOf(slices, reversed))).toEqual(check(slices, plain));
      }),
    );
  });
});
