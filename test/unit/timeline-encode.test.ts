import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SliceKind, isDeviceKind } from '../../extension/model/profile';
import { packTimeline, unpackTimeline } from '../../extension/protocol';
import { encodeTimeline, orderTracks } from '../../extension/timeline/encode';
import { syntheticProfile } from '../fixtures/synthetic-profile';

describe('encodeTimeline', () => {
  const { profile, analysis } = syntheticProfile({ slices: 5_000, threads: 3, streams: 2 });
  const payload = encodeTimeline(profile, analysis, { title: 'synthetic' });
  const c = payload.columns;

  it('keeps every slice once, in lanes of one track and depth, sorted by start', () => {
    expect(payload.header.sliceCount).toBe(profile.slices.length);
    const seen = new Uint8Array(profile.slices.length);
    for (let lane = 0; lane < c.laneTrack.length; lane++) {
      for (let k = c.laneOffset[lane]; k < c.laneOffset[lane + 1]; k++) {
        const slice = c.laneOrder[k];
        seen[slice]++;
        expect(c.track[slice]).toBe(c.laneTrack[lane]);
        expect(c.depth[slice]).toBe(c.laneDepth[lane]);
        if (k > c.laneOffset[lane])
          expect(c.start[slice]).toBeGreaterThanOrEqual(c.start[c.laneOrder[k - 1]]);
      }
    }
    expect(seen.every((n) => n === 1)).toBe(true);
  });

  it('lists host threads before device streams', () => {
    const kinds = payload.header.tracks.map((t) => t.kind);
    expect(kinds.indexOf('device')).toBeGreaterThan(kinds.lastIndexOf('cpu'));
  });

  it('pairs every launched device slice with its runtime call, sorted by launch start', () => {
    let device = 0;
    for (let i = 0; i < profile.slices.length; i++) if (isDeviceKind(c.kind[i])) device++;
    expect(c.flowTo.length).toBe(device);
    for (let k = 0; k < c.flowTo.length; k++) {
      expect(c.runtimeOf[c.flowTo[k]]).toBe(c.flowFrom[k]);
      expect(c.kind[c.flowFrom[k]]).toBe(SliceKind.Runtime);
      if (k > 0) expect(c.start[c.flowFrom[k]]).toBeGreaterThanOrEqual(c.start[c.flowFrom[k - 1]]);
    }
  });

  it("gives device slices their launching op's source site", () => {
    for (let k = 0; k < c.flowTo.length; k++) {
      const kernel = c.flowTo[k];
      const op = c.opOf[kernel];
      expect(op).toBeGreaterThanOrEqual(0);
      expect(c.site[kernel]).toBe(analysis.lineOf[op]);
      expect(payload.header.sites[c.site[kernel]].file).toBe('/home/user/project/train.py');
    }
  });

  it('carries each args object as its JSON bytes', () => {
    const kernel = c.flowTo[0];
    const a = c.args[kernel];
    const text = new TextDecoder().decode(c.argsBytes.subarray(c.argsOffset[a], c.argsOffset[a + 1]));
    expect(JSON.parse(text)).toEqual(profile.argsOf(kernel));
  });

  it('survives packTimeline / unpackTimeline unchanged', () => {
    const back = unpackTimeline(packTimeline(payload));
    expect(back.header).toEqual(JSON.parse(JSON.stringify(payload.header)));
    for (const name of Object.keys(c) as (keyof typeof c)[]) {
      expect(Array.from(back.columns[name]), name).toEqual(Array.from(c[name]));
    }
  });

  it('rejects a buffer that is not a timeline, with a one-line reason', () => {
    expect(() => unpackTimeline(new ArrayBuffer(4))).toThrow('timeline data is truncated');
    expect(() => unpackTimeline(new Uint8Array(64).buffer)).toThrow('timeline data has the wrong format');
  });
});

describe('orderTracks', () => {
  it('groups tracks by process, CPU threads first, whatever the input order', () => {
    const base = {
      name: '',
      processName: '',
      processSortIndex: 0,
      threadSortIndex: 0,
      sliceCount: 0,
      maxDepth: 0,
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            pid: fc.constantFrom('1', '2', '10'),
            tid: fc.integer({ min: 0, max: 50 }),
            device: fc.boolean(),
          }),
          {
            maxLength: 30,
          },
        ),
        (specs) => {
          const tracks = specs.map((s, id) => ({
            ...base,
            id,
            pid: s.device ? `gpu${s.pid}` : s.pid,
            tid: String(s.tid),
            kind: (s.device ? 'device' : 'cpu') as 'device' | 'cpu',
          }));
          const ordered = orderTracks(tracks);
          expect(ordered.map((t) => t.id).sort((a, b) => a - b)).toEqual(tracks.map((t) => t.id));
          // Each process is contiguous, and host processes come before device ones.
          const seen = new Set<string>();
          let last = '';
          let sawDevice = false;
          for (const t of ordered) {
            if (t.pid !== last) {
              expect(seen.has(t.pid)).toBe(false);
              seen.add(t.pid);
              last = t.pid;
            }
            if (t.kind === 'device') sawDevice = true;
            else expect(sawDevice).toBe(false);
          }
        },
      ),
    );
  });
});
