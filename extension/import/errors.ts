/**
 * A trace the importer cannot read. The message is one line: the file, the byte offset (in the decompressed
 * text, or in the compressed file for gzip errors) and what was expected there.
 */
export class ImportError extends Error {
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
 * Characters that do not show as themselves and could break the one-line rule or rewrite the terminal: C0 and C1
 * controls, DEL, line and paragraph separators, bidirectional and zero-width marks, the byte order mark, the
 * interlinear annotation marks and the tag characters. The notation (\n, \t, \u{1b}) is the one the renderers use.
 */
const INVISIBLE =
  // eslint-disable-next-line no-control-regex -- control characters are what this matches
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The text with every invisible character written as an escape; backslashes stay as they are. */
export function escapeControl(text: string): string {
  return text.replace(INVISIBLE, (c) => NAMED[c] ?? `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * Text from the input, fit for a one-line message: control characters escaped, and anything past `max`
 * characters cut with an ellipsis saying how much was left out (a 5 MB key must not make a 5 MB line).
 */
export function clip(text: string, max = MAX_QUOTED): string {
  if (text.length <= max) return escapeControl(text);
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max; // not between the halves of a surrogate pair
  return `${escapeControl(text.slice(0, end))}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** A name or value from the input in double quotes, cut and escaped as by clip. */
export function quote(text: string, max = MAX_QUOTED): string {
  return `"${clip(text, max).replace(/"/g, '\\"')}"`;
}

/** A file path for a message: control characters escaped, a very long one cut in the middle. */
export function displayPath(file: string): string {
  if (file.length <= MAX_PATH) return escapeControl(file);
  const half = (MAX_PATH - 1) >> 1;
  return escapeControl(`${file.slice(0, half)}…${file.slice(file.length - half)}`);
}

/** A byte count for a limit in a message: 512 MB, 1.5 GB, 4096 bytes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GB`;
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MB`;
  if (bytes >= 2 ** 10) return `${(bytes / 2 ** 10).toFixed(1)} KB`;
  return `${bytes} bytes`;
}
