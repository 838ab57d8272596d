/** The time ruler: round steps in units that fit the zoom, times from the profile's start. */
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rulerTicks } from '../../webview/timeline/ruler';

const labels = (from: number, to: number, widthPx: number) =>
  rulerTicks(from, to, (to - from) / widthPx, 110).ticks.map((t) => t.label);

describe('rulerTicks', () => {
  it('labels the whole of a 1.29 s profile in seconds from its start, one unit along the ruler', () => {
    expect(labels(0, 1.29e9, 1200)).toEqual(['0.0 s', '0.2 s', '0.4 s', '0.6 s', '0.8 s', '1.0 s', '1.2 s']);
    // The view's margin before the start reads negative.
    expect(labels(-1.3e7, 1.3e9, 1200)[0]).toBe('0.0 s');
    expect(labels(-3e8, 1e9, 1200)[0]).toBe('-0.2 s');
  });

  it('uses the unit of the zoom: ms, µs and ns views', () => {
    expect(labels(0, 5e6, 1000)).toEqual(['0 ms', '1 ms', '2 ms', '3 ms', '4 ms', '5 ms']);
    expect(labels(20_000, 30_000, 1000)).toEqual(['20 µs', '22 µs', '24 µs', '26 µs', '28 µs', '30 µs']);
    expect(labels(100, 600, 1000)).toEqual(['100 ns', '200 ns', '300 ns', '400 ns', '500 ns', '600 ns']);
  });

  it('zoomed in 3.32 s into the profile, names a base time and counts the ticks from it', () => {
    const ruler = rulerTicks(3_320_000_000, 3_320_080_000, 80_000 / 800, 110);
    expect(ruler.step).toBe(20_000);
    expect(ruler.base).toEqual({ ns: 3_320_000_000, label: '3.32 s' });
    expect(ruler.ticks.map((t) => t.label)).toEqual(['+0 µs', '+20 µs', '+40 µs', '+60 µs', '+80 µs']);
  });

  it('gives short, distinct, evenly stepped labels at any zoom and place (1, 2 or 5 × 10^k)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e8, max: 1e11, noNaN: true }),
        fc.double({ min: 20, max: 1e10, noNaN: true }),
        fc.integer({ min: 300, max: 4000 }),
        (from, span, width) => {
          const nsPerPx = span / width;
          const { step, ticks } = rulerTicks(from, from + span, nsPerPx, 110);
          const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
          expect([1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6)).toBe(true);
          expect(step / nsPerPx).toBeGreaterThanOrEqual(110 - 1e-6);
          for (let k = 1; k < ticks.length; k++) {
            expect(ticks[k].ns - ticks[k - 1].ns).toBeCloseTo(step, 0);
          }
          for (const tick of ticks) {
            expect(tick.ns).toBeGreaterThanOrEqual(from - 1e-6);
            expect(tick.ns).toBeLessThanOrEqual(from + span + 1e-6);
            expect(tick.label.length).toBeLessThanOrEqual(12);
          }
          expect(new Set(ticks.map((t) => t.label)).size).toBe(ticks.length);
        },
      ),
    );
  });
});
