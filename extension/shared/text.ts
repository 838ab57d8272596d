/**
 * Text from a trace, shown to a person. Traces are files other people share: op, kernel, file and function names,
 * metadata and log lines are data, and must never turn into Markdown (links, images, table rows), HTML, terminal
 * escape sequences (clearing the screen, setting the window title, writing the clipboard) or text that reads in
 * another order than it is stored (bidirectional overrides). Every renderer passes such text through one of these.
 *
 * Pure functions, no 'vscode' import: the editor, the CLI, the report and the webview share them.
 */

/** Longest name shown in one piece; longer ones end in an ellipsis. */
export const MAX_NAME_LENGTH = 200;

/**
 * Characters that do not show as themselves: C0 and C1 controls and DEL, the line and paragraph separators,
 * bidirectional marks, embeddings, overrides and isolates, zero-width characters, the byte order mark, the
 * interlinear annotation marks and the tag characters (invisible letters).
 */
const INVISIBLE =
  // eslint-disable-next-line no-control-regex -- control characters are what this matches
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;
const HAS_INVISIBLE = new RegExp(INVISIBLE.source, 'u');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visibleEscape(c: string): string {
  return NAMED[c] ?? `\\u{${c.codePointAt(0)!.toString(16)}}`;
}

/** Cuts to at most `max` UTF-16 units, ending in '…', without splitting a surrogate pair. */
export function cutText(text: string, max = MAX_NAME_LENGTH): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * The text on one line, with every invisible or reordering character written as an escape (`\n`, `\t`,
 * `\u{1b}`, `\u{202e}`), cut at `max`. Backslashes stay as they are: Windows paths keep their look.
 */
export function visibleText(text: string, max = MAX_NAME_LENGTH): string {
  const shown = HAS_INVISIBLE.test(text) ? text.replace(INVISIBLE, visibleEscape) : text;
  return cutText(shown, max);
}

/** Several lines (a log line with its continuations, a report): newlines and tabs stay, the rest as visibleText. */
export function visibleLines(text: string): string {
  if (!HAS_INVISIBLE.test(text)) return text;
  return text
    .split('\n')
    .map((line) =>
      line
        .split('\t')
        .map((part) => visibleText(part, Infinity))
        .join('\t'),
    )
    .join('\n');
}

/** Text for a terminal: one line, no escape sequences (ESC, CSI, OSC, BEL and friends are written visibly). */
export function terminalText(text: string, max = Number.POSITIVE_INFINITY): string {
  return visibleText(text, max);
}

/** Several lines for a terminal (a Markdown report, say): newlines and tabs stay, every other control is escaped. */
export function terminalLines(text: string): string {
  return visibleLines(text);
}

/** Text inside HTML element content or a quoted attribute value. */
export function htmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/g;
const MARKDOWN_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Plain Markdown text that renders as exactly these characters: `&`, `<` and `>` as entities (no HTML tag appears
 * even in the Markdown source), every other ASCII punctuation character backslash-escaped (CommonMark allows it
 * for all of them), so no emphasis, link, image, autolink, HTML, table cell or theme icon (`$(name)`) can form;
 * invisible characters are written visibly.
 */
export function markdownText(text: string, max = MAX_NAME_LENGTH): string {
  return visibleText(text, max).replace(ASCII_PUNCTUATION, (c) => MARKDOWN_ENTITY[c] ?? `\\${c}`);
}

export interface MarkdownCodeOptions {
  max?: number;
  /** The span sits in a table cell: its pipes are escaped so the row keeps its cells. */
  tableCell?: boolean;
}

/**
 * A Markdown code span showing the text literally. The fence is one backtick longer than the longest run of
 * backticks inside, so no backtick closes it early; a space pads a text that starts or ends with a backtick.
 * Newlines never reach it (written visibly), so it cannot end a table row or a paragraph. In a table cell, a pipe
 * would end the cell even inside a code span: it is written `\|`, and a backslash right before a pipe is written
 * `\u{5c}`, because renderers disagree on what `\\|` means.
 */
export function markdownCode(text: string, options: MarkdownCodeOptions = {}): string {
  let body = visibleText(text, options.max ?? MAX_NAME_LENGTH);
  if (options.tableCell) body = body.replace(/\\(?=\|)/g, '\\u{5c}').replace(/\|/g, '\\|');
  let longest = 0;
  for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(longest + 1);
  const pad = body === '' || body.startsWith('`') || body.endsWith('`') || /^ .* $/.test(body) ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/**
 * A `command:` URI for a Markdown link the extension itself builds: the arguments as JSON, percent-encoded,
 * including the characters encodeURIComponent leaves (`(`, `)` end a Markdown link destination).
 */
export function commandUri(command: string, args: unknown): string {
  const query = encodeURIComponent(JSON.stringify([args])).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `command:${command}?${query}`;
}

/**
 * Text for VS Code labels that render `$(name)` as an icon (status bar, quick picks, CodeLens titles): the text
 * shows visibly and any `$(` stays literal.
 */
export function labelText(text: string, max = MAX_NAME_LENGTH): string {
  return visibleText(text, max).replace(/\$\(/g, '\\$(');
}
