/**
 * The addon's finishing passes (native/addon/slice_order.cc) against the TypeScript ones they replace
 * (extension/import/finish.ts, the reference): the same origin, order, nesting, track kinds and flow binding for
 * any slices, sorted or not, with ties, zero lengths, deep nesting and flows on tracks without slices.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reindex } from '../../extension/import/finish';
import { loadAddon } from '../../extension/import/addon';
import { FlowPhase, Profile, SliceKind, SLICE_KIND_COUNT, type Track } from '../../extension/model/profile';
import { profileBytes } from '../helpers/profileBytes';

interface SliceSpec {
  track: number;
  start: number;
  dur: number;
  kind: number;
}
interface FlowSpec {
  track: number;
  ts: number;
}

function build(trackCount: number, slices: SliceSpec[], flows: FlowSpec[]): Profile {
  const profile = new Profile('generated');
  for (let t = 0; t < trackCount; t++) {
    const track: Track = {
      id: t,
      pid: String(t % 2),
      // Track 1 of a pair says "stream N" where its twin says N: the 2021 traces' flow halves (bindFlows).
      tid: t % 4 === 3 ? `stream ${t - 1}` : String(t),
      kind: 'other',
      name: `Thread ${t}`,
      processName: 'p',
      processSortIndex: 0,
      threadSortIndex: t,
      sliceCount: 0,
      maxDepth: 0,
    };
    profile.tracks.push(track);
  }
  const name = profile.strings.intern('op');
  for (const s of slices)
    profile.slices.push(s.kind as SliceKind, s.track, s.start, s.dur, name, 0, -1, -1, -1);
  const id = profile.strings.intern('1');
  for (const f of flows) profile.flows.push(0, id, FlowPhase.Start, f.ts, f.track);
  profile.slices.compact();
  return profile;
}

const TRACKS = 6;
// Few distinct times, so that equal starts and equal ends (the order's ties and the nesting's edges) are common.
const time = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.double({ min: 1e15, max: 1e15 + 50, noNaN: true }));
const slice = fc.record({
  track: fc.integer({ min: 0, max: TRACKS - 2 }), // the last track has flows only
  start: time,
  dur: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 }), fc.double({ min: 0, max: 30, noNaN: true })),
  kind: fc.integer({ min: 0, max: SLICE_KIND_COUNT - 1 }),
});
const flow = fc.record({ track: fc.integer({ min: 0, max: TRACKS - 1 }), ts: time });

describe('native finishing passes', () => {
  it('are built here (npm ci builds the addon)', () => {
    const addon = loadAddon();
    expect(typeof addon.orderAndNest).toBe('function');
    expect(typeof addon.bindFlows).toBe('function');
  });

  it('make what the TypeScript passes make', () => {
    fc.assert(
      fc.property(fc.array(slice, { maxLength: 300 }), fc.array(flow, { maxLength: 60 }), (slices, flows) => {
        const native = build(TRACKS, slices, flows);
        const js = build(TRACKS, slices, flows);
        reindex(native, 'native');
        reindex(js, 'js');
        expect(profileBytes(native)).toEqual(profileBytes(js));
      }),
      { numRuns: 400 },
    );
  });

  it('nest deeper than the depth column holds as the reference does', () => {
    // 70,000 slices each inside the one before: depth caps at 0xffff, parents stay exact.
    const deep = Array.from({ length: 70_000 }, (_, i) => ({
      track: 0,
      start: i,
      dur: 200_000 - 2 * i,
      kind: 1,
    }));
    const native = build(2, deep, [{ track: 0, ts: 69_999.5 }]);
    const js = build(2, deep, [{ track: 0, ts: 69_999.5 }]);
    reindex(native, 'native');
    reindex(js, 'js');
    expect(native.slices.depth[69_999]).toBe(0xffff);
    expect(native.slices.parent[69_999]).toBe(69_998);
    expect(native.flows.slice[0]).toBe(69_999);
    expect(profileBytes(native)).toEqual(profileBytes(js));
  });
});
