/**
 * The column left of the slices: each process's name (with its collapse marker), each track's name and size, a
 * dot before a pinned track's name.
 */
import { clipText, type Frame } from './frame';
import { ROW_HEIGHT, TRACK_GAP, type Row } from './layout';
import { LABEL_WIDTH, RULER_HEIGHT } from './viewport';

export function drawTrackLabels(frame: Frame): void {
  const { ctx, theme, viewport } = frame;
  ctx.fillStyle = theme.headerBackground;
  ctx.fillRect(0, RULER_HEIGHT, LABEL_WIDTH, viewport.height - RULER_HEIGHT);
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, RULER_HEIGHT, viewport.width, viewport.height - RULER_HEIGHT);
  ctx.clip();
  for (const row of frame.layout.rows) {
    const y = viewport.screenY(row.y);
    if (y + row.height < RULER_HEIGHT || y > viewport.height || viewport.covered(row.y)) continue;
    if (row.kind === 'process') drawProcessLabel(frame, row, y);
    else drawTrackLabel(frame, row, y);
  }
  ctx.restore();
  ctx.fillStyle = theme.border;
  ctx.fillRect(LABEL_WIDTH - 1, RULER_HEIGHT, 1, viewport.height - RULER_HEIGHT);
  // The pinned rows' lower edge: what scrolls goes in beneath it.
  if (viewport.fixedHeight > 0) ctx.fillRect(0, RULER_HEIGHT + viewport.fixedHeight - 1, viewport.width, 2);
}

/** A process header spans the whole width: its name may run over the slice area. */
function drawProcessLabel(frame: Frame, row: Row, y: number): void {
  const { ctx, theme, viewport, charWidth } = frame;
  ctx.fillStyle = theme.foreground;
  ctx.font = `bold ${theme.font}`;
  const marker = frame.layout.isCollapsed(row.process) ? '▸' : '▾';
  ctx.fillText(
    `${marker} ${clipText(row.label, Math.floor((viewport.width - 30) / charWidth))}`,
    6,
    y + row.height / 2,
  );
  ctx.font = theme.font;
  ctx.fillStyle = theme.border;
  ctx.fillRect(0, y + row.height - 1, viewport.width, 1);
}

function drawTrackLabel(frame: Frame, row: Row, y: number): void {
  const { ctx, theme, viewport, charWidth } = frame;
  const room = Math.floor((LABEL_WIDTH - 24) / charWidth);
  if (row.pinned) {
    // The pin's mark; a click on the name unpins.
    ctx.fillStyle = theme.focus;
    ctx.beginPath();
    ctx.arc(8, y + TRACK_GAP / 2 + ROW_HEIGHT / 2, 3, 0, Math.PI * 2);
    ctx.fill();
  }
  ctx.fillStyle = theme.foreground;
  ctx.fillText(clipText(row.label, room), 16, y + TRACK_GAP / 2 + ROW_HEIGHT / 2);
  if (row.lanes.length > 1 || row.height > ROW_HEIGHT * 1.5) {
    ctx.fillStyle = theme.muted;
    ctx.fillText(clipText(row.detail, room), 16, y + TRACK_GAP / 2 + ROW_HEIGHT * 1.5);
  }
  ctx.fillStyle = theme.border;
  ctx.fillRect(0, y + row.height - 1, viewport.width, 1);
}
