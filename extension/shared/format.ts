/**
 * Numbers for people, in one place: the CLI's tables, the hovers and CodeLens, the webview, the HTML report and
 * the error messages all format durations, sizes and counts through these functions, so one quantity reads the
 * same wherever it is shown. Depends on nothing: the webview bundles it too.
 */

/** A duration, ns in: "850 ns", "12.35 µs", "1.25 ms", "3.2 s" (at most three decimals, four digits; unit by magnitude). */
export function formatDuration(ns: number): string {
  const a = Math.abs(ns);
  if (a < 1e3) return `${significant(ns)} ns`;
  if (a < 1e6) return `${significant(ns / 1e3)} µs`;
  if (a < 1e9) return `${significant(ns / 1e6)} ms`;
  return `${significant(ns / 1e9)} s`;
}

/** A duration in microseconds (the unit of Kineto's `dur` and of `flagprof summary --json`). */
export function formatUs(us: number): string {
  return us === 0 ? '0' : formatDuration(us * 1e3);
}

/**
 * A duration in milliseconds at a fixed unit, for text that stands in columns beside other lines' times (inline
 * after-text, CodeLens, hovers): "1.23 ms", "12.3 ms", "123 ms", "5.50 s", "<0.01 ms".
 */
export function formatMs(ns: number): string {
  const ms = ns / 1e6;
  if (ms === 0) return '0 ms';
  if (ms < 0.005) return '<0.01 ms';
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : ms < 100 ? 1 : 0)} ms`;
  const seconds = ms / 1000;
  return `${seconds.toFixed(seconds < 10 ? 2 : seconds < 100 ? 1 : 0)} s`;
}

function significant(value: number): string {
  const a = Math.abs(value);
  const digits = a >= 100 ? 1 : a >= 10 ? 2 : 3;
  return String(Number(value.toFixed(digits)));
}

/** A ruler label at tick step `step`: enough decimals to tell neighbouring ticks apart. */
export function formatTick(ns: number, step: number): string {
  const units: [number, string][] = [
    [1e9, 's'],
    [1e6, 'ms'],
    [1e3, 'µs'],
    [1, 'ns'],
  ];
  for (const [scale, unit] of units) {
    if (step >= scale || scale === 1) {
      const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / scale) - 1e-9)));
      return `${(ns / scale).toFixed(decimals)} ${unit}`;
    }
  }
  return `${ns} ns`;
}

/** A tick step of 1, 2 or 5 x 10^k ns, so that ticks are about `targetPx` apart. */
export function tickStep(nsPerPx: number, targetPx: number): number {
  const raw = nsPerPx * targetPx;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (power * m >= raw) return power * m;
  return power * 10;
}

/** A byte count: "512.0 MB", "1.5 GB", "4096 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GB`;
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MB`;
  if (bytes >= 2 ** 10) return `${(bytes / 2 ** 10).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

/**
 * A count with thousands separators: "1,234,567", as toLocaleString('en-US') writes it. Integers are grouped here:
 * the first toLocaleString of a page loads ICU's number formatting, 14 ms in the timeline's first frame.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let grouped = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = grouped.length; i < digits.length; i += 3) grouped += `,${digits.slice(i, i + 3)}`;
  return n < 0 || Object.is(n, -0) ? `-${grouped}` : grouped;
}

/** A share as a percentage: 0.123 → "12.3%". */
export function formatPercent(share: number, digits = 1): string {
  return `${(share * 100).toFixed(digits)}%`;
}
