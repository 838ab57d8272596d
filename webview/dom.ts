/**
 * Building the webviews' DOM. Names, args, paths and log lines come from a trace or a session: they reach the
 * page as DOM text only, never as markup, with their invisible characters shown.
 */
import { visibleLines, visibleText } from '../extension/shared/text';

export interface ElementProps {
  className?: string;
  text?: string;
  title?: string;
  /** Shows the text on one line (newlines and tabs escaped too), as names are; else it keeps its lines. */
  oneLine?: boolean;
}

function oneLineText(text: string): string {
  return visibleText(text, Infinity);
}

/** An element with its class, text, title and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  ...children: (Node | string | undefined)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  const shown = props.oneLine ? oneLineText : visibleLines;
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = shown(props.text);
  if (props.title) node.title = shown(props.title);
  for (const child of children)
    if (child !== undefined) node.append(typeof child === 'string' ? shown(child) : child);
  return node;
}

/** A button running `onClick`. */
export function button(label: string, onClick: () => void, title?: string): HTMLButtonElement {
  const node = el('button', { text: label, title });
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}
