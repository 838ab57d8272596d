import { visibleText } from '../shared/text';

/** Text from the input written visibly (`\n`, `\u{1b}`), uncut: the callers cut it their own way. */
function shown(text: string): string {
  return visibleText(text, Number.POSITIVE_INFINITY);
}

/**
 * An error the user caused (bad arguments, an input that cannot be opened): one line, shown as it is and never
 * with a stack, by the command line (which exits with `exitCode`) and by the editor alike.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * A trace the importer cannot read. The message is one line: the file, the byte offset (in the decompressed
 * text, or in the compressed file for gzip errors) and what was expected there.
 */
export class ImportError extends UserError {
  constructor(
    readonly file: string,
    readonly offset: number | undefined,
    readonly problem: string,
  ) {
    super(`${displayPath(file)}: ${problem}${offset === undefined ? '' : ` (at byte ${offset})`}`);
    this.name = 'ImportError';
  }
}

/** How long a name or value taken from the input may get in a message before it is cut. */
export const MAX_QUOTED = 100;
/** Paths are longer than names, and their ends say the most; they are cut in the middle past this. */
const MAX_PATH = 240;

/**
 * Text from the input, fit for a one-line message: control characters escaped, and anything past `max`
 * characters cut with an ellipsis saying how much was left out (a 5 MB key must not make a 5 MB line).
 */
export function clip(text: string, max = MAX_QUOTED): string {
  if (text.length <= max) return shown(text);
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max; // not between the halves of a surrogate pair
  return `${shown(text.slice(0, end))}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** A name or value from the input in double quotes, cut and escaped as by clip. */
export function quote(text: string, max = MAX_QUOTED): string {
  return `"${clip(text, max).replace(/"/g, '\\"')}"`;
}

/** A file path for a message: control characters escaped, a very long one cut in the middle. */
export function displayPath(file: string): string {
  if (file.length <= MAX_PATH) return shown(file);
  const half = (MAX_PATH - 1) >> 1;
  return shown(`${file.slice(0, half)}…${file.slice(file.length - half)}`);
}
