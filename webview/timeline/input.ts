/**
 * Perfetto's navigation on the canvas: drag pans, the wheel scrolls (Shift pans, Ctrl or a trackpad pinch
 * zooms), W/S zoom and A/D pan while held, arrows walk the slices, Enter opens the selection's source. Shift+drag,
 * or a drag on the ruler, selects a time range (Escape clears it); a click on a track's name pins it to the top.
 */
import type { TimelineModel } from '../model';
import { firstChildOf, parentOf, type Hit } from './hitTest';
import { ROW_HEIGHT } from './layout';
import type { TimeRange } from './view';
import { LABEL_WIDTH, RULER_HEIGHT, type Viewport } from './viewport';

/** What the input drives: the timeline view. */
export interface InputTarget {
  readonly canvas: HTMLCanvasElement;
  readonly model: TimelineModel;
  readonly viewport: Viewport;
  readonly selected: number;
  setView(start: number, end: number, scrollTop?: number): void;
  zoom(factor: number, atX?: number): void;
  panPx(dx: number, dy?: number): void;
  scrollBy(dy: number): void;
  fit(): void;
  /** Fits the selection and the device slices it launched (the whole profile with nothing selected). */
  fitSelection(): void;
  readonly range: TimeRange | undefined;
  setRange(range: TimeRange | undefined): void;
  /** Pins (or unpins) the track whose row is at a screen y; false when there is none. */
  togglePinAt(y: number): boolean;
  /** Pins (or unpins) the selection's track; false with nothing selected. */
  togglePinSelected(): boolean;
  reveal(slice: number, zoomTo?: boolean): void;
  select(slice: number, reveal?: boolean): void;
  /** Enter on the selected slice. */
  activate(slice: number): void;
  hitTest(x: number, y: number): Hit;
  /** The process whose header is at a screen y. */
  processHeaderAt(y: number): string | undefined;
  /** Collapses or expands `process` (by default the selection's, else the first on screen); false when none. */
  toggleProcess(process?: string): boolean;
  /** The pointer is at (x, y) on the canvas, (clientX, clientY) in the page. */
  hover(x: number, y: number, clientX: number, clientY: number): void;
  /** The pointer left the canvas. */
  unhover(): void;
  hideTooltip(): void;
}

interface Drag {
  x: number;
  y: number;
  moved: boolean;
  /** Selecting a time range (Shift, or pressed on the ruler) rather than panning. */
  range: boolean;
  viewStart: number;
  viewEnd: number;
  scrollTop: number;
}

/** A key's action; false when it does nothing here (the key then keeps its default). */
type KeyAction = (target: InputTarget, selected: number) => boolean;

function fitAll(target: InputTarget): boolean {
  target.fit();
  return true;
}

function fitSelection(target: InputTarget): boolean {
  target.fitSelection();
  return true;
}

/** Escape clears the time range first, then the selection. */
function clear(target: InputTarget): boolean {
  if (target.range) target.setRange(undefined);
  else target.select(-1, false);
  return true;
}

function toggleProcess(target: InputTarget): boolean {
  return target.toggleProcess();
}

/** The slice before or after the selection in its lane. */
function selectSibling(target: InputTarget, selected: number, delta: number): boolean {
  if (selected < 0) return false;
  const model = target.model;
  const lane = model.lanes[model.laneOfSlice[selected]];
  if (!lane) return false;
  const next = lane.order[lane.order.indexOf(selected) + delta];
  if (next !== undefined) target.select(next);
  return true;
}

/** Up and down walk to the parent and the first child; with nothing selected they scroll. */
function selectVertical(target: InputTarget, selected: number, down: boolean): boolean {
  if (selected < 0) target.scrollBy(ROW_HEIGHT * 3 * (down ? 1 : -1));
  else {
    const next = down ? firstChildOf(target.model, selected) : parentOf(target.model, selected);
    if (next >= 0) target.select(next);
  }
  return true;
}

function page(target: InputTarget, direction: number): boolean {
  target.scrollBy(target.viewport.rowsHeight * 0.8 * direction);
  return true;
}

const KEY_ACTIONS = new Map<string, KeyAction>([
  ['0', fitAll],
  ['Home', fitAll],
  ['f', fitSelection],
  ['F', fitSelection],
  ['Escape', clear],
  ['p', (target) => target.togglePinSelected()],
  ['P', (target) => target.togglePinSelected()],
  ['Enter', (target, selected) => selected >= 0 && (target.activate(selected), true)],
  ['c', toggleProcess],
  ['C', toggleProcess],
  ['ArrowLeft', (target, selected) => selectSibling(target, selected, -1)],
  ['ArrowRight', (target, selected) => selectSibling(target, selected, 1)],
  ['ArrowUp', (target, selected) => selectVertical(target, selected, false)],
  ['ArrowDown', (target, selected) => selectVertical(target, selected, true)],
  ['PageUp', (target) => page(target, -1)],
  ['PageDown', (target) => page(target, 1)],
]);

/** Keys that zoom and pan for as long as they are held. */
const HELD_KEYS = 'wasd';

export class TimelineInput {
  private readonly held = new Set<string>();
  private animating = false;
  private lastAnimation = 0;
  private pointer: { x: number; y: number } | undefined;
  private drag: Drag | undefined;

