/** The time ruler above the rows: the view's span, and ticks labelled from the profile's start. */
import { formatDuration, formatTick } from '../../extension/shared/format';
import type { Frame } from './frame';
import { LABEL_WIDTH, RULER_HEIGHT } from './viewport';

export function drawRuler(frame: Frame): void {
  const { ctx, theme, viewport, step } = frame;
  ctx.fillStyle = theme.headerBackground;
  ctx.fillRect(0, 0, viewport.width, RULER_HEIGHT);
  ctx.fillStyle = theme.border;
  ctx.fillRect(0, RULER_HEIGHT - 1, viewport.width, 1);
  ctx.fillStyle = theme.muted;
  const origin = frame.model.header.startNs;
  ctx.fillText(`span ${formatDuration(viewport.viewEnd - viewport.viewStart)}`, 6, RULER_HEIGHT / 2);

  const first = Math.ceil((viewport.viewStart - origin) / step) * step + origin;
  for (let t = first; t <= viewport.viewEnd; t += step) {
    const x = Math.round(viewport.xOf(t));
    if (x < LABEL_WIDTH) continue;
    ctx.fillStyle = theme.border;
    ctx.fillRect(x, RULER_HEIGHT - 7, 1, 6);
    ctx.fillStyle = theme.foreground;
    ctx.fillText(formatTick(t - origin, step), x + 3, RULER_HEIGHT / 2 - 2);
  }
}
