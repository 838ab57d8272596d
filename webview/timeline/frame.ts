/** What every part of one frame's drawing reads: the canvas, the theme, where the view is, the rows. */
import type { TimelineModel } from '../model';
import type { Theme } from '../theme';
import type { TrackLayout } from './layout';
import type { RulerTicks } from './ruler';
import type { Viewport } from './viewport';

export interface Frame {
  readonly ctx: CanvasRenderingContext2D;
  /** The canvas element: its width and height are in device pixels. */
  readonly canvas: HTMLCanvasElement;
  readonly theme: Theme;
  readonly model: TimelineModel;
  readonly viewport: Viewport;
  readonly layout: TrackLayout;
  /** Average glyph width of the canvas font: how many characters a label has room for. */
  readonly charWidth: number;
  /** The ruler's ticks: the grid lines stand on the same ones. */
  readonly ruler: RulerTicks;
  /** While a search is on: per string id, 1 when the name matches (the rest are drawn dimmed). */
  readonly nameMatches: Uint8Array | undefined;
}

/** `text` cut to `room` characters, ending in an ellipsis when cut. */
export function clipText(text: string, room: number): string {
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`;
}