  constructor(private readonly target: InputTarget) {
    const canvas = target.canvas;
    canvas.addEventListener('wheel', (event) => this.onWheel(event), { passive: false });
    canvas.addEventListener('pointerdown', (event) => this.onPointerDown(event));
    canvas.addEventListener('pointermove', (event) => this.onPointerMove(event));
    canvas.addEventListener('pointerup', (event) => this.onPointerUp(event));
    canvas.addEventListener('pointerleave', () => {
      this.pointer = undefined;
      target.unhover();
    });
    canvas.addEventListener('keydown', (event) => this.onKeyDown(event));
    canvas.addEventListener('keyup', (event) => this.held.delete(event.key.toLowerCase()));
    canvas.addEventListener('blur', () => this.held.clear());
  }

  private onPointerDown(event: PointerEvent): void {
    const { canvas, viewport } = this.target;
    canvas.focus();
    if (event.button !== 0) return;
    canvas.setPointerCapture(event.pointerId);
    this.drag = {
      x: event.offsetX,
      y: event.offsetY,
      moved: false,
      range: event.offsetX >= LABEL_WIDTH && (event.shiftKey || event.offsetY < RULER_HEIGHT),
      viewStart: viewport.viewStart,
      viewEnd: viewport.viewEnd,
      scrollTop: viewport.scrollTop,
    };
  }

  private onPointerMove(event: PointerEvent): void {
    this.pointer = { x: event.offsetX, y: event.offsetY };
    const drag = this.drag;
    if (drag) {
      const dx = event.offsetX - drag.x;
      const dy = event.offsetY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved && drag.range) {
        const { viewport } = this.target;
        const at = (x: number) => viewport.nsAt(Math.max(LABEL_WIDTH, Math.min(viewport.width, x)));
        this.target.setRange({ start: at(drag.x), end: at(event.offsetX) });
        this.target.hideTooltip();
        return;
      }
      if (drag.moved) {
        const width = this.target.viewport.width;
        const dt = dx * ((drag.viewEnd - drag.viewStart) / Math.max(1, width - LABEL_WIDTH));
        this.target.setView(drag.viewStart - dt, drag.viewEnd - dt, drag.scrollTop - dy);
        this.target.hideTooltip();
        return;
      }
    }
    this.target.hover(event.offsetX, event.offsetY, event.clientX, event.clientY);
  }

  /** A click (a press without a drag): a process header collapses, a merged block zooms, a slice selects. */
  private onPointerUp(event: PointerEvent): void {
    const target = this.target;
    const drag = this.drag;
    this.drag = undefined;
    if (!drag || drag.moved) return;
    const process = event.offsetX < target.viewport.width && target.processHeaderAt(event.offsetY);
    if (process) {
      target.toggleProcess(process);
      return;
    }
    if (event.offsetX < LABEL_WIDTH && target.togglePinAt(event.offsetY)) return;
    if (drag.range) return;
    const hit = target.hitTest(event.offsetX, event.offsetY);
    if (hit.merged > 0) {
      // Clicking a merged block zooms into it, as a person would next.
      target.zoom(0.25, event.offsetX);
      return;
    }
    target.select(hit.slice, false);
  }

  private onWheel(event: WheelEvent): void {
    const target = this.target;
    event.preventDefault();
    const scale = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? target.viewport.height : 1;
    const dx = event.deltaX * scale;
    const dy = event.deltaY * scale;
    if (event.ctrlKey || event.metaKey) {
      // Pinch on a trackpad arrives as ctrl+wheel.
      target.zoom(Math.exp(dy * 0.01), event.offsetX);
    } else if (event.shiftKey) {
      target.panPx(dy || dx);
    } else {
      if (Math.abs(dx) > 0) target.panPx(dx);
      if (Math.abs(dy) > 0) {
        if (event.altKey) target.zoom(Math.exp(dy * 0.002), event.offsetX);
        else target.scrollBy(dy);
      }
    }
    target.hideTooltip();
  }

  private onKeyDown(event: KeyboardEvent): void {
    const key = event.key.toLowerCase();
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (HELD_KEYS.includes(key) && key.length === 1) {
      this.held.add(key);
      if (!this.animating) {
        this.animating = true;
        this.lastAnimation = performance.now();
        requestAnimationFrame((now) => this.animate(now));
      }
      event.preventDefault();
      return;
    }
    const action = KEY_ACTIONS.get(event.key);
    if (action?.(this.target, this.target.selected)) event.preventDefault();
  }

  /** One step of the held keys' zoom and pan, scaled by the time since the last (at most 50 ms). */
  private animate(now: number): void {
    if (this.held.size === 0) {
      this.animating = false;
      return;
    }
    const { target, held } = this;
    const dt = Math.min(0.05, (now - this.lastAnimation) / 1000);
    this.lastAnimation = now;
    const atX = this.pointer?.x ?? target.viewport.centreX;
    if (held.has('w')) target.zoom(Math.exp(-3 * dt), atX);
    if (held.has('s')) target.zoom(Math.exp(3 * dt), atX);
    const panPx = (target.viewport.width - LABEL_WIDTH) * 0.8 * dt;
    if (held.has('a')) target.panPx(-panPx);
    if (held.has('d')) target.panPx(panPx);
    requestAnimationFrame((next) => this.animate(next));
  }
}
