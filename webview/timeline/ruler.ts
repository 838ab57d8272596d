/**
 * The time ruler above the rows. Times read from the profile's start (t = 0 at its first event), whatever slice
 * is selected, so a time read here is the time the details panel gives. Ticks stand on round steps (1, 2, 5 × a
 * power of ten) in the unit that fits the zoom; zoomed in far from the start, where such labels would run to many
 * digits ("3.3201250 s"), the ruler names a base time at its left and the ticks are offsets from it ("+125 µs").
 */
import { formatDuration, formatTick, tickStep } from '../../extension/shared/format';
import type { Frame } from './frame';
import { LABEL_WIDTH, RULER_HEIGHT } from './viewport';

export interface RulerTicks {
  /** ns between ticks. */
  step: number;
  /** Tick times, ns from the profile's start, with their labels. */
  ticks: { ns: number; label: string }[];
  /** Where the labels are offsets: the time they count from (ns from the start) and its label. */
  base?: { ns: number; label: string };
}

/** Labels longer than this many significant digits switch to a base and offsets. */
const MAX_DIGITS = 5;

const UNITS: [number, string][] = [
  [1e9, 's'],
  [1e6, 'ms'],
  [1e3, 'µs'],
  [1, 'ns'],
];

/** `ns` in the unit of `reach` (one unit along the ruler), with the decimals that `precision` ns needs. */
function fixed(ns: number, precision: number, reach = Math.abs(ns)): string {
  const size = Math.max(reach, precision);
  const [scale, unit] = UNITS.find(([s]) => size >= s) ?? UNITS[3];
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(precision / scale) - 1e-9)));
  const text = (ns / scale).toFixed(decimals);
  return `${/^-0(\.0*)?$/.test(text) ? text.slice(1) : text} ${unit}`;
}

/** The ticks over [from, to] (ns from the profile's start) at `nsPerPx`, at least `spacingPx` apart. */
export function rulerTicks(from: number, to: number, nsPerPx: number, spacingPx: number): RulerTicks {
  const step = tickStep(nsPerPx, spacingPx);
  const first = Math.ceil(from / step) * step;
  const times: number[] = [];
  for (let k = 0; first + k * step <= to && k < 1000; k++) times.push(first + k * step);
  const reach = Math.max(Math.abs(from), Math.abs(to));
  if (reach / step < 10 ** MAX_DIGITS) {
    return { step, ticks: times.map((ns) => ({ ns, label: fixed(ns, step, reach) })) };
  }
  const span = step * 1000;
  const baseNs = Math.floor(from / span) * span;
  return {
    step,
    base: { ns: baseNs, label: fixed(baseNs, span) },
    ticks: times.map((ns) => ({ ns, label: `+${formatTick(ns - baseNs, step)}` })),
  };
}

export function drawRuler(frame: Frame): void {
  const { ctx, theme, viewport, ruler } = frame;
  ctx.fillStyle = theme.headerBackground;
  ctx.fillRect(0, 0, viewport.width, RULER_HEIGHT);
  ctx.fillStyle = theme.border;
  ctx.fillRect(0, RULER_HEIGHT - 1, viewport.width, 1);
  ctx.fillStyle = theme.muted;
  const span = `span ${formatDuration(viewport.viewEnd - viewport.viewStart)}`;
  ctx.fillText(ruler.base ? `${ruler.base.label} + · ${span}` : span, 6, RULER_HEIGHT / 2);
  const origin = frame.model.header.startNs;
  for (const tick of ruler.ticks) {
    const x = Math.round(viewport.xOf(tick.ns + origin));
    if (x < LABEL_WIDTH) continue;
    ctx.fillStyle = theme.border;
    ctx.fillRect(x, RULER_HEIGHT - 7, 1, 6);
    ctx.fillStyle = theme.foreground;
    ctx.fillText(tick.label, x + 3, RULER_HEIGHT / 2 - 2);
  }
}
