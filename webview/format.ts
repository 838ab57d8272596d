/** Times for people: ns in, "12.3 µs" out, with the unit chosen by magnitude. */
export function formatDuration(ns: number): string {
  const a = Math.abs(ns);
  if (a < 1e3) return `${trim(ns)} ns`;
  if (a < 1e6) return `${trim(ns / 1e3)} µs`;
  if (a < 1e9) return `${trim(ns / 1e6)} ms`;
  return `${trim(ns / 1e9)} s`;
}

function trim(value: number): string {
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

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
