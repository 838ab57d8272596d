/** Outlines over the slices: search matches on screen, the hovered slice, and the selected one. */
import { firstEndingAfter } from '../lod';
import type { Frame } from './frame';
import { ROW_HEIGHT } from './layout';
import { RULER_HEIGHT } from './viewport';

export interface Highlighted {
  /** Per string id: 1 when the name matches the search; undefined when there is no search. */
  nameMatches: Uint8Array | undefined;
  hovered: number;
  selected: number;
}

export function drawHighlights(frame: Frame, highlighted: Highlighted): void {
  if (highlighted.nameMatches) drawMatches(frame, highlighted.nameMatches);
  outline(frame, highlighted.hovered, frame.theme.focus, 1);
  outline(frame, highlighted.selected, frame.theme.selection, 2);
}

/** Every block on screen whose slice's name matches, at the current level of detail. */
function drawMatches(frame: Frame, matches: Uint8Array): void {
  const { ctx, viewport, layout, model } = frame;
  const name = model.columns.name;
  ctx.beginPath();
  for (const row of layout.rows) {
    if (row.kind !== 'track') continue;
    for (const lane of row.lanes) {
      const y = viewport.screenY(layout.laneY[lane.index]);
      if (y + ROW_HEIGHT < RULER_HEIGHT || y > viewport.height || viewport.covered(layout.laneY[lane.index]))
        continue;
      const level = lane.lod.levelFor(viewport.nsPerPx);
      for (
        let k = firstEndingAfter(level, viewport.viewStart);
        k < level.length && level.start[k] <= viewport.viewEnd;
        k++
      ) {
        if (!matches[name[level.slice[k]]]) continue;
        const x0 = viewport.xOf(level.start[k]);
        const w = Math.max(2, viewport.xOf(level.end[k]) - x0);
        ctx.rect(x0 + 0.5, y + 0.5, w - 1, ROW_HEIGHT - 2);
      }
    }
  }
  ctx.strokeStyle = frame.theme.match;
  ctx.lineWidth = 2;
  ctx.stroke();
}

function outline(frame: Frame, slice: number, colour: string, width: number): void {
  if (slice < 0) return;
  const { ctx, viewport, layout, model } = frame;
  const lane = model.laneOfSlice[slice];
  if (lane < 0 || layout.laneY[lane] < 0 || viewport.covered(layout.laneY[lane])) return;
  const y = viewport.screenY(layout.laneY[lane]);
  const x0 = viewport.xOf(model.columns.start[slice]);
  const w = Math.max(3, viewport.xOf(model.end(slice)) - x0);
  ctx.strokeStyle = colour;
  ctx.lineWidth = width;
  ctx.strokeRect(x0 - 0.5, y - 0.5, w + 1, ROW_HEIGHT);
}
