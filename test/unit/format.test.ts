import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatPercent,
  formatTick,
  formatUs,
  tickStep,
} from '../../extension/shared/format';

describe('the one formatter module', () => {
  it('writes durations with at most four digits in the unit that reads best', () => {
    expect(formatDuration(850)).toBe('850 ns');
    expect(formatDuration(12_345)).toBe('12.35 µs');
    expect(formatDuration(1_250_000)).toBe('1.25 ms');
    expect(formatDuration(3_200_000_000)).toBe('3.2 s');
    expect(formatDuration(-1_500)).toBe('-1.5 µs');
  });
  it('reads microseconds (Kineto `dur`, summary JSON) through the same rule', () => {
    expect(formatUs(0)).toBe('0');
    expect(formatUs(0.5)).toBe('500 ns');
    expect(formatUs(1234)).toBe('1.234 ms');
    expect(formatUs(123_456)).toBe('123.5 ms');
    expect(formatUs(2_500_000)).toBe('2.5 s');
  });
  it('labels ruler ticks with enough decimals to tell neighbours apart', () => {
    expect(formatTick(1_500_000, 500_000)).toBe('1500 µs');
    expect(formatTick(1_500_000_000, 1e9)).toBe('2 s');
    expect(formatTick(2_000, 1_000)).toBe('2 µs');
    expect(tickStep(1_000, 100)).toBe(100_000);
    expect(tickStep(3_000, 100)).toBe(500_000);
  });
  it('writes sizes, counts and shares', () => {
    expect(formatBytes(4096)).toBe('4.0 KB');
    expect(formatBytes(100)).toBe('100 bytes');
    expect(formatBytes(1.5 * 2 ** 30)).toBe('1.5 GB');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatPercent(0.1234)).toBe('12.3%');
  });
  it('groups a count as toLocaleString("en-US") does, whatever the number', () => {
    const counts = fc.oneof(
      fc.maxSafeInteger(),
      fc.integer(),
      fc.double(),
      fc.constantFrom(0, -0, 999, 1000, -1000, Number.MAX_SAFE_INTEGER, 2 ** 53, 1e21, Infinity),
    );
    fc.assert(
      fc.property(counts, (n) => {
        expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
      }),
      {
        numRuns: 2000,
      },
    );
  });
});
