/** What every part of one frame's drawing reads: the canvas, the theme, where the view is, the rows. */
import type { TimelineModel } from '../model';
import type { Theme } from '../theme';
import type { TrackLayout } from './layout';
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
  /** The ruler's tick step, ns: the grid lines stand on the same ticks. */
  readonly step: number;
}

/** `text` cut to `room` characters, ending in an ellipsis when cut. */
export function clipText(text: string, room: number): string {
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`;
}
