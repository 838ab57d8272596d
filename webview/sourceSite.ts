/** How the details panel and the Lines table name a source line: where it is, and how it was found. */
import type { TimelineSite } from '../extension/protocol';
import { visibleText } from '../extension/shared/text';

/** `file:line`, or `file:line:column` where the column is known; `base` names the file by its last part. */
export function siteText(site: TimelineSite, base = false): string {
  const file = base ? (site.file.split(/[\\/]/).pop() ?? site.file) : site.file;
  return site.column !== undefined ? `${file}:${site.line}:${site.column}` : `${file}:${site.line}`;
}

/** What kind of line it is, in a word or two. */
export function siteKindLabel(site: TimelineSite): string {
  switch (site.kind) {
    case 'function':
      return 'function level';
    case 'backward':
      return 'backward';
    case 'trace':
      return 'from the trace';
    default:
      return 'call site';
  }
}

/** The same, as a sentence for a tooltip. */
export function siteKindTitle(site: TimelineSite): string {
  const fn = visibleText(site.function);
  switch (site.kind) {
    case 'function':
      return `the definition of ${fn}(): the trace records the function, not the line that called`;
    case 'backward':
      return 'the line that called backward(): autograd ran these ops with no Python frame of their own';
    case 'trace':
      return `the line in ${fn}() the trace's own call stack names`;
    default:
      return 'the line of the expression that called';
  }
}
