/** The tooltip beside the pointer: a slice's name, kind, duration and launching op, or a merged block's count. */
import { formatCount, formatDuration } from '../../extension/shared/format';
import { visibleText } from '../../extension/shared/text';
import type { TimelineModel } from '../model';
import type { Hit } from './hitTest';

export class Tooltip {
  private readonly element: HTMLElement;

  constructor(private readonly container: HTMLElement) {
    this.element = document.createElement('div');
    this.element.className = 'timeline-tooltip';
    this.element.setAttribute('role', 'tooltip');
    this.element.hidden = true;
    container.appendChild(this.element);
  }

  /** Shows what `hit` is, near the pointer at client coordinates, kept inside the container. */
  show(model: TimelineModel, hit: Hit, clientX: number, clientY: number): void {
    const tip = this.element;
    tip.replaceChildren();
    const title = document.createElement('div');
    title.className = 'tooltip-title';
    const meta = document.createElement('div');
    meta.className = 'tooltip-meta';
    if (hit.merged > 0) {
      title.textContent = `${formatCount(hit.merged)} slices`;
      meta.textContent = `longest: ${visibleText(model.nameOf(hit.slice))} — click or press W to zoom in`;
    } else {
      title.textContent = visibleText(model.nameOf(hit.slice), Infinity);
      const parts = [model.kindOf(hit.slice), formatDuration(model.columns.dur[hit.slice])];
      const op = model.columns.opOf[hit.slice];
      if (op >= 0) parts.push(`launched by ${visibleText(model.nameOf(op))}`);
      meta.textContent = parts.join(' · ');
    }
    this.place(title, meta, clientX, clientY);
  }

  /** Shows a title and a line of text (a counter's values at the pointer). */
  showText(titleText: string, metaText: string, clientX: number, clientY: number): void {
    this.element.replaceChildren();
    const title = document.createElement('div');
    title.className = 'tooltip-title';
    title.textContent = visibleText(titleText, Infinity);
    const meta = document.createElement('div');
    meta.className = 'tooltip-meta';
    meta.textContent = metaText;
    this.place(title, meta, clientX, clientY);
  }

  private place(title: HTMLElement, meta: HTMLElement, clientX: number, clientY: number): void {
    const tip = this.element;
    tip.append(title, meta);
    tip.hidden = false;
    const bounds = this.container.getBoundingClientRect();
    const left = Math.min(clientX - bounds.left + 14, bounds.width - 320);
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${Math.min(clientY - bounds.top + 16, bounds.height - 60)}px`;
  }

  hide(): void {
    this.element.hidden = true;
  }
}
