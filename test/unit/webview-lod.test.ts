import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstEndingAfter, LaneLod, sliceAt } from '../../webview/lod';

/** A lane of non-overlapping slices from (gap, duration) pairs. */
function lane(parts: [number, number][]): { order: Int32Array; start: Float64Array; dur: Float64Array } {
  const start = new Float64Array(parts.length);
  const dur = new Float64Array(parts.length);
  let t = 0;
  parts.forEach(([gap, d], i) => {
    t += gap;
    start[i] = t;
    dur[i] = d;
    t += d;
  });
  return { order: Int32Array.from(parts.map((_, i) => i)), start, dur };
}

const partsArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 20_000 })), {
  minLength: 1,
  maxLength: 300,
});

describe('LaneLod', () => {
  it('covers every slice at every resolution, merging only runs of sub-resolution slices', () => {
    fc.assert(
      fc.property(partsArb, fc.integer({ min: 0, max: 22 }), (parts, shift) => {
        const { order, start, dur } = lane(parts);
        const lod = new LaneLod(order, start, dur, 24);
        const nsPerPx = 2 ** shift;
        const level = lod.levelFor(nsPerPx);
        const resolution = 2 ** Math.floor(Math.log2(nsPerPx * 2));
        let total = 0;
        for (let b = 0; b < level.length; b++) {
          total += level.count[b];
          if (b > 0) expect(level.start[b]).toBeGreaterThanOrEqual(level.end[b - 1]);
          // The block's slice lies inside it.
          const s = level.slice[b];
          expect(start[s]).toBeGreaterThanOrEqual(level.start[b]);
          expect(start[s] + dur[s]).toBeLessThanOrEqual(level.end[b]);
          if (level.count[b] > 1) expect(dur[s]).toBeLessThan(resolution);
        }
        expect(total).toBe(parts.length);
        // Every slice is inside some block.
        for (let i = 0; i < parts.length; i++) {
          const b = firstEndingAfter(level, start[i] + dur[i]);
          expect(b).toBeLessThan(level.length);
          expect(level.start[b]).toBeLessThanOrEqual(start[i]);
        }
      }),
    );
  });

  it('keeps the blocks drawn per lane in proportion to pixels, not slices', () => {
    // 100 000 slices of 1 µs with 1 µs gaps over 200 ms, drawn 1000 px wide: 200 µs per pixel.
    const parts: [number, number][] = Array.from({ length: 100_000 }, () => [1_000, 1_000]);
    const { order, start, dur } = lane(parts);
    const lod = new LaneLod(order, start, dur, 30);
    expect(lod.levelFor(200_000).length).toBeLessThanOrEqual(1_000);
    expect(lod.levelFor(100).length).toBe(100_000);
  });

  it('finds the slice under a time, within the slack', () => {
    const { order, start, dur } = lane([
      [0, 10],
      [5, 10],
      [100, 10],
    ]);
    const lod = new LaneLod(order, start, dur, 10);
    expect(sliceAt(lod.finest, 3, 0)).toBe(0);
    expect(sliceAt(lod.finest, 20, 0)).toBe(1);
    expect(sliceAt(lod.finest, 60, 0)).toBe(-1);
    expect(sliceAt(lod.finest, 124, 2)).toBe(2);
  });

  it('builds every level in idle steps, then stops', () => {
    const { order, start, dur } = lane(
      Array.from({ length: 1_000 }, (_, i) => [i % 7, (i * 37) % 500] as [number, number]),
    );
    const lod = new LaneLod(order, start, dur, 12);
    let steps = 0;
    while (lod.prebuildOne()) steps++;
    expect(steps).toBe(13);
    expect(lod.prebuildOne()).toBe(false);
  });
});
